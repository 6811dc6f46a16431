"""Masking a corpus: detect, mask, keep the mappings apart (chapter 10, "Masking a corpus").

`mask_corpus(input_path, out_dir, detector="rules")` reads a JSONL or Parquet corpus
(records with ``id`` and ``source_text``; other columns are dropped unless named in
``keep_columns``, see "What is published" below), finds the candidates
of each document with a detector (the rule baseline of `piilab.baseline`, or a model
through `piilab.inference`), masks each document with `piilab.tokenization.mask_text`,
and writes::

    OUT/
      masked/part-00000.parquet ...    id, masked_text, and only the columns named in keep_columns
      mappings/part-00000.jsonl ...    {"id", "mapping"} per record, mode 0600 (sensitive)
      manifest.json                    counts, SHA-256 of every file, which files are sensitive

What is published: only ``masked_text`` is masked. Every other column of the input is
dropped unless the caller names it in ``keep_columns``, because a column the detector never
read (``notes``, ``customer_email``, a data set's gold ``entities``) would reach the output
in clear text. A kept column is copied *unmasked*: the manifest lists it under
``unmasked_columns``, and the masked files then count as sensitive (mode 0600,
``"sensitive": true``) like the mappings. Dropped columns are listed by name under
``dropped_columns``. ``id`` is always kept (it joins a record to its mapping);
``source_text`` can never be kept, and ``masked_text`` is the output's own column.

The two engines run the same per-batch function (`MaskBatch`):

- ``engine="local"``: one process, batch after batch;
- ``engine="ray"``: Ray Data. The corpus becomes a dataset of ``blocks`` blocks,
  ``map_batches`` runs `MaskBatch` in an actor pool of ``workers`` actors (so a model is
  loaded once per actor, not once per batch), and the results stream back to the driver,
  which writes the files. Ray starts locally (usage statistics off, no dashboard, nothing
  reached over the network) unless ``address`` (or ``RAY_ADDRESS``) names a cluster.
  Actors that die are restarted and their batches retried by Ray; the driver checks that
  every input row came back exactly once.

Determinism: tokens are numbered per document (`mask_text` sees one document at a time),
so a document's masked text and mapping do not depend on which other documents share its
batch, block or worker. Rows are written in input order, ``rows_per_file`` per partition
(partitions follow the input, not the blocks), with fixed Parquet settings, so the output
files are byte-identical for either engine and any number of workers or blocks. (With a
model detector this also relies on greedy decoding being batch-invariant, which
`piilab.inference.generate` is tested for; with the rule detector it holds by
construction.)

Nothing half-written looks finished: everything is written into a hidden staging folder
next to ``OUT`` (``.OUT.staging-XXXXXXXX``), the manifest last, and the folder is renamed to
``OUT`` at the end; an interrupted run removes its staging folder. `verify_corpus(OUT)`
checks every file against the manifest and restores a sample of records from their
mappings to prove the round trip (it needs no source text: restoring a record and masking
the result again with its mapping's spellings must give back the same masked text and
mapping).

Nothing here prints or logs text, values or mappings: progress shows record counts and
records/s; the optional tracker (`piilab.tracking`) gets counts, throughput and the
detector's identity only.
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import hashlib
import itertools
import json
import logging
import os
import re
import secrets
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from piilab import __version__
from piilab.errors import PiilabError
from piilab.files import PRIVATE_MODE
from piilab.masking import mask_text, reassemble_text

__all__ = [
    "CorpusError",
    "CorpusResult",
    "MaskBatch",
    "VerifyReport",
    "detector_identity",
    "mask_corpus",
    "read_corpus",
    "verify_corpus",
]

#: Version of the output layout (folder names, manifest fields).
FORMAT_VERSION = 1
MASKED_DIR = "masked"
MAPPINGS_DIR = "mappings"
MANIFEST = "manifest.json"
#: Parquet settings of the masked partitions: fixed, so the bytes depend on the rows only.
PARQUET_OPTIONS = {"compression": "zstd", "compression_level": 3, "use_dictionary": True,
                   "write_statistics": True, "version": "2.6", "data_page_size": 1 << 20,
                   # no embedded Arrow schema: it would keep how the input named list items
                   "store_schema": False}
DEFAULT_ROWS_PER_FILE = 50_000
ENGINES = ("local", "ray")


class CorpusError(PiilabError):
    """Bad input or output of a corpus job; the message names file, line and field,
    never a value."""


# ---------------------------------------------------------------------------
# Reading the corpus
# ---------------------------------------------------------------------------


#: Byte patterns that send a JSONL file to the Python reader, because Arrow's JSON reader
#: would read them differently: a UTF-8 byte-order mark (Python rejects it), a surrogate
#: escape (Python rejects a lone one; Arrow's reading of them is not checked here), and a
#: run of 19 or more digits (an integer beyond int64, which Arrow turns into a float).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_DIGITS_AS_ZERO = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))  # for translate


def _arrow_json_unsafe(data: bytes) -> bool:
    """Whether `data` holds a byte pattern the Arrow JSON reader reads differently (above).
    Plain substring tests: a regular expression over the whole file costs seconds."""
    return (b"\xef\xbb\xbf" in data
            or (b"\\u" in data and _SURROGATE_ESCAPE.search(data) is not None)
            or b"0" * 19 in data.translate(_DIGITS_AS_ZERO))


#: Nesting deeper than this (in the inferred schema) also goes to the Python reader, whose
#: limit on nesting is its own.
_ARROW_JSON_MAX_DEPTH = 64


def _plain_json_type(data_type, depth: int = 0) -> bool:
    """Whether `data_type` is one Python's JSON values give too: no timestamp or date
    (Arrow reads some strings as timestamps), nested at most ``_ARROW_JSON_MAX_DEPTH``."""
    import pyarrow as pa

    if depth > _ARROW_JSON_MAX_DEPTH or pa.types.is_temporal(data_type):
        return False
    if pa.types.is_struct(data_type):
        return all(_plain_json_type(data_type.field(k).type, depth + 1)
                   for k in range(data_type.num_fields))
    if pa.types.is_list(data_type):
        return _plain_json_type(data_type.value_type, depth + 1)
    return True


def _has_float(data_type) -> bool:
    """Whether a floating-point type occurs anywhere in `data_type`."""
    import pyarrow as pa

    if pa.types.is_floating(data_type):
        return True
    if pa.types.is_struct(data_type):
        return any(_has_float(data_type.field(k).type) for k in range(data_type.num_fields))
    if pa.types.is_list(data_type):
        return _has_float(data_type.value_type)
    return False


def _read_jsonl_arrow(path: Path):
    """The JSONL corpus at `path` read by Arrow's JSON reader (compiled and multithreaded),
    or None when the file is not one whose table is known to equal the Python reader's.

    None is returned, and the caller reads the file again in Python (which names the line
    of any problem), when the file is not UTF-8, holds a pattern `_arrow_json_unsafe`
    finds, fails Arrow's reader or builds an invalid array, gives a row count other than
    its number of nonblank lines (two objects on one line, a lone carriage return), has a
    timestamp or very deep type, or holds any record with a bad or repeated ``id`` or a
    bad ``source_text``. Otherwise the table is the one the Python reader builds
    (tests/test_corpus.py compares the two on each of these cases and on random records).
    """
    import pyarrow as pa
    import pyarrow.json as pa_json

    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if _arrow_json_unsafe(data):
        return None
    try:
        table = pa_json.read_json(pa.BufferReader(data))
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    lines = sum(1 for line in data.split(b"\n") if line.strip())
    if not table.num_rows or table.num_rows != lines:
        return None
    if not all(_plain_json_type(f.type) for f in table.schema):
        return None
    # A column mixing floats and integers becomes float64 in Arrow, which rounds an integer
    # beyond 2**53 (16 digits or more); Python's reader keeps it exact, or refuses the file.
    if b"0" * 16 in data.translate(_DIGITS_AS_ZERO) and \
            any(_has_float(f.type) for f in table.schema):
        return None
    try:  # the reader can build an invalid array (lists of nulls, pyarrow 26)
        table.validate(full=True)
    except pa.ArrowInvalid:
        return None
    if "id" not in table.column_names or "source_text" not in table.column_names:
        return None
    ids = table.column("id").to_pylist()
    if _first_bad_record(ids, table.column("source_text").to_pylist()) is not None:
        return None
    return table if len(set(ids)) == len(ids) else None


def read_corpus(path: str | os.PathLike):
    """The corpus at `path` as a ``pyarrow.Table`` (JSONL file, Parquet file or a folder of
    Parquet files), checked: every record has a string ``id``, unique, and a string
    ``source_text``. A bad record raises `CorpusError` naming ``file:line`` (JSONL) or
    ``file:row`` (Parquet) and the field. A JSONL column that only later records have is
    kept (empty in the records without it).

    A JSONL file is read by Arrow's JSON reader when `_read_jsonl_arrow` can vouch that the
    table is the one Python's reader gives (nearly every corpus: it is many times faster),
    else record by record in Python (`_read_jsonl_python`), which names the line of any
    problem."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    if path.is_dir() or path.suffix.lower() in {".parquet", ".pq"}:
        files = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
        if not files:
            raise CorpusError(f"{path}: no .parquet files in this folder")
        tables = [pq.read_table(f) for f in files]
        firsts = list(itertools.accumulate((t.num_rows for t in tables), initial=0))

        def place(index: int) -> str:
            k = bisect.bisect_right(firsts, index) - 1
            return f"{files[k]}:row {index - firsts[k] + 1}"

        table = pa.concat_tables(tables, promote_options="default")
        for name in ("id", "source_text"):
            if name not in table.column_names:
                raise CorpusError(f"{path}: the corpus has no '{name}' column")
        ids = table.column("id").to_pylist()
        bad = _first_bad_record(ids, table.column("source_text").to_pylist())
        if bad is not None:
            raise CorpusError(f"{place(bad[0])}: {bad[1]}")
    else:
        table = _read_jsonl_arrow(path)
        if table is not None:  # checked there: every id and text is good, no id repeats
            return table.replace_schema_metadata(None).combine_chunks()
        table, ids, place = _read_jsonl_python(path)
    if len(set(ids)) != len(ids):  # find the first repeat only when there is one
        seen: dict[str, int] = {}
        for index, record_id in enumerate(ids):
            if record_id in seen:
                raise CorpusError(f"{place(index)}: field 'id' repeats the id of "
                                  f"{place(seen[record_id])}")
            seen[record_id] = index
    if not table.num_rows:
        raise CorpusError(f"{path}: the corpus holds no records")
    return table.replace_schema_metadata(None).combine_chunks()


