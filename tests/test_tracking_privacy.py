"""No PII in tracking or logs (`piilab.tracking`, docs/contract.md, section 8).

A real training run, with tracking on and every log switched to its most verbose
level, then a scan for every source text, completion, entity value and masking
mapping value of its training records in: every file of the run directory (the
MLflow SQLite store included, byte by byte), everything the run printed (stdout,
stderr, progress bars), every Python log record, and the MLflow run read back
through its API. Model weights (``*.safetensors``) are not logs and are not scanned.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import warnings

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from piilab.tokenization import mask_text
from piilab.tracking import NullTracker, TrackingError, default_tracking_uri

TRAIN_EXTRA = "needs the train extra: pip install -e '.[train]'"


def _needles(records) -> set[str]:
    """Every piece of training text that must never reach a log or a tracking store."""
    out: set[str] = set()
    for record in records:
        out.add(record["source_text"])
        if record["target_tsv"]:
            out.add(record["target_tsv"])
            out.update(record["target_tsv"].split("\n"))
        pairs = [(e["type"], e["value"]) for e in record["entities"]]
        out.update(value for _, value in pairs)
        out.update(mask_text(record["source_text"], pairs).mapping.values())
    return {n for n in out if n.strip()}


def _pattern(needle: str) -> re.Pattern[bytes]:
    raw = re.escape(needle.encode("utf-8"))
    if re.fullmatch(r"[A-Za-z ]+", needle):  # "wife" must not match inside "wifely"
        return re.compile(rb"(?<![A-Za-z])" + raw + rb"(?![A-Za-z])")
    return re.compile(raw)


def _leaks(haystacks: dict[str, bytes], needles: set[str]) -> list[tuple[str, str]]:
    patterns = [(n, _pattern(n)) for n in sorted(needles)]
    return [(where, needle) for where, blob in haystacks.items()
            for needle, pattern in patterns if pattern.search(blob)]


# --- the tracker's own guards (no training) ------------------------------------------------


def test_free_text_parameters_are_refused_without_echoing_them():
    tracker = NullTracker()
    tracker.log_params({"lora_r": 16, "lr": 2e-4, "model": "Qwen/Qwen2.5-0.5B-Instruct",
                        "targets": ["q_proj", "v_proj"], "merge": False, "n": None})
    for value in ("고객 김가상 님", "PERSON\t김가상", "call 555-0142 now", {"a": 1}):
        with pytest.raises(TrackingError) as info:
            tracker.log_params({"note": value})
        assert "note" in str(info.value) and str(value) not in str(info.value)


def test_default_store_is_a_local_sqlite_file_in_the_run_directory(tmp_path):
    uri = default_tracking_uri(tmp_path / "run")
    assert uri.startswith("sqlite:///") and uri.endswith(str(tmp_path / "run" / "mlflow.db"))


def test_the_scan_finds_what_it_looks_for(corpus):
    record = next(r for r in corpus["train"] if r["language"] == "en" and r["entities"])
    needles = _needles([record])
    value = record["entities"][0]["value"]
    assert _leaks({"log": f"x {value} y".encode()}, needles) == [("log", value)]
    assert not _leaks({"log": b"json wifely"}, {"wife"})


# --- a whole training run ---------------------------------------------------------------


@pytest.fixture(scope="module")
def scanned_run(tmp_path_factory, corpus):
    pytest.importorskip("trl", reason=TRAIN_EXTRA)
    pytest.importorskip("mlflow", reason=TRAIN_EXTRA)
    import torch
    import transformers

    from piilab.cli import main
    from piilab.dataset import split_bytes
    from piilab.tiny import build_tiny_model

    root = tmp_path_factory.mktemp("privacy")
    records = ([r for r in corpus["train"] if r["language"] == "ko"][:24]
               + [r for r in corpus["train"] if r["language"] == "en"][:24])
    data = root / "data"
    data.mkdir()
    (data / "train.jsonl").write_bytes(split_bytes(records))
    tiny = build_tiny_model(root / "tiny", corpus["train"], seed=0)
    run_dir = root / "run"
    config = {"model": str(tiny), "data_dir": str(data), "output_dir": str(run_dir),
              "max_steps": 4, "per_device_train_batch_size": 4, "learning_rate": 0.003,
              "lora_dropout": 0.0, "logging_steps": 1, "progress": True, "track": True}
    (root / "config.json").write_text(json.dumps(config))

    # Everything as loud as it gets; stdout, stderr (progress bars, warnings) and the
    # log records of every library involved are collected.
    captured_logs: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record):
            captured_logs.append(self.format(record))

    handler = Collect(level=logging.DEBUG)
    loggers = [logging.getLogger(name) for name in
               ("", "piilab", "transformers", "trl", "peft", "datasets", "accelerate", "mlflow",
                "alembic", "sqlalchemy")]
    old_levels = [lg.level for lg in loggers]
    old_verbosity = transformers.logging.get_verbosity()
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.DEBUG)
    transformers.logging.set_verbosity_debug()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), \
                warnings.catch_warnings():
            warnings.simplefilter("always")
            code = main(["train", "--config", str(root / "config.json")])
    finally:
        torch.set_num_threads(threads)
        transformers.logging.set_verbosity(old_verbosity)
        for lg, level in zip(loggers, old_levels, strict=True):
            lg.removeHandler(handler)
            lg.setLevel(level)
    assert code == 0, stderr.getvalue()[-2000:]
    return {"run_dir": run_dir, "records": records, "logs": "\n".join(captured_logs),
            "stdout": stdout.getvalue().encode(), "stderr": stderr.getvalue().encode()}


def _mlflow_dump(run_dir) -> tuple[dict, list]:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=default_tracking_uri(run_dir))
    runs = [run for exp in client.search_experiments()
            for run in client.search_runs([exp.experiment_id])]
    assert len(runs) == 1
    run = runs[0]
    history = {key: [m.value for m in client.get_metric_history(run.info.run_id, key)]
               for key in run.data.metrics}
    dump = {"params": run.data.params, "tags": run.data.tags, "metrics": history,
            "name": run.info.run_name}
    return dump, client.list_artifacts(run.info.run_id)


@pytest.mark.slow
@pytest.mark.train
def test_tracking_store_and_run_logs_hold_no_training_text(scanned_run):
    run_dir = scanned_run["run_dir"]
    haystacks = {
        str(path.relative_to(run_dir)): path.read_bytes()
        for path in sorted(run_dir.rglob("*"))
        if path.is_file() and path.suffix != ".safetensors"
    }
    assert "mlflow.db" in haystacks and "train.log" in haystacks
    dump, artifacts = _mlflow_dump(run_dir)
    haystacks["mlflow api"] = json.dumps(dump, ensure_ascii=False).encode("utf-8")
    haystacks["stdout"] = scanned_run["stdout"]
    haystacks["stderr"] = scanned_run["stderr"]
    haystacks["python logging"] = scanned_run["logs"].encode("utf-8")
    needles = _needles(scanned_run["records"])
    assert len(needles) > 150
    assert _leaks(haystacks, needles) == []
    assert artifacts == []


@pytest.mark.slow
@pytest.mark.train
def test_tracked_values_are_hyperparameters_counts_and_metrics(scanned_run):
    dump, _ = _mlflow_dump(scanned_run["run_dir"])
    assert {"lora_r", "learning_rate", "max_steps", "seed", "precision", "model",
            "n_train_examples"} <= set(dump["params"])
    assert dump["params"]["n_train_examples"] == "48"
    assert {"loss", "learning_rate", "train_runtime"} <= set(dump["metrics"])
    assert len(dump["metrics"]["loss"]) == 4
    assert set(dump["tags"]) <= {"piilab_version", "mlflow.runName", "data.generator_version",
                                 "data.manifest_sha256", "data.train_records_sha256"}
    # The run printed progress, metrics and debug logs: the scan had something to read.
    assert b"loss" in scanned_run["stdout"] + scanned_run["stderr"]
    assert b"trained 4 steps" in scanned_run["stdout"]
    assert len(scanned_run["logs"]) > 1000
