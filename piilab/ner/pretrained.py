"""A token classifier on a pretrained decoder: the reference recipe at small scale (chapter 08).

Part of `piilab.ner`. The finance card's reference system turns an autoregressive
checkpoint into a token classifier: attention made bidirectional, the language-model head
replaced by a BIOES head over the labels, and the whole trained with a classification
loss. This module does the same with the course's two offline bases:

- **The body, not the causal LM.** `build_classifier` loads only the decoder's body
  (``model.*`` of the checkpoint) under a new linear head with ``4N + 1`` outputs
  (`piilab.bioes.bioes_classes`): ``LlamaForTokenClassification`` for SmolLM2-135M, and
  for Gemma 3 270M a class made of transformers' ``GenericForTokenClassification`` and
  ``Gemma3PreTrainedModel`` (`Gemma3ForTokenClassification`). Gemma's 262k-token output
  layer is never loaded: it costs more than the body.
- **Bidirectional attention** (``bidirectional=True``): Gemma 3's config has the switch
  ``use_bidirectional_attention`` (its sliding-window layers then see ``(window // 2)``
  tokens on each side: 256 for the 270M model, so past about 257 tokens a local layer no
  longer sees the whole document). Llama reads ``config.is_causal``; each attention module
  carries its own ``is_causal`` flag, which PyTorch's SDPA uses when no mask is passed (a
  batch without padding), so both are set. `attends_to_future` checks the result on a
  real forward pass: the hidden state of the first token must change when a later token
  changes.
- **Labels on the base's own tokens** (`project_spans`, `tokens_to_spans`). Subword
  tokens do not always stop where a value stops (a Korean particle can share a token with
  the name before it). The rule: *a token is inside a span when its first non-space
  character is* (a token of spaces only counts by its first character). Decoding takes a
  span from the first non-space character of its first token to the end of its last
  token, spaces trimmed. A gold span that ends inside a token therefore comes back
  longer (the fused particle is masked too: over-redaction, never a leak); one that
  starts inside a token comes back without its first characters (a leak). `project_spans`
  counts both, and `alignment_counts` measures them on any records.
- **LoRA through PEFT** (``task_type="TOKEN_CLS"``; the head is trained in full), trained
  by `train_classifier`: a plain loop (AdamW, warm-up then cosine, batches of documents of
  similar length), on the CPU, with a time limit. `save_classifier` writes the adapter and
  head in fp16 with ``piilab_classifier.json``; `load_classifier` reads them back onto the
  base.
- **Prediction** (`classify`): logits per token, decoded by argmax or by the constrained
  Viterbi pass of `piilab.bioes.viterbi_decode` at a named operating point. A document
  longer than one window is read in overlapping windows; each token takes its logits from
  the window in which it sits farthest from an edge.

Nothing here prints text or values; errors name record ids, indexes and counts. Needs the
``train`` extra (torch, transformers, peft), imported inside the functions.
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from piilab.bioes import OUTSIDE, EntitySpan, bioes_classes, tag_tokens
from piilab.errors import PiilabError
from piilab.labels import LABELS, nfc
from piilab.ner.spans import gold_spans
from piilab.ner.training import IGNORE_INDEX  # the label id cross-entropy ignores (padding)

__all__ = [
    "CLASSIFIER_MARKER",
    "IGNORE_INDEX",
    "ClassifierConfig",
    "ClassifierError",
    "Projection",
    "add_lora",
    "alignment_counts",
    "attends_to_future",
    "build_classifier",
    "classifier_logits",
    "classify",
    "decode_logits",
    "encode_record",
    "is_classifier_dir",
    "load_classifier",
    "project_spans",
    "projection_oracle",
    "read_meta",
    "save_classifier",
    "token_anchors",
    "tokens_to_spans",
    "train_classifier",
    "weights_sha256",
]

#: The file that marks a folder as a saved classifier (beside the PEFT adapter files).
CLASSIFIER_MARKER = "piilab_classifier.json"



class ClassifierError(PiilabError):
    """A classifier folder, configuration or input that cannot be used (names no value)."""


# ---------------------------------------------------------------------------
# Labels on the base's own tokens
# ---------------------------------------------------------------------------


def token_anchors(text: str, offsets: Sequence[tuple[int, int]]) -> list[int]:
    """Each token's anchor: the index of its first non-space character (its first character
    when it holds only spaces; -1 for a token with no character, such as ``<bos>``).

    >>> token_anchors("Kim  Lee", [(0, 0), (0, 3), (3, 6), (6, 8)])
    [-1, 0, 5, 6]
    """
    anchors = []
    for start, end in offsets:
        if start >= end:
            anchors.append(-1)
            continue
        anchor = start
        while anchor < end and text[anchor].isspace():
            anchor += 1
        anchors.append(anchor if anchor < end else start)
    return anchors


@dataclass(frozen=True)
class Projection:
    """The tags of one document's tokens, and what the projection rule cost (counts)."""

    tags: tuple[str, ...]
    spans: int
    start_inside: int  # gold spans whose first character is not a token's anchor
    end_inside: int  # gold spans that end inside a token (decoded longer)
    lost: int  # gold spans with no token anchored inside them (cannot be tagged)