def _read_jsonl_python(path: Path):
    """The JSONL corpus at `path` read record by record in Python: the table, the ids, and
    ``place(index)`` (``file:line``). The first bad record in file order raises
    `CorpusError` naming its line and field."""
    import pyarrow as pa

    from piilab.dataset import DatasetError, read_jsonl_lines

    # Hundreds of thousands of small dicts: the cyclic garbage collector would walk them
    # again and again while they are built (none of them forms a cycle).
    with _gc_paused():
        try:
            lines = read_jsonl_lines(path)
        except DatasetError as exc:
            raise CorpusError(str(exc)) from None

        def place(index: int) -> str:
            return f"{path}:{lines[index][0]}"

        rows = [record for _, record in lines]
        for index, record in enumerate(rows):  # the first bad record in file order
            if "id" not in record or "source_text" not in record:
                missing = "id" if "id" not in record else "source_text"
                raise CorpusError(f"{place(index)}: the record has no field '{missing}'")
            problem = _record_problem(record["id"], record["source_text"])
            if problem:
                raise CorpusError(f"{place(index)}: {problem}")
        ids = [r["id"] for r in rows]  # (each record's fields are checked above)
        # Every key of every record, in order of first appearance (`from_pylist` would
        # keep only the first record's keys).
        names = dict.fromkeys(rows[0]) if rows else {}
        for record in rows:
            if record.keys() != names.keys():
                names.update(dict.fromkeys(record))
        try:
            table = pa.Table.from_pydict({name: [r.get(name) for r in rows]
                                          for name in names})
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            raise CorpusError(f"{path}: the records' other columns do not have one type "
                              "per column (a column holds, e.g., numbers in some records "
                              "and text in others)") from None
        except OverflowError:
            raise CorpusError(f"{path}: a whole number in the records' other columns does "
                              "not fit in 64 bits") from None
    return table, ids, place


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (reference counting still frees everything)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _first_bad_record(ids: Sequence[Any], texts: Sequence[Any]) -> tuple[int, str] | None:
    """The index of the first record whose ``id`` or ``source_text`` is bad, and what is
    wrong with it (`_record_problem`); None when every record is good."""
    for index, (record_id, text) in enumerate(zip(ids, texts, strict=True)):
        problem = _record_problem(record_id, text)
        if problem:
            return index, problem
    return None


