"""Hostile input for the corpus commands (`piilab.corpus_mask`, `mask-corpus`, `verify-corpus`).

Malformed JSONL and Parquet, output-folder cases, tampered outputs for `verify_corpus`,
and interruptions at each stage (in-process hooks, plus one SIGKILL in a child process).
Every refusal must be one `CorpusError` naming the file and line, row or field, and no
planted value may reach a message. Most cases run in-process; the few command-line cases
that need a process of their own run in a subprocess.

Regression tests for the hostile run of 2026-12-06 (`N2`...`N15` in the test names).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow", reason="needs pyarrow: pip install -e '.[scale]'")
import pyarrow.parquet as pq  # noqa: E402

from piilab.corpus_mask import (  # noqa: E402
    MANIFEST,
    CorpusError,
    mask_corpus,
    read_corpus,
    verify_corpus,
)
from piilab.errors import PiilabError  # noqa: E402

SECRET = "ZZSECRETNAME"
PHONE = "010-0999-1234"
TEXT = f"Dear {SECRET}, call {PHONE}."
REPO = Path(__file__).resolve().parent.parent


def line(record_id: str = "a", text: str = TEXT, **more) -> bytes:
    return json.dumps({"id": record_id, "source_text": text, **more}).encode() + b"\n"


def good(n: int = 3) -> bytes:
    return b"".join(line(f"r{k}", f"{TEXT} ({k})") for k in range(n))


def assert_clean(message: str) -> None:
    """No planted value in a message, and one line."""
    assert SECRET not in message and PHONE not in message
    assert "\n" not in message.strip()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".piilab-"))


# --- malformed JSONL (N2, N3, N8, N13): one error naming the line and the field -----------

DEEP_OBJECTS = b'{"id":"a","source_text":"x","x":' + b'{"a":' * 20000 + b"1" + b"}" * 20001 + b"\n"
DEEP_LISTS = b'{"id":"a","source_text":"x","x":' + b"[" * 10000 + b"]" * 10000 + b"}\n"

JSONL_REFUSED = {
    # name: (file bytes, line of the error or None for the file, text in the message)
    "empty file": (b"", None, "holds no records"),
    "blank lines only": (b"\n  \n\r\n", None, "holds no records"),
    "invalid UTF-8": (line() + b'{"id":"b","source_text":"\xff"}\n', 2, "not UTF-8"),
    "CESU-8 surrogate bytes": (b'{"id":"a","source_text":"\xed\xa0\x80"}\n', 1, "not UTF-8"),
    "BOM on line 2": (line() + b"\xef\xbb\xbf" + line("b"), 2, "malformed JSON"),
    "lone surrogate in text": (b'{"id":"a","source_text":"\\ud800"}\n', 1, "lone surrogate"),
    "lone surrogate in a column": (b'{"id":"a","source_text":"x","n":"\\udc00"}\n', 1,
                                   "lone surrogate"),
    "raw NUL": (b'{"id":"a","source_text":"x\x00"}\n', 1, "malformed JSON"),
    "truncated line": (line() + b'{"id":"b","source_te', 2, "malformed JSON"),
    "two objects on a line": (line()[:-1] + line("b"), 1, "malformed JSON"),
    "top-level array": (b'[{"id":"a","source_text":"x"}]\n', 1, "must be a JSON object"),
    "top-level null": (line() + b"null\n", 2, "must be a JSON object"),
    "top-level string": (b'"text"\n', 1, "must be a JSON object"),
    "lone CR between records": (line()[:-1] + b"\r" + line("b"), 1, "malformed JSON"),
    "gzip bytes": (b"\x1f\x8b\x08\x00\x00\x00\x00\x00", 1, "not UTF-8"),
    "id a number": (line(7), 1, "field 'id' must be a nonempty string"),
    "id null": (line(None), 1, "field 'id' must be a nonempty string"),
    "id empty": (line(""), 1, "field 'id' must be a nonempty string"),
    "id a list": (line([SECRET]), 1, "field 'id' must be a nonempty string"),
    "id true": (line(True), 1, "field 'id' must be a nonempty string"),
    "id 2**64": (line(2 ** 64), 1, "field 'id' must be a nonempty string"),
    "id missing": (b'{"source_text":"x"}\n', 1, "no field 'id'"),
    "text missing": (line() + b'{"id":"b"}\n', 2, "no field 'source_text'"),
    "text a number": (line("a", 12345), 1, "field 'source_text' must be a string"),
    "text null": (line("a", None), 1, "field 'source_text' must be a string"),
    "text a list": (line("a", [TEXT]), 1, "field 'source_text' must be a string"),
    "duplicate id": (line(SECRET) + line("b") + line(SECRET), 3, "field 'id' repeats"),
    "duplicate id far apart": (line("x") + good(400) + line("x"), 402, "field 'id' repeats"),
    "5,000-digit number": (b'{"id":"a","source_text":"x","n":' + b"9" * 5000 + b"}\n", 1,
                           "more digits"),
    "N2 20,000 nested objects": (DEEP_OBJECTS, 1, "nested too deeply"),
    "N2 10,000 nested lists": (DEEP_LISTS, 1, "nested too deeply"),
    "65 nested lists": (b'{"id":"a","source_text":"x","x":' + b"[" * 65 + b"]" * 65 + b"}\n",
                        1, "column 'x' is nested more than 64 levels"),
    "65 nested objects": (b'{"id":"a","source_text":"x","x":' + b'{"a":' * 65 + b"1"
                          + b"}" * 66 + b"\n", 1, "column 'x' is nested more than 64 levels"),
    "N3 big integer beside a float": (line("a", n=9007199254740993) + line("b", n=0.5), 2,
                                      "column 'n' does not have the type"),
    "N3 18 digits beside a float": (line("a", n=0.5) + line("b", n=123456789012345678), 2,
                                    "column 'n'"),
    "N13 number after text": (line("a", tag="t") + line("b", tag=5), 2,
                              "column 'tag' holds a number where line 1 holds text"),
    "N13 text after number": (line("a", tag=5) + line("b", tag="t"), 2,
                              "column 'tag' holds text where line 1 holds a number"),
    "N13 object after list": (line("a", tag=[1]) + line("b", tag={"k": 1}), 2,
                              "column 'tag' holds an object where line 1 holds a list"),
    "N13 bool after number": (line("a", tag=1) + line("b", tag=True), 2,
                              "column 'tag' holds true or false where line 1 holds a number"),
    "N13 mixed list items": (line("a", tag=[1]) + line("b", tag=["x"]), 2,
                             "column 'tag' does not have the type"),
    "N13 the bad line after nulls": (line("a", tag="t") + line("b", tag=None) + line("c")
                                     + line("d", tag=[1]), 4,
                                     "column 'tag' holds a list where line 1 holds text"),
    "N13 integer beyond 64 bits": (line("a", n=1) + line("b", n=2 ** 64), 2,
                                   "does not fit in 64 bits"),
    "N13 integer below int64": (line("a", n=1) + line("b", n=-(2 ** 63) - 1), 2,
                                "does not fit in 64 bits"),
    "secret column name": (line("a", **{SECRET: 1}) + line("b", **{SECRET: "t"}), 2,
                           "holds text where line 1 holds a number"),
}


@pytest.mark.parametrize("case", list(JSONL_REFUSED))
def test_malformed_jsonl_is_refused_naming_the_line(case, tmp_path):
    data, lineno, message = JSONL_REFUSED[case]
    path = tmp_path / "c.jsonl"
    path.write_bytes(data)
    with pytest.raises(CorpusError) as info:
        read_corpus(path)
    text = str(info.value)
    where = f"{path}:{lineno}: " if lineno is not None else f"{path}: "
    assert text.startswith(where) and message in text, text
    if case != "secret column name":  # a column name is a field name: it is shown
        assert_clean(text)
    assert len(text) < 400


JSONL_ACCEPTED = {
    "escaped NUL": line("a", "x\u0000y"),
    "surrogate pair": b'{"id":"a","source_text":"call 010-0999-1234 \\ud83d\\ude00"}\n',
    "CRLF": line()[:-1] + b"\r\n" + line("b")[:-1] + b"\r\n",
    "blank lines between": b"\n" + line() + b"\n\n" + line("b") + b"   \n",
    "U+2028 in text": line("a", "a\u2028b"),
    "timestamp-like strings": line("a", t="2020-01-01T10:00:00Z") + line("b", t="12:00"),
    "column only later": line("a") + line("b", extra=[1, 2]),
    "empty list and list of nulls": line("a", l=[]) + line("b", l=[None, None]),
    "reordered struct keys": line("a", s={"p": 1, "q": "x"}) + line("b", s={"q": "y", "p": 2}),
    "no final newline": line()[:-1],
    "integers beyond 2**53 alone": line("a", n=9007199254740993) + line("b", n=1),
    "64 nested lists": b'{"id":"a","source_text":"x","x":' + b"[" * 64 + b"]" * 64 + b"}\n",
    "NFD and full-width digits": line("a", "Cafe\u0301 \uff10\uff11\uff10-0999-1234"),
    "forged token in text": line("a", "call [PHONE_1] or 010-0999-1234"),
    "input masked_text column (N7)": line("a", masked_text="mine"),
}


@pytest.mark.parametrize("case", list(JSONL_ACCEPTED))
def test_odd_but_valid_jsonl_masks_and_restores(case, tmp_path):
    from piilab.labels import nfc
    from piilab.masking import reassemble_text

    path = tmp_path / "c.jsonl"
    path.write_bytes(JSONL_ACCEPTED[case])
    out = tmp_path / "out"
    result = mask_corpus(path, out)
    records = [json.loads(raw) for raw in JSONL_ACCEPTED[case].splitlines() if raw.strip()]
    assert result.records == len(records)
    manifest = json.loads((out / MANIFEST).read_text())
    masked = pq.read_table(out / manifest["masked"][0]["file"]).to_pylist()
    mappings = [json.loads(raw) for raw in (out / manifest["mappings"][0]["file"]).read_text()
                .splitlines()]
    for record, row, mapping in zip(records, masked, mappings, strict=True):
        assert row["id"] == mapping["id"] == record["id"]
        assert reassemble_text(row["masked_text"], mapping["mapping"]) == nfc(
            record["source_text"])
    assert verify_corpus(out).ok


def test_n8_a_pipe_is_read_once(tmp_path):
    """N8: /dev/stdin and a named pipe give what a regular file gives."""
    valid = JSONL_ACCEPTED["surrogate pair"]
    bad = line("a", "x") + line(7, "y")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    command = [sys.executable, "-m", "piilab", "mask-corpus", "--input", "/dev/stdin",
               "--detector", "rules", "--no-progress", "--out"]
    done = subprocess.run([*command, str(tmp_path / "o1")], input=valid, capture_output=True,
                          cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([*command, str(tmp_path / "o2")], input=bad, capture_output=True,
                          cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 2
    assert done.stderr.decode().strip() == ("piilab: error: /dev/stdin:2: field 'id' must be a "
                                            "nonempty string")
    fifo = tmp_path / "f.jsonl"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"cat > '{fifo}'"], stdin=subprocess.PIPE)
    writer.stdin.write(bad)
    writer.stdin.close()
    with pytest.raises(CorpusError, match=r"f\.jsonl:2: field 'id'"):
        read_corpus(fifo)
    writer.wait(timeout=30)


# --- Parquet input (N12): errors name the file, and the row where there is one ------------


def _parquet(path: Path, **columns) -> Path:
    pq.write_table(pa.table(columns), path)
    return path


def _good_parquet(path: Path, n: int = 3) -> Path:
    return _parquet(path, id=[f"r{k}" for k in range(n)], source_text=[TEXT] * n)


def _raw_parquet(path: Path, ids: list[bytes], texts: list[bytes]) -> Path:
    """A Parquet file whose string columns hold arbitrary bytes (a view is not checked)."""
    pq.write_table(pa.table({"id": pa.array(ids, pa.binary()).view(pa.string()),
                             "source_text": pa.array(texts, pa.binary()).view(pa.string())}),
                   path)
    return path


def _truncated(tmp_path):
    data = _good_parquet(tmp_path / "g.parquet").read_bytes()
    path = tmp_path / "t.parquet"
    path.write_bytes(data[:len(data) // 2])
    return path, path, "not a Parquet file"


def _bad_footer(tmp_path):
    data = _good_parquet(tmp_path / "g.parquet").read_bytes()
    path = tmp_path / "t.parquet"
    path.write_bytes(data[:-4] + b"XXXX")
    return path, path, "not a Parquet file"


def _empty(tmp_path):
    path = tmp_path / "t.parquet"
    path.write_bytes(b"")
    return path, path, "not a Parquet file"


def _random(tmp_path):
    path = tmp_path / "t.parquet"
    path.write_bytes(bytes(range(256)) * 8)
    return path, path, "not a Parquet file"


def _flipped_page(tmp_path):
    path = _good_parquet(tmp_path / "t.parquet", 200)
    data = bytearray(path.read_bytes())
    for k in range(8, min(len(data) - 100, 300)):
        data[k] ^= 0xFF
    path.write_bytes(bytes(data))
    return path, path, "not a Parquet file"


def _corrupt_in_folder(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    _good_parquet(folder / "a.parquet")
    (folder / "b.parquet").write_bytes(b"PAR1 not really")
    return folder, folder / "b.parquet", "not a Parquet file"


def _duplicate_id_columns(tmp_path):
    path = tmp_path / "t.parquet"
    table = pa.Table.from_arrays([pa.array(["a"]), pa.array(["b"]), pa.array([TEXT])],
                                 names=["id", "id", "source_text"])
    pq.write_table(table, path)
    return path, path, "column 'id' appears twice"


def _bad_utf8_id(tmp_path):
    path = _raw_parquet(tmp_path / "t.parquet", [b"a", b"\xff"], [b"x", b"y"])
    return path, f"{path}:row 2", "field 'id' is not UTF-8"


def _bad_utf8_text(tmp_path):
    path = _raw_parquet(tmp_path / "t.parquet", [b"a", b"b", b"c"], [b"x", b"y", b"\xed\xa0"])
    return path, f"{path}:row 3", "field 'source_text' is not UTF-8"


def _types_differ_between_files(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    _parquet(folder / "a.parquet", id=["a"], source_text=["x"], n=[1])
    _parquet(folder / "b.parquet", id=["b"], source_text=["y"], n=["one"])
    return folder, folder / "b.parquet", "column 'n' has another type"


def _no_id_column(tmp_path):
    path = _parquet(tmp_path / "t.parquet", source_text=[TEXT])
    return path, path, "has no 'id' column"


def _int_ids(tmp_path):
    path = _parquet(tmp_path / "t.parquet", id=[1, 2], source_text=["x", "y"])
    return path, f"{path}:row 1", "field 'id' must be a nonempty string"


def _null_id_row_2(tmp_path):
    path = _parquet(tmp_path / "t.parquet", id=["a", None], source_text=["x", "y"])
    return path, f"{path}:row 2", "field 'id' must be a nonempty string"


def _binary_text(tmp_path):
    path = _parquet(tmp_path / "t.parquet", id=["a"], source_text=pa.array([b"x"], pa.binary()))
    return path, f"{path}:row 1", "field 'source_text' must be a string"


def _repeated_id_across_files(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    _parquet(folder / "a.parquet", id=["a", SECRET], source_text=["x", "y"])
    _parquet(folder / "b.parquet", id=["c", SECRET], source_text=["x", "y"])
    return folder, f"{folder / 'b.parquet'}:row 2", "field 'id' repeats the id of"


def _empty_folder(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    return folder, folder, "no .parquet files"


def _no_rows(tmp_path):
    path = _parquet(tmp_path / "t.parquet", id=pa.array([], pa.string()),
                    source_text=pa.array([], pa.string()))
    return path, path, "holds no records"


def _missing_file(tmp_path):
    path = tmp_path / "absent.parquet"
    return path, path, "No such file"


PARQUET_CASES = [_truncated, _bad_footer, _empty, _random, _flipped_page, _corrupt_in_folder,
                 _duplicate_id_columns, _bad_utf8_id, _bad_utf8_text,
                 _types_differ_between_files, _no_id_column, _int_ids, _null_id_row_2,
                 _binary_text, _repeated_id_across_files, _empty_folder, _no_rows,
                 _missing_file]


@pytest.mark.parametrize("make", PARQUET_CASES, ids=lambda f: f.__name__.strip("_"))
def test_n12_bad_parquet_input_names_the_file_and_row(make, tmp_path):
    source, where, message = make(tmp_path)
    with pytest.raises(CorpusError) as info:
        mask_corpus(source, tmp_path / "out")
    text = str(info.value)
    assert text.startswith(f"{where}: ") and message in text, text
    assert_clean(text)
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


# --- N6: kept columns must survive Parquet; N7 -------------------------------------------


@pytest.mark.parametrize("value, storable", [
    (json.loads("[" * 49 + "1" + "]" * 49), True),
    (json.loads("[" * 50 + "1" + "]" * 50), False),
    ({}, False),
    ({"a": {}}, False),
    ([{}], False),
    ({"a": [1]}, True),
])
def test_n6_a_kept_column_parquet_cannot_read_back_is_refused_before_the_work(
        value, storable, tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(line("a", x=value) + line("b", x=value))
    out = tmp_path / "out"
    if storable:
        mask_corpus(path, out, keep_columns=["x"])
        assert verify_corpus(out).ok
        return
    with pytest.raises(CorpusError, match=r"c\.jsonl: column 'x' has a type that Parquet "):
        mask_corpus(path, out, keep_columns=["x"])
    assert not out.exists()
    mask_corpus(path, out)  # dropped, the column does no harm
    assert verify_corpus(out).ok


# --- the output folder ------------------------------------------------------------------


def _source(tmp_path: Path) -> Path:
    path = tmp_path / "c.jsonl"
    path.write_bytes(good())
    return path


OUTPUT_CASES = {
    "exists, empty": (lambda t: (t / "out").mkdir() or t / "out", "exists"),
    "exists, a file": (lambda t: (t / "out").write_text("x") and t / "out", "exists"),
    "symlink to a folder": (lambda t: (t / "real").mkdir() or (t / "out").symlink_to(t / "real")
                            or t / "out", "exists"),
    "dangling symlink": (lambda t: (t / "out").symlink_to(t / "nowhere") or t / "out",
                         "exists"),
    "missing parent": (lambda t: t / "no" / "out", "no such folder"),
    "parent is a file": (lambda t: (t / "f").write_text("x") and t / "f" / "out",
                         "no such folder"),
    "the input file": (lambda t: t / "c.jsonl", "exists"),
    "the current folder": (lambda t: Path("."), "exists"),
    "empty name": (lambda t: Path(""), "exists"),
}


@pytest.mark.parametrize("case", list(OUTPUT_CASES))
def test_a_bad_output_folder_is_refused_and_left_as_it_was(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = _source(tmp_path)
    make, message = OUTPUT_CASES[case]
    out = make(tmp_path)
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(CorpusError, match=message):
        mask_corpus(source, out)
    assert sorted(os.listdir(tmp_path)) == before and source.read_bytes() == good()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_parent_is_refused_before_the_work(tmp_path):
    source = _source(tmp_path)
    folder = tmp_path / "ro"
    folder.mkdir(mode=0o555)
    with pytest.raises(CorpusError, match="not writable"):
        mask_corpus(source, folder / "out")


def test_two_outputs_from_one_input_are_identical(tmp_path):
    source = _source(tmp_path)
    mask_corpus(source, tmp_path / "a")
    mask_corpus(source, tmp_path / "b")
    for path in (tmp_path / "a").rglob("*"):
        twin = tmp_path / "b" / path.relative_to(tmp_path / "a")
        assert path.is_dir() or path.read_bytes() == twin.read_bytes()


def test_output_inside_a_parquet_input_folder_does_not_disturb_it(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    _good_parquet(folder / "a.parquet")
    mask_corpus(folder, folder / "out")
    assert read_corpus(folder).num_rows == 3 and verify_corpus(folder / "out").ok


# --- interruption at each stage (N4) ----------------------------------------------------


def _publish():
    from piilab.corpus_mask import publish

    return publish


def _interrupt_after_staging_mkdir(monkeypatch):
    real = Path.mkdir

    def mkdir(self, *args, **kwargs):
        real(self, *args, **kwargs)
        if self.name.startswith(".piilab-"):
            raise KeyboardInterrupt  # Ctrl-C handled right after mkdir returned

    monkeypatch.setattr(Path, "mkdir", mkdir)


def _interrupt_on_write(number):
    def hook(monkeypatch):
        publish = _publish()
        real = publish.write_atomic
        calls = []

        def write(path, data, mode=None):
            calls.append(path)
            if len(calls) == number:
                raise KeyboardInterrupt
            real(path, data, mode)

        monkeypatch.setattr(publish, "write_atomic", write)
    return hook


def _interrupt_on_rename(monkeypatch):
    real = os.rename

    def rename(source, target, *args, **kwargs):
        if os.path.basename(source).startswith(".piilab-"):
            real(source, target, *args, **kwargs)
            raise KeyboardInterrupt  # right after the rename: the output is complete
        real(source, target, *args, **kwargs)

    monkeypatch.setattr(os, "rename", rename)


def _disk_full_on_write(number):
    def hook(monkeypatch):
        publish = _publish()
        real = publish.write_atomic
        calls = []

        def write(path, data, mode=None):
            calls.append(path)
            if len(calls) == number:
                raise OSError(28, "No space left on device", str(path))
            real(path, data, mode)

        monkeypatch.setattr(publish, "write_atomic", write)
    return hook


def _interrupt_in_batches(monkeypatch):
    publish = _publish()
    real = publish.Results.add

    def add(self, batch):
        real(self, batch)
        raise KeyboardInterrupt

    monkeypatch.setattr(publish.Results, "add", add)


STAGES = {
    "after staging mkdir": (_interrupt_after_staging_mkdir, KeyboardInterrupt, False),
    "while computing": (_interrupt_in_batches, KeyboardInterrupt, False),
    "first masked file": (_interrupt_on_write(1), KeyboardInterrupt, False),
    "first mapping file": (_interrupt_on_write(2), KeyboardInterrupt, False),
    "second partition": (_interrupt_on_write(3), KeyboardInterrupt, False),
    "manifest": (_interrupt_on_write(5), KeyboardInterrupt, False),
    "just after the rename": (_interrupt_on_rename, KeyboardInterrupt, True),
    "N15 disk full, masked file": (_disk_full_on_write(1), CorpusError, False),
    "N15 disk full, mapping file": (_disk_full_on_write(2), CorpusError, False),
    "N15 disk full, manifest": (_disk_full_on_write(5), CorpusError, False),
}


@pytest.mark.parametrize("stage", list(STAGES))
def test_n4_an_interruption_at_any_stage_leaves_no_staging_and_nothing_half_done(
        stage, tmp_path, monkeypatch):
    source = tmp_path / "c.jsonl"
    source.write_bytes(good(4))
    out = tmp_path / "out"
    hook, error, published = STAGES[stage]
    with monkeypatch.context() as patch:
        hook(patch)
        with pytest.raises(error) as info:
            mask_corpus(source, out, rows_per_file=2)
    if error is CorpusError:  # N15: the file being written, as it would be named in out
        assert str(info.value).startswith(f"writing {out}/")
        assert "No space left on device" in str(info.value)
    assert leftovers(tmp_path) == []
    if published:
        assert verify_corpus(out).ok
    else:
        assert not out.exists()
        mask_corpus(source, out, rows_per_file=2)
        assert verify_corpus(out).ok


@pytest.fixture
def live_ctrl_c():
    """Ctrl-C as a terminal delivers it. A process started in the background by a
    non-interactive shell inherits SIGINT ignored, and the CLI then leaves it ignored on
    purpose; the tests of what Ctrl-C does need it live, however pytest was launched."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_n4_a_signal_while_writing_ends_the_command_with_one_line(signum, status, tmp_path,
                                                                  monkeypatch, capsys,
                                                                  live_ctrl_c):
    from piilab.cli import main

    source = _source(tmp_path)
    publish = _publish()
    real = publish.write_atomic

    def write(path, data, mode=None):
        os.kill(os.getpid(), signum)  # delivered by the CLI's handler at once
        real(path, data, mode)

    monkeypatch.setattr(publish, "write_atomic", write)
    code = main(["mask-corpus", "--input", str(source), "--out", str(tmp_path / "out"),
                 "--detector", "rules"])
    err = capsys.readouterr().err
    assert code == status and err.startswith("piilab: error: interrupted")
    assert len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


