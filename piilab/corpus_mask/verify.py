"""Checking a finished corpus output (chapter 10): `verify_corpus`.

The manifest is read with shape checks that name the field (`read_manifest`). Each file
it lists must be a plain name inside its own section's folder (``masked/`` or
``mappings/``, never an absolute path or one that leaves the folder), and is read by its
section's parser (Parquet for ``masked``, JSONL for ``mappings``). Files in those folders
that the manifest does not list are problems too (a stale mapping, an injected record
set). Mapping files are sensitive because of the folder they are in, whatever the
manifest says. A malformed mapping line is a problem of that record. Problems name a
file, a line or row, or a record number, never a value; a name read from the manifest
is shown quoted and escaped.
"""

from __future__ import annotations

import hashlib
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from piilab.corpus_mask.layout import MANIFEST, MAPPINGS_DIR, MASKED_DIR, CorpusError, shown_name
from piilab.errors import PiilabError
from piilab.inputs import InputError, loads_json
from piilab.masking import TOKEN_PATTERN, mask_text, reassemble_text

__all__ = ["VerifyReport", "read_manifest", "verify_corpus"]

SECTIONS = (MASKED_DIR, MAPPINGS_DIR)


@dataclass(frozen=True)
class VerifyReport:
    """What `verify_corpus` checked (counts only)."""

    records: int
    files: int
    sampled: int
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def read_manifest(path: str | os.PathLike) -> dict[str, Any]:
    """The manifest at `path`, checked for the fields `verify_corpus` reads; a
    `CorpusError` names the file and the field."""
    path = Path(path)
    try:
        manifest = loads_json(path.read_bytes(), str(path))
    except InputError as exc:
        raise CorpusError(str(exc)) from None
    except OSError as exc:
        raise CorpusError(f"{path}: {exc.strerror or type(exc).__name__}") from None
    if not isinstance(manifest, dict):
        raise CorpusError(f"{path}: must be a JSON object")
    if not _whole(manifest.get("records")):
        raise CorpusError(f"{path}: field 'records' must be a whole number")
    columns = manifest.get("unmasked_columns", [])
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
        raise CorpusError(f"{path}: field 'unmasked_columns' must be a list of names")
    for section in SECTIONS:
        entries = manifest.get(section)
        if not isinstance(entries, list):
            raise CorpusError(f"{path}: field '{section}' must be a list")
        for index, entry in enumerate(entries):
            where = f"{path}: field '{section}[{index}]"
            if not isinstance(entry, dict):
                raise CorpusError(f"{where}' must be an object")
            if not isinstance(entry.get("file"), str):
                raise CorpusError(f"{where}.file' must be a string")
            if not _whole(entry.get("records")):
                raise CorpusError(f"{where}.records' must be a whole number")
            if not isinstance(entry.get("sha256"), str):
                raise CorpusError(f"{where}.sha256' must be a string")
            if not isinstance(entry.get("sensitive", False), bool):
                raise CorpusError(f"{where}.sensitive' must be true or false")
    return manifest


def _member(file: str, section: str) -> str | None:
    """The plain name of `file` when it is ``<section>/<name>``, else None."""
    folder, slash, name = file.partition("/")
    if folder != section or not slash or not name or "/" in name or "\\" in name \
            or name in (".", "..") or "\0" in name:
        return None
    return name


def verify_corpus(out_dir: str | os.PathLike, *, sample: int = 100, seed: int = 0,
                  ) -> VerifyReport:
    """Check a finished `mask_corpus` output: the manifest's files exist with their hashes
    and record counts, nothing else is in ``masked/`` or ``mappings/``, the mapping files
    (and masked files with unmasked columns) are owner-only, the ids of the masked and
    mapping files agree, and for a sample of `sample` records restoring the masked text
    with its mapping gives a text that masks again (with the mapping's spellings as
    candidates) to the same masked text and mapping (the round trip, checked without the
    source). Problems are described by file and record number, never by a value."""
    if isinstance(sample, bool) or not isinstance(sample, int):
        raise TypeError("sample must be an int")
    if sample < 0:
        raise CorpusError("--sample must be 0 or more")
    out_dir = Path(out_dir)
    manifest_path = out_dir / MANIFEST
    if not manifest_path.is_file():
        raise CorpusError(f"{out_dir}: no {MANIFEST}: not a finished mask-corpus output")
    manifest = read_manifest(manifest_path)
    masked_sensitive = bool(manifest.get("unmasked_columns"))
    problems: list[str] = []
    rows: dict[str, list[tuple[Any, Any]]] = {section: [] for section in SECTIONS}
    listed: dict[str, set[str]] = {section: set() for section in SECTIONS}
    files = 0
    for section in SECTIONS:
        for index, entry in enumerate(manifest[section]):
            files += 1
            name = _member(entry["file"], section)
            if name is None:
                problems.append(f"{MANIFEST}: entry {index + 1} of '{section}' names "
                                f"{shown_name(entry['file'])}, not a file in {section}/")
                continue
            listed[section].add(name)
            label = f"{section}/{shown_name(name)[1:-1]}"
            found = _check_file(out_dir / section / name, label, entry, section,
                                masked_sensitive, problems)
            if found is not None:
                rows[section] += found
                if len(found) != entry["records"]:
                    problems.append(f"{label}: {len(found)} records, the manifest says "
                                    f"{entry['records']}")
    for section in SECTIONS:
        folder = out_dir / section
        if folder.is_symlink() or not folder.is_dir():
            problems.append(f"{section}/: missing or not a folder")
            continue
        for extra in sorted(set(os.listdir(folder)) - listed[section]):
            problems.append(f"{section}/{shown_name(extra)[1:-1]}: not in the manifest")
    masked_rows, mapping_rows = rows[MASKED_DIR], rows[MAPPINGS_DIR]
    if len(masked_rows) != manifest["records"]:
        problems.append(f"masked files hold {len(masked_rows)} records, the manifest says "
                        f"{manifest['records']}")
    if [i for i, _ in masked_rows] != [i for i, _ in mapping_rows]:
        problems.append("the ids of the masked and the mapping files do not agree")
    sampled = 0
    if not problems:
        picks = random.Random(seed).sample(range(len(masked_rows)),
                                           min(sample, len(masked_rows)))
        for k in sorted(picks):
            if not _restores(masked_rows[k][1], mapping_rows[k][1]):
                problems.append(f"record {k + 1}: the mapping does not restore its text")
            sampled += 1
    return VerifyReport(len(masked_rows), files, sampled, tuple(problems))