def _record_problem(record_id: Any, text: Any) -> str | None:
    """What is wrong with a record's ``id`` or ``source_text`` (None when nothing is)."""
    if not isinstance(record_id, str) or not record_id:
        return "field 'id' must be a nonempty string"
    if not isinstance(text, str):
        return "field 'source_text' must be a string"
    return None


# ---------------------------------------------------------------------------
# Detectors and the per-batch function
# ---------------------------------------------------------------------------


def detector_identity(detector: str) -> dict[str, Any]:
    """What the manifest and the tracker record about a detector
    (`piilab.detectors.describe_detector`): kind, name and weights' SHA-256, never a
    path's parent folders. A name that is no detector is a `CorpusError`."""
    from piilab.detectors import DetectorError, describe_detector

    try:
        return describe_detector(detector)
    except DetectorError as exc:
        raise CorpusError(f"--detector: {exc}") from None


class MaskBatch:
    """Detect and mask one batch of documents: the callable class of ``map_batches``.

    Built once per worker (a Ray actor, or the local process): a model detector loads its
    model here, once. Called with a ``pyarrow.Table`` (or a mapping of columns) holding
    ``_row`` and ``source_text``, it returns a ``pyarrow.Table`` with ``_row``,
    ``masked_text``, ``mapping`` (the mapping as sorted JSON text) and ``spans`` (how many
    spans were masked). Arrow in and out: Ray moves the batches between processes without
    turning every string into a Python object on the way.
    """

    def __init__(self, detector: str = "rules", *, model_batch_size: int = 16,
                 max_new_tokens: int = 128, threads: int | None = None):
        from piilab.detectors import load_detector

        self.detector = detector
        self._detect = load_detector(detector, batch_size=model_batch_size,
                                     max_new_tokens=max_new_tokens, threads=threads).candidates

    def __call__(self, batch) -> Any:
        import pyarrow as pa

        texts = _column(batch, "source_text")
        masked, mappings, spans = [], [], []
        for text, candidates in zip(texts, self._detect(texts), strict=True):
            result = mask_text(text, candidates)
            masked.append(result.masked_text)
            mappings.append(_json(result.mapping))
            spans.append(len(result.spans))
        return pa.table({"_row": pa.array(_column(batch, "_row"), pa.int64()),
                         "masked_text": pa.array(masked, pa.string()),
                         "mapping": pa.array(mappings, pa.string()),
                         "spans": pa.array(spans, pa.int64())})