def project_spans(text: str, offsets: Sequence[tuple[int, int]],
                  spans: Iterable[tuple[int, int, str]]) -> Projection:
    """BIOES tags for `offsets` under the first-non-space rule (module docstring).

    >>> text = "김가상님 안녕"
    >>> p = project_spans(text, [(0, 2), (2, 4), (4, 7)], [(0, 3, "PERSON")])
    >>> p.tags, p.end_inside
    (('B-PERSON', 'E-PERSON', 'O'), 1)
    """
    anchors = token_anchors(text, offsets)
    ends = {end for (start, end) in offsets if start < end}
    tags = [OUTSIDE] * len(offsets)
    counted = start_inside = end_inside = lost = 0
    for start, end, label in sorted(spans):
        counted += 1
        inside = [i for i, a in enumerate(anchors) if start <= a < end]
        if not inside:
            lost += 1
            continue
        if anchors[inside[0]] != start:
            start_inside += 1
        if end not in ends:
            end_inside += 1
        tag_tokens(tags, inside, label)
    return Projection(tuple(tags), counted, start_inside, end_inside, lost)


def tokens_to_spans(text: str, offsets: Sequence[tuple[int, int]],
                    groups: Iterable[tuple[int, int, str]]) -> list[EntitySpan]:
    """Character spans of token groups ``(first, last, label)`` (inclusive token indexes):
    from the first token's anchor to the last token's end, spaces trimmed at both ends.

    >>> tokens_to_spans("Call Kim Lee now", [(0, 4), (4, 8), (8, 12), (12, 16)], [(1, 2, "PERSON")])
    [EntitySpan(start=5, end=12, label='PERSON')]
    """
    anchors = token_anchors(text, offsets)
    out = []
    for first, last, label in groups:
        start, end = anchors[first], offsets[last][1]
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start < end:
            out.append(EntitySpan(start, end, label))
    return out


def alignment_counts(records: Iterable[Mapping], tokenizer: Any) -> dict[str, int]:
    """How the first-non-space rule fits `tokenizer` on `records`: gold spans in all, and
    those that start inside a token, end inside a token or get no token (counts only)."""
    totals = {"records": 0, "spans": 0, "start_inside": 0, "end_inside": 0, "lost": 0}
    for record in records:
        text = nfc(record["source_text"])
        offsets = _offsets(tokenizer, text)
        p = project_spans(text, offsets, gold_spans(record))
        totals["records"] += 1
        for key in ("spans", "start_inside", "end_inside", "lost"):
            totals[key] += getattr(p, key)
    return totals


def projection_oracle(records: Iterable[Mapping], tokenizer: Any) -> list[list[EntitySpan]]:
    """The spans a perfect tagger would give under the first-non-space rule: each record's
    gold spans projected onto `tokenizer`'s tokens and decoded back. Scoring them with
    `piilab.evaluation.evaluate` measures what the rule alone costs in F1 and in leaks."""
    out = []
    for record in records:
        text = nfc(record["source_text"])
        offsets = _offsets(tokenizer, text)
        tags = project_spans(text, offsets, gold_spans(record)).tags
        out.append(tokens_to_spans(text, offsets, _tag_groups(offsets, list(tags))))
    return out


def _offsets(tokenizer: Any, text: str) -> list[tuple[int, int]]:
    encoding = tokenizer(text, add_special_tokens=True, return_offsets_mapping=True,
                         truncation=False)
    return [(int(s), int(e)) for s, e in encoding["offset_mapping"]]


