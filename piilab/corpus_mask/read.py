"""Reading a corpus (chapter 10): JSONL by one reader, Python's; Parquet by Arrow.

`read_corpus(path)` gives a checked ``pyarrow.Table``: every record has a nonempty string
``id``, unique, and a string ``source_text``. Whatever is wrong, the error is one
`CorpusError` naming the place (``file:line`` for JSONL, ``file:row N`` or the file for
Parquet) and the field or column, never a value.

JSONL is read by one reader: the file's bytes are read once (so a pipe, ``/dev/stdin`` or
a named pipe works as a file does), and each line is parsed by
`piilab.dataset.parse_jsonl_line`, which names the line of any problem. Limits keep the
work bounded: a line longer than `MAX_LINE_BYTES` and a value nested more than
`MAX_DEPTH` levels are refused, naming the line (Python's own JSON parser refuses deeper
nesting still). Each column is then built by Arrow; a column whose values do not share
one type is retried record by record, so the error names the first line that breaks the
column's type. Parquet is the fast input: Arrow reads it in compiled code.

`check_storable(table, columns, where)` proves that Parquet can store the named columns
and read them back (a list nested 50 deep, or an object with no fields, cannot be),
before any work is done.
"""

from __future__ import annotations

import bisect
import io
import itertools
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from piilab.corpus_mask.layout import CorpusError, shown_name

__all__ = ["MAX_DEPTH", "MAX_LINE_BYTES", "check_storable", "read_corpus"]

#: Nesting of a value inside a record beyond this many levels is refused (Parquet cannot
#: store 50 levels of lists; no corpus needs 64).
MAX_DEPTH = 64
#: A JSONL line (one record) longer than this is refused.
MAX_LINE_BYTES = 64 << 20


def read_corpus(path: str | os.PathLike):
    """The corpus at `path` as a ``pyarrow.Table`` (a JSONL file, a Parquet file or a
    folder of Parquet files), checked (see the module docstring). A JSONL column that only
    later records have is kept (empty in the records without it)."""
    path = Path(path)
    if path.is_dir() or path.suffix.lower() in {".parquet", ".pq"}:
        table, ids, place = _read_parquet(path)
    else:
        table, ids, place = _read_jsonl(path)
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


# --- JSONL ------------------------------------------------------------------------------


def _read_jsonl(path: Path) -> tuple[Any, list, Callable[[int], str]]:
    """The table, the ids and ``place(index)`` (``file:line``) of a JSONL corpus."""
    import pyarrow as pa

    from piilab.dataset import DatasetError, parse_jsonl_line

    try:
        data = path.read_bytes()  # once: a pipe or a named pipe can be read only once
    except OSError as exc:
        raise CorpusError(f"{path}: {exc.strerror or type(exc).__name__}") from None
    linenos: list[int] = []
    rows: list[dict] = []
    for lineno, raw in enumerate(io.BytesIO(data), 1):
        if not raw.strip():
            continue
        where = f"{path}:{lineno}"
        if len(raw) > MAX_LINE_BYTES:
            raise CorpusError(f"{where}: the line is longer than {MAX_LINE_BYTES >> 20} MiB")
        try:
            record = parse_jsonl_line(raw, path, lineno)
        except DatasetError as exc:
            raise CorpusError(str(exc)) from None
        if "id" not in record or "source_text" not in record:
            missing = "id" if "id" not in record else "source_text"
            raise CorpusError(f"{where}: the record has no field '{missing}'")
        problem = record_problem(record["id"], record["source_text"])
        if problem:
            raise CorpusError(f"{where}: {problem}")
        if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH:  # only then can it be too deep
            _check_depth(record, where)
        linenos.append(lineno)
        rows.append(record)
    del data

    def place(index: int) -> str:
        return f"{path}:{linenos[index]}"

    # Every key of every record, in order of first appearance.
    names = dict.fromkeys(rows[0]) if rows else {}
    for record in rows:
        if record.keys() != names.keys():
            names.update(dict.fromkeys(record))
    columns = {}
    for name in names:
        values = [record.get(name) for record in rows]
        try:
            columns[name] = pa.array(values)
        except (pa.ArrowException, OverflowError, ValueError, TypeError):
            raise CorpusError(_column_problem(name, values, place)) from None
    return pa.table(columns), [record["id"] for record in rows], place


def _check_depth(record: dict, where: str) -> None:
    """Refuse a value nested more than `MAX_DEPTH` levels (a loop, not recursion)."""
    for name, value in record.items():
        stack = [(value, 1)] if isinstance(value, dict | list) else []
        while stack:
            item, depth = stack.pop()
            if depth > MAX_DEPTH:
                raise CorpusError(f"{where}: column {shown_name(name)} is nested more than "
                                  f"{MAX_DEPTH} levels deep")
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children
                         if isinstance(child, dict | list))


def _converts(values: Sequence[Any]) -> bool:
    import pyarrow as pa

    try:
        pa.array(values)
    except (pa.ArrowException, OverflowError, ValueError, TypeError):
        return False
    return True


_KINDS = ((bool, "true or false"), (int, "a number"), (float, "a number"), (str, "text"),
          (list, "a list"), (dict, "an object"))


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return next(kind for cls, kind in _KINDS if isinstance(value, cls))