def _column(batch, name: str) -> list:
    """A column of a ``pyarrow.Table`` or of a mapping of columns, as a Python list."""
    column = batch[name]
    return column.to_pylist() if hasattr(column, "to_pylist") else list(column)


def _json(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


# ---------------------------------------------------------------------------
# Engines
# ---------------------------------------------------------------------------


def _light_table(table):
    """The columns the workers need: the row number, the id and the text."""
    import pyarrow as pa

    return pa.table({"_row": pa.array(range(table.num_rows), pa.int64()),
                     "id": table.column("id"), "source_text": table.column("source_text")})


def _local_batches(table, detector: str, batch_size: int, options: Mapping[str, Any],
                   ) -> Iterator[Any]:
    fn = MaskBatch(detector, **options)
    light = _light_table(table)
    for start in range(0, table.num_rows, batch_size):
        yield fn(light.slice(start, batch_size))


def start_ray(address: str | None = None, *, num_cpus: int | None = None) -> None:
    """Connect to the cluster at `address` (or ``RAY_ADDRESS``), or start Ray on this
    machine: usage statistics off, no dashboard, workers' logs kept out of the console
    (they could quote a failing record). Does nothing when Ray is already running in this
    process."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    if ray.is_initialized():
        return
    address = address or os.environ.get("RAY_ADDRESS") or None
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                              "configure_logging": True, "logging_level": "error"}
    if address is None:
        kwargs["num_cpus"] = num_cpus
    ray.init(address=address, **kwargs)
    import ray.data

    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False  # the job shows its own bar, with counts only
    context.print_on_execution_start = False
    logging.getLogger("ray").setLevel(logging.ERROR)
    logging.getLogger("ray.data").setLevel(logging.ERROR)


def _ray_batches(table, detector: str, batch_size: int, options: Mapping[str, Any], *,
                 workers: int, blocks: int, address: str | None,
                 ) -> Iterator[Any]:
    start_ray(address)
    import ray

    light = _light_table(table)
    blocks = max(1, min(blocks, table.num_rows))
    edges = [round(k * table.num_rows / blocks) for k in range(blocks + 1)]
    ds = ray.data.from_arrow([light.slice(a, b - a) for a, b in itertools.pairwise(edges)
                              if b > a])
    ds = ds.map_batches(
        MaskBatch, fn_constructor_args=(detector,), fn_constructor_kwargs=dict(options),
        batch_size=batch_size, batch_format="pyarrow", concurrency=workers, num_cpus=1)
    # Ray Data's actor pools restart a dead actor and retry its batches (max_restarts and
    # max_task_retries default to -1 there); the caller keeps one result per row.
    yield from ds.iter_batches(batch_size=None, batch_format="pyarrow")


# ---------------------------------------------------------------------------
# Writing and publishing
# ---------------------------------------------------------------------------


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


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_MODE)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _write_partition(stage: Path, number: int, table, start: int, stop: int,
                     results: Callable[[int, int], tuple[Any, Any]],
                     kept: Sequence[str] = ()) -> tuple[dict, dict]:
    """Write rows ``start:stop`` of the corpus: their masked Parquet file and their mapping
    file. ``results(start, stop)`` gives their masked texts and mappings (`_Results`).
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
    masked_path = stage / MASKED_DIR / f"{name}.parquet"
    if kept:  # unmasked columns: owner-only from the first byte
        os.close(os.open(masked_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_MODE))
    pq.write_table(part, masked_path, **PARQUET_OPTIONS)
    lines = "".join(f'{{"id":{_json(i)},"mapping":{m}}}\n'
                    for i, m in zip(rows.column("id").to_pylist(),
                                    mappings.to_pylist(),
                                    strict=True))
    mapping_path = stage / MAPPINGS_DIR / f"{name}.jsonl"
    _write_private(mapping_path, lines.encode("utf-8"))
    masked_entry = {"file": f"{MASKED_DIR}/{name}.parquet", "records": stop - start,
                    "sha256": _sha256(masked_path), "sensitive": bool(kept)}
    if kept:
        masked_entry["mode"] = "0600"
    return (masked_entry,
            {"file": f"{MAPPINGS_DIR}/{name}.jsonl", "records": stop - start,
             "sha256": _sha256(mapping_path), "sensitive": True, "mode": "0600"})


class _Results:
    """The workers' result batches, one copy of each row (a retried batch can deliver rows
    twice), put back in row order at the end."""

    def __init__(self, total: int):
        import numpy as np

        self.total = total
        self.received = np.zeros(total, dtype=bool)
        self.done = 0
        self.spans = 0
        self.parts: list[Any] = []

    def add(self, batch) -> None:
        import numpy as np
        import pyarrow as pa

        rows = batch.column("_row").to_numpy()
        if len(rows) and (rows.min() < 0 or rows.max() >= self.total):
            raise CorpusError("a worker returned a row number outside the corpus")
        new = ~self.received[rows]
        if not new.all():  # a retried batch delivered twice: keep one copy
            batch = batch.filter(pa.array(new))
            rows = rows[new]
        self.received[rows] = True
        self.done += len(rows)
        self.spans += int(np.asarray(batch.column("spans")).sum())
        self.parts.append(batch)

    def in_order(self) -> Callable[[int, int], tuple[Any, Any]]:
        """A function of ``(start, stop)`` giving the ``masked_text`` and ``mapping`` of rows
        ``start:stop`` (Arrow arrays, in row order); every row must have come back. Each
        call gathers only its own rows, so no column ever holds the whole corpus in one
        array."""
        import pyarrow as pa

        if self.done != self.total:  # `done` counts distinct rows only
            raise CorpusError(f"{self.done} of {self.total} records came back from the "
                              "workers; nothing was published")
        results = pa.concat_tables(self.parts)
        self.parts = []
        order = pa.array(results.column("_row").to_numpy().argsort(kind="stable"))

        def rows(start: int, stop: int) -> tuple[Any, Any]:
            part = results.take(order.slice(start, stop - start)).combine_chunks()
            return part.column("masked_text"), part.column("mapping")

        return rows


@contextlib.contextmanager
def _staging(out_dir: Path) -> Iterator[Path]:
    """A hidden staging folder next to `out_dir`, removed unless it was published."""
    stage = out_dir.parent / f".{out_dir.name}.staging-{secrets.token_hex(4)}"
    stage.mkdir(mode=0o700)
    try:
        yield stage
    finally:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)


