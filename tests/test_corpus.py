"""Masking a corpus (`piilab.corpus_mask`, `piilab mask-corpus`, chapter 10).

The local engine runs everywhere pyarrow is installed; the Ray tests need the ``scale``
extra and share one local Ray instance (started once for the module: it costs seconds).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import stat
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
from piilab.dataset import split_bytes  # noqa: E402
from piilab.labels import nfc  # noqa: E402
from piilab.tokenization import reassemble_text  # noqa: E402


@pytest.fixture(scope="module")
def records(corpus):
    """240 records of the test split, each with an extra column that must be kept."""
    return [dict(r, ticket=k) for k, r in enumerate(corpus["test"][:240])]


@pytest.fixture(scope="module")
def corpus_file(records, tmp_path_factory):
    path = tmp_path_factory.mktemp("in") / "corpus.jsonl"
    path.write_bytes(split_bytes(records))
    return path


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _read_back(out: Path) -> tuple[list[dict], list[dict]]:
    manifest = json.loads((out / MANIFEST).read_text())
    masked = [row for e in manifest["masked"] for row in pq.read_table(out / e["file"]).to_pylist()]
    mappings = [json.loads(line) for e in manifest["mappings"]
                for line in (out / e["file"]).read_text().splitlines()]
    return masked, mappings


@pytest.fixture(scope="module")
def local_out(corpus_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("local") / "masked-corpus"
    mask_corpus(corpus_file, out, detector="rules", batch_size=64, rows_per_file=100)
    return out


def test_local_output_drops_other_columns_restores_every_record_and_verifies(local_out,
                                                                            records):
    masked, mappings = _read_back(local_out)
    assert [r["id"] for r in masked] == [r["id"] for r in records]
    assert [m["id"] for m in mappings] == [r["id"] for r in records]
    # Only id and masked_text are published: the gold columns and ticket are dropped.
    assert set(masked[0]) == {"id", "masked_text"}
    changed = 0
    for row, mapping, record in zip(masked, mappings, records, strict=True):
        assert reassemble_text(row["masked_text"], mapping["mapping"]) == nfc(record["source_text"])
        changed += row["masked_text"] != record["source_text"]
    assert changed > 100  # the rule detector found something in most documents
    manifest = json.loads((local_out / MANIFEST).read_text())
    assert manifest["records"] == 240 and len(manifest["masked"]) == 3  # 100 + 100 + 40
    assert all(e["sensitive"] for e in manifest["mappings"])
    assert not any(e["sensitive"] for e in manifest["masked"])
    assert manifest["unmasked_columns"] == []
    assert set(manifest["dropped_columns"]) >= {"ticket", "entities", "target_tsv"}
    assert manifest["detector"]["kind"] == "rules"
    report = verify_corpus(local_out, sample=50)
    assert report.ok and report.records == 240 and report.sampled == 50


#: SHA-256 over the masked and mapping files (name and content; the manifest, which holds
#: the piilab version, left out) of the local output of the `records` fixture, recorded with
#: the single-module `corpus_mask.py` before it became a package with one JSONL reader:
#: the output must stay byte-identical for the same input.
LOCAL_OUTPUT_SHA256 = "5092746842c46aeffd32f8351640bd98a7cc9ff2f6a8edd04087ae34719d6f76"
#: The same with ``keep_columns=["ticket", "entities"]`` (nested columns kept).
KEPT_OUTPUT_SHA256 = "50be123d11f970ef8147d410e000372355470f7c6e703251279afd783d076f4f"


def _output_sha256(out: Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    for path in sorted(out.rglob("*")):
        if path.is_file() and path.name != MANIFEST:
            digest.update(str(path.relative_to(out)).encode() + b"\0"
                          + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def test_the_output_is_byte_identical_to_the_recorded_hashes(local_out, corpus_file,
                                                             tmp_path):
    assert _output_sha256(local_out) == LOCAL_OUTPUT_SHA256
    kept = tmp_path / "kept"
    mask_corpus(corpus_file, kept, batch_size=64, rows_per_file=100,
                keep_columns=["ticket", "entities"])
    assert _output_sha256(kept) == KEPT_OUTPUT_SHA256


def test_mapping_files_are_owner_only(local_out):
    folder = local_out / "mappings"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = list(folder.iterdir())
    assert len(files) == 3
    assert {stat.S_IMODE(f.stat().st_mode) for f in files} == {0o600}


def test_verify_finds_a_changed_file_and_an_open_mapping(local_out, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(local_out, copy)
    assert verify_corpus(copy).ok
    mapping = sorted((copy / "mappings").iterdir())[1]
    mapping.chmod(0o644)
    part = sorted((copy / "masked").iterdir())[0]
    part.write_bytes(part.read_bytes()[:-1] + b"X")
    problems = " ".join(verify_corpus(copy).problems)
    assert "SHA-256 differs" in problems and "readable by others" in problems


def test_parquet_input_gives_the_same_files_as_jsonl(corpus_file, local_out, tmp_path):
    source = tmp_path / "corpus.parquet"
    pq.write_table(read_corpus(corpus_file), source)  # the same records, as Parquet
    out = tmp_path / "out"
    mask_corpus(source, out, batch_size=7, rows_per_file=100)
    assert _files(out) == _files(local_out)


def test_a_bad_record_is_named_by_line_and_field_never_by_value(records, tmp_path):
    lines = split_bytes(records[:5]).decode().splitlines()
    bad = json.loads(lines[2])
    bad["source_text"] = 12345
    lines[2] = json.dumps(bad, ensure_ascii=False)
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CorpusError) as info:
        read_corpus(path)
    assert f"{path}:3" in str(info.value) and "'source_text'" in str(info.value)
    assert "12345" not in str(info.value)
    dup = tmp_path / "dup.jsonl"
    dup.write_bytes(split_bytes([records[0], records[1], records[0]]))
    with pytest.raises(CorpusError, match=r"dup\.jsonl:3: field 'id' repeats"):
        read_corpus(dup)


def test_a_column_that_only_later_records_have_is_kept(records, tmp_path):
    first, second = dict(records[0]), dict(records[1], priority=3)
    del first["ticket"]  # the first record lacks a column the second one has
    path = tmp_path / "uneven.jsonl"
    path.write_bytes(split_bytes([first, second]))
    table = read_corpus(path)
    assert table.column("ticket").to_pylist() == [None, 1]
    assert table.column("priority").to_pylist() == [None, 3]
    out = tmp_path / "out"
    mask_corpus(path, out, keep_columns=["priority"])
    masked, _ = _read_back(out)
    assert [row["priority"] for row in masked] == [None, 3]


def test_no_gold_value_reaches_a_non_sensitive_file(corpus_file, records, tmp_path):
    """N1: the course's own split, masked with the defaults, publishes no gold value
    outside the sensitive files (the entities and target_tsv columns are dropped)."""
    out = tmp_path / "out"
    mask_corpus(corpus_file, out)
    manifest = json.loads((out / MANIFEST).read_text())
    public = b"".join((out / e["file"]).read_bytes() for e in manifest["masked"]
                      if not e["sensitive"])
    assert public  # the masked files are public here
    rows = [row for e in manifest["masked"] for row in pq.read_table(out / e["file"]).to_pylist()]
    # What the detector missed may stay in masked_text (that is the leak metric's business);
    # no other column may carry a value.
    assert {k for row in rows for k in row} == {"id", "masked_text"}
    assert b"target_tsv" not in public and b"entities" not in public


def test_kept_columns_are_listed_and_make_the_masked_files_sensitive(corpus_file, records,
                                                                     tmp_path):
    out = tmp_path / "out"
    mask_corpus(corpus_file, out, keep_columns=["ticket", "entities"], rows_per_file=100)
    masked, _ = _read_back(out)
    assert [r["ticket"] for r in masked] == [r["ticket"] for r in records]
    assert masked[0]["entities"] == records[0]["entities"]  # nested columns kept as well
    assert "target_tsv" not in masked[0]
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["unmasked_columns"] == ["ticket", "entities"]
    assert "target_tsv" in manifest["dropped_columns"]
    for entry in manifest["masked"]:
        assert entry["sensitive"] and entry["mode"] == "0600"
        assert (out / entry["file"]).stat().st_mode & 0o777 == 0o600
    assert verify_corpus(out).ok


@pytest.mark.parametrize("names, message", [
    (["source_text"], "never published"),
    (["masked_text"], "output's own column"),
    (["ticket", "ticket"], "named twice"),
    (["no_such_column"], "does not have"),
    ([""], "nonempty"),
])
def test_keep_columns_are_checked(corpus_file, tmp_path, names, message):
    with pytest.raises(CorpusError, match=message):
        mask_corpus(corpus_file, tmp_path / "out", keep_columns=names)
    assert not (tmp_path / "out").exists()


def test_an_input_column_named_masked_text_is_listed_as_dropped(records, tmp_path):
    """N7: the input's own masked_text column is not silently lost: the manifest names it."""
    path = tmp_path / "in.jsonl"
    path.write_bytes(split_bytes([dict(r, masked_text="x") for r in records[:3]]))
    out = tmp_path / "out"
    mask_corpus(path, out)
    manifest = json.loads((out / MANIFEST).read_text())
    assert "masked_text" in manifest["dropped_columns"]