def encode_record(record: Mapping, tokenizer: Any, label2id: Mapping[str, int]
                  ) -> tuple[dict[str, list[int]], Projection]:
    """``input_ids``, ``attention_mask`` and ``labels`` of one record, and its projection.
    Special tokens (no characters) are labelled ``O``: the model learns to leave them."""
    text = nfc(record["source_text"])
    encoding = tokenizer(text, add_special_tokens=True, return_offsets_mapping=True,
                         truncation=False)
    offsets = [(int(s), int(e)) for s, e in encoding["offset_mapping"]]
    projection = project_spans(text, offsets, gold_spans(record))
    labels = [label2id[tag] for tag in projection.tags]
    ids = list(encoding["input_ids"])
    return {"input_ids": ids, "attention_mask": [1] * len(ids), "labels": labels}, projection


# ---------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------


def _gemma_class():
    from transformers import Gemma3TextConfig
    from transformers.modeling_layers import GenericForTokenClassification
    from transformers.models.gemma3.modeling_gemma3 import Gemma3PreTrainedModel

    class Gemma3ForTokenClassification(GenericForTokenClassification, Gemma3PreTrainedModel):
        """Gemma 3's text body under a linear token-classification head."""

        config_class = Gemma3TextConfig

    return Gemma3ForTokenClassification


def _label_maps(labels: Sequence[str]) -> tuple[dict[int, str], dict[str, int]]:
    classes = bioes_classes(labels)
    return dict(enumerate(classes)), {tag: i for i, tag in enumerate(classes)}


def _config(path: str, labels: Sequence[str], bidirectional: bool):
    from transformers import AutoConfig, Gemma3TextConfig

    config = AutoConfig.from_pretrained(path)
    id2label, label2id = _label_maps(labels)
    if config.model_type == "gemma3_text":
        values = config.to_dict()
        values.update(use_bidirectional_attention=bidirectional, id2label=id2label,
                      label2id=label2id)
        values.pop("model_type", None)
        # Built anew so that __init__ applies the switch (it halves the sliding window).
        return Gemma3TextConfig(**values)
    if config.model_type == "llama":
        config.is_causal = not bidirectional
        config.id2label, config.label2id = id2label, label2id
        return config
    raise ClassifierError(f"no token-classification recipe for model type {config.model_type!r}")


def build_classifier(base: str, *, labels: Sequence[str] = LABELS, bidirectional: bool = True):
    """The body of `base` (an alias of `piilab.models` or a local folder) under a new
    BIOES head for `labels`, in float32. Returns ``(model, tokenizer)``."""
    import torch
    from transformers import AutoTokenizer, LlamaForTokenClassification

    from piilab.models import resolve_model

    path = resolve_model(base)
    config = _config(path, labels, bidirectional)
    cls = _gemma_class() if config.model_type == "gemma3_text" else LlamaForTokenClassification
    model = cls.from_pretrained(path, config=config, dtype=torch.float32)
    _set_attention(model, bidirectional)
    tokenizer = AutoTokenizer.from_pretrained(path)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def _set_attention(model: Any, bidirectional: bool) -> None:
    """Each attention module's own ``is_causal`` flag (read by SDPA when no mask is built)."""
    for module in model.modules():
        if hasattr(module, "is_causal") and hasattr(module, "q_proj"):
            module.is_causal = not bidirectional


def attends_to_future(model: Any, tokenizer: Any) -> bool:
    """Whether the first token's hidden state depends on a later token: two texts that
    differ only at the end, run one at a time (no padding: no mask is built, the path where
    SDPA falls back to each module's own flag) and together in one padded batch."""
    import torch

    texts = ["one two three four", "one two three five five"]
    body = _body(model)
    with torch.no_grad():
        alone = [body(**tokenizer([t], return_tensors="pt")).last_hidden_state[0, 0]
                 for t in texts]
        batch = tokenizer(texts, return_tensors="pt", padding=True)
        hidden = body(**batch).last_hidden_state
        # the first real token of each row (a tokenizer may pad on the left)
        first = batch["attention_mask"].argmax(dim=1)
        together = hidden[torch.arange(len(texts)), first]
    differs_alone = not torch.allclose(alone[0], alone[1], atol=1e-5)
    differs_together = not torch.allclose(together[0], together[1], atol=1e-5)
    if differs_alone != differs_together:
        raise ClassifierError("attention differs with and without padding")
    return differs_alone


