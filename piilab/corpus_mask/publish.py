"""Running a corpus job and publishing its output (chapter 10): `mask_corpus`.

The output is built in a staging folder beside ``OUT`` (`piilab.files.publish_folder`:
``.piilab-<pid>-<random>.tmp``, mode 0700), every file written through
`piilab.files.write_atomic` (mapping files, and masked files with unmasked columns, 0600
from the first byte), the manifest last; the folder is then renamed to ``OUT``. An error
or an interruption removes the staging folder, with Ctrl-C and SIGTERM held while it is
removed; a folder left by a killed run (SIGKILL) is removed by the next run that writes
beside it (`piilab.files.recover` knows its name). A write that fails names the file of
``OUT`` it was writing.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from piilab import __version__
from piilab.corpus_mask.batch import detector_identity
from piilab.corpus_mask.engines import Results, local_batches, ray_batches
from piilab.corpus_mask.layout import (
    DEFAULT_ROWS_PER_FILE,
    ENGINES,
    FORMAT_VERSION,
    MANIFEST,
    MAPPINGS_DIR,
    MASKED_DIR,
    PARQUET_OPTIONS,
    CorpusError,
    to_json,
)
from piilab.corpus_mask.read import check_storable, read_corpus
from piilab.files import PRIVATE_MODE, OutputError, publish_folder, write_atomic

__all__ = ["CorpusResult", "mask_corpus"]


@dataclass(frozen=True)
class CorpusResult:
    """What `mask_corpus` did: counts and timing (no text)."""

    out_dir: Path
    records: int
    spans: int
    partitions: int
    seconds: float
    engine: str
    detector: Mapping[str, Any] = field(default_factory=dict)

    @property
    def records_per_second(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0


def mask_corpus(input_path: str | os.PathLike, out_dir: str | os.PathLike, *,
                detector: str = "rules", engine: str = "local", batch_size: int = 256,
                workers: int = 1, blocks: int | None = None, address: str | None = None,
                rows_per_file: int = DEFAULT_ROWS_PER_FILE, model_batch_size: int = 16,
                max_new_tokens: int = 128, threads: int | None = None,
                keep_columns: Sequence[str] = (), progress: bool = False,
                on_progress: Callable[[int, int], None] | None = None,
                tracker=None) -> CorpusResult:
    """Mask the corpus at `input_path` into the new folder `out_dir` (see the package
    docstring). `batch_size` documents go to the detector at a time; with
    ``engine="ray"``, `workers` actors run it over `blocks` blocks (default: 2 per
    worker). `keep_columns` names input columns to copy, unmasked, beside ``masked_text``
    (the masked files are then sensitive; every other column is dropped).
    `on_progress(done, total)` is called after every batch; `tracker` (a
    `piilab.tracking` tracker) gets counts, throughput and the detector's identity."""
    if engine not in ENGINES:
        raise CorpusError(f"engine must be one of {', '.join(ENGINES)}")
    for name, value in (("batch_size", batch_size), ("workers", workers),
                        ("rows_per_file", rows_per_file), ("blocks", blocks),
                        ("model_batch_size", model_batch_size)):
        if value is None and name == "blocks":
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int")
        if value < 1:
            raise CorpusError(f"{name} must be at least 1")
    out_dir = Path(out_dir)
    if os.path.lexists(out_dir):
        raise CorpusError(f"{out_dir}: exists; choose a new folder (a finished output is "
                          "never overwritten)")
    if not out_dir.parent.is_dir():
        raise CorpusError(f"{out_dir.parent}: no such folder")
    if not os.access(out_dir.parent, os.W_OK | os.X_OK):
        raise CorpusError(f"{out_dir.parent}: not writable (the output folder goes there)")
    keep_columns = _check_keep_columns(keep_columns)
    identity = detector_identity(detector)
    table = read_corpus(input_path)
    missing = [name for name in keep_columns if name not in table.column_names]
    if missing:
        raise CorpusError(f"{input_path}: --keep-column names {len(missing)} column(s) the "
                          f"corpus does not have: {', '.join(map(repr, missing))}")
    check_storable(table, keep_columns, input_path)
    dropped = [c for c in table.column_names
               if c not in ("id", "source_text") and c not in keep_columns]
    total = table.num_rows
    options = {"model_batch_size": model_batch_size, "max_new_tokens": max_new_tokens,
               "threads": threads} if detector != "rules" else {}
    t0 = time.perf_counter()
    if engine == "local":
        batches = local_batches(table, detector, batch_size, options)
    else:
        batches = ray_batches(table, detector, batch_size, options, workers=workers,
                              blocks=blocks or 2 * workers, address=address)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc="masking", unit="rec")
    results = Results(total)
    try:
        for batch in batches:
            results.add(batch)
            if bar is not None:
                bar.n = results.done
                bar.refresh()
            if on_progress is not None:
                on_progress(results.done, total)
    finally:
        if bar is not None:
            bar.close()
    in_order = results.in_order()
    spans = results.spans
    try:
        with publish_folder(out_dir) as stage:
            _make_folder(stage, out_dir, MASKED_DIR, 0o777)
            _make_folder(stage, out_dir, MAPPINGS_DIR, 0o700)
            masked_files, mapping_files = [], []
            for number, start in enumerate(range(0, total, rows_per_file)):
                masked_entry, mapping_entry = _write_partition(
                    stage, out_dir, number, table, start, min(start + rows_per_file, total),
                    in_order, keep_columns)
                masked_files.append(masked_entry)
                mapping_files.append(mapping_entry)
            seconds = time.perf_counter() - t0
            manifest = {
                "format": FORMAT_VERSION, "piilab_version": __version__, "records": total,
                "spans": spans, "detector": identity,
                "columns": ["id", "masked_text", *keep_columns],
                "unmasked_columns": list(keep_columns), "dropped_columns": dropped,
                "masked": masked_files, "mappings": mapping_files,
                "note": ("mappings/ holds every masked value (sensitive, owner-only); "
                         "masked/ can still hold values the detector missed"
                         + ("; masked/ also holds the unmasked columns listed in "
                            "unmasked_columns, so it is sensitive (owner-only) too"
                            if keep_columns else "")),
            }
            # The manifest is written last: a folder without one is not a finished output.
            _write(stage, out_dir, MANIFEST,
                   (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode("utf-8"),
                   None)
    except OutputError as exc:
        raise CorpusError(str(exc)) from None
    except OSError as exc:  # the final rename
        raise CorpusError(f"publishing {out_dir}: "
                          f"{exc.strerror or type(exc).__name__}") from None
    result = CorpusResult(out_dir, total, spans, len(masked_files), seconds, engine, identity)
    if tracker is not None:
        tracker.log_params({"engine": engine, "workers": workers if engine == "ray" else 1,
                            "batch_size": batch_size, "detector_kind": identity["kind"],
                            "detector_name": identity["name"],
                            "detector_sha256": identity.get("weights_sha256") or "none"})
        tracker.log_metrics({"records": total, "spans": spans, "seconds": seconds,
                             "records_per_second": result.records_per_second})
    return result


def _make_folder(stage: Path, out_dir: Path, name: str, mode: int) -> None:
    try:
        (stage / name).mkdir(mode=mode)
    except OSError as exc:
        raise CorpusError(f"writing {out_dir / name}: "
                          f"{exc.strerror or type(exc).__name__}") from None


def _write(stage: Path, out_dir: Path, relative: str, data: bytes, mode: int | None) -> str:
    """Write `data` to `relative` in the staging folder (`write_atomic`; `mode` None: the
    umask's); its SHA-256. A failure names the file as it will be in `out_dir`."""
    try:
        write_atomic(stage / relative, data, mode)
    except OSError as exc:
        raise CorpusError(f"writing {out_dir / relative}: "
                          f"{exc.strerror or type(exc).__name__}") from None
    return hashlib.sha256(data).hexdigest()


def _write_partition(stage: Path, out_dir: Path, number: int, table, start: int, stop: int,
                     results: Callable[[int, int], tuple[Any, Any]],
                     kept: Sequence[str] = ()) -> tuple[dict, dict]:
    """Write rows ``start:stop`` of the corpus: their masked Parquet file and their mapping
    file. ``results(start, stop)`` gives their masked texts and mappings (`Results`).
    `kept` names the input columns copied unmasked: the masked file is then sensitive
    (mode 0600)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = table.slice(start, stop - start)
    masked, mappings = results(start, stop)
    columns = {"id": rows.column("id"), "masked_text": masked}
    for name in kept:
        columns[name] = rows.column(name)
    # One chunk per column: the bytes must not depend on how the input was chunked.
    part = pa.table(columns).combine_chunks()
    name = f"part-{number:05d}"
    masked_file = f"{MASKED_DIR}/{name}.parquet"
    try:
        buffer = pa.BufferOutputStream()
        pq.write_table(part, buffer, **PARQUET_OPTIONS)
    except (pa.ArrowException, ValueError, TypeError):
        raise CorpusError(f"writing {out_dir / masked_file}: Parquet cannot store these "
                          "columns") from None
    masked_sha = _write(stage, out_dir, masked_file, buffer.getvalue().to_pybytes(),
                        PRIVATE_MODE if kept else None)
    lines = "".join(f'{{"id":{to_json(i)},"mapping":{m}}}\n'
                    for i, m in zip(rows.column("id").to_pylist(),
                                    mappings.to_pylist(),
                                    strict=True))
    mapping_file = f"{MAPPINGS_DIR}/{name}.jsonl"
    mapping_sha = _write(stage, out_dir, mapping_file, lines.encode("utf-8"), PRIVATE_MODE)
    masked_entry = {"file": masked_file, "records": stop - start, "sha256": masked_sha,
                    "sensitive": bool(kept)}
    if kept:
        masked_entry["mode"] = "0600"
    return (masked_entry,
            {"file": mapping_file, "records": stop - start, "sha256": mapping_sha,
             "sensitive": True, "mode": "0600"})


def _check_keep_columns(names: Sequence[str]) -> tuple[str, ...]:
    """The columns to keep, checked: strings, no repeats, none of the reserved ones."""
    if isinstance(names, str):
        raise TypeError("keep_columns must be a sequence of column names, not one string")
    names = tuple(names)
    for name in names:
        if not isinstance(name, str) or not name:
            raise CorpusError("--keep-column: a column name must be a nonempty string")
    if len(set(names)) != len(names):
        raise CorpusError("--keep-column: a column is named twice")
    if "source_text" in names:
        raise CorpusError("--keep-column: source_text is never published (it is the text "
                          "being masked)")
    if "masked_text" in names:
        raise CorpusError("--keep-column: masked_text is the output's own column; rename the "
                          "input column to keep it")
    return tuple(name for name in names if name != "id")
