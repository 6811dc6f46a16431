"""Storing, reading and verifying the corpus on disk (chapter 02).

Files: ``train.jsonl``, ``validation.jsonl``, ``test.jsonl`` (UTF-8, one JSON object
per line, keys sorted, no spaces, ``\\n`` after each record) and ``manifest.json``
(generator version, seed, and per split its file name, record count, ko/en counts
and SHA-256). Every file is written atomically: a temporary file in the same
directory, flushed, then renamed over the target, so a crash never leaves half a
split behind. The manifest is written last.

A directory that already holds a *different* dataset is not overwritten unless
``force=True``; rewriting the same dataset is harmless (the bytes are identical).

What this module does not do: decide what a record means. It checks structure
(fields, types, counts, hashes); the content rules are tested in `tests/`.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from piilab.generator import (
    DEFAULT_SEED,
    GENERATOR_VERSION,
    SPLIT_SIZES,
    SPLITS,
    generate_dataset,
)
from piilab.labels import LABELS

MANIFEST = "manifest.json"
REQUIRED_FIELDS: dict[str, type] = {
    "id": str,
    "split": str,
    "language": str,
    "source_text": str,
    "entities": list,
    "target_tsv": str,
    "template_id": str,
}


class DatasetError(ValueError):
    """A dataset file is missing, malformed or inconsistent (never echoes text)."""


class DatasetExistsError(DatasetError):
    """The output directory holds a different dataset and `force` was not given."""


def dumps_record(record: dict) -> str:
    """The canonical one-line serialization used in the split files."""
    return json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def split_bytes(records: Iterable[dict]) -> bytes:
    return "".join(dumps_record(r) + "\n" for r in records).encode("utf-8")


def atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write `data` to `path` through a temporary file and a rename."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def build_manifest(seed: int, blobs: dict[str, bytes], records: dict[str, list[dict]]) -> dict:
    splits = {}
    for split in SPLITS:
        langs = Counter(r["language"] for r in records[split])
        splits[split] = {
            "file": f"{split}.jsonl",
            "records": len(records[split]),
            "ko": langs.get("ko", 0),
            "en": langs.get("en", 0),
            "sha256": hashlib.sha256(blobs[split]).hexdigest(),
        }
    return {"generator_version": GENERATOR_VERSION, "seed": seed, "splits": splits}


def manifest_bytes(manifest: dict) -> bytes:
    return (json.dumps(manifest, ensure_ascii=False, sort_keys=True, indent=2) + "\n").encode()


def write_dataset(out_dir: str | os.PathLike, seed: int = DEFAULT_SEED, *, scale: int = 1,
                  force: bool = False,
                  progress: Callable[[int, int], None] | None = None) -> dict:
    """Generate the corpus and write it with its manifest; return the manifest.

    Raises `DatasetExistsError` when `out_dir` already holds a different dataset
    (another seed, version or edited files) and `force` is False.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    records = generate_dataset(seed, scale=scale, progress=progress)
    blobs = {split: split_bytes(records[split]) for split in SPLITS}
    manifest = build_manifest(seed, blobs, records)
    new_manifest = manifest_bytes(manifest)
    if not force:
        _refuse_to_clobber(out, new_manifest, blobs)
    for split in SPLITS:
        atomic_write(out / f"{split}.jsonl", blobs[split])
    atomic_write(out / MANIFEST, new_manifest)
    return manifest


def _refuse_to_clobber(out: Path, new_manifest: bytes, blobs: dict[str, bytes]) -> None:
    old = out / MANIFEST
    existing = [out / f"{s}.jsonl" for s in SPLITS if (out / f"{s}.jsonl").exists()]
    if old.exists():
        if old.read_bytes() != new_manifest:
            raise DatasetExistsError(
                f"{out} holds a different dataset (its manifest differs); use --force to overwrite"
            )
        # Same manifest: the split files must be the ones it describes, or someone edited them.
        for path in existing:
            split = path.stem
            if path.read_bytes() != blobs[split]:
                raise DatasetExistsError(
                    f"{path} differs from the dataset its manifest describes; use --force"
                )
    elif existing:
        raise DatasetExistsError(f"{out} holds split files without a manifest; use --force")


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    """Read a JSONL file; a malformed line raises `DatasetError` naming file and line."""
    path = Path(path)
    records = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}:{lineno}: malformed JSON ({exc.msg})") from None
            if not isinstance(obj, dict):
                raise DatasetError(f"{path}:{lineno}: a record must be a JSON object")
            records.append(obj)
    return records


