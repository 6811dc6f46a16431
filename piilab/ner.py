"""Token classification end to end: gold spans, the NER export, a tiny encoder (chapter 08).

Chapter 08 ("Token classification") teaches this module, next to
`piilab.bioes` (the tag scheme) and `piilab.taxonomy` (the label sets). It
builds the second design of a PII detector, an encoder that labels every
token, so that it can be compared with the course's ``TYPE<TAB>VALUE`` model
on the same data and the same leak metric. In the order of the chapter:

1. **Gold spans** (`gold_spans`). The records list values, not offsets. A
   value's gold spans are *every* occurrence of it or of a permitted variant
   in the NFC source (`piilab.matching.find_occurrences`), the same
   occurrences the leak metric checks. Identical spans are merged; when one
   span is an occurrence of values of two labels, the label first in `LABELS`
   wins (the masker's rule for one spelling with several types). Occurrences
   that overlap without being identical cannot be expressed in BIOES (one
   label per token): `NERDataError`. The generator guarantees there are none.
2. **Export** (`export_row`, `export_rows`, `write_export`,
   `export_ner_dataset`; `piilab export-ner` on the command line): one row per
   record in the token-classification layout widely used for PII data sets:
   ``source_text``, ``masked_text`` (``[LABEL_n]`` placeholders numbered by
   `piilab.tokenization.mask_text` from the gold candidates, so numbering is
   the course's), ``privacy_mask`` (``{label, start, end, value}`` over
   ``source_text``), ``language``, ``split``, ``uid``, ``source_dataset``,
   ``tokens`` (the tokenizer's own token strings, which ``convert_tokens_to_ids``
   takes back; a byte-level BPE writes them as byte symbols, so read a token's
   text through its offsets), ``token_offsets`` (their
   ``(start, end)`` in ``source_text``: what makes a row checkable on its own)
   and ``token_classes`` (BIOES tags). Tokens exclude special tokens. Every row
   is verified as it is made (`verify_row`): tags decode to exactly the gold
   spans, the placeholders of ``masked_text`` stand for exactly those spans
   and the text reassembles to the source. A record whose spans do not align
   with the tokenizer's tokens is an error, or, when asked, skipped and
   listed by id and offsets, never exported with moved boundaries. Files are
   JSONL and Parquet that ``datasets.load_dataset("json" | "parquet")`` reads,
   written with mode 0600: they hold (synthetic) PII.
3. **A tiny encoder** (`train_encoder_tokenizer`, `build_tiny_encoder`): a
   2-layer BERT for token classification with a byte-level BPE tokenizer
   trained on the documents, offline, in a second. Its pre-tokenizer isolates
   each Hangul syllable and keeps scripts apart, so a Korean particle never
   shares a token with the name before it (``김가상님``, ``...@example.com으로``):
   the course's chat tokenizer (`piilab.tiny`) cannot express most of the
   corpus's spans (its tokens carry their leading space, ``" 김가상"``), and
   with trimmed offsets still about 1.5% end inside a token; with this one
   none does (`alignment_report` measures any tokenizer). Korean NER is
   commonly annotated per syllable for the same reason.
4. **Training** (`train_token_classifier`): a plain PyTorch loop (AdamW,
   cross-entropy over the 4N + 1 classes, special tokens ignored) for any
   ``AutoModelForTokenClassification``: the tiny encoder on a CPU, a hub model
   (`load_token_classifier`) on a GPU.
5. **Prediction and the leak metric** (`predict_spans`,
   `spans_to_model_output`, `model_predictions`): predicted tags are decoded to
   spans (`piilab.bioes.bioes_to_spans`); their values become ``TYPE<TAB>VALUE``
   rows, so `piilab.evaluation.evaluate` masks and scores the encoder exactly
   like the generative model, and `piilab.bioes.span_scores` adds span-level
   F1. The masker masks every occurrence of a predicted value, as it does for
   the generative model; a predicted span that cuts a digit run (``34-5678``
   out of ``1234-5678``) fails the numeric boundary rule there, so that
   occurrence stays unmasked (and a value found nowhere else is an unmatched
   row): the leak metric sees the cut.

What it deliberately does not do: it does not resolve overlapping gold
annotations of other data sets (it rejects them), it does not window long
documents (a text longer than the model accepts is an error, not silently
truncated: its tail would stay unmasked), and the tiny encoder learns the
templates of this corpus, not PII detection. Nothing here prints; error
messages name record ids, offsets and counts, never text. Steps 3-5 need the
``train`` extra (torch, transformers, tokenizers); writing Parquet needs
pyarrow (installed with ``datasets``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
import re
import time
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from piilab.bioes import (
    AlignmentError,
    EntitySpan,
    bioes_classes,
    bioes_to_spans,
    check_alignment,
    decoding_repairs,
    spans_to_bioes,
)
from piilab.dataset import atomic_write
from piilab.generator import GENERATOR_VERSION
from piilab.labels import LABEL_PRIORITY, LABELS
from piilab.matching import find_occurrences
from piilab.tokenization import TOKEN_PATTERN, mask_text, reassemble_text

__all__ = [
    "EXPORT_COLUMNS",
    "EXPORT_FORMATS",
    "TINY_ENCODER_CONFIG",
    "ExportResult",
    "MisalignedRecordError",
    "NERDataError",
    "TrainingRun",
    "alignment_report",
    "build_tiny_encoder",
    "export_ner_dataset",
    "export_row",
    "export_rows",
    "gold_spans",
    "load_token_classifier",
    "model_predictions",
    "predict_spans",
    "read_export",
    "row_mapping",
    "spans_to_model_output",
    "token_classification_example",
    "train_encoder_tokenizer",
    "train_token_classifier",
    "verify_row",
    "write_export",
]

#: The columns of an exported row, in order.
EXPORT_COLUMNS: tuple[str, ...] = (
    "source_text", "masked_text", "privacy_mask", "language", "split", "uid",
    "source_dataset", "tokens", "token_offsets", "token_classes",
)

#: File formats `write_export` can write.
EXPORT_FORMATS: tuple[str, ...] = ("jsonl", "parquet")

#: The ``source_dataset`` of rows exported from the generated corpus.
SOURCE_DATASET = f"piilab-synthetic-{GENERATOR_VERSION}"

#: File mode of exported rows: they hold (synthetic) PII.
PRIVATE_MODE = 0o600

#: Name of the (PII-free) description of an export, written next to the rows.
EXPORT_MANIFEST = "export_manifest.json"


class NERDataError(ValueError):
    """A record cannot be exported or trained as token classification.

    Messages name the record id, offsets and the reason, never a value.
    """


class MisalignedRecordError(NERDataError):
    """A gold span of the record starts or ends inside a token of this tokenizer."""


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


# --------------------------------------------------------------------------------
# 1. Gold spans
# --------------------------------------------------------------------------------


def _record_id(record: Mapping) -> str:
    return str(record.get("id", "?"))


def _gold_pairs(record: Mapping) -> list[tuple[str, str]]:
    """The record's normalized ``(TYPE, VALUE)`` pairs, in entity order, deduplicated."""
    rid = _record_id(record)
    pairs: dict[tuple[str, str], None] = {}
    for i, entity in enumerate(record.get("entities") or []):
        label = str(entity.get("type", "")).strip().upper()
        if label not in LABEL_PRIORITY:
            # The type is not echoed: a swapped type/value pair would print the value.
            raise NERDataError(f"record {rid}: entities[{i}] has a type outside LABELS")
        value = _nfc(str(entity.get("value", ""))).strip()
        if not value:
            raise NERDataError(f"record {rid}: entities[{i}] has an empty value")
        pairs[label, value] = None
    return list(pairs)


