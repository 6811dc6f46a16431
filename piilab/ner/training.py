"""Training a token classifier on the course records (chapter 08, step 4).

Part of `piilab.ner`. `token_classification_example` turns one record into
``input_ids``, ``attention_mask`` and ``labels`` (special tokens ignored by the
loss); `train_token_classifier` is a plain PyTorch loop (AdamW, the model's
cross-entropy over the 4N + 1 classes) for any
``AutoModelForTokenClassification``: the tiny encoder on a CPU, a hub model on
a GPU. Records too long for the model or misaligned with its tokenizer are not
trained; their ids are returned in `TrainingRun`.

What it does not do: schedule the learning rate, evaluate or checkpoint. It
needs the ``train`` extra (torch), imported inside the functions.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from piilab.bioes import AlignmentError, spans_to_bioes
from piilab.labels import nfc
from piilab.ner.encoder import _encode
from piilab.ner.spans import MisalignedRecordError, NERDataError, _record_id, gold_spans

__all__ = [
    "IGNORE_INDEX",
    "TrainingRun",
    "token_classification_example",
    "train_token_classifier",
]

#: The label id that cross-entropy ignores (special tokens, padding).
IGNORE_INDEX = -100


def token_classification_example(record: Mapping, tokenizer: Any,
                                 label2id: Mapping[str, int]) -> dict[str, list[int]]:
    """``input_ids``, ``attention_mask`` and ``labels`` of one record.

    Tokens with empty offsets (special tokens) get label -100, so the loss
    ignores them. Raises `MisalignedRecordError` for a misaligned record and
    `NERDataError` for a tag the model has no class for.
    """
    rid = _record_id(record)
    source = nfc(record["source_text"])
    ids, offsets = _encode(tokenizer, source, special_tokens=True)
    spans = gold_spans(record)
    try:
        tags = spans_to_bioes(offsets, spans)
    except AlignmentError as exc:
        raise MisalignedRecordError(f"record {rid}: {exc}") from None
    unknown = sorted({tag for tag in tags if tag not in label2id})
    if unknown:
        raise NERDataError(f"record {rid}: the model has no class for {len(unknown)} of its "
                           "BIOES tags")
    labels = [IGNORE_INDEX if start >= end else label2id[tag]
              for (start, end), tag in zip(offsets, tags, strict=True)]
    return {"input_ids": ids, "attention_mask": [1] * len(ids), "labels": labels}


@dataclass(frozen=True)
class TrainingRun:
    """What `train_token_classifier` did: one loss per optimizer step, and what it left out.

    `too_long` and `misaligned` list record ids that were not trained (longer
    than `max_length` tokens; gold spans not aligned with the tokens).
    """

    losses: tuple[float, ...]
    steps: int
    examples: int
    too_long: tuple[str, ...]
    misaligned: tuple[str, ...]
    wall_s: float


def _max_length(model: Any, tokenizer: Any, max_length: int | None) -> int:
    if max_length is not None:
        return max_length
    limits = [getattr(model.config, "max_position_embeddings", None),
              getattr(tokenizer, "model_max_length", None)]
    limits = [int(n) for n in limits if isinstance(n, int) and 0 < n < 1_000_000]
    return min(limits) if limits else 512


def _batches(examples: Sequence[Mapping[str, list[int]]], batch_size: int, pad_id: int,
             rng: random.Random):
    """Endless shuffled batches, padded to the longest example of each batch."""
    import torch

    while True:
        order = list(range(len(examples)))
        rng.shuffle(order)
        for first in range(0, len(order), batch_size):
            chunk = [examples[i] for i in order[first:first + batch_size]]
            width = max(len(e["input_ids"]) for e in chunk)
            yield {
                key: torch.tensor([e[key] + [fill] * (width - len(e[key])) for e in chunk])
                for key, fill in (("input_ids", pad_id), ("attention_mask", 0),
                                  ("labels", IGNORE_INDEX))
            }


def train_token_classifier(model: Any, tokenizer: Any, records: Iterable[Mapping], *,
                           max_steps: int = 300, batch_size: int = 16,
                           learning_rate: float = 5e-3, weight_decay: float = 0.0,
                           seed: int = 0, max_length: int | None = None,
                           device: str | None = None) -> TrainingRun:
    """Train `model` (an ``AutoModelForTokenClassification``) in place on `records`.

    A plain loop: shuffled batches (`seed`), AdamW at a constant
    `learning_rate`, the model's own cross-entropy over its classes
    (``config.label2id`` must hold the BIOES classes of the records' labels).
    Records longer than `max_length` tokens (default: what the model accepts)
    or misaligned with the tokenizer are not trained; their ids are returned.
    The caller's torch RNG state is left as it was. Use ~5e-3 for the tiny
    encoder (the default), ~3e-5 for a pretrained hub encoder.
    """
    import torch

    limit = _max_length(model, tokenizer, max_length)
    label2id = dict(model.config.label2id)
    examples: list[dict[str, list[int]]] = []
    too_long: list[str] = []
    misaligned: list[str] = []
    for record in records:
        try:
            example = token_classification_example(record, tokenizer, label2id)
        except MisalignedRecordError:
            misaligned.append(_record_id(record))
            continue
        if len(example["input_ids"]) > limit:
            too_long.append(_record_id(record))
            continue
        examples.append(example)
    if not examples:
        raise NERDataError("no trainable records (all too long or misaligned)")

    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate,
                                  weight_decay=weight_decay)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    batches = _batches(examples, batch_size, pad_id, random.Random(seed))
    losses: list[float] = []
    started = time.perf_counter()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for _ in range(max_steps):
            batch = {key: value.to(device) for key, value in next(batches).items()}
            loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(float(loss.detach()))
    model.eval()
    return TrainingRun(tuple(losses), len(losses), len(examples), tuple(too_long),
                       tuple(misaligned), time.perf_counter() - started)

