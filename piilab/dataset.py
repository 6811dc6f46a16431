"""Storing, reading and verifying the corpus on disk (chapter 02).

Files: ``train.jsonl``, ``validation.jsonl``, ``test.jsonl`` (UTF-8, one JSON object
per line, keys sorted, no spaces, ``\\n`` after each record) and ``manifest.json``
(generator version, seed, and per split its file name, record count, ko/en counts
and SHA-256). Every file is written atomically: a temporary file in the same
directory, flushed, then renamed over the target, so a crash never leaves half a
split behind; the four files are replaced together or not at all (`piilab.files`),
the manifest last. Dataset files get the mode the umask gives a new file (0644
under the usual umask 022, 0600 under umask 077): the corpus is synthetic and
meant to be shared, and the umask is how a user says how private new files are.

A directory that already holds a *different* dataset is not overwritten unless
``force=True``; rewriting the same dataset writes nothing (the bytes are identical).

What this module does not do: decide what a record means. It checks structure
(fields, types, counts, hashes); the content rules are tested in `tests/`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from piilab.errors import PiilabError
from piilab.files import check_outputs, write_all
from piilab.generator import (
    DEFAULT_SEED,
    GENERATOR_VERSION,
    SPLITS,
    generate_dataset,
)
from piilab.inputs import InputError, loads_json
from piilab.labels import LABELS
from piilab.records import check_record

MANIFEST = "manifest.json"


_SURROGATE = re.compile("[\ud800-\udfff]")


class DatasetError(PiilabError):
    """A dataset file is missing, malformed or inconsistent (never echoes text)."""


class DatasetExistsError(DatasetError):
    """The output directory holds a different dataset and `force` was not given."""


def dumps_record(record: dict) -> str:
    """The canonical one-line serialization used in the split files."""
    return json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def split_bytes(records: Iterable[dict]) -> bytes:
    return "".join(dumps_record(r) + "\n" for r in records).encode("utf-8")


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
    (another seed, version or edited files) and `force` is False. With `force`,
    the old dataset is replaced as a whole (see `save_dataset`).
    """
    out = Path(out_dir)
    _check_dataset_dir(out)  # before the work of generating
    records = generate_dataset(seed, scale=scale, progress=progress)
    blobs = {split: split_bytes(records[split]) for split in SPLITS}
    manifest = build_manifest(seed, blobs, records)
    save_dataset(out, blobs, manifest_bytes(manifest), force=force)
    return manifest


def save_dataset(out_dir: str | os.PathLike, blobs: Mapping[str, bytes], manifest: bytes, *,
                 force: bool = False, inputs: Iterable[str | os.PathLike] = ()) -> bool:
    """Write the split files and the manifest into `out_dir`, all four or none.

    The new files are written completely under temporary names first, then
    renamed into place, the manifest last; if a rename fails (a full or
    read-only disk, an interruption), the files already replaced get their old
    content back, so the directory holds the old dataset or the new one, never a
    mix (`piilab.files.write_all`). Other entries of the directory (a ``holdout/``
    folder, notes) are left alone. Refuses an output that is one of `inputs`.
    Returns False when the directory already holds exactly these bytes (nothing
    is written), True otherwise.
    """
    out = Path(out_dir)
    _check_dataset_dir(out)
    files = {out / f"{split}.jsonl": blobs[split] for split in SPLITS}
    files[out / MANIFEST] = manifest
    if out.exists():  # (a directory still to be made holds no input)
        check_outputs(files, inputs=inputs, force=True)  # existing files: the rule below
    if not force:
        _refuse_to_clobber(out, manifest, blobs)
    if all(path.is_file() and path.read_bytes() == data for path, data in files.items()):
        return False
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    try:
        write_all([(path, data, None) for path, data in files.items()])
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                out.rmdir()
        raise
    return True