def gold_spans(record: Mapping) -> list[EntitySpan]:
    """Every gold occurrence of the record, as sorted ``(start, end, label)`` spans.

    Offsets index the NFC ``source_text``. Rules (module docstring, step 1):
    every occurrence of each value or permitted variant; identical spans merge;
    one span with two labels keeps the label earlier in `LABELS`; a gold value
    without an occurrence, or two occurrences that overlap without being
    identical, raise `NERDataError` naming the record and the offsets.

    >>> record = {"id": "d1", "source_text": "김가상님, 김 가 상님 (010-1234-5678)",
    ...           "entities": [{"type": "PERSON", "value": "김가상"},
    ...                        {"type": "PHONE", "value": "010-1234-5678"}]}
    >>> gold_spans(record)  # doctest: +NORMALIZE_WHITESPACE
    [EntitySpan(start=0, end=3, label='PERSON'), EntitySpan(start=6, end=11, label='PERSON'),
     EntitySpan(start=14, end=27, label='PHONE')]
    """
    rid = _record_id(record)
    source = _nfc(record["source_text"])
    label_at: dict[tuple[int, int], str] = {}
    for label, value in _gold_pairs(record):
        occurrences = find_occurrences(source, label, value)
        if not occurrences:
            raise NERDataError(f"record {rid}: a gold {label} value does not occur in source_text")
        for occurrence in occurrences:
            key = (occurrence.start, occurrence.end)
            known = label_at.get(key)
            if known is None or LABEL_PRIORITY[label] < LABEL_PRIORITY[known]:
                label_at[key] = label
    spans = sorted(EntitySpan(start, end, label) for (start, end), label in label_at.items())
    for first, second in itertools.pairwise(spans):
        if second.start < first.end:
            raise NERDataError(
                f"record {rid}: gold occurrences ({first.start}, {first.end}) and "
                f"({second.start}, {second.end}) overlap; BIOES gives each token one label")
    return spans