def test_n4_a_second_ctrl_c_during_the_clean_up_waits_for_it(tmp_path, monkeypatch, capsys,
                                                              live_ctrl_c):
    from piilab import files
    from piilab.cli import main

    source = _source(tmp_path)
    publish = _publish()
    monkeypatch.setattr(publish, "write_atomic",
                        lambda *a, **k: os.kill(os.getpid(), signal.SIGINT))
    real = shutil.rmtree

    def rmtree(path, *args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # held until the folder is gone
        return real(path, *args, **kwargs)

    monkeypatch.setattr(files.shutil, "rmtree", rmtree)
    code = main(["mask-corpus", "--input", str(source), "--out", str(tmp_path / "out"),
                 "--detector", "rules"])
    monkeypatch.setattr(files.shutil, "rmtree", real)
    assert code == 130 and len(capsys.readouterr().err.splitlines()) == 1
    assert leftovers(tmp_path) == [] and not (tmp_path / "out").exists()


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_n4_a_killed_runs_staging_folder_is_removed_by_the_next_run(tmp_path):
    """SIGKILL while the mapping files are being written: the staging folder (named with the
    dead process's id) stays, and the next run beside it removes it."""
    source = _source(tmp_path)
    script = (
        "import os, signal, sys\n"
        "from piilab.corpus_mask import publish, mask_corpus\n"
        "real = publish.write_atomic\n"
        "def write(path, data, mode=None):\n"
        "    real(path, data, mode)\n"
        "    if 'mappings' in str(path):\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "publish.write_atomic = write\n"
        "mask_corpus(sys.argv[1], sys.argv[2])\n")
    done = subprocess.run([sys.executable, "-c", script, str(source), str(tmp_path / "out")],
                          capture_output=True, timeout=120, cwd=REPO)
    assert done.returncode == -signal.SIGKILL
    left = leftovers(tmp_path)
    assert len(left) == 1
    stage = tmp_path / left[0]
    assert (stage / "mappings").is_dir() and any((stage / "mappings").iterdir())
    assert not (tmp_path / "out").exists()
    mask_corpus(source, tmp_path / "out")
    assert leftovers(tmp_path) == [] and verify_corpus(tmp_path / "out").ok


@pytest.mark.parametrize("live", [False, True])
def test_n4_a_staging_folder_is_removed_only_when_its_process_is_gone(live, tmp_path):
    source = _source(tmp_path)
    pid = os.getppid() if live else _dead_pid()
    stage = tmp_path / f".piilab-{pid & 0xFFFFFFFF:08x}-abcdef12.tmp"
    (stage / "mappings").mkdir(parents=True)
    (stage / "mappings" / "part-00000.jsonl").write_text("{}\n")
    mask_corpus(source, tmp_path / "out")
    assert stage.exists() == live


# --- verify-corpus on tampered outputs (N9, N14) -----------------------------------------


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("finished")
    source = folder / "c.jsonl"
    source.write_bytes(good(6))
    out = folder / "out"
    mask_corpus(source, out, rows_per_file=3)
    return out


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _edit_manifest(out: Path, change) -> None:
    manifest = json.loads((out / MANIFEST).read_text())
    result = change(manifest)
    (out / MANIFEST).write_text(json.dumps(manifest if result is None else result))


def _rehash(out: Path) -> None:
    def change(manifest):
        for section in ("masked", "mappings"):
            for entry in manifest[section]:
                path = out / entry["file"]
                if path.is_file():
                    entry["sha256"] = _sha(path)
    _edit_manifest(out, change)


def _mapping(out: Path) -> Path:
    return out / "mappings" / "part-00000.jsonl"


def _masked(out: Path) -> Path:
    return out / "masked" / "part-00000.parquet"


def _replace_line(out: Path, data: bytes) -> None:
    lines = _mapping(out).read_bytes().splitlines(keepends=True)
    lines[1] = data
    _mapping(out).write_bytes(b"".join(lines))
    _rehash(out)


def _outside(out: Path, section: str, name: str) -> None:
    target = out.parent / name
    shutil.copy(out / section / sorted(os.listdir(out / section))[0], target)

    def change(manifest):
        manifest[section][0]["file"] = str(target) if name.startswith("abs") else \
            f"../{name}"
    _edit_manifest(out, change)


#: name: (tamper(out), "problem" text or ("error", text)): a problem gives exit 1, an error
#: (a manifest that cannot be read) exit 2 naming the field.
TAMPERED = {
    "N9 extra mapping file": (lambda o: (o / "mappings" / "part-00099.jsonl").write_text(
        json.dumps({"id": "zz", "mapping": {"[PHONE_1]": PHONE}}) + "\n"),
        "mappings/part-00099.jsonl: not in the manifest"),
    "N9 extra masked file": (lambda o: shutil.copy(_masked(o), o / "masked" / "extra.parquet"),
                             "masked/extra.parquet: not in the manifest"),
    "N9 extra folder in masked": (lambda o: (o / "masked" / "sub").mkdir(),
                                  "masked/sub: not in the manifest"),
    "N9 absolute mapping path": (lambda o: _outside(o, "mappings", "abs.jsonl"),
                                 "not a file in mappings/"),
    "N9 masked path leaving the folder": (lambda o: _outside(o, "masked", "x.parquet"),
                                          "not a file in masked/"),
    "N9 mapping listed as masked": (lambda o: _edit_manifest(
        o, lambda m: m["masked"][0].update(file="mappings/part-00000.jsonl")),
        "not a file in masked/"),
    "N9 0644 mapping called not sensitive": (lambda o: (_mapping(o).chmod(0o644), _edit_manifest(
        o, lambda m: m["mappings"][0].update(sensitive=False))),
        "readable by others"),
    "N9 mapping called not sensitive": (lambda o: _edit_manifest(
        o, lambda m: m["mappings"][0].update(sensitive=False)), "not sensitive"),
    "0644 mapping": (lambda o: _mapping(o).chmod(0o644), "readable by others"),
    "flipped byte in masked": (lambda o: _masked(o).write_bytes(
        _masked(o).read_bytes()[:-1] + b"X"), "SHA-256 differs"),
    "flipped byte in mapping": (lambda o: _mapping(o).write_bytes(
        _mapping(o).read_bytes()[:-2] + b"X\n"), "SHA-256 differs"),
    "deleted mapping file": (lambda o: _mapping(o).unlink(),
                             "mappings/part-00000.jsonl: missing"),
    "deleted masked folder": (lambda o: shutil.rmtree(o / "masked"), "masked/: missing"),
    "mapping replaced by a symlink": (lambda o: (_mapping(o).rename(o / "elsewhere"),
                                                 _mapping(o).symlink_to(o / "elsewhere")),
                                      "not a regular file"),
    "changed record count": (lambda o: _edit_manifest(o, lambda m: m.update(records=7)),
                             "the manifest says 7"),
    "swapped mapping lines": (lambda o: (_mapping(o).write_bytes(b"".join(
        reversed(_mapping(o).read_bytes().splitlines(keepends=True)))), _rehash(o)),
        "do not agree"),
    "N14 mapping line not UTF-8": (lambda o: _replace_line(o, b'{"id":"r1","mapping":"\xff"}\n'),
                                   "part-00000.jsonl:2: not UTF-8"),
    "N14 mapping a list": (lambda o: _replace_line(o, b'{"id":"r1","mapping":[1]}\n'),
                           "part-00000.jsonl:2: not a mapping record"),
    "N14 mapping a number": (lambda o: _replace_line(o, b'{"id":"r1","mapping":5}\n'),
                             "part-00000.jsonl:2: not a mapping record"),
    "N14 mapping nested deeply": (lambda o: _replace_line(
        o, b'{"id":"r1","mapping":' + b"[" * 100000 + b"]" * 100000 + b"}\n"),
        "part-00000.jsonl:2: JSON nested too deeply"),
    "N14 mapping token malformed": (lambda o: _replace_line(
        o, b'{"id":"r1","mapping":{"PHONE_1":"x"}}\n'), "not a mapping record"),
    "N14 mapping value a number": (lambda o: _replace_line(
        o, b'{"id":"r1","mapping":{"[PHONE_1]":5}}\n'), "not a mapping record"),
    "N14 mapping line blank": (lambda o: _replace_line(o, b"\n"), "malformed JSON"),
    "N14 mapping without id": (lambda o: _replace_line(o, b'{"mapping":{}}\n'),
                               "field 'id' must be a nonempty string"),
    "N14 masked not Parquet, hash updated": (lambda o: (_masked(o).write_bytes(b"junk"),
                                                        _rehash(o)), "not a Parquet file"),
    "N14 masked without masked_text": (lambda o: (_parquet(_masked(o), id=["r0", "r1", "r2"]),
                                                  _rehash(o)), "not a Parquet file"),
    "N14 masked_text of ints": (lambda o: (_parquet(_masked(o), id=["r0", "r1", "r2"],
                                                    masked_text=[1, 2, 3]), _rehash(o)),
                                "fields 'id' and 'masked_text' must be strings"),
    "unmasked value put back": (lambda o: (
        _parquet(_masked(o), id=["r0", "r1", "r2"],
                 masked_text=[f"Dear {SECRET}, call {PHONE}. ({k})" for k in range(3)]),
        _rehash(o)), "does not restore its text"),
    "N14 manifest masked a string": (lambda o: _edit_manifest(o, lambda m: m.update(masked="x")),
                                     ("error", "manifest.json: field 'masked' must be a list")),
    "N14 manifest masked null": (lambda o: _edit_manifest(o, lambda m: m.update(masked=None)),
                                 ("error", "field 'masked' must be a list")),
    "N14 manifest entry a string": (lambda o: _edit_manifest(
        o, lambda m: m.update(mappings=["x"])), ("error", "field 'mappings[0]' must be an object")),
    "N14 manifest file a number": (lambda o: _edit_manifest(
        o, lambda m: m["masked"][0].update(file=5)), ("error", "field 'masked[0].file'")),
    "N14 manifest a list": (lambda o: (o / MANIFEST).write_text("[]"),
                            ("error", "manifest.json: must be a JSON object")),
    "N14 manifest not UTF-8": (lambda o: (o / MANIFEST).write_bytes(b'{"a":"\xff"}'),
                               ("error", "manifest.json: not UTF-8")),
    "N14 manifest nested deeply": (lambda o: (o / MANIFEST).write_text("[" * 100000),
                                   ("error", "manifest.json: JSON nested too deeply")),
    "N14 manifest without sha256": (lambda o: _edit_manifest(
        o, lambda m: m["masked"][0].__delitem__("sha256")),
        ("error", "field 'masked[0].sha256'")),
    "N14 manifest records a string": (lambda o: _edit_manifest(
        o, lambda m: m.update(records="6")), ("error", "field 'records'")),
    "N14 manifest records true": (lambda o: _edit_manifest(
        o, lambda m: m["mappings"][1].update(records=True)),
        ("error", "field 'mappings[1].records'")),
    "N14 manifest sensitive a string": (lambda o: _edit_manifest(
        o, lambda m: m["mappings"][0].update(sensitive="yes")),
        ("error", "field 'mappings[0].sensitive'")),
    "N14 manifest deleted": (lambda o: (o / MANIFEST).unlink(),
                             ("error", "not a finished mask-corpus output")),
}


@pytest.mark.parametrize("case", list(TAMPERED))
def test_verify_finds_every_tampering_by_file_and_line(case, finished, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(finished, out, symlinks=True)
    tamper, expected = TAMPERED[case]
    tamper(out)
    if isinstance(expected, tuple):
        with pytest.raises(CorpusError) as info:
            verify_corpus(out)
        assert expected[1] in str(info.value), str(info.value)
        assert_clean(str(info.value))
        return
    report = verify_corpus(out)
    problems = " | ".join(report.problems)
    assert not report.ok and expected in problems, problems
    assert_clean(problems)


def test_n14_names_from_the_manifest_are_printed_on_one_line(finished, tmp_path, capsys):
    from piilab.cli import main

    out = tmp_path / "out"
    shutil.copytree(finished, out)
    forged = "x\npiilab verify-corpus: 2 records in 2 files, 2 restored: ok"
    _edit_manifest(out, lambda m: m["masked"][0].update(file=f"masked/{forged}",
                                                        sha256="0" * 64))
    (out / "masked" / "part-00000.parquet").rename(out / "masked" / forged)
    assert main(["verify-corpus", str(out)]) == 1
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert all(entry.startswith("piilab verify-corpus: ") for entry in lines)
    assert not any(entry.startswith("piilab verify-corpus: 2 records") for entry in lines)
    assert captured.out.count("\n") == 1


@pytest.mark.parametrize("case, code", [("N14 mapping a list", 1), ("N14 manifest a list", 2),
                                        ("N9 extra mapping file", 1)])
def test_verify_corpus_cli_gives_1_for_a_problem_and_2_for_an_unreadable_manifest(
        case, code, finished, tmp_path, capsys):
    from piilab.cli import main

    out = tmp_path / "out"
    shutil.copytree(finished, out)
    TAMPERED[case][0](out)
    assert main(["verify-corpus", str(out)]) == code
    captured = capsys.readouterr()
    assert "Error at" not in captured.err and "unexpected" not in captured.err
    for printed in (captured.err + captured.out).splitlines():
        assert_clean(printed)


def test_n14_a_negative_sample_is_refused_by_the_option(finished, capsys):
    from piilab.cli import main

    assert main(["verify-corpus", str(finished), "--sample", "-1"]) == 2
    assert "--sample: must be at least 0" in capsys.readouterr().err
    with pytest.raises(CorpusError, match="--sample"):
        verify_corpus(finished, sample=-1)


def test_the_finished_output_itself_verifies(finished):
    assert verify_corpus(finished, sample=6).ok
    assert stat.S_IMODE(_mapping(finished).stat().st_mode) == 0o600


# --- command-line options, progress and tracking (N10, N15, N16, N18) --------------------


@pytest.mark.parametrize("option, value, message", [
    ("--rows-per-file", "0", "at least 1"), ("--blocks", "-3", "at least 1"),
    ("--workers", "0", "at least 1"), ("--batch-size", "x", "whole number"),
    ("--model-batch-size", "0", "at least 1"),
])
def test_n18_sizes_are_checked_by_the_options(option, value, message, tmp_path, capsys):
    from piilab.cli import main

    source = _source(tmp_path)
    assert main(["mask-corpus", "--input", str(source), "--out", str(tmp_path / "o"),
                 "--detector", "rules", option, value]) == 2
    err = capsys.readouterr().err
    assert option in err and message in err and not (tmp_path / "o").exists()


def test_n15_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path, capsys):
    from piilab.cli import main

    source = _source(tmp_path)
    assert main(["mask-corpus", "--input", str(source), "--out", str(tmp_path / "o"),
                 "--detector", "rules"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("uri", ["file:mlruns", "mlruns", "file:///tmp/mlruns"])
def test_n16_a_file_tracking_store_is_refused_with_one_line(uri, tmp_path, capsys):
    from piilab.cli import main

    source = _source(tmp_path)
    assert main(["mask-corpus", "--input", str(source), "--out", str(tmp_path / "o"),
                 "--detector", "rules", "--tracking-uri", uri]) == 2
    err = capsys.readouterr().err
    assert err.startswith("piilab: error: --tracking-uri ") and "sqlite:///" in err
    assert len(err.splitlines()) == 1 and not (tmp_path / "o").exists()


def test_n10_the_tracking_store_is_opened_with_one_short_try(tmp_path, monkeypatch, capsys):
    """MLflow's HTTP retries are switched off for the opening call only, and whatever MLflow
    raises becomes one line naming --tracking-uri (never the password in the URI)."""
    from piilab import tracking
    from piilab.cli import main
    from piilab.cli.corpus import TRACKING_OPEN_ENV

    seen = {}

    def unreachable(uri, out, **kwargs):
        seen.update({name: os.environ.get(name) for name in TRACKING_OPEN_ENV})
        raise ConnectionError("Max retries exceeded with url: /api (pw)")

    for name in TRACKING_OPEN_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(tracking, "open_tracker", unreachable)
    source = _source(tmp_path)
    assert main(["mask-corpus", "--input", str(source), "--out", str(tmp_path / "o"),
                 "--detector", "rules", "--tracking-uri", "http://user:pw@127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert err == ("piilab: error: --tracking-uri http://127.0.0.1:9: the tracking store does "
                   "not answer or refuses the run (ConnectionError)\n")
    assert seen == TRACKING_OPEN_ENV and seen["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] == "0"
    assert not any(name in os.environ for name in TRACKING_OPEN_ENV)  # for that call only
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_n10_an_unreachable_tracking_server_is_one_line_naming_the_option(tmp_path):
    pytest.importorskip("mlflow", reason="needs the train extra")
    source = _source(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "piilab", "mask-corpus", "--input", str(source), "--out",
         str(tmp_path / "o"), "--detector", "rules", "--tracking-uri",
         "http://user:pw@127.0.0.1:9"], capture_output=True, text=True, timeout=120,
        cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("piilab: error: --tracking-uri http://127.0.0.1:9: ")
    assert "pw" not in done.stderr and len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("from_env", [False, True])
def test_n10_an_unreachable_ray_address_is_refused_naming_it(from_env, tmp_path, monkeypatch):
    source = _source(tmp_path)
    if from_env:
        monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:9")
    with pytest.raises(CorpusError) as info:
        mask_corpus(source, tmp_path / "o", engine="ray",
                    address=None if from_env else "ray://127.0.0.1:9")
    option = "RAY_ADDRESS" if from_env else "--address"
    assert str(info.value).startswith(f"{option} ") and "no Ray cluster answers" in str(
        info.value)
    assert not (tmp_path / "o").exists()


# --- Ray (the scale extra): N5 -----------------------------------------------------------


def test_n5_start_ray_puts_back_the_signal_handlers_ray_replaced(monkeypatch):
    ray = pytest.importorskip("ray", reason="needs the scale extra")
    from piilab.corpus_mask import engines

    if ray.is_initialized():
        pytest.skip("Ray already runs in this process")

    def handler(signum, frame):
        raise KeyboardInterrupt

    seen = {}

    def fake_init(**kwargs):
        seen.update(kwargs)
        seen["backend_log_level"] = os.environ.get("RAY_BACKEND_LOG_LEVEL")
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(signum))  # as Ray does

    monkeypatch.delenv("RAY_BACKEND_LOG_LEVEL", raising=False)
    monkeypatch.setattr(ray, "init", fake_init)
    previous = signal.signal(signal.SIGTERM, handler)
    try:
        engines.start_ray()
        assert signal.getsignal(signal.SIGTERM) is handler
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert seen["log_to_driver"] is False and seen["backend_log_level"] == "fatal"
    assert "RAY_BACKEND_LOG_LEVEL" not in os.environ  # set for the start only


@pytest.mark.slow
def test_n5_sigterm_on_the_ray_engine_ends_with_one_line_and_143(tmp_path):
    pytest.importorskip("ray", reason="needs the scale extra")
    source = tmp_path / "c.jsonl"
    source.write_bytes(good(40))
    script = (
        "import os, signal, sys\n"
        "from piilab.corpus_mask import publish\n"
        "from piilab.cli import main\n"
        "real = publish.Results.add\n"
        "def add(self, batch):\n"
        "    real(self, batch)\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "publish.Results.add = add\n"
        "sys.exit(main(sys.argv[1:]))\n")
    done = subprocess.run(
        [sys.executable, "-c", script, "mask-corpus", "--input", str(source), "--out",
         str(tmp_path / "o"), "--detector", "rules", "--engine", "ray", "--workers", "1",
         "--batch-size", "10"], capture_output=True, text=True, timeout=400, cwd=REPO)
    assert done.returncode == 143, done.stderr[-2000:]
    assert done.stderr.splitlines() == [
        "piilab: error: interrupted by SIGTERM (every output is as before or complete: "
        "none half-written)"], done.stderr[-2000:]
    assert not (tmp_path / "o").exists() and leftovers(tmp_path) == []


# --- Issue 37, point 4: the CLI's generic handler is a last resort no corpus case reaches ---


@pytest.fixture
def no_generic_handler(monkeypatch):
    """Make the CLI's last-resort message fail the test: every corpus failure must arrive
    as a `PiilabError`, whose own message names the file, line or field."""
    import piilab.cli as cli

    real = cli.error_message

    def only_known(exc, *args, **kwargs):
        assert isinstance(exc, PiilabError), f"{type(exc).__name__} reached the generic handler"
        return real(exc, *args, **kwargs)

    monkeypatch.setattr(cli, "error_message", only_known)


@pytest.mark.parametrize("case", list(JSONL_REFUSED))
def test_cli_mask_corpus_refuses_bad_jsonl_without_the_generic_handler(
        case, tmp_path, capsys, no_generic_handler):
    from piilab.cli import main

    path = tmp_path / "c.jsonl"
    path.write_bytes(JSONL_REFUSED[case][0])
    code = main(["mask-corpus", "--input", str(path), "--out", str(tmp_path / "o"),
                 "--detector", "rules", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "unexpected" not in err, err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("make", PARQUET_CASES, ids=lambda f: f.__name__.strip("_"))
def test_cli_mask_corpus_refuses_bad_parquet_without_the_generic_handler(
        make, tmp_path, capsys, no_generic_handler):
    from piilab.cli import main

    source, _, _ = make(tmp_path)
    code = main(["mask-corpus", "--input", str(source), "--out", str(tmp_path / "o"),
                 "--detector", "rules", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "unexpected" not in err, err


@pytest.mark.parametrize("case", list(TAMPERED))
def test_cli_verify_corpus_reports_tampering_without_the_generic_handler(
        case, finished, tmp_path, capsys, no_generic_handler):
    from piilab.cli import main

    out = tmp_path / "out"
    shutil.copytree(finished, out, symlinks=True)
    tamper, expected = TAMPERED[case]
    tamper(out)
    code = main(["verify-corpus", str(out)])
    err = capsys.readouterr().err
    assert code == (2 if isinstance(expected, tuple) else 1), err
    assert "unexpected" not in err, err
    for reported in err.splitlines():  # one line per problem, none with a planted value
        assert_clean(reported)