def _body(model: Any):
    inner = model
    if hasattr(inner, "get_base_model"):
        inner = inner.get_base_model()
    return inner.model


def add_lora(model: Any, *, r: int = 16, alpha: int = 32, dropout: float = 0.0,
             target_modules: Sequence[str] = ("q_proj", "k_proj", "v_proj", "o_proj",
                                              "gate_proj", "up_proj", "down_proj")):
    """Wrap `model` with LoRA (PEFT, ``task_type="TOKEN_CLS"``); the head (``score``) is
    trained in full and saved with the adapter."""
    from peft import LoraConfig, TaskType, get_peft_model

    config = LoraConfig(task_type=TaskType.TOKEN_CLS, r=r, lora_alpha=alpha,
                        lora_dropout=dropout, target_modules=list(target_modules),
                        modules_to_save=["score"])
    return get_peft_model(model, config)


# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------


@dataclass
class ClassifierConfig:
    """One training run of `train_classifier` (a JSON file in ``configs/``)."""

    base: str = "gemma-3-270m"
    bidirectional: bool = True
    train_files: list[str] = field(default_factory=lambda: ["runs/wide/train.jsonl"])
    train_records: list[int | None] = field(default_factory=lambda: [None])
    output_dir: str = "runs/ner-gemma3"
    init_classifier: str | None = None
    lora_r: int = 16
    lora_alpha: int = 32
    learning_rate: float = 5e-4
    head_learning_rate: float = 2e-3
    batch_size: int = 16
    max_steps: int = 1000
    stop_at_step: int | None = None  # stop early on the same schedule (an ablation's first steps)
    warmup_steps: int = 30
    max_length: int = 512
    max_train_seconds: float = 4800
    save_every: int = 100
    seed: int = 0
    threads: int | None = None
    _comment: str = ""

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> ClassifierConfig:
        try:
            values = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ClassifierError(f"{path}: cannot read the configuration "
                                  f"({type(exc).__name__})") from None
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(values) - known)
        if unknown:
            raise ClassifierError(f"{path}: unknown fields {unknown}")
        return cls(**values)


def _read_records(path: str, limit: int | None) -> list[dict]:
    from piilab.dataset import read_jsonl

    records = read_jsonl(path)
    return list(records[:limit] if limit is not None else records)


def _length_batches(examples: Sequence[Mapping], batch_size: int, rng: random.Random):
    """Endless batches of documents of similar length: shuffle, cut into pools of 50
    batches, sort each pool by length, cut it into batches, shuffle the batches."""
    while True:
        order = list(range(len(examples)))
        rng.shuffle(order)
        pool = 50 * batch_size
        for first in range(0, len(order), pool):
            chunk = sorted(order[first:first + pool], key=lambda i: len(examples[i]["input_ids"]))
            batches = [chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size)]
            rng.shuffle(batches)
            yield from batches


def _collate(examples: Sequence[Mapping], pad_id: int):
    import torch

    width = max(len(e["input_ids"]) for e in examples)
    return {key: torch.tensor([list(e[key]) + [fill] * (width - len(e[key])) for e in examples])
            for key, fill in (("input_ids", pad_id), ("attention_mask", 0),
                              ("labels", IGNORE_INDEX))}