def _column_problem(name: str, values: Sequence[Any], place: Callable[[int], str]) -> str:
    """What breaks column `name`: the first record whose value Arrow cannot put in one
    column with the values before it (a binary search over prefixes), and what it holds
    where an earlier line holds something else. Runs only when the column failed."""
    good, bad = 0, len(values)  # values[:good] converts, values[:bad] does not
    while bad - good > 1:
        middle = (good + bad) // 2
        if _converts(values[:middle]):
            good = middle
        else:
            bad = middle
    index = bad - 1
    value = values[index]
    column = shown_name(name)
    too_big = isinstance(value, int) and not -(2 ** 63) <= value < 2 ** 64
    if too_big or not _converts([value]):
        return (f"{place(index)}: column {column} holds a value Arrow cannot store "
                "(e.g. a whole number that does not fit in 64 bits)")
    kind = _kind(value)
    earlier = next((j for j in range(index) if values[j] is not None
                    and _kind(values[j]) != kind), None)
    if earlier is not None:
        line = place(earlier).rpartition(":")[2]
        return (f"{place(index)}: column {column} holds {kind} where line {line} holds "
                f"{_kind(values[earlier])} (one type per column)")
    return (f"{place(index)}: column {column} does not have the type it has in the lines "
            "before (one type per column; e.g. a whole number beyond 2**53 beside "
            "fractions, or lists of different items)")


# --- Parquet ----------------------------------------------------------------------------


def _read_parquet(path: Path) -> tuple[Any, list, Callable[[int], str]]:
    """The table, the ids and ``place(index)`` (``file:row N``) of a Parquet corpus."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
    if not files:
        raise CorpusError(f"{path}: no .parquet files in this folder")
    tables = []
    for file in files:
        try:
            names = pq.read_schema(file).names
            repeated = next((n for n in names if names.count(n) > 1), None)
            if repeated is not None:
                raise CorpusError(f"{file}: column {shown_name(repeated)} appears twice")
            tables.append(pq.read_table(file))
        except OSError as exc:
            if exc.errno is not None:  # the system's reason (no such file, permission)
                raise CorpusError(f"{file}: {exc.strerror}") from None
            raise CorpusError(f"{file}: not a Parquet file, or a damaged one") from None
        except CorpusError:
            raise
        except (pa.ArrowException, ValueError, TypeError):
            raise CorpusError(f"{file}: not a Parquet file, or a damaged one") from None
    firsts = list(itertools.accumulate((t.num_rows for t in tables), initial=0))

    def place(index: int) -> str:
        k = bisect.bisect_right(firsts, index) - 1
        return f"{files[k]}:row {index - firsts[k] + 1}"

    schema = tables[0].schema
    for file, table in zip(files[1:], tables[1:], strict=True):
        try:
            schema = pa.unify_schemas([schema, table.schema], promote_options="default")
        except (pa.ArrowException, ValueError, TypeError):
            clash = next((f.name for f in table.schema if f.name in schema.names
                          and not _unify(schema.field(f.name), f)), None)
            what = f"column {shown_name(clash)}" if clash is not None else "a column"
            raise CorpusError(f"{file}: {what} has another type than in {files[0]}") from None
    try:
        table = pa.concat_tables(tables, promote_options="default")
    except (pa.ArrowException, ValueError, TypeError):
        raise CorpusError(f"{path}: the files' columns do not fit one table") from None
    for name in ("id", "source_text"):
        if name not in table.column_names:
            raise CorpusError(f"{path}: the corpus has no '{name}' column")
    ids = _as_python(table.column("id"), "id", place)
    texts = _as_python(table.column("source_text"), "source_text", place)
    bad = first_bad_record(ids, texts)
    if bad is not None:
        raise CorpusError(f"{place(bad[0])}: {bad[1]}")
    return table, ids, place


def _unify(a, b) -> bool:
    import pyarrow as pa

    try:
        pa.unify_schemas([pa.schema([a]), pa.schema([b])], promote_options="default")
    except (pa.ArrowException, ValueError, TypeError):
        return False
    return True


def _as_python(column, name: str, place: Callable[[int], str]) -> list:
    """A column's values as Python objects; a value that is not valid UTF-8 text is named
    by its row."""
    try:
        return column.to_pylist()
    except UnicodeDecodeError:
        pass
    for index in range(len(column)):
        try:
            column[index].as_py()
        except UnicodeDecodeError:
            raise CorpusError(f"{place(index)}: field '{name}' is not UTF-8 text") from None
    raise CorpusError(f"field '{name}' is not UTF-8 text")  # pragma: no cover


# --- checks shared by both readers -----------------------------------------------------


def first_bad_record(ids: Sequence[Any], texts: Sequence[Any]) -> tuple[int, str] | None:
    """The index of the first record whose ``id`` or ``source_text`` is bad, and what is
    wrong with it (`record_problem`); None when every record is good."""
    for index, (record_id, text) in enumerate(zip(ids, texts, strict=True)):
        problem = record_problem(record_id, text)
        if problem:
            return index, problem
    return None


def record_problem(record_id: Any, text: Any) -> str | None:
    """What is wrong with a record's ``id`` or ``source_text`` (None when nothing is)."""
    if not isinstance(record_id, str) or not record_id:
        return "field 'id' must be a nonempty string"
    if not isinstance(text, str):
        return "field 'source_text' must be a string"
    return None


def check_storable(table, columns: Sequence[str], where: str | os.PathLike) -> None:
    """Refuse, naming the column, any of `columns` that Parquet cannot store and read back
    (tried on an empty table of the column's type: cheap, and exact for the type)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for name in columns:
        empty = pa.table({name: pa.array([], table.schema.field(name).type)})
        try:
            buffer = pa.BufferOutputStream()
            pq.write_table(empty, buffer, store_schema=False)
            pq.read_table(pa.BufferReader(buffer.getvalue()))
        except (pa.ArrowException, OSError, ValueError, TypeError):
            raise CorpusError(
                f"{where}: column {shown_name(name)} has a type that Parquet cannot store "
                "and read back (lists nested 50 deep or more, or an object with no fields); "
                "leave it out of --keep-column") from None
