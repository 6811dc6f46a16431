"""The README's detector table (the corpus section) is typed: every figure must equal what the
committed results give (`results/runs.jsonl`, `results/holdout_counts.json`,
`results/detector_speed.json`) and what the rule baseline scores on the holdout now."""

from __future__ import annotations

import json
import re
from pathlib import Path

from piilab.course.results import latest_systems, read_document_counts, read_runs
from piilab.dataset import read_jsonl
from piilab.detectors import load_detector
from piilab.evaluation import bootstrap_counts, document_counts, paired_bootstrap_counts
from piilab.predictions import make_prediction

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "results"
HOLDOUT = REPO / "data" / "holdout" / "holdout.jsonl"

#: detector as `--detector` names it -> system name of its row (the rules are scored live)
SYSTEMS = {
    "rules": "rules",
    "results/classifiers/gemma-3-270m-ner+rules": "Gemma 3 270M token classifier + rules",
    "results/classifiers/gemma-3-270m-ner": "Gemma 3 270M token classifier",
    "results/adapters/gemma-3-270m-lora-wide": "Gemma 3 270M + LoRA (wide)",
    "results/classifiers/smollm2-135m-ner": "SmolLM2-135M token classifier",
    "results/adapters/smollm2-135m-lora-wide": "SmolLM2-135M + LoRA (wide)",
}


def _expected_rows() -> dict[str, list[str]]:
    holdout = read_jsonl(HOLDOUT)
    counts = read_document_counts(RESULTS / "holdout_counts.json", HOLDOUT)
    rules = load_detector("rules")
    outputs = rules.outputs([r["source_text"] for r in holdout])
    counts["rules"] = document_counts(holdout, [
        make_prediction(r["id"], out, r["source_text"])
        for r, out in zip(holdout, outputs, strict=True)])
    speed = json.loads((RESULTS / "detector_speed.json").read_text(encoding="utf-8"))
    per_second = {row["detector"]: row["documents_per_s"] for row in speed["rows"]}
    systems = latest_systems(read_runs(RESULTS / "runs.jsonl"))
    rows = {}
    for detector, system in SYSTEMS.items():
        ci = bootstrap_counts(counts[system], n=1000, seed=0)
        if system != "rules":  # the counts are the recorded row's, to the last digit
            recorded = systems[system]["holdout"]["metrics"]
            assert abs(ci.f1.estimate - recorded["entity"]["f1"]) < 1e-12
            assert abs(ci.documents_leak_rate.estimate - recorded["documents_leak_rate"]) < 1e-12
        rate = per_second[detector]
        seconds = 100_000 / rate
        time = f"{seconds:.0f} s" if seconds < 360 else f"{seconds / 3600:.1f} h"
        shown_rate = f"{rate:,.0f}" if rate >= 100 else f"{rate:.1f}"
        rows[detector] = [ci.f1.format(), ci.documents_leak_rate.format(2), shown_rate, time]
    return rows


def _readme_rows() -> dict[str, list[str]]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    table = text[text.index("| `--detector` |"):]
    table = table[:table.index("\n\n")]
    rows = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = cells[1:]
    return rows


def test_the_readme_detector_table_is_what_the_results_give():
    assert _readme_rows() == _expected_rows()


def test_the_readme_sentences_under_the_table_hold():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert "the merge leaks fewer\ndocuments by a paired interval that excludes zero" in text
    holdout = read_jsonl(HOLDOUT)
    counts = read_document_counts(RESULTS / "holdout_counts.json", HOLDOUT)
    merge = counts["Gemma 3 270M token classifier + rules"]
    alone = counts["Gemma 3 270M token classifier"]
    paired = paired_bootstrap_counts(merge, alone, n=1000, seed=0)
    assert paired.documents_leak_rate.verdict == "better"
    assert len(holdout) == 100
    # "No detector leaks nothing": every lower end of documents leaking is above zero
    for low in re.findall(r"\| \d\.\d\d \[(\d\.\d\d), \d\.\d\d\] \|", text):
        assert float(low) > 0