def mask_corpus(input_path: str | os.PathLike, out_dir: str | os.PathLike, *,
                detector: str = "rules", engine: str = "local", batch_size: int = 256,
                workers: int = 1, blocks: int | None = None, address: str | None = None,
                rows_per_file: int = DEFAULT_ROWS_PER_FILE, model_batch_size: int = 16,
                max_new_tokens: int = 128, threads: int | None = None,
                keep_columns: Sequence[str] = (), progress: bool = False,
                on_progress: Callable[[int, int], None] | None = None,
                tracker=None) -> CorpusResult:
    """Mask the corpus at `input_path` into the new folder `out_dir` (see the module
    docstring). `batch_size` documents go to the detector at a time; with
    ``engine="ray"``, `workers` actors run it over `blocks` blocks (default: 2 per
    worker). `keep_columns` names input columns to copy, unmasked, beside ``masked_text``
    (the masked files are then sensitive; every other column is dropped).
    `on_progress(done, total)` is called after every batch; `tracker` (a
    `piilab.tracking` tracker) gets counts, throughput and the detector's identity."""
    if engine not in ENGINES:
        raise CorpusError(f"engine must be one of {', '.join(ENGINES)}")
    for name, value in (("batch_size", batch_size), ("workers", workers),
                        ("rows_per_file", rows_per_file), ("blocks", blocks)):
        if value is not None and value < 1:
            raise CorpusError(f"{name} must be at least 1")
    out_dir = Path(out_dir)
    if out_dir.exists():
        raise CorpusError(f"{out_dir}: exists; choose a new folder (a finished output is "
                          "never overwritten)")
    if not out_dir.parent.is_dir():
        raise CorpusError(f"{out_dir.parent}: no such folder")
    keep_columns = _check_keep_columns(keep_columns)
    identity = detector_identity(detector)
    table = read_corpus(input_path)
    missing = [name for name in keep_columns if name not in table.column_names]
    if missing:
        raise CorpusError(f"{input_path}: --keep-column names {len(missing)} column(s) the "
                          f"corpus does not have: {', '.join(map(repr, missing))}")
    dropped = [c for c in table.column_names
               if c not in ("id", "source_text") and c not in keep_columns]
    total = table.num_rows
    options = {"model_batch_size": model_batch_size, "max_new_tokens": max_new_tokens,
               "threads": threads} if detector != "rules" else {}
    t0 = time.perf_counter()
    if engine == "local":
        batches = _local_batches(table, detector, batch_size, options)
    else:
        batches = _ray_batches(table, detector, batch_size, options, workers=workers,
                               blocks=blocks or 2 * workers, address=address)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc="masking", unit="rec")
    results = _Results(total)
    with _staging(out_dir) as stage:
        for batch in batches:
            results.add(batch)
            if bar is not None:
                bar.n = results.done
                bar.refresh()
            if on_progress is not None:
                on_progress(results.done, total)
        if bar is not None:
            bar.close()
        in_order = results.in_order()
        spans = results.spans
        (stage / MASKED_DIR).mkdir()
        (stage / MAPPINGS_DIR).mkdir(mode=0o700)
        masked_files, mapping_files = [], []
        for number, start in enumerate(range(0, total, rows_per_file)):
            masked_entry, mapping_entry = _write_partition(
                stage, number, table, start, min(start + rows_per_file, total), in_order,
                keep_columns)
            masked_files.append(masked_entry)
            mapping_files.append(mapping_entry)
        seconds = time.perf_counter() - t0
        manifest = {
            "format": FORMAT_VERSION, "piilab_version": __version__, "records": total,
            "spans": spans, "detector": identity,
            "columns": ["id", "masked_text", *keep_columns],
            "unmasked_columns": list(keep_columns), "dropped_columns": dropped,
            "masked": masked_files, "mappings": mapping_files,
            "note": ("mappings/ holds every masked value (sensitive, owner-only); masked/ "
                     "can still hold values the detector missed"
                     + ("; masked/ also holds the unmasked columns listed in "
                        "unmasked_columns, so it is sensitive (owner-only) too"
                        if keep_columns else "")),
        }
        # The manifest is written last: a folder without one is not a finished output.
        (stage / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n",
                                      encoding="utf-8")
        os.rename(stage, out_dir)
    result = CorpusResult(out_dir, total, spans, len(masked_files), seconds, engine, identity)
    if tracker is not None:
        tracker.log_params({"engine": engine, "workers": workers if engine == "ray" else 1,
                            "batch_size": batch_size, "detector_kind": identity["kind"],
                            "detector_name": identity["name"],
                            "detector_sha256": identity.get("weights_sha256") or "none"})
        tracker.log_metrics({"records": total, "spans": spans, "seconds": seconds,
                             "records_per_second": result.records_per_second})
    return result


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