def _check_file(path: Path, label: str, entry: dict, section: str, masked_sensitive: bool,
                problems: list[str]) -> list[tuple[Any, Any]] | None:
    """Check one listed file (kind, mode, hash) and read its records; None when it cannot
    be read (the problem is recorded)."""
    if path.is_symlink() or not path.is_file():
        problems.append(f"{label}: missing or not a regular file")
        return None
    sensitive = section == MAPPINGS_DIR or masked_sensitive or entry.get("sensitive", False)
    if section == MAPPINGS_DIR and entry.get("sensitive") is not True:
        problems.append(f"{label}: the manifest calls a mapping file not sensitive")
    mode = path.stat().st_mode & 0o777
    if sensitive and mode & 0o077:
        problems.append(f"{label}: readable by others (mode {mode:o}, expected 600)")
    try:
        data = path.read_bytes()
    except OSError as exc:
        problems.append(f"{label}: cannot be read ({exc.strerror or type(exc).__name__})")
        return None
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        problems.append(f"{label}: SHA-256 differs from the manifest")
        return None
    if section == MASKED_DIR:
        return _masked_rows(data, label, problems)
    return _mapping_rows(data, label, problems)


def _masked_rows(data: bytes, label: str, problems: list[str]) -> list | None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        part = pq.read_table(pa.BufferReader(data), columns=["id", "masked_text"])
        ids = part.column("id").to_pylist()
        texts = part.column("masked_text").to_pylist()
    except (pa.ArrowException, OSError, ValueError, TypeError, KeyError):
        problems.append(f"{label}: not a Parquet file with the columns id and masked_text "
                        "as text")
        return None
    for k, (record_id, text) in enumerate(zip(ids, texts, strict=True)):
        if not isinstance(record_id, str) or not isinstance(text, str):
            problems.append(f"{label}:row {k + 1}: fields 'id' and 'masked_text' must be "
                            "strings")
            return None
    return list(zip(ids, texts, strict=True))


def _mapping_rows(data: bytes, label: str, problems: list[str]) -> list:
    """The ``(id, mapping)`` of every line; a malformed line is a problem of its record
    (its mapping is None, so the counts still line up)."""
    found: list[tuple[Any, Any]] = []
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for lineno, raw in enumerate(lines, 1):
        where = f"{label}:{lineno}"
        try:
            obj = loads_json(raw, where)
        except InputError as exc:
            problems.append(f"{exc} (not a mapping record)")
            found.append((None, None))
            continue
        problem = _mapping_problem(obj)
        if problem:
            problems.append(f"{where}: not a mapping record ({problem})")
            found.append((obj.get("id") if isinstance(obj, dict) else None, None))
            continue
        found.append((obj["id"], obj["mapping"]))
    return found


def _mapping_problem(obj: Any) -> str | None:
    if not isinstance(obj, dict):
        return "not a JSON object"
    if not isinstance(obj.get("id"), str) or not obj["id"]:
        return "field 'id' must be a nonempty string"
    mapping = obj.get("mapping")
    if not isinstance(mapping, dict):
        return "field 'mapping' must be an object"
    for token, value in mapping.items():
        if not TOKEN_PATTERN.fullmatch(token) or not isinstance(value, str):
            return "field 'mapping' must map tokens like [LABEL_1] to strings"
    return None


def _restores(masked: str, mapping: dict[str, str]) -> bool:
    """Restore, then mask the restored text again with the mapping's own spellings: a
    mapping that belongs to its masked text gives back the same masked text."""
    try:
        restored = reassemble_text(masked, mapping)
        tokens_left = set(TOKEN_PATTERN.findall(restored)) & set(mapping)
        again = mask_text(restored, [(token[1:token.rindex("_")], value)
                                     for token, value in mapping.items()])
    except (PiilabError, TypeError, ValueError):
        return False
    return not tokens_left and again.masked_text == masked and again.mapping == mapping
