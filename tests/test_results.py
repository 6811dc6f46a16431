"""Reading recorded runs (`piilab.course.results`, chapter 07): every committed row verifies against
its run id, an edited row is refused without echoing values, and the table shows what a row
recorded."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from piilab.course.results import (
    REQUIRED_FIELDS,
    TABLE_FIELDS,
    RunsFileError,
    data_version,
    format_table,
    metrics_summary,
    read_runs,
    run_id_of,
    summarize_run,
    table_row,
)
from piilab.evaluation import evaluate, oracle_predictions

REPO = Path(__file__).resolve().parent.parent
RUNS = REPO / "results" / "runs.jsonl"


def _row(**changes) -> dict:
    """A small row shaped like the ones `tools/record_run.py` writes, with its run id."""
    row = {
        "model": {"id": "piilab.tiny", "kind": "tiny offline model (random weights)"},
        "method": "LoRA r=16 alpha=32",
        "data": {"generator_version": "1.0.0", "manifest_sha256": "ab" * 32, "seed": 42},
        "config": {"lora_r": 16, "lora_alpha": 32, "max_steps": 200, "learning_rate": 0.003,
                   "per_device_train_batch_size": 8, "gradient_accumulation_steps": 1,
                   "lr_scheduler_type": "linear"},
        "commit": "0123456789abcdef0123456789abcdef01234567",
        "dirty": False,
        "hardware": {"device": "cpu", "precision": "fp32", "gradient_checkpointing": False,
                     "torch_threads": 1},
        "train": {"global_step": 200, "loss_first": 8.3, "loss_last": 4.25},
        "eval": {"split": "test", "documents": 400},
        "metrics": {"entity": {"precision": 0.5, "recall": 0.25, "f1": 1 / 3, "tp": 1, "fp": 1,
                               "fn": 3},
                    "documents_leak_rate": 0.75, "entities_leak_rate": 0.75,
                    "over_redaction_rate": 0.5, "hallucination_rate": 0.125,
                    "parse_success_rate": 1.0},
        "produced_by": "tools/record_run.py --config configs/train_tiny_cpu.json --tiny",
    }
    row.update(changes)
    # The tool's own formula: the hash of the row before the run id is added.
    row["run_id"] = hashlib.sha256(json.dumps(row, sort_keys=True).encode()).hexdigest()[:12]
    return row


def _write(path: Path, rows) -> Path:
    path.write_text("".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) + "\n"
                            for r in rows), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------- the committed file


def test_every_committed_row_verifies_and_has_the_table_fields():
    rows = read_runs(RUNS)
    assert rows, "results/runs.jsonl holds no rows"
    for row in rows:
        assert row["run_id"] == run_id_of(row)
        assert row["produced_by"].startswith("tools/record_run.py ")
        column = summarize_run(row)
        assert [key for key, _ in TABLE_FIELDS] == list(column)


def test_committed_rows_were_evaluated_on_the_current_test_split(corpus):
    from piilab.dataset import split_bytes
    from piilab.generator import GENERATOR_VERSION

    test_sha = hashlib.sha256(split_bytes(corpus["test"])).hexdigest()
    for row in read_runs(RUNS):
        # the course corpus, or a training mix that includes it (piilab.wide.write_training_mix)
        version = row["data"]["generator_version"]
        assert version == GENERATOR_VERSION or (version.startswith("mix:")
                                                and version.endswith("+" + GENERATOR_VERSION))
        assert row["data"]["test_sha256"] == test_sha
        assert row["eval"]["documents"] <= len(corpus["test"])


# ---------------------------------------------------------------------------- reading


def test_a_row_written_by_the_tool_reads_back(tmp_path):
    row = _row()
    path = _write(tmp_path / "runs.jsonl", [row, "\n", _row(dirty=True)])
    rows = read_runs(path)
    assert [r["run_id"] for r in rows] == [row["run_id"], _row(dirty=True)["run_id"]]


def test_an_edited_row_is_refused_without_echoing_the_value(tmp_path):
    row = _row()
    row["metrics"]["entity"]["f1"] = 0.987654
    path = _write(tmp_path / "runs.jsonl", [_row(), row])
    with pytest.raises(RunsFileError, match=r"runs\.jsonl, line 2: run_id does not match") as err:
        read_runs(path)
    assert "0.987654" not in str(err.value)
    assert read_runs(path, verify=False)[1]["metrics"]["entity"]["f1"] == 0.987654


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json\n", "not valid JSON"),
        ("[1, 2]\n", "a row must be a JSON object"),
        (json.dumps({"run_id": "x", "model": {}}) + "\n", "missing field(s) method, data"),
    ],
)
def test_malformed_lines_name_the_line_and_the_reason(tmp_path, line, reason):
    path = _write(tmp_path / "runs.jsonl", [_row(), line])
    with pytest.raises(RunsFileError, match="line 2") as err:
        read_runs(path)
    assert reason in str(err.value)


def test_required_fields_are_what_the_readme_documents():
    readme = (REPO / "results" / "README.md").read_text(encoding="utf-8")
    for field in REQUIRED_FIELDS:
        assert f"`{field}`" in readme


# ---------------------------------------------------------------------------- the table


def test_a_row_is_summarized_into_short_cells():
    column = summarize_run(_row())
    assert column["model"] == "piilab.tiny"
    assert column["data"] == "1.0.0+abababab"
    assert column["adapter"] == "LoRA r16/a32"
    assert column["steps"] == "200 x 8"
    assert column["learning_rate"] == "0.003 linear"
    assert column["loss"] == "8.30 -> 4.25"
    assert column["commit"] == "0123456"
    assert column["hardware"] == "cpu fp32 1t"
    assert column["f1"] == pytest.approx(1 / 3)


def test_dirty_trees_and_missing_commits_are_marked():
    assert summarize_run(_row(dirty=True))["commit"] == "0123456*"
    assert summarize_run(_row(commit=None, dirty=None))["commit"] == "none"


def test_gradient_accumulation_and_epochs_show_in_the_steps_cell():
    config = {**_row()["config"], "gradient_accumulation_steps": 2}
    assert summarize_run(_row(config=config))["steps"] == "200 x 8 x 2"
    config = {**config, "max_steps": -1, "num_train_epochs": 1.0}
    assert summarize_run(_row(config=config))["steps"] == "1.0 epochs x 8 x 2"


def test_data_version_without_a_manifest_is_the_generator_version():
    assert data_version({"generator_version": "1.0.0"}) == "1.0.0"


def test_metrics_summary_has_the_shape_of_a_recorded_row(corpus):
    records = corpus["test"][:20]
    summary = metrics_summary(evaluate(records, oracle_predictions(records)))
    recorded = read_runs(RUNS)[0]["metrics"]
    assert summary.keys() == recorded.keys()
    assert summary["entity"].keys() == recorded["entity"].keys()
    assert summary["entity"]["f1"] == 1.0 and summary["documents_leak_rate"] == 0.0


def test_live_and_recorded_columns_share_one_table():
    live = table_row(run="(live)", model="rule baseline", data="1.0.0", commit="-",
                     hardware="-", documents=400, metrics=_row()["metrics"])
    assert live["adapter"] == live["steps"] == live["loss"] == "-"
    table = format_table([summarize_run(_row()), live])
    lines = table.splitlines()
    assert len(lines) == len(TABLE_FIELDS) + 1  # plus the rule under the header
    assert lines[0].split() == ["run", _row()["run_id"], "(live)"]
    assert set(lines[1]) == {"-"}
    assert lines[-1].split()[-2:] == ["1.000", "1.000"]  # rates with three decimals
    assert "0.333" in table


def test_the_readme_holdout_table_says_what_the_rows_and_the_rules_score():
    """The README's holdout table (the Gemma paragraph) is typed: it must match the recorded
    rows and the rule baseline run now, to the three decimals it shows."""
    import re

    from piilab.baseline import baseline_output
    from piilab.course.results import latest_systems
    from piilab.dataset import read_jsonl
    from piilab.predictions import make_prediction

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| holdout (100 documents) |"):]
    lines = re.findall(r"^\| ([^|]+?) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$",
                       table[:table.index("| goal |")], re.M)
    systems = latest_systems(read_runs(RUNS))
    holdout = read_jsonl(REPO / "data" / "holdout" / "holdout.jsonl")
    rules = metrics_summary(evaluate(holdout, [
        make_prediction(r["id"], baseline_output(r["source_text"]), r["source_text"])
        for r in holdout]))
    assert {name for name, *_ in lines} == {"rule baseline", "SmolLM2-135M + LoRA (wide)",
                                            "Gemma 3 270M + LoRA (wide)"}
    gemma = systems["Gemma 3 270M + LoRA (wide)"]
    assert (f"(Course test split: {gemma['metrics']['entity']['f1']:.3f} F1; wide test split: "
            f"{gemma['wide_test']['metrics']['entity']['f1']:.3f}.") in " ".join(readme.split())
    for name, f1, leaking, over in lines:
        m = rules if name == "rule baseline" else systems[name]["holdout"]["metrics"]
        assert (f1, leaking, over) == (f"{m['entity']['f1']:.3f}",
                                       f"{m['documents_leak_rate']:.3f}",
                                       f"{m['over_redaction_rate']:.3f}"), name


def test_the_readme_classifier_table_says_what_the_rows_score():
    """The README's token-classifier table and its sentence are typed: they must match the
    recorded rows to the decimals they show."""
    import re

    from piilab.course.results import latest_systems

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| holdout (100 documents), token classifiers |"):]
    lines = re.findall(r"^\| ([^|]+?) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$",
                       table[:table.index("| goal (classifier issue) |")], re.M)
    systems = latest_systems(read_runs(RUNS))
    assert {name for name, *_ in lines} == {"Gemma 3 270M token classifier",
                                            "Gemma 3 270M token classifier + rules"}
    for name, f1, leaking, over in lines:
        m = systems[name]["holdout"]["metrics"]
        assert (f1, leaking, over) == (f"{m['entity']['f1']:.3f}",
                                       f"{m['documents_leak_rate']:.3f}",
                                       f"{m['over_redaction_rate']:.3f}"), name
    row = systems["Gemma 3 270M token classifier"]
    flat = " ".join(readme.split())
    assert (f"(Course test split: {row['metrics']['entity']['f1']:.3f} F1; wide test split: "
            f"{row['wide_test']['metrics']['entity']['f1']:.3f}. Trained in "
            f"{row['train']['train_wall_s'] / 60:.0f} minutes on 2 CPU cores, "
            f"{row['train']['global_step']} steps of {row['config']['batch_size']} "
            "documents;") in flat
    generative = systems["Gemma 3 270M + LoRA (wide)"]["holdout"]["metrics"]
    merged = systems["Gemma 3 270M token classifier + rules"]["holdout"]["metrics"]
    m = row["holdout"]["metrics"]
    # "far fewer documents leaking and masks less that is not PII; with the rules ... fewer still"
    assert m["documents_leak_rate"] < generative["documents_leak_rate"] / 2
    assert m["over_redaction_rate"] < generative["over_redaction_rate"]
    assert merged["documents_leak_rate"] < m["documents_leak_rate"]
    # "meets the goal on documents leaking and misses the F1 and over-redaction goals"
    assert m["documents_leak_rate"] <= 0.20 and m["entity"]["f1"] < 0.88
    assert m["over_redaction_rate"] > 0.12


# ------------------------------------------------------------ one schema for stored results


def test_metrics_summary_is_a_projection_of_the_stored_result(corpus):
    from piilab.course.results import SUMMARY_PATHS
    from piilab.evaluation import EvaluationResult

    records = corpus["test"][:30]
    result = evaluate(records, oracle_predictions(records))
    stored = json.loads(json.dumps(result.to_dict()))  # as `piilab evaluate --json` writes it
    assert metrics_summary(stored) == metrics_summary(result)
    assert metrics_summary(EvaluationResult.from_dict(stored)) == metrics_summary(result)
    tree = result.to_dict()
    for key, path in SUMMARY_PATHS:
        value = tree
        for part in path:
            value = value[part]
        assert metrics_summary(result)[key] == value
    # every key of a committed row's metrics block is a path of the one schema
    assert set(read_runs(RUNS)[-1]["metrics"]) >= {key for key, _ in SUMMARY_PATHS}


def test_the_tool_gives_rows_the_readers_run_id():
    import importlib.util

    spec = importlib.util.spec_from_file_location("record_run", REPO / "tools" / "record_run.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.run_id_of is run_id_of
    row = _row()
    assert run_id_of(row) == row["run_id"]


# ------------------------------------------------- per-document counts of recorded systems

COUNTS = REPO / "results" / "holdout_counts.json"
HOLDOUT = REPO / "data" / "holdout" / "holdout.jsonl"


def test_committed_document_counts_give_the_recorded_holdout_metrics():
    from piilab.course.results import latest_systems, read_document_counts
    from piilab.evaluation import bootstrap_counts

    counts = read_document_counts(COUNTS, HOLDOUT)
    stored = json.loads(COUNTS.read_text(encoding="utf-8"))
    rows = latest_systems(read_runs(RUNS))
    assert len(counts) >= 2
    for name, docs in counts.items():
        row = rows[name]
        assert stored["systems"][name]["run_id"] == row["run_id"]
        recorded = row["holdout"]["metrics"]
        assert [sum(getattr(c, k) for c in docs) for k in ("tp", "fp", "fn")] == [
            recorded["entity"][k] for k in ("tp", "fp", "fn")]
        ci = bootstrap_counts(docs, n=20)
        assert ci.f1.estimate == pytest.approx(recorded["entity"]["f1"])
        assert ci.documents_leak_rate.estimate == pytest.approx(recorded["documents_leak_rate"])
        assert ci.entities_leak_rate.estimate == pytest.approx(recorded["entities_leak_rate"])


def test_document_counts_of_other_records_are_refused(tmp_path):
    from piilab.course.results import read_document_counts

    other = tmp_path / "other.jsonl"
    other.write_text("{}\n", encoding="utf-8")
    with pytest.raises(RunsFileError, match=r"records_sha256 is not the SHA-256 of other\.jsonl"):
        read_document_counts(COUNTS, other)
    broken = json.loads(COUNTS.read_text(encoding="utf-8"))
    next(iter(broken["systems"].values()))["counts"][3] = [1, 2]
    path = tmp_path / "counts.json"
    path.write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(RunsFileError, match="rows of 5 integers"):
        read_document_counts(path)