def train_classifier(config: ClassifierConfig, *, log: Callable[[dict], None] | None = None
                     ) -> dict[str, Any]:
    """Train a classifier as `config` says and save it to ``config.output_dir`` (fp16).

    Returns the run's summary (counts, timings, losses; no text). `log` gets one dict of
    numbers every 10 steps. A run that continues another names the saved classifier in
    ``init_classifier``."""
    import torch
    from transformers import get_cosine_schedule_with_warmup

    if config.threads:
        torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    if config.init_classifier:
        model, tokenizer, meta = load_classifier(config.init_classifier, trainable=True)
        if meta["base"] != config.base or meta["bidirectional"] != config.bidirectional:
            raise ClassifierError("init_classifier was trained on another base or attention")
    else:
        model, tokenizer = build_classifier(config.base, bidirectional=config.bidirectional)
        model = add_lora(model, r=config.lora_r, alpha=config.lora_alpha)
    label2id = {tag: int(i) for tag, i in model.config.label2id.items()}

    examples, too_long = [], 0
    totals = {"spans": 0, "start_inside": 0, "end_inside": 0, "lost": 0}
    for path, limit in zip(config.train_files, config.train_records, strict=True):
        for record in _read_records(path, limit):
            example, projection = encode_record(record, tokenizer, label2id)
            if len(example["input_ids"]) > config.max_length:
                too_long += 1
                continue
            examples.append(example)
            for key in totals:
                totals[key] += getattr(projection, key)
    if not examples:
        raise ClassifierError("no trainable records")
    tokens_per_epoch = sum(len(e["input_ids"]) for e in examples)

    head = [p for n, p in model.named_parameters() if p.requires_grad and "score" in n]
    rest = [p for n, p in model.named_parameters() if p.requires_grad and "score" not in n]
    optimizer = torch.optim.AdamW([{"params": rest, "lr": config.learning_rate},
                                   {"params": head, "lr": config.head_learning_rate}],
                                  weight_decay=0.0)
    schedule = get_cosine_schedule_with_warmup(optimizer, config.warmup_steps, config.max_steps)
    batches = _length_batches(examples, config.batch_size, random.Random(config.seed))
    pad_id = tokenizer.pad_token_id
    model.train()
    losses: list[tuple[int, float]] = []
    tokens = 0
    started = time.perf_counter()
    step = 0
    window: list[float] = []
    stopped = "max_steps"
    for step in range(1, config.max_steps + 1):
        batch = _collate([examples[i] for i in next(batches)], pad_id)
        loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        tokens += int(batch["attention_mask"].sum())
        window.append(float(loss.detach()))
        if step % 10 == 0:
            losses.append((step, sum(window) / len(window)))
            window = []
            if log is not None:
                elapsed = time.perf_counter() - started
                log({"step": step, "loss": round(losses[-1][1], 5), "seconds": round(elapsed, 1),
                     "tokens_per_second": round(tokens / elapsed, 1)})
        if config.save_every and step % config.save_every == 0:
            save_classifier(model, tokenizer, config.output_dir, config, extra={"steps": step})
        if config.stop_at_step is not None and step >= config.stop_at_step:
            stopped = "stop_at_step"
            break
        if time.perf_counter() - started > config.max_train_seconds:
            stopped = "max_train_seconds"
            break
    wall = time.perf_counter() - started
    summary = {
        "steps": step, "stopped_by": stopped, "examples": len(examples), "too_long": too_long,
        "tokens_per_epoch": tokens_per_epoch, "tokens": tokens, "wall_s": round(wall, 1),
        "tokens_per_second": round(tokens / wall, 1), "projection": totals,
        "first_loss": losses[0][1] if losses else None,
        "last_loss": losses[-1][1] if losses else None,
        "loss_curve": _thin(losses, 60),
    }
    save_classifier(model, tokenizer, config.output_dir, config, extra={"train": summary})
    return summary


def _thin(points: list[tuple[int, float]], most: int) -> list[list[float]]:
    if len(points) <= most:
        return [[s, round(v, 5)] for s, v in points]
    stride = math.ceil(len(points) / most)
    kept = points[::stride]
    if kept[-1] != points[-1]:
        kept.append(points[-1])
    return [[s, round(v, 5)] for s, v in kept]


# ---------------------------------------------------------------------------
# Saving and loading
# ---------------------------------------------------------------------------


def save_classifier(model: Any, tokenizer: Any, out_dir: str | os.PathLike,
                    config: ClassifierConfig, *, extra: Mapping[str, Any] | None = None) -> Path:
    """Write the LoRA adapter and the head (fp16) and ``piilab_classifier.json`` into
    `out_dir` (replaced file by file; the marker last)."""
    import torch
    from safetensors.torch import load_file, save_file

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    weights = out / "adapter_model.safetensors"
    tensors = {k: v.to(torch.float16) for k, v in load_file(weights).items()}
    save_file(tensors, weights)
    # The adapter names its base by the alias, not by this machine's cache path.
    adapter_config = out / "adapter_config.json"
    values = json.loads(adapter_config.read_text(encoding="utf-8"))
    values["base_model_name_or_path"] = config.base
    adapter_config.write_text(json.dumps(values, indent=2, sort_keys=True) + "\n",
                              encoding="utf-8")
    meta = {"format": 1, "base": config.base, "bidirectional": config.bidirectional,
            "labels": list(LABELS), "classes": list(bioes_classes(LABELS)),
            "projection": "a token is inside a span when its first non-space character is",
            "max_length": config.max_length, "config": asdict(config)}
    meta.update(extra or {})
    (out / CLASSIFIER_MARKER).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n",
                                         encoding="utf-8")
    return out