# --- the one JSONL reader: Python's, which names the line ---------------------------------

_JSONL_CASES = {
    # read (None), or refused with this message after "case.jsonl:LINE: "
    "plain": (b'{"id":"a","source_text":"x","n":1}\n{"id":"b","source_text":"y","n":2}\n', None),
    "keys in any order": (b'{"source_text":"x","id":"a","z":1}\n'
                          b'{"id":"b","source_text":"y","a":2}\n', None),
    "int then float": (b'{"id":"a","source_text":"x","n":1}\n'
                       b'{"id":"b","source_text":"y","n":2.5}\n', None),
    "struct keys differ": (b'{"id":"a","source_text":"x","s":{"q":1}}\n'
                           b'{"id":"b","source_text":"y","s":{"p":"t"}}\n', None),
    "blank lines and CRLF": (b'{"id":"a","source_text":"x"}\r\n\n   \n{"id":"b","source_text":"y"}',
                             None),
    "escapes": (b'{"id":"a","source_text":"\\u00e9\\/\\"\\\\\\b\\f\\n\\r\\t"}\n', None),
    "lists, nulls, bools": (b'{"id":"a","source_text":"x","l":[],"m":null,"b":true,"f":[1,2.5]}\n',
                            None),
    "a date-time string stays text": (b'{"id":"a","source_text":"x","t":"2020-01-01 10:00"}\n',
                                      None),
    "a surrogate pair": (b'{"id":"a","source_text":"\\ud83d\\ude00"}\n', None),
    "a big integer": (b'{"id":"a","source_text":"x","n":123456789012345678901234}\n',
                      (1, "column 'n' holds a value Arrow cannot store")),
    "a lone surrogate": (b'{"id":"a","source_text":"\\ud800"}\n', (1, "lone surrogate")),
    "not UTF-8": (b'{"id":"a","source_text":"\xff"}\n', (1, "not UTF-8")),
    "a byte-order mark": (b'\xef\xbb\xbf{"id":"a","source_text":"x"}\n', (1, "malformed JSON")),
    "two objects on a line": (b'{"id":"a","source_text":"x"}{"id":"b","source_text":"y"}\n',
                              (1, "malformed JSON")),
    "a null line": (b'{"id":"a","source_text":"x"}\nnull\n', (2, "must be a JSON object")),
    "a missing text": (b'{"id":"a","source_text":"x"}\n{"id":"b"}\n',
                       (2, "no field 'source_text'")),
    "an empty id": (b'{"id":"","source_text":"x"}\n', (1, "field 'id' must be a nonempty")),
    "a numeric id": (b'{"id":7,"source_text":"x"}\n', (1, "field 'id' must be a nonempty")),
    "a repeated id": (b'{"id":"a","source_text":"x"}\n{"id":"a","source_text":"y"}\n',
                      (2, "field 'id' repeats")),
    "mixed types": (b'{"id":"a","source_text":"x","l":true}\n{"id":"b","source_text":"x","l":1}\n',
                    (2, "column 'l' holds a number where line 1 holds true or false")),
    "deep nesting": (b'{"id":"a","source_text":"x","n":' + b"[" * 100 + b"]" * 100 + b"}\n",
                     (1, "column 'n' is nested more than 64 levels deep")),
}