def validate_record(record: dict, where: str = "") -> None:
    """Check the fields and types of one record; errors name the record id and field."""
    rid = record.get("id", "?")
    prefix = f"{where}record {rid!s}"
    for name, kind in REQUIRED_FIELDS.items():
        if name not in record:
            raise DatasetError(f"{prefix}: missing field '{name}'")
        if not isinstance(record[name], kind):
            raise DatasetError(f"{prefix}: field '{name}' must be {kind.__name__}")
    if record["language"] not in ("ko", "en"):
        raise DatasetError(f"{prefix}: field 'language' must be 'ko' or 'en'")
    for i, ent in enumerate(record["entities"]):
        if not isinstance(ent, dict) or set(ent) != {"type", "value"}:
            raise DatasetError(f"{prefix}: entities[{i}] must be an object with 'type' and 'value'")
        if ent["type"] not in LABELS:
            # The type is not echoed: a swapped type/value pair would print the value.
            raise DatasetError(f"{prefix}: entities[{i}] has a type outside LABELS")
        if not isinstance(ent["value"], str) or not ent["value"].strip():
            raise DatasetError(f"{prefix}: entities[{i}] has an empty value")


def load_dataset_dir(data_dir: str | os.PathLike) -> dict[str, list[dict]]:
    """Read the three split files of a dataset directory."""
    d = Path(data_dir)
    out = {}
    for split in SPLITS:
        path = d / f"{split}.jsonl"
        if not path.exists():
            raise DatasetError(f"{path}: file is missing")
        out[split] = read_jsonl(path)
    return out


@dataclass
class VerifyReport:
    ok: bool
    problems: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


def verify_dataset(data_dir: str | os.PathLike) -> VerifyReport:
    """Recompute hashes and counts and compare them with the manifest.

    Never raises for a bad dataset: every problem found is listed in the report
    (missing file, hash mismatch, malformed line, wrong counts, duplicate ids).
    """
    d = Path(data_dir)
    problems: list[str] = []
    counts: dict[str, int] = {}
    try:
        manifest = json.loads((d / MANIFEST).read_text(encoding="utf-8"))
        splits = manifest["splits"]
    except FileNotFoundError:
        return VerifyReport(False, [f"{d / MANIFEST}: file is missing"])
    except (json.JSONDecodeError, KeyError, TypeError):
        return VerifyReport(False, [f"{d / MANIFEST}: malformed manifest"])
    seen_ids: set[str] = set()
    for split, meta in sorted(splits.items()):
        path = d / meta.get("file", f"{split}.jsonl")
        if not path.exists():
            problems.append(f"{path}: file is missing")
            continue
        blob = path.read_bytes()
        if hashlib.sha256(blob).hexdigest() != meta.get("sha256"):
            problems.append(f"{path}: SHA-256 differs from the manifest")
        try:
            records = read_jsonl(path)
        except (DatasetError, UnicodeDecodeError) as exc:
            problems.append(str(exc) if isinstance(exc, DatasetError) else f"{path}: not UTF-8")
            continue
        counts[split] = len(records)
        langs = Counter(r.get("language") for r in records)
        for key, got in (("records", len(records)), ("ko", langs.get("ko", 0)),
                         ("en", langs.get("en", 0))):
            if meta.get(key) != got:
                problems.append(f"{path}: {key} count is {got}, manifest says {meta.get(key)}")
        for r in records:
            try:
                validate_record(r, where=f"{path}: ")
            except DatasetError as exc:
                problems.append(str(exc))
                continue
            if r["split"] != split:
                problems.append(f"{path}: record {r['id']}: split field is not '{split}'")
            if r["id"] in seen_ids:
                problems.append(f"{path}: record {r['id']}: duplicate id")
            seen_ids.add(r["id"])
    return VerifyReport(not problems, problems, counts)


def dataset_stats(splits: dict[str, list[dict]]) -> dict[str, dict]:
    """Per split: records, ko/en, per-label entity counts and negative documents."""
    out = {}
    for split, records in splits.items():
        labels = Counter(e["type"] for r in records for e in r["entities"])
        out[split] = {
            "records": len(records),
            "ko": sum(r["language"] == "ko" for r in records),
            "en": sum(r["language"] == "en" for r in records),
            "negative": sum(not r["entities"] for r in records),
            "labels": {label: labels.get(label, 0) for label in LABELS},
        }
    return out


def default_sizes() -> dict[str, dict[str, int]]:
    """The split sizes of the default corpus (a copy, safe to modify)."""
    return {k: dict(v) for k, v in SPLIT_SIZES.items()}
