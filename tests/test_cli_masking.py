"""`piilab mask` / `piilab unmask` (chapter 03): round trip on files, file modes, errors."""

from __future__ import annotations

import io
import json
import os
import stat
import sys

import pytest

from piilab import cli

SOURCE = "김가상 고객님 (010-1234-5678), 김 가 상 님께 kim@example.com 로 회신.\r\n[PERSON_1] 끝\n"
CANDIDATES = "PERSON\t김가상\nPHONE\t010-1234-5678\r\nemail\t kim@example.com \n\n"
SECRETS = ("김가상", "010-1234-5678", "kim@example.com")


@pytest.fixture()
def run(monkeypatch, capsys):
    """Run `piilab ARGS` with only the masking commands; return (code, stdout, stderr)."""
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("piilab.cli.masking",))

    def invoke(*args: str, stdin: str | None = None):
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
        code = cli.main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return invoke


@pytest.fixture()
def files(tmp_path):
    (tmp_path / "doc.txt").write_bytes(SOURCE.encode())
    (tmp_path / "cands.tsv").write_bytes(CANDIDATES.encode())
    return tmp_path


def test_mask_and_unmask_round_trip_through_files(run, files):
    code, out, err = run("mask", "--candidates", str(files / "cands.tsv"), "--in",
                         str(files / "doc.txt"), "--out", str(files / "masked.txt"),
                         "--mapping", str(files / "map.json"))
    assert code == 0 and out == ""
    masked = (files / "masked.txt").read_bytes().decode()
    assert masked == ("[PERSON_2] 고객님 ([PHONE_1]), [PERSON_3] 님께 [EMAIL_1] 로 회신.\r\n"
                      "[PERSON_1] 끝\n")
    mapping = json.loads((files / "map.json").read_text(encoding="utf-8"))
    assert mapping == {"[PERSON_2]": "김가상", "[PHONE_1]": "010-1234-5678",
                       "[PERSON_3]": "김 가 상", "[EMAIL_1]": "kim@example.com"}
    assert not any(secret in err for secret in SECRETS)

    code, out, err = run("unmask", "--mapping", str(files / "map.json"), "--in",
                         str(files / "masked.txt"), "--out", str(files / "restored.txt"))
    assert code == 0
    assert (files / "restored.txt").read_bytes() == SOURCE.encode()
    assert not any(secret in err for secret in SECRETS)


def test_mask_and_unmask_through_stdin_and_stdout(run, files):
    code, masked, _ = run("mask", "--candidates", str(files / "cands.tsv"), "--mapping",
                          str(files / "map.json"), stdin=SOURCE)
    assert code == 0
    assert "김가상" not in masked and "[PERSON_2]" in masked
    code, restored, _ = run("unmask", "--mapping", str(files / "map.json"), stdin=masked)
    assert code == 0
    assert restored == SOURCE


@pytest.fixture()
def umask_022():
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_mapping_file_is_private(run, files, umask_022):
    code, _, _ = run("mask", "--candidates", str(files / "cands.tsv"), "--in",
                     str(files / "doc.txt"), "--out", str(files / "masked.txt"),
                     "--mapping", str(files / "map.json"))
    assert code == 0
    assert stat.S_IMODE(os.stat(files / "map.json").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(files / "masked.txt").st_mode) == 0o644
    run("unmask", "--mapping", str(files / "map.json"), "--in", str(files / "masked.txt"),
        "--out", str(files / "restored.txt"))
    assert stat.S_IMODE(os.stat(files / "restored.txt").st_mode) == 0o600
    assert sorted(p.name for p in files.iterdir()) == [
        "cands.tsv", "doc.txt", "map.json", "masked.txt", "restored.txt"
    ]  # no temporary files left behind


def test_existing_mapping_file_is_kept_without_force(run, files):
    (files / "map.json").write_text("{}")
    code, _, err = run("mask", "--candidates", str(files / "cands.tsv"), "--in",
                       str(files / "doc.txt"), "--out", str(files / "masked.txt"),
                       "--mapping", str(files / "map.json"))
    assert code == 2 and "use --force" in err
    assert (files / "map.json").read_text() == "{}" and not (files / "masked.txt").exists()


