"""`piilab evaluate`, `piilab oracle`, `piilab baseline` end to end on files."""

from __future__ import annotations

import json
import stat

import pytest

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


def _baseline_file(dataset_dir, tmp_path):
    preds = tmp_path / "rules.jsonl"
    assert main(["baseline", str(dataset_dir), "--split", "test", "--out", str(preds)]) == 0
    return preds


def test_evaluate_bootstrap_prints_one_interval_line_per_metric(dataset_dir, tmp_path, capsys):
    from piilab.evaluation import EvaluationResult, bootstrap_intervals

    preds = _baseline_file(dataset_dir, tmp_path)
    test = dataset_dir / "test.jsonl"
    outputs = []
    for name in ("a.json", "b.json"):
        capsys.readouterr()
        assert main(["evaluate", "--records", str(test), "--predictions", str(preds),
                     "--bootstrap", "200", "--seed", "4", "--json", str(tmp_path / name)]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1].replace("b.json", "a.json")  # seeded: the same output
    records = [json.loads(x) for x in test.read_text().splitlines()]
    predictions = [json.loads(x) for x in preds.read_text().splitlines()]
    ci = bootstrap_intervals(records, predictions, n=200, seed=4)
    lines = [line for line in outputs[0].splitlines() if "200 resamples of 400" in line]
    assert len(lines) == 5
    assert any(ci.f1.format() in line and line.startswith("entity F1") for line in lines)
    stored = json.loads((tmp_path / "a.json").read_text())
    assert stored["bootstrap"] == ci.to_dict()
    # the stored file still reads back as a result (the extra block is ignored)
    assert EvaluationResult.from_dict(stored).entity.f1 == ci.f1.estimate


def test_evaluate_compare_gives_paired_differences_and_verdicts(dataset_dir, tmp_path, capsys):
    preds = _baseline_file(dataset_dir, tmp_path)
    records = [json.loads(x) for x in (dataset_dir / "test.jsonl").read_text().splitlines()]
    oracle = tmp_path / "oracle.jsonl"
    oracle.write_text("".join(json.dumps({"id": r["id"], "output": r["target_tsv"],
                                          "parse_success": True}) + "\n" for r in records),
                      encoding="utf-8")
    capsys.readouterr()
    assert main(["evaluate", "--records", str(dataset_dir / "test.jsonl"),
                 "--predictions", str(oracle), "--compare", str(preds),
                 "--json", str(tmp_path / "cmp.json")]) == 0
    out = capsys.readouterr().out
    assert "A = oracle.jsonl, B = rules.jsonl" in out and "1000 resamples" in out
    f1_line = next(x for x in out.splitlines() if x.startswith("entity F1") and "A - B" in x)
    leak_line = next(x for x in out.splitlines()
                     if x.startswith("leak rate (documents)") and "A - B" in x)
    assert f1_line.endswith("better") and leak_line.endswith("better")
    stored = json.loads((tmp_path / "cmp.json").read_text())
    paired = stored["compare"]["paired"]
    assert paired["f1"]["verdict"] == "better" and paired["f1"]["low"] > 0
    assert paired["f1"]["estimate"] == pytest.approx(
        stored["entity"]["f1"] - stored["compare"]["result"]["entity"]["f1"])


@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_evaluate_refuses_a_bad_resample_count(dataset_dir, tmp_path, capsys, value):
    preds = tmp_path / "empty.jsonl"
    preds.write_text("", encoding="utf-8")
    assert main(["evaluate", "--records", str(dataset_dir / "test.jsonl"),
                 "--predictions", str(preds), "--bootstrap", value]) == 2
    assert "--bootstrap" in capsys.readouterr().err


def test_evaluate_compare_names_the_line_of_a_bad_other_file(dataset_dir, tmp_path, capsys):
    preds = _baseline_file(dataset_dir, tmp_path)
    other = tmp_path / "other.jsonl"
    other.write_text('{"id": "nope", "output": "", "parse_success": false}\n', encoding="utf-8")
    capsys.readouterr()
    assert main(["evaluate", "--records", str(dataset_dir / "test.jsonl"),
                 "--predictions", str(preds), "--compare", str(other)]) == 2
    assert "other.jsonl:1:" in capsys.readouterr().err
