"""The corpus on disk: `piilab generate`, `verify`, `stats` and atomic writing."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from piilab.cli import main
from piilab.dataset import DatasetExistsError, write_dataset


def _copy(src, dst):
    dst.mkdir()
    for f in src.iterdir():
        (dst / f.name).write_bytes(f.read_bytes())
    return dst


def test_generate_writes_three_splits_and_manifest(dataset_dir):
    names = sorted(p.name for p in dataset_dir.iterdir())
    assert names == ["manifest.json", "test.jsonl", "train.jsonl", "validation.jsonl"]
    manifest = json.loads((dataset_dir / "manifest.json").read_text())
    assert manifest["seed"] == 42 and manifest["generator_version"] == "1.0.0"
    assert {s: m["records"] for s, m in manifest["splits"].items()} == {
        "train": 1600, "validation": 200, "test": 400}


def test_verify_accepts_a_fresh_dataset(dataset_dir, capsys):
    assert main(["verify", str(dataset_dir)]) == 0
    assert "OK" in capsys.readouterr().out


def test_verify_fails_on_a_tampered_file(dataset_dir, tmp_path, capsys):
    d = _copy(dataset_dir, tmp_path / "t")
    lines = (d / "test.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    rec = json.loads(lines[3])
    rec["source_text"] += " "
    lines[3] = json.dumps(rec, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
    (d / "test.jsonl").write_text("".join(lines), encoding="utf-8")
    assert main(["verify", str(d)]) == 1
    err = capsys.readouterr().err
    assert "SHA-256" in err and "test.jsonl" in err


def test_verify_fails_on_a_missing_file(dataset_dir, tmp_path, capsys):
    d = _copy(dataset_dir, tmp_path / "m")
    (d / "validation.jsonl").unlink()
    assert main(["verify", str(d)]) == 1
    assert "validation.jsonl: file is missing" in capsys.readouterr().err


def test_verify_fails_on_a_malformed_line_and_names_it(dataset_dir, tmp_path, capsys):
    d = _copy(dataset_dir, tmp_path / "j")
    with (d / "train.jsonl").open("a", encoding="utf-8") as fh:
        fh.write("{not json\n")
    assert main(["verify", str(d)]) == 1
    assert "train.jsonl:1601: malformed JSON" in capsys.readouterr().err


def test_verify_fails_on_wrong_counts(dataset_dir, tmp_path, capsys):
    d = _copy(dataset_dir, tmp_path / "c")
    manifest = json.loads((d / "manifest.json").read_text())
    manifest["splits"]["test"]["ko"] = 321
    (d / "manifest.json").write_text(json.dumps(manifest))
    assert main(["verify", str(d)]) == 1
    assert "ko count is 320, manifest says 321" in capsys.readouterr().err


def test_verify_errors_never_echo_source_text(dataset_dir, tmp_path, capsys):
    d = _copy(dataset_dir, tmp_path / "e")
    lines = (d / "test.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    rec = json.loads(lines[0])
    del rec["entities"]
    lines[0] = json.dumps(rec, ensure_ascii=False) + "\n"
    (d / "test.jsonl").write_text("".join(lines), encoding="utf-8")
    assert main(["verify", str(d)]) == 1
    err = capsys.readouterr().err
    assert "test.jsonl:1: missing field 'entities'" in err
    assert rec["source_text"] not in err and rec["id"] not in err


def test_generate_refuses_a_different_dataset_without_force(dataset_dir, tmp_path, capsys):
    d = _copy(dataset_dir, tmp_path / "f")
    before = (d / "train.jsonl").read_bytes()
    assert main(["generate", "--out", str(d), "--seed", "7"]) == 2
    assert "different dataset" in capsys.readouterr().err
    assert (d / "train.jsonl").read_bytes() == before
    assert main(["generate", "--out", str(d), "--seed", "7", "--force"]) == 0
    assert json.loads((d / "manifest.json").read_text())["seed"] == 7


def test_regenerating_the_same_dataset_is_allowed(dataset_dir, tmp_path):
    d = _copy(dataset_dir, tmp_path / "s")
    assert main(["generate", "--out", str(d)]) == 0


def test_edited_split_file_is_not_silently_overwritten(dataset_dir, tmp_path):
    d = _copy(dataset_dir, tmp_path / "x")
    (d / "test.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(DatasetExistsError):
        write_dataset(d)


def test_no_temporary_files_are_left_behind(dataset_dir):
    assert not [p for p in dataset_dir.iterdir() if p.name.endswith(".tmp")]


def test_stats_prints_counts_per_split(dataset_dir, capsys):
    assert main(["stats", str(dataset_dir)]) == 0
    out = capsys.readouterr().out
    assert "records" in out and "negative docs" in out and "PERSON" in out
    line = next(x for x in out.splitlines() if x.startswith("records"))
    assert line.split()[1:] == ["1600", "200", "400"]


def test_validate_record_never_echoes_a_swapped_type_value_pair():
    from piilab.dataset import DatasetError, validate_record

    record = {"id": "r1", "split": "test", "language": "ko", "source_text": "김비밀",
              "entities": [{"type": "김비밀", "value": "PERSON"}], "target_tsv": "",
              "template_id": "t"}
    with pytest.raises(DatasetError) as info:
        validate_record(record)
    assert "r1" in str(info.value) and "entities[0]" in str(info.value)
    assert "김비밀" not in str(info.value)


def test_wide_generate_on_a_small_disk_checks_records_not_scale(tmp_path, monkeypatch, capsys):
    # A 1 MB disk: ten wide records (about 7 kB) fit; the default corpus (--scale 1,
    # about 1.5 MB) and 900,000 wide records do not, and each refusal names its option.
    monkeypatch.setattr("shutil.disk_usage",
                        lambda path: SimpleNamespace(total=10**7, used=9 * 10**6, free=10**6))
    out = tmp_path / "small" / "w"
    assert main(["generate", "--profile", "wide", "--records", "10", "--out", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert sum(split["records"] for split in manifest["splits"].values()) == 10
    capsys.readouterr()

    assert main(["generate", "--profile", "wide", "--records", "900000",
                 "--out", str(tmp_path / "w2")]) == 2
    err = capsys.readouterr().err
    assert "--records 900,000 needs about" in err and "--scale" not in err
    assert not (tmp_path / "w2").exists()

    assert main(["generate", "--out", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert "--scale 1 needs about 1.5 MB" in err and "1.0 MB is free" in err
    assert not (tmp_path / "d").exists()