@pytest.mark.parametrize("case", list(_JSONL_CASES))
def test_the_jsonl_reader_reads_or_names_the_line_and_field(case, tmp_path):
    data, expected = _JSONL_CASES[case]
    path = tmp_path / "case.jsonl"
    path.write_bytes(data)
    if expected is None:
        table = read_corpus(path)
        assert table.num_rows == len([line for line in data.splitlines() if line.strip()])
        return
    line, message = expected
    with pytest.raises(CorpusError) as info:
        read_corpus(path)
    assert str(info.value).startswith(f"{path}:{line}: ") and message in str(info.value)


def test_strings_that_look_like_dates_stay_strings(tmp_path):
    path = tmp_path / "dates.jsonl"
    path.write_bytes(b'{"id":"a","source_text":"x","t":"2020-01-01","s":{"u":"12:00:00"}}\n')
    table = read_corpus(path)
    assert table.column("t").to_pylist() == ["2020-01-01"]
    assert table.column("s").to_pylist() == [{"u": "12:00:00"}]


def test_the_generated_corpus_reads_back_as_its_records(corpus_file, records):
    table = read_corpus(corpus_file)
    assert table.column("id").to_pylist() == [r["id"] for r in records]
    assert table.column("source_text").to_pylist() == [r["source_text"] for r in records]
    assert table.column("ticket").to_pylist() == list(range(240))