def _check_dataset_dir(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise DatasetError(f"{out}: exists and is not a directory")


def _refuse_to_clobber(out: Path, new_manifest: bytes, blobs: Mapping[str, bytes]) -> None:
    old = out / MANIFEST
    existing = [out / f"{s}.jsonl" for s in SPLITS if (out / f"{s}.jsonl").exists()]
    if old.exists():
        if not old.is_file() or old.read_bytes() != new_manifest:
            raise DatasetExistsError(
                f"{out} holds a different dataset (its manifest differs); use --force to overwrite"
            )
        # Same manifest: the split files must be the ones it describes, or someone edited them.
        for path in existing:
            split = path.stem
            if not path.is_file() or path.read_bytes() != blobs[split]:
                raise DatasetExistsError(
                    f"{path} differs from the dataset its manifest describes; use --force"
                )
    elif existing:
        raise DatasetExistsError(f"{out} holds split files without a manifest; use --force")


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    """Read a JSONL file; a malformed line raises `DatasetError` naming file and line."""
    return [record for _, record in read_jsonl_lines(path)]


def read_jsonl_lines(path: str | os.PathLike) -> list[tuple[int, dict]]:
    """Read a JSONL file as ``(line number, record)`` pairs; blank lines are skipped.

    A line that is not UTF-8, not JSON, nested too deeply, not an object, or
    holds a lone surrogate (``"\\ud800"``, which no UTF-8 file can store) raises
    `DatasetError` naming the file and the line number, never the line's text.
    An `OSError` (no such file, a directory) propagates.
    """
    path = Path(path)
    with path.open("rb") as handle:  # binary lines: a decoding error has a line number
        return [(lineno, _parse_line(raw, path, lineno))
                for lineno, raw in enumerate(handle, 1) if raw.strip()]


def parse_jsonl_line(raw: bytes, path: str | os.PathLike, lineno: int) -> dict:
    """One nonblank line of a JSONL file as a record, checked as `read_jsonl_lines` checks
    each line, for a caller that holds the file's bytes (a pipe can be read only once)."""
    return _parse_line(raw, Path(path), lineno)


def _parse_line(raw: bytes, path: Path, lineno: int) -> dict:
    where = f"{path}:{lineno}"
    try:
        obj = loads_json(raw, where)  # every failure names the file and line, never the text
    except InputError as exc:
        raise DatasetError(str(exc)) from None
    if not isinstance(obj, dict):
        raise DatasetError(f"{where}: a record must be a JSON object")
    if b"\\u" in raw and _has_lone_surrogate(obj):
        raise DatasetError(f"{where}: a string holds a lone surrogate (not valid Unicode)")
    return obj


def _has_lone_surrogate(value: object) -> bool:
    stack = [value]
    while stack:  # a loop, not recursion: the nesting depth is the input's choice
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def validate_record(record: dict, where: str = "") -> None:
    """Check the fields and types of one record (`piilab.records.check_record`).

    Errors name the record by `where` (its position, e.g. ``data/test.jsonl:3``)
    and the field by name, never a value; without `where` they name the record id.
    """
    check_record(record, where=where or None, error=DatasetError)


def load_dataset_dir(data_dir: str | os.PathLike, *,
                     validate: bool = False) -> dict[str, list[dict]]:
    """Read the three split files of a dataset directory.

    With `validate`, every record is checked by `validate_record` (errors name
    the file and line).
    """
    return {split: [record for _, record in lines]
            for split, lines in load_dataset_lines(data_dir, validate=validate).items()}


def load_dataset_lines(data_dir: str | os.PathLike, *,
                       validate: bool = False) -> dict[str, list[tuple[int, dict]]]:
    """`load_dataset_dir` with each record's line number: ``{split: [(line, record)]}``."""
    d = Path(data_dir)
    if d.exists() and not d.is_dir():
        raise DatasetError(f"{d}: not a directory")
    out = {}
    for split in SPLITS:
        path = d / f"{split}.jsonl"
        if not path.exists():
            raise DatasetError(f"{path}: file is missing")
        if not path.is_file():
            raise DatasetError(f"{path}: not a file")
        lines = read_jsonl_lines(path)
        if validate:
            for lineno, record in lines:
                validate_record(record, where=f"{path}:{lineno}")
        out[split] = lines
    return out


def dataset_files(data_dir: str | os.PathLike) -> list[Path]:
    """The paths of a dataset directory's split files and manifest (existing or not)."""
    d = Path(data_dir)
    return [d / f"{split}.jsonl" for split in SPLITS] + [d / MANIFEST]


@dataclass
class VerifyReport:
    ok: bool
    problems: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


def verify_dataset(data_dir: str | os.PathLike, *, safety: bool = True) -> VerifyReport:
    """Recompute hashes and counts and compare them with the manifest.

    A wide corpus is also held to today's safety rules (`piilab.safety`); ``safety=False``
    skips them, for a corpus that a recorded run used under an earlier generator version,
    whose bytes must match their manifest but which the rules of now would not let the
    generator write.

    Never raises for a bad dataset: every problem found is listed in the report
    (missing file, hash mismatch, malformed line, wrong counts, duplicate ids, a
    manifest that does not list exactly the three splits). Problems name files,
    line numbers and fields, never a value read from the files.
    """
    d = Path(data_dir)
    if d.exists() and not d.is_dir():
        return VerifyReport(False, [f"{d}: not a directory"])
    manifest_path = d / MANIFEST
    try:
        manifest = json.loads(manifest_path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return VerifyReport(False, [f"{manifest_path}: file is missing"])
    except OSError as exc:
        return VerifyReport(False, [f"{manifest_path}: cannot read ({exc.strerror})"])
    except (ValueError, RecursionError):  # not UTF-8, not JSON, nested too deeply
        return VerifyReport(False, [f"{manifest_path}: malformed manifest"])
    splits = manifest.get("splits") if isinstance(manifest, dict) else None
    if not isinstance(splits, dict):
        return VerifyReport(False, [f"{manifest_path}: malformed manifest"])
    problems: list[str] = []
    counts: dict[str, int] = {}
    missing = [split for split in SPLITS if split not in splits]
    if missing:
        problems.append(f"{manifest_path}: lists no {', '.join(missing)} split")
    unknown = sum(1 for name in splits if name not in SPLITS)
    if unknown:
        problems.append(f"{manifest_path}: lists {unknown} split(s) other than "
                        f"{', '.join(SPLITS)}")
    first_seen: dict[str, str] = {}
    for split in (name for name in SPLITS if name in splits):
        meta = splits[split]
        expected_file = f"{split}.jsonl"
        if not isinstance(meta, dict):
            problems.append(f"{manifest_path}: the entry of split '{split}' is not an object")
            continue
        if meta.get("file", expected_file) != expected_file:
            problems.append(f"{manifest_path}: split '{split}' must be stored in {expected_file}")
            continue
        path = d / expected_file
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            problems.append(f"{path}: file is missing")
            continue
        except OSError as exc:
            problems.append(f"{path}: cannot read ({exc.strerror})")
            continue
        if hashlib.sha256(blob).hexdigest() != meta.get("sha256"):
            problems.append(f"{path}: SHA-256 differs from the manifest")
        try:
            lines = [(n, _parse_line(raw, path, n))
                     for n, raw in enumerate(blob.split(b"\n"), 1) if raw.strip()]
        except DatasetError as exc:
            problems.append(str(exc))
            continue
        counts[split] = len(lines)
        langs = Counter(r.get("language") for _, r in lines
                        if isinstance(r.get("language"), str))  # a list is reported below
        for key, got in (("records", len(lines)), ("ko", langs.get("ko", 0)),
                         ("en", langs.get("en", 0))):
            claimed = meta.get(key)
            if claimed != got:
                says = claimed if type(claimed) is int else "something else"
                problems.append(f"{path}: {key} count is {got}, manifest says {says}")
        for lineno, r in lines:
            where = f"{path}:{lineno}"
            try:
                validate_record(r, where=where)
            except DatasetError as exc:
                problems.append(str(exc))
                continue
            if r["split"] != split:
                problems.append(f"{where}: field 'split' is not '{split}'")
            if safety and manifest.get("profile") == "wide":
                from piilab.safety import safety_problems

                problems.extend(safety_problems(r, where=where))
            if r["id"] in first_seen:
                problems.append(f"{where}: duplicate id (first at {first_seen[r['id']]})")
            first_seen.setdefault(r["id"], where)
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