# --------------------------------------------------------------------------------
# 2. Export
# --------------------------------------------------------------------------------


def _encode(tokenizer: Any, text: str, *, special_tokens: bool) -> tuple[list[int], list]:
    """Token ids and ``(start, end)`` offsets of `text` (a fast tokenizer is required)."""
    if not getattr(tokenizer, "is_fast", False):
        raise TypeError("token classification needs a fast tokenizer (offset mappings)")
    encoding = tokenizer(text, add_special_tokens=special_tokens, return_offsets_mapping=True,
                         truncation=False)
    offsets = [(int(start), int(end)) for start, end in encoding["offset_mapping"]]
    return list(encoding["input_ids"]), offsets


def export_row(record: Mapping, tokenizer: Any, *,
               source_dataset: str = SOURCE_DATASET) -> dict[str, Any]:
    """One record in the export layout (`EXPORT_COLUMNS`), verified before it is returned.

    Raises `MisalignedRecordError` when a gold span does not align with the
    tokenizer's tokens, `NERDataError` for bad gold data or a failed check.
    """
    rid = _record_id(record)
    source = _nfc(record["source_text"])
    spans = gold_spans(record)
    ids, offsets = _encode(tokenizer, source, special_tokens=False)
    try:
        tags = spans_to_bioes(offsets, spans)
    except AlignmentError as exc:
        raise MisalignedRecordError(f"record {rid}: {exc}") from None
    mask = mask_text(source, _gold_pairs(record))
    row = {
        "source_text": source,
        "masked_text": mask.masked_text,
        "privacy_mask": [
            {"label": span.label, "start": span.start, "end": span.end,
             "value": source[span.start:span.end]}
            for span in spans
        ],
        "language": record.get("language", ""),
        "split": record.get("split", ""),
        "uid": rid,
        "source_dataset": source_dataset,
        "tokens": tokenizer.convert_ids_to_tokens(ids),
        "token_offsets": [[start, end] for start, end in offsets],
        "token_classes": tags,
    }
    masked_spans = [(s.start, s.end, s.type) for s in mask.spans]
    if masked_spans != [tuple(span) for span in spans]:
        raise NERDataError(f"record {rid}: the masker's spans differ from the gold spans")
    problems = verify_row(row)
    if problems:
        raise NERDataError(problems[0])
    return row