def weights_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a saved classifier's weights file (adapter and head)."""
    import hashlib

    return hashlib.sha256((Path(path) / "adapter_model.safetensors").read_bytes()).hexdigest()


def is_classifier_dir(path: str | os.PathLike) -> bool:
    """Whether `path` is a folder written by `save_classifier`."""
    return (Path(path) / CLASSIFIER_MARKER).is_file()


def load_classifier(path: str | os.PathLike, *, trainable: bool = False, merge: bool = True,
                    quantize: bool = False):
    """``(model, tokenizer, meta)`` of a saved classifier, on its base (fetched with
    ``piilab fetch-model``). The adapter is folded into the base for prediction
    (``merge=True``: one matrix product per projection) unless `trainable`. ``quantize=True``
    then applies int8 dynamic quantization to the linear layers (faster on a CPU, slightly
    different predictions: `benchmarks/bench_detectors.py --quantize` measures both)."""
    import torch
    from peft import PeftModel

    folder = Path(path)
    if not is_classifier_dir(folder):
        raise ClassifierError(f"{folder}: not a token classifier (no {CLASSIFIER_MARKER})")
    meta = read_meta(folder)
    try:
        base, bidirectional = meta["base"], bool(meta["bidirectional"])
        labels = meta["labels"]
    except (KeyError, TypeError):
        raise ClassifierError(f"{folder / CLASSIFIER_MARKER}: unreadable or missing fields "
                              "(base, bidirectional, labels)") from None
    model, tokenizer = build_classifier(base, labels=labels, bidirectional=bidirectional)
    model = PeftModel.from_pretrained(model, folder, is_trainable=trainable)
    model = model.to(torch.float32)
    if not trainable:
        if merge:
            model = model.merge_and_unload()
            _set_attention(model, bidirectional)
        if quantize:
            model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear},
                                                           dtype=torch.qint8)
        model.eval()
    return model, tokenizer, meta


# ---------------------------------------------------------------------------
# Prediction
# ---------------------------------------------------------------------------


def _windows(length: int, size: int, stride: int) -> list[tuple[int, int]]:
    """Token windows ``[start, stop)`` covering ``range(length)``, overlapping by
    ``size - stride``."""
    if length <= size:
        return [(0, length)]
    out, start = [], 0
    while True:
        stop = min(start + size, length)
        out.append((start, stop))
        if stop == length:
            return out
        start += stride


def classifier_logits(model: Any, tokenizer: Any, texts: Sequence[str], *,
                      batch_size: int = 16, window: int = 512, stride: int = 384):
    """Per text: its token offsets and a ``(tokens, classes)`` float array of logits.

    Texts are NFC-normalized first. A text longer than `window` tokens is read in windows
    of `window` tokens, `stride` apart; each token keeps the logits of the window in which
    it sits farthest from an edge. Texts are batched by length."""
    import numpy as np
    import torch

    texts = [nfc(t) for t in texts]
    encoded = [tokenizer(t, add_special_tokens=True, return_offsets_mapping=True,
                         truncation=False) for t in texts]
    pieces = []  # (text index, window start, window stop)
    for index, enc in enumerate(encoded):
        for start, stop in _windows(len(enc["input_ids"]), window, stride):
            pieces.append((index, start, stop))
    pieces.sort(key=lambda p: p[2] - p[1])
    pad_id = tokenizer.pad_token_id
    results: dict[tuple[int, int], Any] = {}
    with torch.no_grad():
        for first in range(0, len(pieces), batch_size):
            chunk = pieces[first:first + batch_size]
            width = max(stop - start for _, start, stop in chunk)
            ids = torch.full((len(chunk), width), pad_id, dtype=torch.long)
            mask = torch.zeros((len(chunk), width), dtype=torch.long)
            for row, (index, start, stop) in enumerate(chunk):
                piece = encoded[index]["input_ids"][start:stop]
                ids[row, :len(piece)] = torch.tensor(piece)
                mask[row, :len(piece)] = 1
            logits = model(input_ids=ids, attention_mask=mask).logits.float().numpy()
            for row, (index, start, stop) in enumerate(chunk):
                results[(index, start)] = logits[row, :stop - start]
    out = []
    for index, enc in enumerate(encoded):
        n = len(enc["input_ids"])
        spans = _windows(n, window, stride)
        merged = None
        best = None
        for start, stop in spans:
            part = results[(index, start)]
            if merged is None:
                merged = np.zeros((n, part.shape[1]), dtype=np.float32)
                best = np.full(n, -1, dtype=np.int64)
            for t in range(start, stop):
                margin = min(t - start, stop - 1 - t) if len(spans) > 1 else 0
                if margin > best[t]:
                    best[t] = margin
                    merged[t] = part[t - start]
        offsets = [(int(s), int(e)) for s, e in enc["offset_mapping"]]
        out.append((offsets, merged))
    return out


