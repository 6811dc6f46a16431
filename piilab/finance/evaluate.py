"""A small token classifier on (``tokens``, ``token_classes``), scored span by span (chapter 09).

Chapter 09 teaches this module. The card's quick start says: train a token
classifier on the rows' o200k tokens and BIOES classes, and report span-level
precision, recall and F1 on validation. This is the smallest honest version
of that, for a CPU and a couple of minutes:

1. **Ids** (`encode_rows`): each row's spelled tokens become their o200k ids
   (`piilab.finance.tokens.token_ids`), then a compact vocabulary: the ids
   seen in train, everything else one unknown id (a 200k-row embedding would
   be mostly untrained on a few thousand rows). Tags become class indexes of
   the 73 classes (`piilab.finance.build.finance_classes`).
2. **Model** (`TokenTagger`): an embedding, a one-layer bidirectional GRU
   (context on both sides: the words around an RRN or an account number are
   what tell the confusion pairs apart) and a linear layer over the 73
   classes, trained with cross-entropy (padding ignored) and Adam for a fixed
   number of steps or seconds, whichever comes first.
3. **Scores** (`evaluate_rows`): predicted tags are decoded to character
   spans with `piilab.bioes.bioes_to_spans` over the token offsets
   (`piilab.finance.tokens.token_offsets`) and compared with the
   ``privacy_mask`` spans by `piilab.bioes.span_scores` (exact span and
   label, seqeval's strict IOBES counting). **Confusions** (`confusions`): for
   each gold span of one label of a confusion pair, whether a predicted span
   of the other label overlaps it: RRN -> FRN, FRN -> RRN, CARD_NUMBER ->
   ACCOUNT_NUMBER, ACCOUNT_NUMBER -> CARD_NUMBER.

What it deliberately does not do: pretrain, tune, or claim anything beyond
these templates (validation shares the template families of train; only the
values are disjoint). It needs torch (the ``train`` extra), imported inside
the functions.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from piilab.bioes import bioes_to_spans, span_scores

__all__ = ["CONFUSION_PAIRS", "confusions", "encode_rows", "train_and_evaluate"]

#: The label-confusion pairs of the card's type-2 hard negatives, in both directions.
CONFUSION_PAIRS: tuple[tuple[str, str], ...] = (
    ("RRN", "FRN"), ("FRN", "RRN"), ("CARD_NUMBER", "ACCOUNT_NUMBER"),
    ("ACCOUNT_NUMBER", "CARD_NUMBER"),
)

PAD, UNKNOWN = 0, 1
IGNORE = -100


def encode_rows(rows: Sequence[Mapping[str, Any]], vocabulary: dict[int, int] | None = None
                ) -> tuple[list[list[int]], list[list[int]], dict[int, int]]:
    """Compact token ids and class indexes of `rows`; builds the vocabulary when None is given."""
    from piilab.finance.build import finance_classes
    from piilab.finance.tokens import token_ids

    class_index = {tag: i for i, tag in enumerate(finance_classes())}
    o200k = [token_ids(row["tokens"]) for row in rows]
    if vocabulary is None:
        vocabulary = {}
        for ids in o200k:
            for token_id in ids:
                vocabulary.setdefault(token_id, len(vocabulary) + 2)  # 0 pad, 1 unknown
    inputs = [[vocabulary.get(i, UNKNOWN) for i in ids] for ids in o200k]
    targets = [[class_index[tag] for tag in row["token_classes"]] for row in rows]
    return inputs, targets, vocabulary


def _model(vocabulary_size: int, classes: int, width: int):
    import torch

    class TokenTagger(torch.nn.Module):
        """Embedding -> bidirectional GRU -> linear over the BIOES classes."""

        def __init__(self) -> None:
            super().__init__()
            self.embed = torch.nn.Embedding(vocabulary_size, width, padding_idx=PAD)
            self.gru = torch.nn.GRU(width, width, batch_first=True, bidirectional=True)
            self.out = torch.nn.Linear(2 * width, classes)

        def forward(self, ids):
            hidden, _ = self.gru(self.embed(ids))
            return self.out(hidden)

    return TokenTagger()


def _batch(inputs: Sequence[list[int]], targets: Sequence[list[int]] | None, indexes):
    import torch

    width = max(len(inputs[i]) for i in indexes)
    ids = torch.tensor([inputs[i] + [PAD] * (width - len(inputs[i])) for i in indexes])
    if targets is None:
        return ids, None
    labels = torch.tensor([targets[i] + [IGNORE] * (width - len(targets[i])) for i in indexes])
    return ids, labels


def confusions(gold: Sequence[Sequence[tuple[int, int, str]]],
               predicted: Sequence[Sequence[tuple[int, int, str]]]) -> dict[str, dict[str, int]]:
    """Per confusion pair A -> B: gold A spans, and how many a predicted B span overlaps.

    >>> confusions([[(0, 14, "RRN")]], [[(0, 14, "FRN")]])["RRN->FRN"]
    {'gold': 1, 'confused': 1}
    """
    out = {f"{a}->{b}": {"gold": 0, "confused": 0} for a, b in CONFUSION_PAIRS}
    for gold_spans, predicted_spans in zip(gold, predicted, strict=True):
        for start, end, label in gold_spans:
            for a, b in CONFUSION_PAIRS:
                if label != a:
                    continue
                out[f"{a}->{b}"]["gold"] += 1
                out[f"{a}->{b}"]["confused"] += any(
                    p_label == b and p_start < end and start < p_end
                    for p_start, p_end, p_label in predicted_spans)
    return out


def train_and_evaluate(rows_by_split: Mapping[str, Sequence[Mapping[str, Any]]], *,
                       steps: int = 600, max_seconds: float = 120.0, batch_size: int = 32,
                       width: int = 96, learning_rate: float = 3e-3, seed: int = 0
                       ) -> dict[str, Any]:
    """Train on ``train``, score on ``validation``; return metrics and counts (never text).

    Stops after `steps` optimizer steps or `max_seconds` of training, whichever
    comes first (the report says which). The caller's torch RNG is left as it was.
    """
    import random

    import torch

    from piilab.finance.build import finance_classes
    from piilab.finance.tokens import token_offsets

    train, validation = rows_by_split["train"], rows_by_split["validation"]
    train_x, train_y, vocabulary = encode_rows(train)
    valid_x, _, _ = encode_rows(validation, vocabulary)
    classes = finance_classes()
    losses: list[float] = []
    started = time.perf_counter()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = _model(len(vocabulary) + 2, len(classes), width)
        optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
        order_rng = random.Random(seed)
        order: list[int] = []
        model.train()
        for _ in range(steps):
            if time.perf_counter() - started > max_seconds:
                break
            if len(order) < batch_size:
                order += order_rng.sample(range(len(train_x)), len(train_x))
            indexes, order = order[:batch_size], order[batch_size:]
            ids, labels = _batch(train_x, train_y, indexes)
            logits = model(ids)
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, len(classes)),
                                                     labels.reshape(-1), ignore_index=IGNORE)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(float(loss.detach()))
    train_s = time.perf_counter() - started

    model.eval()
    gold, predicted = [], []
    with torch.no_grad():
        for first in range(0, len(valid_x), 64):
            indexes = list(range(first, min(first + 64, len(valid_x))))
            ids, _ = _batch(valid_x, None, indexes)
            best = model(ids).argmax(dim=-1).tolist()
            for i, row_best in zip(indexes, best, strict=True):
                row = validation[i]
                offsets = token_offsets(row["source_text"], row["tokens"])
                tags = [classes[c] for c in row_best[:len(offsets)]]
                predicted.append([tuple(s) for s in bioes_to_spans(offsets, tags)])
                gold.append([(e["start"], e["end"], e["label"]) for e in row["privacy_mask"]])
    return {
        "model": f"embedding({len(vocabulary) + 2}, {width}) -> BiGRU({width}) -> "
                 f"linear({len(classes)})",
        "train_rows": len(train),
        "validation_rows": len(validation),
        "steps": len(losses),
        "stopped_by": "steps" if len(losses) == steps else "max_seconds",
        "train_seconds": round(train_s, 1),
        "loss_first": round(losses[0], 4) if losses else None,
        "loss_last": round(losses[-1], 4) if losses else None,
        "scores": span_scores(gold, predicted),
        "confusions": confusions(gold, predicted),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m piilab.finance.evaluate --rows N --steps S --out FILE``: one recorded run."""
    import argparse
    import json

    from piilab.files import write_atomic
    from piilab.finance.build import build_rows

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--rows", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=42, help="build seed")
    parser.add_argument("--train-seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--max-seconds", type=float, default=120.0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    build = build_rows(args.rows, seed=args.seed)
    result = train_and_evaluate(build.rows, steps=args.steps, max_seconds=args.max_seconds,
                                seed=args.train_seed)
    record = {
        "command": (f"python -m piilab.finance.evaluate --rows {args.rows} --seed {args.seed} "
                    f"--train-seed {args.train_seed} --steps {args.steps} "
                    f"--max-seconds {args.max_seconds:g} --out {args.out}"),
        "build": {"rows": args.rows, "seed": args.seed, **{
            k: build.report[k] for k in ("finance_version", "tokenizer")}},
        "train_seed": args.train_seed,
        **result,
    }
    write_atomic(args.out, (json.dumps(record, indent=2, sort_keys=True) + "\n").encode())
    scores = result["scores"]
    print(f"steps {result['steps']}, validation span F1 {scores['f1']:.3f} "
          f"(P {scores['precision']:.3f}, R {scores['recall']:.3f}); written to {args.out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