def row_mapping(row: Mapping) -> dict[str, str] | None:
    """The placeholder -> value mapping of a row, read off its texts; None if they disagree.

    Walks ``source_text`` and ``masked_text`` together: between the
    ``privacy_mask`` entries the two texts must be identical, and each entry
    must be replaced by one placeholder (the same placeholder for the same
    label and spelling). A placeholder-shaped string that was already in the
    source is just text.
    """
    source, masked = row["source_text"], row["masked_text"]
    mapping: dict[str, str] = {}
    cursor = position = 0  # in the source, in the masked text
    for entry in row["privacy_mask"]:
        gap = source[cursor:entry["start"]]
        if not masked.startswith(gap, position):
            return None
        position += len(gap)
        match = TOKEN_PATTERN.match(masked, position)
        if match is None or not match.group().startswith(f"[{entry['label']}_"):
            return None
        if mapping.setdefault(match.group(), entry["value"]) != entry["value"]:
            return None
        position, cursor = match.end(), entry["end"]
    return mapping if masked[position:] == source[cursor:] else None


def verify_row(row: Mapping) -> list[str]:
    """The problems of one exported row (empty when it is sound).

    Checks: the columns are there; ``privacy_mask`` is sorted, disjoint and its
    values are the source slices; tokens, offsets and classes have one entry
    per token; the classes decode, with no repair, to exactly the
    ``privacy_mask`` spans; ``masked_text`` replaces exactly those spans and
    reassembles to ``source_text``. Messages name the uid and offsets only.
    """
    uid = row.get("uid", "?")
    missing = [column for column in EXPORT_COLUMNS if column not in row]
    if missing:
        return [f"row {uid}: missing columns {missing}"]
    problems: list[str] = []
    source = row["source_text"]
    entries = row["privacy_mask"]
    spans = [EntitySpan(e["start"], e["end"], e["label"]) for e in entries]
    if spans != sorted(spans) or any(b.start < a.end for a, b in itertools.pairwise(spans)):
        problems.append(f"row {uid}: privacy_mask is not sorted and disjoint")
    for entry in entries:
        if source[entry["start"]:entry["end"]] != entry["value"]:
            problems.append(f"row {uid}: privacy_mask value at ({entry['start']}, "
                            f"{entry['end']}) is not the source text there")
    offsets = [tuple(pair) for pair in row["token_offsets"]]
    tags = row["token_classes"]
    if not len(row["tokens"]) == len(offsets) == len(tags):
        return [*problems, f"row {uid}: tokens, token_offsets and token_classes differ in length"]
    if decoding_repairs(offsets, tags):
        problems.append(f"row {uid}: token_classes are not a well-formed BIOES sequence")
    decoded = bioes_to_spans(offsets, tags)
    if decoded != spans:
        problems.append(f"row {uid}: token_classes decode to {len(decoded)} spans, not the "
                        f"{len(spans)} privacy_mask spans")
    mapping = row_mapping(row)
    if mapping is None:
        problems.append(f"row {uid}: masked_text does not replace exactly the privacy_mask spans")
    elif reassemble_text(row["masked_text"], mapping) != source:
        problems.append(f"row {uid}: masked_text does not reassemble to source_text")
    return problems


@dataclass(frozen=True)
class ExportResult:
    """The rows of one export and the records left out.

    `skipped` lists ``(record id, reason)`` for misaligned records (only when
    they were allowed to be skipped); reasons name offsets, never values.
    """

    rows: tuple[dict[str, Any], ...]
    skipped: tuple[tuple[str, str], ...]


def export_rows(records: Iterable[Mapping], tokenizer: Any, *, skip_misaligned: bool = False,
                source_dataset: str = SOURCE_DATASET) -> ExportResult:
    """`export_row` for every record, in order.

    A misaligned record raises `MisalignedRecordError` unless
    `skip_misaligned`, in which case it is left out and listed in `skipped`.
    """
    rows: list[dict[str, Any]] = []
    skipped: list[tuple[str, str]] = []
    for record in records:
        try:
            rows.append(export_row(record, tokenizer, source_dataset=source_dataset))
        except MisalignedRecordError as exc:
            if not skip_misaligned:
                raise
            skipped.append((_record_id(record), str(exc)))
    return ExportResult(tuple(rows), tuple(skipped))


