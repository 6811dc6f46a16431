"""results/peers.jsonl (benchmarks/bench_peers.py) describes what it claims: each peer is scored
on the documents of the languages it supports, and the rules' row is what the rule baseline
scores now."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from piilab.baseline import baseline_output
from piilab.course.results import metrics_summary
from piilab.dataset import load_dataset_dir, read_jsonl
from piilab.evaluation import evaluate
from piilab.predictions import make_prediction

REPO = Path(__file__).resolve().parent.parent
PEERS = [json.loads(line) for line in
         (REPO / "results" / "peers.jsonl").read_text(encoding="utf-8").splitlines()]
HOLDOUT = REPO / "data" / "holdout" / "holdout.jsonl"


def _sets() -> dict[str, list[dict]]:
    if not (REPO / "data" / "test.jsonl").exists():
        pytest.skip("data/ not generated (make data)")
    return {"test": load_dataset_dir(REPO / "data")["test"], "holdout": read_jsonl(HOLDOUT)}


def test_each_peer_names_its_languages_and_is_scored_on_those_documents_only():
    sets = _sets()
    languages = {row["system"]: row["languages"] for row in PEERS}
    assert languages == {"piilab rules": ["ko", "en"], "ko-pii (Korean documents)": ["ko"],
                         "Presidio (English documents)": ["en"],
                         "ko-pii + Presidio": ["ko", "en"]}
    for row in PEERS:
        for name, records in sets.items():
            expected = sum(r["language"] in row["languages"] for r in records)
            assert row[name]["documents"] == expected, (row["system"], name)
    presidio = next(row for row in PEERS if row["system"].startswith("Presidio"))
    assert presidio["test"]["documents"] < len(sets["test"])


def test_the_rules_row_is_what_the_rule_baseline_scores_now():
    rules = next(row for row in PEERS if row["system"] == "piilab rules")
    for name, records in _sets().items():
        result = evaluate(records, [make_prediction(r["id"], baseline_output(r["source_text"]),
                                                    r["source_text"]) for r in records])
        live = metrics_summary(result)
        recorded = rules[name]["metrics"]
        assert recorded["entity"] == live["entity"], name
        assert recorded["documents_leak_rate"] == live["documents_leak_rate"], name