def test_an_interrupted_run_leaves_no_output_that_looks_complete(corpus_file, tmp_path):
    out = tmp_path / "out"

    def interrupt(done, total):
        assert done < total
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        mask_corpus(corpus_file, out, batch_size=16, on_progress=interrupt)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # the staging folder is gone too
    with pytest.raises(CorpusError, match="exists"):
        out.mkdir()
        mask_corpus(corpus_file, out)


def test_cli_masks_and_verifies_without_printing_text(corpus_file, records, tmp_path, capsys,
                                                      monkeypatch):
    from piilab.cli import main

    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    out = tmp_path / "out"
    assert main(["mask-corpus", "--input", str(corpus_file), "--out", str(out),
                 "--detector", "rules", "--no-progress"]) == 0
    assert main(["verify-corpus", str(out), "--sample", "20"]) == 0
    captured = capsys.readouterr()
    printed = captured.out + captured.err
    assert "240 records" in printed and "20 restored: ok" in printed
    # the rate is printed as a number a reader can use, and --no-progress silences the
    # model libraries' bars too (a model detector's "Loading weights"), workers included
    assert re.search(r"\(\d[\d,]*(\.\d)? records/s, engine local\)", printed)
    assert os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"
    for record in records[:50]:
        for entity in record["entities"]:
            assert entity["value"] not in printed
    assert main(["verify-corpus", str(tmp_path)]) == 2  # no manifest: not an output
    assert "not a finished mask-corpus output" in capsys.readouterr().err


# --- Ray Data (the scale extra) -----------------------------------------------------------


#: How long the Ray fixture waits for its local node, all tries together (seconds). Ray
#: itself gives a starting node 30 s to register; a busy machine can need more.
RAY_NODE_WAIT = 300


def start_local_ray(num_cpus: int = 2, wait: float = RAY_NODE_WAIT):
    """Start a local Ray and wait until its node offers `num_cpus` CPUs: a start that times
    out (Ray's own 30 s bound) is retried until `wait` seconds have passed, then the test
    fails with a message that says what did not come up."""
    import time

    import ray

    from piilab.corpus_mask import start_ray

    deadline = time.monotonic() + wait
    failure = ""
    while time.monotonic() < deadline:
        try:
            start_ray(num_cpus=num_cpus)
        except Exception as exc:  # Ray's "node timed out during startup", retried
            failure = type(exc).__name__
            ray.shutdown()
            _end_ray_children()  # a failed start leaves its GCS server running
            continue
        while time.monotonic() < deadline:
            if ray.cluster_resources().get("CPU", 0) >= num_cpus:
                return ray
            time.sleep(0.5)
    pytest.fail(f"Ray's local node did not come up with {num_cpus} CPUs within {wait} s "
                f"(last failure: {failure or 'none, its CPUs never appeared'}); the machine "
                "may be too busy")


