"""The NER export: one verified token-classification row per record (chapter 08, step 2).

Part of `piilab.ner` (see its docstring for the row layout). `export_row`
builds a row and checks it with `verify_row` before returning it; `export_rows`
does every record (optionally skipping misaligned ones, listed by id and
offsets in the result and the manifest); `write_export` writes JSONL and
Parquet (mode 0600: the rows hold synthetic PII) and a PII-free manifest, all
files or none (`piilab.files.write_all`, the manifest last), refusing files
already there unless ``force``; `export_ner_dataset` does all of it for several
splits; `read_export` reads a JSONL file back.

Messages name a record by where it came from (``data/test.jsonl:3`` when the
caller passes `where`, else ``record 3``: its position), never by its id, and
name offsets and reasons, never a value. The records exported together must
have string ids, unique among them (the ``uid`` column).

What it does not do: tokenize by itself (it takes any fast tokenizer) or
resolve overlapping gold spans (`piilab.ner.spans` rejects them).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from piilab.bioes import (
    AlignmentError,
    EntitySpan,
    bioes_classes,
    bioes_to_spans,
    decoding_repairs,
    spans_to_bioes,
)
from piilab.files import PRIVATE_MODE, check_outputs, output_folder, write_all
from piilab.generator import GENERATOR_VERSION
from piilab.inputs import loads_json
from piilab.labels import LABELS, nfc
from piilab.masking import TOKEN_PATTERN, mask_text, reassemble_text
from piilab.ner.encoder import _encode
from piilab.ner.spans import (
    MisalignedRecordError,
    NERDataError,
    _gold_pairs,
    _record_id,
    gold_spans,
)

__all__ = [
    "EXPORT_COLUMNS",
    "EXPORT_FORMATS",
    "EXPORT_MANIFEST",
    "PRIVATE_MODE",
    "SOURCE_DATASET",
    "ExportResult",
    "export_ner_dataset",
    "export_row",
    "export_rows",
    "read_export",
    "row_mapping",
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

#: Name of the (PII-free) description of an export, written next to the rows.
EXPORT_MANIFEST = "export_manifest.json"


def _reason(exc: Exception, record: Mapping) -> str:
    """The message of a `piilab.ner.spans` error without its ``record <id>: `` prefix."""
    return str(exc).removeprefix(f"record {_record_id(record)}: ")


def export_row(record: Mapping, tokenizer: Any, *, source_dataset: str = SOURCE_DATASET,
               where: str = "the record") -> dict[str, Any]:
    """One record in the export layout (`EXPORT_COLUMNS`), verified before it is returned.

    Raises `MisalignedRecordError` when a gold span does not align with the
    tokenizer's tokens, `NERDataError` for bad gold data or a failed check;
    messages name the record by `where` (e.g. ``data/test.jsonl:3``).
    """
    if not isinstance(record, Mapping):
        raise NERDataError(f"{where}: a record must be an object")
    for name in ("id", "source_text"):
        if not isinstance(record.get(name), str):
            raise NERDataError(f"{where}: field '{name}' is missing or not a string")
    if not isinstance(record.get("entities"), list):
        raise NERDataError(f"{where}: field 'entities' is missing or not a list")
    rid = record["id"]
    source = nfc(record["source_text"])
    try:
        spans = gold_spans(record)
    except NERDataError as exc:
        raise type(exc)(f"{where}: {_reason(exc, record)}") from None
    ids, offsets = _encode(tokenizer, source, special_tokens=False)
    try:
        tags = spans_to_bioes(offsets, spans)
    except AlignmentError as exc:
        raise MisalignedRecordError(f"{where}: {exc}; such records can be left out "
                                    "(--skip-misaligned, skip_misaligned=True)") from None
    try:
        mask = mask_text(source, _gold_pairs(record))
    except NERDataError as exc:
        raise NERDataError(f"{where}: {_reason(exc, record)}") from None
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
        raise NERDataError(f"{where}: the masker's spans differ from the gold spans")
    problems = _row_problems(row)
    if problems:
        raise NERDataError(f"{where}: {problems[0]}")
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
    """The problems of one exported row (empty when it is sound), each ``row <uid>: ...``.

    See `_row_problems` for the checks. The uid is the row's own column (the
    exported file holds it anyway); `export_row` names the record by its place.
    """
    uid = row.get("uid", "?") if isinstance(row, Mapping) else "?"
    return [f"row {uid}: {problem}" for problem in _row_problems(row)]


def _row_problems(row: Mapping) -> list[str]:
    """The problems of one exported row (empty when it is sound).

    Checks: the columns are there; ``privacy_mask`` is sorted, disjoint and its
    values are the source slices; tokens, offsets and classes have one entry
    per token; the classes decode, with no repair, to exactly the
    ``privacy_mask`` spans; ``masked_text`` replaces exactly those spans and
    reassembles to ``source_text``. Messages name offsets only.
    """
    if not isinstance(row, Mapping):
        return ["not an object"]
    missing = [column for column in EXPORT_COLUMNS if column not in row]
    if missing:
        return [f"missing columns {missing}"]
    problems: list[str] = []
    source = row["source_text"]
    entries = row["privacy_mask"]
    spans = [EntitySpan(e["start"], e["end"], e["label"]) for e in entries]
    if spans != sorted(spans) or any(b.start < a.end for a, b in itertools.pairwise(spans)):
        problems.append("privacy_mask is not sorted and disjoint")
    for entry in entries:
        if source[entry["start"]:entry["end"]] != entry["value"]:
            problems.append(f"privacy_mask value at ({entry['start']}, "
                            f"{entry['end']}) is not the source text there")
    offsets = [tuple(pair) for pair in row["token_offsets"]]
    tags = row["token_classes"]
    if not len(row["tokens"]) == len(offsets) == len(tags):
        return [*problems, "tokens, token_offsets and token_classes differ in length"]
    if decoding_repairs(offsets, tags):
        problems.append("token_classes are not a well-formed BIOES sequence")
    decoded = bioes_to_spans(offsets, tags)
    if decoded != spans:
        problems.append(f"token_classes decode to {len(decoded)} spans, not the "
                        f"{len(spans)} privacy_mask spans")
    mapping = row_mapping(row)
    if mapping is None:
        problems.append("masked_text does not replace exactly the privacy_mask spans")
    elif reassemble_text(row["masked_text"], mapping) != source:
        problems.append("masked_text does not reassemble to source_text")
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
                source_dataset: str = SOURCE_DATASET,
                where: Sequence[str] | None = None) -> ExportResult:
    """`export_row` for every record, in order.

    A misaligned record raises `MisalignedRecordError` unless
    `skip_misaligned`, in which case it is left out and listed in `skipped`.
    `where` names each record in messages (``file:line``; default ``record N``,
    the position from 1). Ids must be strings, unique among `records`.
    """
    records = list(records)
    places = list(where) if where is not None else [f"record {i}" for i in
                                                     range(1, len(records) + 1)]
    if len(places) != len(records):
        raise NERDataError("where must name every record")
    first: dict[str, str] = {}
    for record, place in zip(records, places, strict=True):
        rid = record.get("id") if isinstance(record, Mapping) else None
        if not isinstance(rid, str):
            raise NERDataError(f"{place}: field 'id' is missing or not a string")
        if rid in first:
            raise NERDataError(f"{place}: duplicate id (first at {first[rid]})")
        first[rid] = place
    rows: list[dict[str, Any]] = []
    skipped: list[tuple[str, str]] = []
    for record, place in zip(records, places, strict=True):
        try:
            rows.append(export_row(record, tokenizer, source_dataset=source_dataset, where=place))
        except MisalignedRecordError as exc:
            if not skip_misaligned:
                raise
            skipped.append((record["id"], str(exc).removeprefix(f"{place}: ")))
    return ExportResult(tuple(rows), tuple(skipped))


def arrow_schema(*, token_offsets: bool = True):
    """The Arrow schema of exported rows: the card's nine columns, plus ``token_offsets``
    (this export's tenth) unless `token_offsets` is False (the finance dataset derives them).
    pyarrow is imported here, not at module load."""
    import pyarrow as pa

    entry = pa.struct([("label", pa.string()), ("start", pa.int64()), ("end", pa.int64()),
                       ("value", pa.string())])
    columns = [
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
    ]
    return pa.schema([c for c in columns if token_offsets or c[0] != "token_offsets"])


def _jsonl_bytes(rows: Iterable[Mapping]) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")


def _parquet_bytes(rows: Sequence[Mapping]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist([dict(row) for row in rows], schema=arrow_schema())
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def write_export(out_dir: str | os.PathLike, rows_by_split: Mapping[str, Sequence[Mapping]], *,
                 formats: Iterable[str] = EXPORT_FORMATS,
                 info: Mapping[str, Any] | None = None, force: bool = True,
                 inputs: Iterable[str | os.PathLike] = ()) -> dict[str, Any]:
    """Write ``SPLIT.jsonl`` / ``SPLIT.parquet`` (mode 0600) and the manifest; return it.

    The output directory is created with mode 0700 when it does not exist (and
    removed again if the write fails). The files are written all or none, the
    manifest last (`piilab.files.write_all`); a file already there is refused
    unless `force`, and one of `inputs` always. The manifest
    (``export_manifest.json``) holds counts, file hashes, the tag classes and
    `info`, never text.
    """
    formats = tuple(dict.fromkeys(formats))
    unknown = [f for f in formats if f not in EXPORT_FORMATS]
    if unknown or not formats:
        raise NERDataError(f"formats must be among {EXPORT_FORMATS}")
    out = Path(out_dir)
    # Serialize everything first: a failure leaves no half-written export behind.
    blobs: dict[str, bytes] = {}
    for split, rows in rows_by_split.items():
        if "jsonl" in formats:
            blobs[f"{split}.jsonl"] = _jsonl_bytes(rows)
        if "parquet" in formats:
            blobs[f"{split}.parquet"] = _parquet_bytes(rows)
    manifest = {
        "columns": list(EXPORT_COLUMNS),
        "token_classes": list(bioes_classes(LABELS)),
        "splits": {split: {"rows": len(rows)} for split, rows in rows_by_split.items()},
        "files": {name: {"sha256": hashlib.sha256(data).hexdigest()}
                  for name, data in sorted(blobs.items())},
        **dict(info or {}),
    }
    manifest_blob = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    names = [*blobs, EXPORT_MANIFEST]
    with output_folder(out, mode=0o700):
        check_outputs([out / name for name in names], inputs=inputs, force=force)
        write_all([*((out / name, data, PRIVATE_MODE) for name, data in blobs.items()),
                   (out / EXPORT_MANIFEST, manifest_blob, None)])
    return manifest


def export_ner_dataset(splits: Mapping[str, Iterable[Mapping]], tokenizer: Any,
                       out_dir: str | os.PathLike, *, formats: Iterable[str] = EXPORT_FORMATS,
                       skip_misaligned: bool = False, tokenizer_name: str = "",
                       where: Mapping[str, Sequence[str]] | None = None, force: bool = True,
                       inputs: Iterable[str | os.PathLike] = ()) -> dict[str, Any]:
    """Export several splits (``{split: records}``) and write them; return the manifest.

    Every row is built and verified before the first file is written. The
    manifest adds the tokenizer name and the skipped records (ids and reasons).
    `where` names each split's records in messages (``{split: [file:line]}``);
    `force` and `inputs` are those of `write_export`. Ids must be unique across
    all splits.
    """
    splits = {split: list(records) for split, records in splits.items()}
    places = {split: list(where[split]) if where is not None else
              [f"{split} record {i}" for i in range(1, len(records) + 1)]
              for split, records in splits.items()}
    # One id check over all splits (a uid is unique in the whole export).
    seen: dict[str, str] = {}
    for split, records in splits.items():
        for record, place in zip(records, places[split], strict=True):
            rid = record.get("id") if isinstance(record, Mapping) else None
            if isinstance(rid, str) and rid in seen:
                raise NERDataError(f"{place}: duplicate id (first at {seen[rid]})")
            if isinstance(rid, str):
                seen[rid] = place
    results = {split: export_rows(records, tokenizer, skip_misaligned=skip_misaligned,
                                  where=places[split])
               for split, records in splits.items()}
    info = {
        "source_dataset": SOURCE_DATASET,
        "tokenizer": tokenizer_name,
        "skipped": {split: [{"uid": uid, "reason": reason} for uid, reason in result.skipped]
                    for split, result in results.items()},
    }
    return write_export(out_dir, {split: result.rows for split, result in results.items()},
                        formats=formats, info=info, force=force, inputs=inputs)


def read_export(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read an exported JSONL file back (the rows, as written); errors name file and line."""
    with Path(path).open("rb") as fh:
        return [loads_json(line, f"{path}:{number}")
                for number, line in enumerate(fh, 1) if line.strip()]
