"""`piilab evaluate`, `piilab oracle`, `piilab baseline` end to end on files."""

from __future__ import annotations

import json
import stat

from piilab.cli import main


def test_oracle_passes_on_the_default_corpus(dataset_dir, capsys):
    assert main(["oracle", str(dataset_dir)]) == 0
    out = capsys.readouterr().out
    assert "oracle check: PASS" in out and "2200 documents" in out


def test_baseline_then_evaluate(dataset_dir, tmp_path, capsys):
    preds = tmp_path / "preds.jsonl"
    assert main(["baseline", str(dataset_dir), "--split", "test", "--out", str(preds)]) == 0
    assert stat.S_IMODE(preds.stat().st_mode) == 0o600  # predictions hold PII values
    lines = [json.loads(x) for x in preds.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 400 and set(lines[0]) == {"id", "output", "parse_success"}
    out_json = tmp_path / "result.json"
    capsys.readouterr()
    assert main(["evaluate", "--records", str(dataset_dir / "test.jsonl"),
                 "--predictions", str(preds), "--json", str(out_json)]) == 0
    printed = capsys.readouterr().out
    result = json.loads(out_json.read_text())
    assert f"{result['entity']['f1']:.3f}" in printed
    for word in ("PERSON", "leak rate (documents)", "parse success rate", "round-trip rate"):
        assert word in printed
    # the table prints numbers only: no source text, no predicted value
    records = [json.loads(x) for x in (dataset_dir / "test.jsonl").read_text().splitlines()]
    for r in records[:50]:
        for e in r["entities"]:
            assert e["value"] not in printed


def test_evaluate_rejects_bad_predictions_without_echoing_values(dataset_dir, tmp_path, capsys):
    records = [json.loads(x) for x in (dataset_dir / "test.jsonl").read_text().splitlines()]
    r = next(x for x in records if x["entities"])
    preds = tmp_path / "bad.jsonl"
    row = {"id": r["id"], "output": r["target_tsv"], "parse_success": True}
    preds.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    assert main(["evaluate", "--records", str(dataset_dir / "test.jsonl"),
                 "--predictions", str(preds)]) == 2
    err = capsys.readouterr().err
    # The record is named by its line, not by its id (an id is data read from the file too).
    assert "bad.jsonl:2: duplicate prediction id" in err and r["id"] not in err
    assert all(e["value"] not in err for e in r["entities"])


def test_evaluate_reports_a_malformed_predictions_line(dataset_dir, tmp_path, capsys):
    preds = tmp_path / "broken.jsonl"
    preds.write_text('{"id": "x"\n', encoding="utf-8")
    assert main(["evaluate", "--records", str(dataset_dir / "test.jsonl"),
                 "--predictions", str(preds)]) == 2
    assert "broken.jsonl:1: malformed JSON" in capsys.readouterr().err