def test_existing_mapping_file_is_replaced_with_force_and_made_private(run, files):
    (files / "map.json").write_text("{}")
    os.chmod(files / "map.json", 0o644)
    code, _, _ = run("mask", "--candidates", str(files / "cands.tsv"), "--in",
                     str(files / "doc.txt"), "--out", str(files / "masked.txt"),
                     "--mapping", str(files / "map.json"), "--force")
    assert code == 0
    assert stat.S_IMODE(os.stat(files / "map.json").st_mode) == 0o600
    assert json.loads((files / "map.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("candidates", "reason"),
    [
        ("PERSON\t김가상\nPHONE 010-1234-5678\n", "line 2: expected TYPE<TAB>VALUE"),
        ("PERSON\t김가상\n김가상\tPERSON\n", "line 2: unknown type"),
        ("\nPERSON\t   \n", "line 2: empty value"),
    ],
)
def test_malformed_candidates_fail_without_writing_or_echoing(run, files, candidates, reason):
    (files / "cands.tsv").write_text(candidates, encoding="utf-8")
    code, out, err = run("mask", "--candidates", str(files / "cands.tsv"), "--in",
                         str(files / "doc.txt"), "--out", str(files / "masked.txt"),
                         "--mapping", str(files / "map.json"))
    assert code == 2
    assert reason in err
    assert out == ""
    assert not any(secret in err for secret in SECRETS)
    assert not (files / "masked.txt").exists() and not (files / "map.json").exists()


@pytest.mark.parametrize(
    ("mapping", "reason"),
    [
        ('{"[PERSON_1]": "김가상",', "malformed JSON"),
        ('["김가상"]', "expected a JSON object"),
        ('{"김가상": "[PERSON_1]"}', "entry 1: key is not a token"),
        ('{"[PERSON_1]": 1234}', "entry 1"),
    ],
)
def test_malformed_mapping_fails_without_writing_or_echoing(run, files, mapping, reason):
    (files / "map.json").write_text(mapping, encoding="utf-8")
    (files / "masked.txt").write_text("[PERSON_1] 고객님", encoding="utf-8")
    code, out, err = run("unmask", "--mapping", str(files / "map.json"), "--in",
                         str(files / "masked.txt"), "--out", str(files / "restored.txt"))
    assert code == 2
    assert reason in err
    assert out == ""
    assert "김가상" not in err and "1234" not in err
    assert not (files / "restored.txt").exists()


def test_missing_input_fails_cleanly(run, files):
    code, _, err = run("mask", "--candidates", str(files / "nope.tsv"), "--in",
                       str(files / "doc.txt"), "--mapping", str(files / "map.json"))
    assert code == 2 and "cannot read candidates file" in err
    assert not (files / "map.json").exists()


def test_non_utf8_input_fails_cleanly(run, files):
    (files / "doc.txt").write_bytes("김가상".encode("euc-kr"))
    code, _, err = run("mask", "--candidates", str(files / "cands.tsv"), "--in",
                       str(files / "doc.txt"), "--mapping", str(files / "map.json"))
    assert code == 2 and "not UTF-8" in err
    assert not (files / "map.json").exists()


def test_out_and_mapping_must_differ(run, files):
    code, _, err = run("mask", "--candidates", str(files / "cands.tsv"), "--in",
                       str(files / "doc.txt"), "--out", str(files / "x.json"), "--mapping",
                       str(files / "x.json"))
    assert code == 2 and "same file" in err
    assert not (files / "x.json").exists()


def test_unwritable_output_leaves_no_mapping(run, files):
    code, _, err = run("mask", "--candidates", str(files / "cands.tsv"), "--in",
                       str(files / "doc.txt"), "--out", str(files / "missing" / "masked.txt"),
                       "--mapping", str(files / "map.json"))
    assert code == 2 and "cannot write" in err
    assert sorted(p.name for p in files.iterdir()) == ["cands.tsv", "doc.txt"]


def test_commands_are_registered():
    assert "piilab.cli.masking" in cli.COMMAND_MODULES
