"""The finance token classifier: it trains, scores spans and counts the confusion pairs."""

from __future__ import annotations

import doctest

import pytest

from piilab.finance import evaluate as E


def test_doctests_pass():
    assert doctest.testmod(E).failed == 0


def test_confusions_count_overlapping_spans_of_the_other_label_only():
    gold = [[(0, 14, "RRN"), (20, 39, "CARD_NUMBER")], [(0, 14, "FRN")]]
    predicted = [[(0, 14, "RRN"), (22, 39, "ACCOUNT_NUMBER")], [(40, 50, "RRN")]]
    counts = E.confusions(gold, predicted)
    assert counts["RRN->FRN"] == {"gold": 1, "confused": 0}
    assert counts["CARD_NUMBER->ACCOUNT_NUMBER"] == {"gold": 1, "confused": 1}
    assert counts["FRN->RRN"] == {"gold": 1, "confused": 0}  # no overlap
    assert counts["ACCOUNT_NUMBER->CARD_NUMBER"] == {"gold": 0, "confused": 0}


@pytest.mark.slow
@pytest.mark.train
def test_train_and_evaluate_runs_on_tiny_data_and_reports_well_formed_scores(one_torch_thread):
    pytest.importorskip("torch", reason="needs the train extra")
    pytest.importorskip("bpe_openai", reason="needs the finance extra")
    from piilab.finance import build_rows
    from piilab.taxonomy import finance_labels

    build = build_rows(200, seed=42)
    result = E.train_and_evaluate(build.rows, steps=30, max_seconds=30, width=32)
    assert result["steps"] == 30 and result["stopped_by"] == "steps"
    assert result["loss_last"] < result["loss_first"]
    scores = result["scores"]
    gold_spans = sum(len(r["privacy_mask"]) for r in build.rows["validation"])
    assert scores["tp"] + scores["fn"] == gold_spans
    assert 0.0 <= scores["f1"] <= 1.0
    assert set(scores["per_label"]) <= set(finance_labels())
    assert set(result["confusions"]) == {f"{a}->{b}" for a, b in E.CONFUSION_PAIRS}
    for pair, counts in result["confusions"].items():
        a = pair.split("->")[0]
        gold_a = sum(e["label"] == a for r in build.rows["validation"] for e in r["privacy_mask"])
        assert counts["gold"] == gold_a and 0 <= counts["confused"] <= gold_a