def classify(model: Any, tokenizer: Any, texts: Sequence[str], *,
             decoding: str = "viterbi", operating_point: str | Mapping[str, float] | None = None,
             points: Mapping[str, Mapping[str, float]] | None = None,
             batch_size: int = 16) -> list[list[EntitySpan]]:
    """Predicted character spans per text (offsets into the NFC text).

    ``decoding="argmax"`` takes each token's best class and reads the tags with
    `piilab.bioes.bioes_to_spans`'s repair rule; ``"viterbi"`` finds the best legal tag
    sequence (`piilab.bioes.viterbi_decode`) under the transition biases of
    `operating_point`: a name of `points` (a classifier's own, from its
    ``piilab_classifier.json``) or of `piilab.bioes.OPERATING_POINTS`, or a mapping;
    None is ``neutral`` (no bias)."""
    id2label = {int(i): tag for i, tag in model.config.id2label.items()}
    classes = [id2label[i] for i in range(len(id2label))]
    texts = [nfc(t) for t in texts]
    return [decode_logits(text, offsets, logits, classes, decoding=decoding,
                          operating_point=operating_point, points=points)
            for text, (offsets, logits) in zip(
                texts, classifier_logits(model, tokenizer, texts, batch_size=batch_size),
                strict=True)]


def decode_logits(text: str, offsets: Sequence[tuple[int, int]], logits: Any,
                  classes: Sequence[str], *, decoding: str = "viterbi",
                  operating_point: str | Mapping[str, float] | None = None,
                  points: Mapping[str, Mapping[str, float]] | None = None) -> list[EntitySpan]:
    """Character spans of one text from its tokens' logits (``(tokens, classes)``), by
    argmax or constrained Viterbi (see `classify`)."""
    from piilab.bioes import viterbi_decode

    if decoding == "argmax":
        tags = [classes[int(i)] for i in logits.argmax(axis=1)]
    elif decoding == "viterbi":
        tags = viterbi_decode(_log_softmax(logits), classes,
                              dict(operating_point) if isinstance(operating_point, Mapping)
                              else operating_point,
                              skip=[s >= e for s, e in offsets],
                              points={k: dict(v) for k, v in (points or {}).items()})
    else:
        raise ClassifierError("decoding must be 'argmax' or 'viterbi'")
    return tokens_to_spans(text, offsets, _tag_groups(offsets, tags))


def _log_softmax(logits):
    import numpy as np

    shifted = logits - logits.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def _tag_groups(offsets: Sequence[tuple[int, int]], tags: Sequence[str]
                ) -> list[tuple[int, int, str]]:
    """Token groups ``(first, last, label)`` of a tag sequence, by the repair rule of
    `piilab.bioes.bioes_to_spans` (applied to token indexes instead of offsets)."""
    from piilab.bioes import bioes_to_spans

    # Token i becomes the span (i, i + 1): the decoder's spans are then token ranges.
    index_offsets = [(i, i + 1) if s < e else (i, i) for i, (s, e) in enumerate(offsets)]
    return [(span.start, span.end - 1, span.label)
            for span in bioes_to_spans(index_offsets, tags)]


def read_meta(path: str | os.PathLike) -> dict:
    """The ``piilab_classifier.json`` of a saved classifier."""
    try:
        return json.loads((Path(path) / CLASSIFIER_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ClassifierError(f"{path}: not a readable token classifier") from None