# ---------------------------------------------------------------------------
# Verifying a finished output
# ---------------------------------------------------------------------------


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


def verify_corpus(out_dir: str | os.PathLike, *, sample: int = 100, seed: int = 0,
                  ) -> VerifyReport:
    """Check a finished `mask_corpus` output: the manifest's files exist with their hashes
    and record counts, the mapping files are owner-only, the ids of the masked and
    mapping files agree, and for a sample of records restoring the masked text with its
    mapping gives a text that masks again (with the mapping's spellings as candidates) to
    the same masked text and mapping (the round trip, checked without the source).
    Problems are described by file and record number, never by a value."""
    import random

    import pyarrow.parquet as pq

    from piilab.tokenization import TOKEN_PATTERN

    out_dir = Path(out_dir)
    manifest_path = out_dir / MANIFEST
    if not manifest_path.is_file():
        raise CorpusError(f"{out_dir}: no {MANIFEST}: not a finished mask-corpus output")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        raise CorpusError(f"{manifest_path}: not valid JSON") from None
    problems: list[str] = []
    masked_rows: list[tuple[str, str]] = []
    mapping_rows: list[tuple[str, dict]] = []
    entries = list(manifest.get("masked", [])) + list(manifest.get("mappings", []))
    for entry in entries:
        path = out_dir / entry["file"]
        if not path.is_file():
            problems.append(f"{entry['file']}: missing")
            continue
        if entry.get("sensitive") and path.stat().st_mode & 0o077:
            problems.append(f"{entry['file']}: readable by others (mode "
                            f"{path.stat().st_mode & 0o777:o}, expected 600)")
        if _sha256(path) != entry["sha256"]:
            problems.append(f"{entry['file']}: SHA-256 differs from the manifest")
            continue
        if entry["file"].startswith(MASKED_DIR + "/"):
            part = pq.read_table(path, columns=["id", "masked_text"])
            rows = list(zip(part.column("id").to_pylist(),
                            part.column("masked_text").to_pylist(), strict=True))
            masked_rows += rows
        else:
            rows = []
            for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                try:
                    obj = json.loads(line)
                    rows.append((obj["id"], obj["mapping"]))
                except (json.JSONDecodeError, KeyError, TypeError):
                    problems.append(f"{entry['file']}:{lineno}: not a mapping record")
            mapping_rows += rows
        if len(rows) != entry["records"]:
            problems.append(f"{entry['file']}: {len(rows)} records, the manifest says "
                            f"{entry['records']}")
    total = manifest.get("records")
    if len(masked_rows) != total:
        problems.append(f"masked files hold {len(masked_rows)} records, the manifest says "
                        f"{total}")
    if [i for i, _ in masked_rows] != [i for i, _ in mapping_rows]:
        problems.append("the ids of the masked and the mapping files do not agree")
    sampled = 0
    if not problems:
        picks = random.Random(seed).sample(range(len(masked_rows)),
                                           min(sample, len(masked_rows)))
        for k in sorted(picks):
            masked, mapping = masked_rows[k][1], mapping_rows[k][1]
            # Restore, then mask the restored text again with the mapping's own spellings:
            # a mapping that belongs to its masked text gives back the same masked text.
            restored = reassemble_text(masked, mapping)
            tokens_left = set(TOKEN_PATTERN.findall(restored)) & set(mapping)
            again = mask_text(restored, [(t[1:].rsplit("_", 1)[0], v)
                                         for t, v in mapping.items()])
            if tokens_left or again.masked_text != masked or again.mapping != mapping:
                problems.append(f"record {k + 1}: the mapping does not restore its text")
            sampled += 1
    return VerifyReport(len(masked_rows), len(entries), sampled, tuple(problems))


def iter_masked(out_dir: str | os.PathLike) -> Iterable[dict[str, Any]]:
    """The masked records of a finished output, in order (no mappings)."""
    import pyarrow.parquet as pq

    manifest = json.loads((Path(out_dir) / MANIFEST).read_text(encoding="utf-8"))
    for entry in manifest["masked"]:
        yield from pq.read_table(Path(out_dir) / entry["file"]).to_pylist()