def _end_ray_children() -> None:
    """End the Ray processes this test process started (found by parent id in /proc)."""
    if not Path("/proc").is_dir():
        return
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
            title = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and b"/ray/" in title:
            with contextlib.suppress(OSError):
                os.kill(int(entry.name), signal.SIGKILL)


@pytest.fixture(scope="module")
def ray_session():
    pytest.importorskip("ray", reason="needs the scale extra: pip install -e '.[scale]'")
    ray = start_local_ray()
    yield ray
    ray.shutdown()


def test_ray_output_is_byte_identical_to_local_for_1_2_4_blocks(ray_session, corpus_file,
                                                                 local_out, tmp_path):
    expected = _files(local_out)
    for workers, blocks, batch_size in ((1, 1, 64), (2, 2, 32), (2, 4, 50)):
        out = tmp_path / f"ray-{workers}-{blocks}"
        result = mask_corpus(corpus_file, out, engine="ray", workers=workers, blocks=blocks,
                             batch_size=batch_size, rows_per_file=100)
        assert result.records == 240
        assert _files(out) == expected, (workers, blocks)


def _map_worker_pids() -> list[int]:
    """Process ids of the Ray actors running the masking batches (their title names them)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                title = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"MapWorker" in title and b"MaskBatch" in title:
                pids.append(int(entry.name))
    return pids


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the worker through /proc")
def test_killing_a_worker_mid_run_loses_and_repeats_no_record(ray_session, corpus, tmp_path):
    records = [dict(r, id=f"{r['id']}-{k}") for k in range(2) for r in corpus["train"]]
    source = tmp_path / "big.jsonl"
    source.write_bytes(split_bytes(records))
    killed: list[tuple[int, int]] = []

    def kill_one(done, total):
        if not killed and done < total:
            pids = _map_worker_pids()
            if pids:
                os.kill(pids[0], signal.SIGKILL)
                killed.append((pids[0], done))

    out = tmp_path / "out"
    result = mask_corpus(source, out, engine="ray", workers=2, blocks=8, batch_size=20,
                         on_progress=kill_one)
    assert killed, "no worker was found to kill while the run was going"
    assert killed[0][1] < len(records)
    masked, _ = _read_back(out)
    assert result.records == len(records)
    assert sorted(r["id"] for r in masked) == sorted(r["id"] for r in records)
    assert len({r["id"] for r in masked}) == len(records)  # every record exactly once
    assert verify_corpus(out, sample=30).ok


def test_verify_finds_a_mapping_swapped_between_records(local_out, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(local_out, copy)
    path = sorted((copy / "mappings").iterdir())[0]
    lines = path.read_text().splitlines()
    first, second = json.loads(lines[0]), json.loads(lines[1])
    first["mapping"], second["mapping"] = second["mapping"], first["mapping"]
    lines[0], lines[1] = json.dumps(first), json.dumps(second)
    path.write_text("\n".join(lines) + "\n")
    manifest = json.loads((copy / MANIFEST).read_text())
    import hashlib

    manifest["mappings"][0]["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    (copy / MANIFEST).write_text(json.dumps(manifest))
    report = verify_corpus(copy, sample=240)
    assert not report.ok and "does not restore its text" in " ".join(report.problems)


def test_n3_an_integer_beyond_2_53_beside_floats_is_never_rounded(records, tmp_path):
    """N3: a column of floats and one integer beyond 2**53 is refused, naming the line and
    the column (Arrow's JSON reader, now gone, read it as float64 and rounded the integer);
    whole numbers alone stay exact."""
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(split_bytes([dict(records[0], n=9007199254740993),
                                  dict(records[1], n=0.5)]))
    with pytest.raises(CorpusError, match=r"mixed\.jsonl:2: column 'n' .*one type per column"):
        read_corpus(path)
    exact = tmp_path / "ints.jsonl"
    exact.write_bytes(split_bytes([dict(records[0], n=9007199254740993),
                                   dict(records[1], n=1)]))
    assert read_corpus(exact).column("n").to_pylist() == [9007199254740993, 1]