def _arrow_schema():
    import pyarrow as pa

    entry = pa.struct([("label", pa.string()), ("start", pa.int64()), ("end", pa.int64()),
                       ("value", pa.string())])
    return pa.schema([
        ("source_text", pa.string()),
        ("masked_text", pa.string()),
        ("privacy_mask", pa.list_(entry)),
        ("language", pa.string()),
        ("split", pa.string()),
        ("uid", pa.string()),
        ("source_dataset", pa.string()),
        ("tokens", pa.list_(pa.string())),
        ("token_offsets", pa.list_(pa.list_(pa.int64()))),
        ("token_classes", pa.list_(pa.string())),
    ])


def _jsonl_bytes(rows: Iterable[Mapping]) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")


def _parquet_bytes(rows: Sequence[Mapping]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist([dict(row) for row in rows], schema=_arrow_schema())
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def write_export(out_dir: str | os.PathLike, rows_by_split: Mapping[str, Sequence[Mapping]], *,
                 formats: Iterable[str] = EXPORT_FORMATS,
                 info: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Write ``SPLIT.jsonl`` / ``SPLIT.parquet`` (mode 0600) and the manifest; return it.

    The output directory is created with mode 0700 when it does not exist;
    files are written atomically. The manifest (``export_manifest.json``)
    holds counts, file hashes, the tag classes and `info`, never text.
    """
    formats = tuple(dict.fromkeys(formats))
    unknown = [f for f in formats if f not in EXPORT_FORMATS]
    if unknown or not formats:
        raise ValueError(f"formats must be among {EXPORT_FORMATS}")
    out = Path(out_dir)
    out.mkdir(mode=0o700, parents=True, exist_ok=True)
    # Serialize everything first: a failure leaves no half-written export behind.
    blobs: dict[str, bytes] = {}
    for split, rows in rows_by_split.items():
        if "jsonl" in formats:
            blobs[f"{split}.jsonl"] = _jsonl_bytes(rows)
        if "parquet" in formats:
            blobs[f"{split}.parquet"] = _parquet_bytes(rows)
    for name, data in blobs.items():
        atomic_write(out / name, data, PRIVATE_MODE)
    manifest = {
        "columns": list(EXPORT_COLUMNS),
        "token_classes": list(bioes_classes(LABELS)),
        "splits": {split: {"rows": len(rows)} for split, rows in rows_by_split.items()},
        "files": {name: {"sha256": hashlib.sha256(data).hexdigest()}
                  for name, data in sorted(blobs.items())},
        **dict(info or {}),
    }
    atomic_write(out / EXPORT_MANIFEST,
                 (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode())
    return manifest


def export_ner_dataset(splits: Mapping[str, Iterable[Mapping]], tokenizer: Any,
                       out_dir: str | os.PathLike, *, formats: Iterable[str] = EXPORT_FORMATS,
                       skip_misaligned: bool = False, tokenizer_name: str = "") -> dict[str, Any]:
    """Export several splits (``{split: records}``) and write them; return the manifest.

    Every row is built and verified before the first file is written. The
    manifest adds the tokenizer name and the skipped records (ids and reasons).
    """
    results = {split: export_rows(records, tokenizer, skip_misaligned=skip_misaligned)
               for split, records in splits.items()}
    info = {
        "source_dataset": SOURCE_DATASET,
        "tokenizer": tokenizer_name,
        "skipped": {split: [{"uid": uid, "reason": reason} for uid, reason in result.skipped]
                    for split, result in results.items()},
    }
    return write_export(out_dir, {split: result.rows for split, result in results.items()},
                        formats=formats, info=info)


def read_export(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read an exported JSONL file back (the rows, as written)."""
    with Path(path).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# --------------------------------------------------------------------------------
# 3. The tiny encoder
# --------------------------------------------------------------------------------

#: Special tokens of the tiny encoder's tokenizer.
PAD, CLS, SEP = "[PAD]", "[CLS]", "[SEP]"

#: Architecture of the tiny encoder: a 2-layer BERT (about 0.2 M parameters with
#: the default vocabulary). Trained from scratch, BERT's usual initialization
#: (std 0.02) and dropout leave it on the "everything is O" plateau for hundreds
#: of steps; a larger initial scale and no dropout let a CPU run of a few hundred
#: steps learn the corpus's templates.
TINY_ENCODER_CONFIG: Mapping[str, Any] = {
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 128,
    "max_position_embeddings": 512,
    "type_vocab_size": 1,
    "hidden_dropout_prob": 0.0,
    "attention_probs_dropout_prob": 0.0,
    "initializer_range": 0.1,
}

#: Pre-tokenization of the tiny encoder: each Hangul syllable (with the space
#: before it) is a piece of its own, so no token spans a syllable boundary.
HANGUL_SYLLABLE = r" ?\p{Hangul}"


def train_encoder_tokenizer(records: Iterable[Mapping[str, Any]], vocab_size: int = 2048):
    """Train the tiny encoder's byte-level BPE tokenizer on the records' documents.

    Differences from the chat tokenizer of `piilab.tiny`, all for alignment:
    Hangul syllables are isolated before the byte-level split (so ``상님`` or
    ``com으로`` never become one token), token offsets leave out the leading
    space (``" 김"`` covers ``김`` only), and ``[CLS] ... [SEP]`` are added with
    empty offsets. Returns a `transformers.PreTrainedTokenizerFast`.
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(HANGUL_SYLLABLE), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False),
    ])
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=[PAD, CLS, SEP],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator([_nfc(r["source_text"]) for r in records], trainer=trainer)
    bpe.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=True),
        processors.TemplateProcessing(
            single=f"{CLS} $A {SEP}", pair=f"{CLS} $A {SEP} $B {SEP}",
            special_tokens=[(CLS, bpe.token_to_id(CLS)), (SEP, bpe.token_to_id(SEP))]),
    ])
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        pad_token=PAD,
        cls_token=CLS,
        sep_token=SEP,
        model_input_names=["input_ids", "attention_mask"],
        model_max_length=TINY_ENCODER_CONFIG["max_position_embeddings"],
        clean_up_tokenization_spaces=False,
    )


def _label_maps(labels: Sequence[str]) -> tuple[dict[int, str], dict[str, int]]:
    classes = bioes_classes(labels)
    return dict(enumerate(classes)), {tag: i for i, tag in enumerate(classes)}


def build_tiny_encoder(out_dir: str | os.PathLike, records: Iterable[Mapping[str, Any]],
                       labels: Sequence[str] = LABELS, seed: int = 0, *,
                       vocab_size: int = 2048) -> Path:
    """Write a tokenizer and a randomly initialized tiny token classifier; return the path.

    `records` are the training records (their documents train the tokenizer);
    the model has 4N + 1 output classes for `labels` (`piilab.bioes.bioes_classes`,
    in ``config.id2label``). The directory loads with ``AutoTokenizer`` and
    ``AutoModelForTokenClassification.from_pretrained``, offline. The same
    records and seed give the same files; the caller's torch RNG is left as it was.
    """
    import torch
    from transformers import BertConfig, BertForTokenClassification

    records = list(records)
    if not records:
        raise ValueError("build_tiny_encoder needs at least one training record")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = train_encoder_tokenizer(records, vocab_size=vocab_size)
    id2label, label2id = _label_maps(labels)
    config = BertConfig(
        vocab_size=len(tokenizer),
        pad_token_id=tokenizer.pad_token_id,
        num_labels=len(id2label),
        id2label=id2label,
        label2id=label2id,
        **TINY_ENCODER_CONFIG,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = BertForTokenClassification(config)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    provenance = {
        "builder": "piilab.ner.build_tiny_encoder",
        "seed": seed,
        "training_records": len(records),
        "vocab_size": len(tokenizer),
        "labels": list(labels),
        "parameters": sum(p.numel() for p in model.parameters()),
    }
    (out / "piilab_tiny_encoder.json").write_text(
        json.dumps(provenance, indent=2, sort_keys=True) + "\n")
    return out


def load_token_classifier(model_id: str | os.PathLike, labels: Sequence[str] = LABELS, **kwargs):
    """Load ``(model, tokenizer)`` for token classification over `labels`.

    For a hub encoder (say ``klue/roberta-base`` on Colab) the classification
    head is new: it is sized for the 4N + 1 BIOES classes of `labels`. For a
    directory from `build_tiny_encoder` nothing changes. `kwargs` go to
    ``AutoModelForTokenClassification.from_pretrained``.
    """
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    id2label, label2id = _label_maps(labels)
    tokenizer = AutoTokenizer.from_pretrained(model_id)
    if not tokenizer.is_fast:
        raise TypeError("token classification needs a fast tokenizer (offset mappings)")
    model = AutoModelForTokenClassification.from_pretrained(
        model_id, num_labels=len(id2label), id2label=id2label, label2id=label2id,
        ignore_mismatched_sizes=True, **kwargs)
    return model, tokenizer


# --------------------------------------------------------------------------------
# 4. Training
# --------------------------------------------------------------------------------

#: The label id that cross-entropy ignores (special tokens, padding).
IGNORE_INDEX = -100


def token_classification_example(record: Mapping, tokenizer: Any,
                                 label2id: Mapping[str, int]) -> dict[str, list[int]]:
    """``input_ids``, ``attention_mask`` and ``labels`` of one record.

    Tokens with empty offsets (special tokens) get label -100, so the loss
    ignores them. Raises `MisalignedRecordError` for a misaligned record and
    ValueError for a tag the model has no class for.
    """
    rid = _record_id(record)
    source = _nfc(record["source_text"])
    ids, offsets = _encode(tokenizer, source, special_tokens=True)
    spans = gold_spans(record)
    try:
        tags = spans_to_bioes(offsets, spans)
    except AlignmentError as exc:
        raise MisalignedRecordError(f"record {rid}: {exc}") from None
    unknown = sorted({tag for tag in tags if tag not in label2id})
    if unknown:
        raise ValueError(f"record {rid}: the model has no class for tags {unknown}")
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
        raise ValueError("no trainable records (all too long or misaligned)")

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


# --------------------------------------------------------------------------------
# 5. Prediction, model-style output and the leak metric
# --------------------------------------------------------------------------------


def predict_spans(model: Any, tokenizer: Any, texts: Sequence[str], *, batch_size: int = 32,
                  device: str | None = None) -> list[list[EntitySpan]]:
    """Predicted spans per text: argmax tag per token, decoded by `bioes_to_spans`.

    Offsets index the NFC-normalized text (as every span in the course does).
    Ill-formed tag sequences are decoded by the repair rule of
    `piilab.bioes`; tags on special tokens are ignored. A text longer than the
    model accepts raises ValueError naming its index: truncating it would
    leave its tail unmasked.
    """
    import torch

    texts = [_nfc(text) for text in texts]
    limit = _max_length(model, tokenizer, None)
    id2label = {int(i): tag for i, tag in model.config.id2label.items()}
    device = device or next(model.parameters()).device
    was_training = model.training
    model.eval()
    out: list[list[EntitySpan]] = []
    try:
        for first in range(0, len(texts), batch_size):
            chunk = texts[first:first + batch_size]
            encoding = tokenizer(chunk, return_offsets_mapping=True, padding=True,
                                 truncation=False, return_tensors="pt")
            lengths = encoding["attention_mask"].sum(dim=1).tolist()
            for i, length in enumerate(lengths):
                if length > limit:
                    raise ValueError(f"text {first + i} has {length} tokens; the model accepts "
                                     f"{limit}: split it before prediction")
            offsets = encoding.pop("offset_mapping").tolist()
            inputs = {key: value.to(device) for key, value in encoding.items()}
            with torch.no_grad():
                predicted = model(**inputs).logits.argmax(dim=-1).tolist()
            masks = encoding["attention_mask"].tolist()
            for row_offsets, row_ids, row_mask in zip(offsets, predicted, masks, strict=True):
                # Only the real tokens (padding may sit on either side).
                keep = [i for i, attended in enumerate(row_mask) if attended]
                pairs = [(int(row_offsets[i][0]), int(row_offsets[i][1])) for i in keep]
                tags = [id2label[row_ids[i]] for i in keep]
                out.append(bioes_to_spans(pairs, tags))
    finally:
        model.train(was_training)
    return out


_TSV_BREAKS = re.compile(r"[\t\r\n]+")


def spans_to_model_output(text: str, spans: Iterable[tuple[int, int, str]]) -> str:
    """The ``TYPE<TAB>VALUE`` rows the generative model would have written for these spans.

    One row per distinct (label, value), in source order; the value is the
    span's text. A tab or line break inside a value (a name written
    ``김\\n가\\n상``) cannot sit in a TSV row, so each run of them becomes one
    space: the masker still finds the original through the permitted PERSON
    and numeric variants; for other values such a row stays unmatched.

    >>> spans_to_model_output("김가상님 010-1234-5678", [(0, 3, "PERSON"), (5, 18, "PHONE")])
    'PERSON\\t김가상\\nPHONE\\t010-1234-5678'
    """
    text = _nfc(text)
    rows: dict[str, None] = {}
    for start, end, label in sorted(spans):
        value = _TSV_BREAKS.sub(" ", text[start:end]).strip()
        if value:
            rows[f"{label}\t{value}"] = None
    return "\n".join(rows)


def model_predictions(records: Sequence[Mapping],
                      spans: Sequence[Iterable[tuple[int, int, str]]]) -> list[dict[str, Any]]:
    """Prediction lines (``{"id", "output", "parse_success"}``) for `piilab.evaluation.evaluate`.

    `spans` holds the predicted spans of each record, in record order (as
    `predict_spans` returns them). The parse flag is computed as for the
    generative model (`piilab.inference.make_prediction`).
    """
    from piilab.inference import make_prediction

    if len(records) != len(spans):
        raise ValueError(f"{len(spans)} span lists for {len(records)} records")
    return [make_prediction(record["id"], spans_to_model_output(record["source_text"], found),
                            _nfc(record["source_text"]))
            for record, found in zip(records, spans, strict=True)]


def alignment_report(records: Iterable[Mapping], tokenizer: Any) -> dict[str, Any]:
    """How well a tokenizer's tokens fit the gold spans of `records` (offsets only).

    Returns ``{"records", "spans", "misaligned_spans", "misaligned_records",
    "reasons": {reason: count}, "examples": [{"uid", "start", "end", "label",
    "reason"}, ...]}`` (at most 20 examples): what to look at before exporting
    or training with a hub tokenizer.
    """
    report: dict[str, Any] = {"records": 0, "spans": 0, "misaligned_spans": 0,
                              "misaligned_records": 0, "reasons": {}, "examples": []}
    for record in records:
        spans = gold_spans(record)
        _, offsets = _encode(tokenizer, _nfc(record["source_text"]), special_tokens=False)
        problems = check_alignment(offsets, spans)
        report["records"] += 1
        report["spans"] += len(spans)
        report["misaligned_spans"] += len(problems)
        report["misaligned_records"] += bool(problems)
        for problem in problems:
            report["reasons"][problem.reason] = report["reasons"].get(problem.reason, 0) + 1
            if len(report["examples"]) < 20:
                report["examples"].append({"uid": _record_id(record), "start": problem.start,
                                           "end": problem.end, "label": problem.label,
                                           "reason": problem.reason})
    return report
