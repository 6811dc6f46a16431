"""The evaluator (docs/contract.md, section 6): each metric, the classic mistakes, rejections."""

from __future__ import annotations

import unicodedata

import pytest
from conftest import record

from piilab.evaluation import (
    EvaluationError,
    evaluate,
    oracle_predictions,
    score_document,
    uncovered_occurrences,
)
from piilab.labels import LABELS
from piilab.parsing import parse_model_output
from piilab.predictions import parse_flag


def rec(rid, source, *entities):
    # Entities as given: some tests give unknown types or values the source lacks.
    return record(source, *entities, id=rid, ordered=False)


def pred(rid, output, flag=None, source=None):
    if flag is None:
        flag = parse_flag(output, source or "")
    return {"id": rid, "output": output, "parse_success": flag}


# --- the two classic evaluator mistakes -------------------------------------------------


def test_masking_only_part_of_a_name_is_a_leak():
    r = rec("d1", "Customer Alpha Beta called.", ("PERSON", "Alpha Beta"))
    res = evaluate([r], [pred("d1", "PERSON\tAlpha", True)])
    assert res.documents.leak_rate == 1.0
    assert res.entities.leak_rate == 1.0
    assert res.entity.tp == 0 and res.entity.fp == 1 and res.entity.fn == 1


def test_gold_value_equal_to_a_label_masked_by_its_token_is_not_a_leak():
    # The masked text "[PERSON_1] signed." contains the string "PERSON", but no
    # source character is exposed: searching the masked text would call this a leak.
    r = rec("d1", "PERSON signed.", ("PERSON", "PERSON"))
    score = score_document(r, pred("d1", "PERSON\tPERSON", True))
    assert "PERSON" in score.mask.masked_text
    assert score.leaked == frozenset()
    res = evaluate([r], [pred("d1", "PERSON\tPERSON", True)])
    assert res.documents.leak_rate == 0.0 and res.entity.f1 == 1.0


# --- leaks are measured on source characters ---------------------------------------------


def test_a_repeated_occurrence_left_unmasked_is_a_leak():
    source = "김가상 님, 김가상 님"
    gold = [("PERSON", "김가상")]
    assert uncovered_occurrences(source, gold, [(0, 3)]) == {("PERSON", "김가상"): [(7, 10)]}
    assert uncovered_occurrences(source, gold, [(0, 3), (7, 10)]) == {}


def test_a_spaced_repeat_predicted_with_the_wrong_type_leaks():
    # REL gets no spacing variants, so the spaced "김 가 상" stays in the clear.
    r = rec("d1", "김가상 / 김 가 상", ("PERSON", "김가상"))
    res = evaluate([r], [pred("d1", "REL\t김가상", True)])
    assert res.documents.leak_rate == 1.0


def test_an_unmasked_separator_inside_a_number_is_a_leak():
    r = rec("d1", "전화 010-1234-5678", ("PHONE", "010-1234-5678"))
    output = "PHONE\t010\nPHONE\t1234-5678"
    score = score_document(r, pred("d1", output, True))
    assert "-" in score.mask.masked_text  # the hyphen between the two tokens survived
    assert score.leaked == {("PHONE", "010-1234-5678")}


def test_a_variant_spelling_covered_by_a_variant_mask_is_not_a_leak():
    r = rec("d1", "010-1234-5678 또는 010 1234 5678", ("PHONE", "010-1234-5678"))
    res = evaluate([r], [pred("d1", "PHONE\t010-1234-5678", True)])
    assert res.documents.leak_rate == 0.0
    assert res.entity.f1 == 1.0


def test_a_valid_variant_masks_fully_but_counts_as_a_false_positive():
    r = rec("d1", "010-1234-5678", ("PHONE", "010-1234-5678"))
    res = evaluate([r], [pred("d1", "PHONE\t01012345678", True)])
    assert res.documents.leak_rate == 0.0  # every character masked
    assert (res.entity.tp, res.entity.fp, res.entity.fn) == (0, 1, 1)
    assert res.entities.over_redaction_rate == 1.0


# --- counting rules -----------------------------------------------------------------------


def test_zero_denominators_give_zero_everywhere():
    res = evaluate([], [])
    flat = [res.entity.precision, res.entity.recall, res.entity.f1,
            res.documents.leak_rate, *vars(res.entities).values(),
            res.parse.success_rate, *vars(res.tokenization).values()]
    assert flat == [0.0] * len(flat)
    assert set(res.per_type) == set(LABELS)
    assert all(v.f1 == 0.0 for v in res.per_type.values())


def test_negative_document_with_empty_output():
    r = rec("d1", "대표번호 1588-0000")
    res = evaluate([r], [pred("d1", "", True)])
    assert res.entity.f1 == 0.0  # F1 of empty sets is 0 by definition
    assert res.documents.leak_rate == 0.0
    assert res.parse.success_rate == 1.0


def test_hallucination_counts_unmatched_rows_whatever_the_flag():
    r = rec("d1", "고객 김가상", ("PERSON", "김가상"))
    output = "PERSON\t홍길동\nPERSON\t홍길동\nPERSON\t김가상"
    res_true = evaluate([r], [pred("d1", output, True)])
    res_false = evaluate([r], [pred("d1", output, False)])
    assert res_true.entities.hallucination_rate == pytest.approx(2 / 3)
    assert res_false.entities.hallucination_rate == pytest.approx(2 / 3)


def test_predictions_of_a_document_flagged_false_are_not_counted():
    r = rec("d1", "고객 김가상", ("PERSON", "김가상"))
    res = evaluate([r], [pred("d1", "PERSON\t김가상", False)])
    assert (res.entity.tp, res.entity.fp, res.entity.fn) == (0, 0, 1)
    assert res.documents.leak_rate == 1.0  # nothing was masked
    assert res.parse.success_rate == 0.0
    assert res.tokenization.round_trip_rate == 1.0


def test_duplicate_pairs_count_once_per_document_and_twice_across_documents():
    r1 = rec("d1", "김가상 김가상", ("PERSON", "김가상"))
    r2 = rec("d2", "김가상", ("PERSON", "김가상"))
    out = "PERSON\t김가상\nPERSON\t김가상\nperson\t 김가상 "
    res = evaluate([r1, r2], [pred("d1", out, True), pred("d2", out, True)])
    assert (res.entity.tp, res.entity.fp, res.entity.fn) == (2, 0, 0)
    assert res.per_type["PERSON"].tp == 2


def test_a_record_without_prediction_is_an_empty_unparsed_prediction():
    r = rec("d1", "고객 김가상", ("PERSON", "김가상"))
    res = evaluate([r], [])
    assert res.parse.success_rate == 0.0
    assert res.entity.fn == 1 and res.documents.leak_rate == 1.0


def test_entity_leak_rate_counts_pairs_per_document():
    r1 = rec("d1", "김가상 010-0123-4567", ("PERSON", "김가상"), ("PHONE", "010-0123-4567"))
    r2 = rec("d2", "김가상", ("PERSON", "김가상"))
    res = evaluate([r1, r2], [pred("d1", "PHONE\t010-0123-4567", True)])
    assert res.entities.leak_rate == pytest.approx(2 / 3)
    assert res.documents.leak_rate == 1.0


def test_values_and_types_are_normalized():
    r = rec("d1", "김가상", (" person ", "김가상 "))
    nfd = unicodedata.normalize("NFD", "김가상")
    assert nfd != "김가상"
    res = evaluate([r], [pred("d1", f"PERSON\t{nfd}", True)])
    assert res.entity.tp == 1  # NFD output normalized to the NFC gold value


def test_parse_flag_is_the_parsers_rule():
    cases = [("", "x"), ("<think>hmm</think>", "x"), ("PERSON\t김가상", "김가상"),
             ("PERSON\t홍길동", "김가상"), ("I found nothing", "김가상")]
    for output, source in cases:
        assert parse_flag(output, source) == parse_model_output(output, source).parse_success
    assert [parse_flag(o, s) for o, s in cases] == [True, True, True, False, False]


# --- rejections -----------------------------------------------------------------------------

SECRET = "김비밀"
R = rec("d1", f"고객 {SECRET} 님", ("PERSON", SECRET))


@pytest.mark.parametrize(
    ("records", "predictions", "reason"),
    [
        ([R, R], [], "duplicate record id"),
        ([R], [pred("d1", "", True), pred("d1", "", True)], "duplicate prediction id"),
        ([R], [pred("zz", "", True)], "no such record"),
        ([rec("d1", "고객 님", ("PERSON", SECRET))], [], "does not occur"),
        ([rec("d1", f"{SECRET}", ("NAME", SECRET))], [], "type outside LABELS"),
        ([rec("d1", f"{SECRET}", (SECRET, "PERSON"))], [], "type outside LABELS"),
        ([R], [{"id": "d1", "output": None, "parse_success": True}], "'output'"),
        ([R], [{"id": "d1", "output": "", "parse_success": "yes"}], "'parse_success'"),
        ([{"id": "d1", "entities": []}], [], "'source_text'"),
    ],
)
def test_every_rejection_raises_evaluation_error_without_values(records, predictions, reason):
    with pytest.raises(EvaluationError) as info:
        evaluate(records, predictions)
    message = str(info.value)
    assert reason in message
    assert SECRET not in message
    assert isinstance(info.value, ValueError)


def test_rejections_name_the_record_id():
    with pytest.raises(EvaluationError, match="record d7"):
        evaluate([rec("d7", "x", ("EMAIL", "a@example.com"))], [])


# --- the whole corpus -----------------------------------------------------------------------


@pytest.mark.slow
def test_oracle_is_perfect_on_all_records(all_records):
    res = evaluate(all_records, oracle_predictions(all_records))
    assert len(all_records) == 2200
    assert res.entity.f1 == 1.0
    assert res.documents.leak_rate == 0.0 and res.entities.leak_rate == 0.0
    assert res.entities.hallucination_rate == 0.0
    assert res.tokenization.deterministic_rate == 1.0
    assert res.tokenization.round_trip_rate == 1.0
    assert res.parse.success_rate == 1.0


def test_baseline_report_is_consistent_on_the_test_split(corpus):
    from piilab.baseline import baseline_output
    from piilab.predictions import make_prediction

    records = corpus["test"]
    preds = [make_prediction(r["id"], baseline_output(r["source_text"]), r["source_text"])
             for r in records]
    res = evaluate(records, preds)
    e = res.entity
    n_gold = sum(len({(x["type"], x["value"]) for x in r["entities"]}) for r in records)
    assert e.tp + e.fn == n_gold
    for key in ("tp", "fp", "fn"):
        assert sum(getattr(res.per_type[lbl], key) for lbl in LABELS) == getattr(e, key)
    for block in (e, *res.per_type.values()):
        p, r_, f = block.precision, block.recall, block.f1
        assert 0 <= p <= 1 and 0 <= r_ <= 1
        assert f == pytest.approx(2 * p * r_ / (p + r_) if p + r_ else 0.0)
    for rate in (res.documents.leak_rate, *vars(res.entities).values(),
                 res.parse.success_rate):
        assert 0.0 <= rate <= 1.0
    n_docs_with_gold = sum(bool(r["entities"]) for r in records)
    assert res.documents.leak_rate <= n_docs_with_gold / len(records)
    assert res.entities.over_redaction_rate == pytest.approx(e.fp / (e.tp + e.fp))
    assert res.tokenization.round_trip_rate == 1.0
    assert res.tokenization.deterministic_rate == 1.0


# --- stored results read back --------------------------------------------------------------


def _baseline(records):
    from piilab.baseline import baseline_output
    from piilab.predictions import make_prediction

    return [make_prediction(r["id"], baseline_output(r["source_text"]), r["source_text"])
            for r in records]


def test_from_dict_is_the_inverse_of_to_dict_through_json(corpus):
    import json

    from piilab.evaluation import EvaluationResult

    records = corpus["test"][:80]
    result = evaluate(records, _baseline(records))
    back = EvaluationResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert back == result and back.to_dict() == result.to_dict()
    assert list(back.per_type) == list(LABELS)


@pytest.mark.parametrize("path, reason", [
    (("entity", "tp"), "missing field entity.tp"),
    (("per_type", "PHONE"), "missing field per_type.PHONE"),
    (("tokenization",), "missing field tokenization"),
])
def test_from_dict_names_a_missing_field(path, reason):
    from piilab.evaluation import EvaluationResult

    data = evaluate([], []).to_dict()
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    with pytest.raises(EvaluationError, match=reason):
        EvaluationResult.from_dict(data)


def test_from_dict_refuses_a_mistyped_count_without_echoing_it():
    from piilab.evaluation import EvaluationResult

    data = evaluate([], []).to_dict()
    data["entity"]["fp"] = "secret-7"
    with pytest.raises(EvaluationError, match=r"entity\.fp has the wrong type") as info:
        EvaluationResult.from_dict(data)
    assert "secret-7" not in str(info.value)


# --- bootstrap intervals over documents ----------------------------------------------------


def test_doctests_pass():
    import doctest

    from piilab import evaluation

    assert doctest.testmod(evaluation).failed == 0


def test_bootstrap_estimates_are_the_evaluate_result_and_reruns_are_identical(corpus):
    from piilab.evaluation import bootstrap_intervals

    records = corpus["test"][:100]
    preds = _baseline(records)
    result = evaluate(records, preds)
    ci = bootstrap_intervals(records, preds, n=300, seed=0)
    assert ci == bootstrap_intervals(records, preds, n=300, seed=0)
    assert ci != bootstrap_intervals(records, preds, n=300, seed=1)
    assert (ci.documents, ci.resamples, ci.seed) == (100, 300, 0)
    assert ci.precision.estimate == result.entity.precision
    assert ci.recall.estimate == result.entity.recall
    assert ci.f1.estimate == result.entity.f1
    assert ci.documents_leak_rate.estimate == result.documents.leak_rate
    assert ci.entities_leak_rate.estimate == result.entities.leak_rate
    for interval in (ci.precision, ci.recall, ci.f1, ci.documents_leak_rate,
                     ci.entities_leak_rate):
        assert 0.0 <= interval.low <= interval.high <= 1.0 and interval.level == 0.95


def test_bootstrap_is_evaluate_on_resampled_documents(corpus):
    # The counts shortcut must give what scoring each resample from scratch gives.
    import random

    from piilab.evaluation import bootstrap_intervals, score_documents, summarize

    records = corpus["test"][:30]
    preds = _baseline(records)
    scores = score_documents(records, preds)
    rng = random.Random(5)
    f1s, leaks = [], []
    for _ in range(40):
        sample = summarize(rng.choices(scores, k=len(scores)))
        f1s.append(sample.entity.f1)
        leaks.append(sample.entities.leak_rate)
    ci = bootstrap_intervals(records, preds, n=40, seed=5, level=0.5)

    def percentile(values, q):  # numpy's default: linear between neighbours
        values = sorted(values)
        pos = q * (len(values) - 1)
        lo = int(pos)
        return values[lo] + (values[min(lo + 1, len(values) - 1)] - values[lo]) * (pos - lo)

    assert ci.f1.low == pytest.approx(percentile(f1s, 0.25))
    assert ci.f1.high == pytest.approx(percentile(f1s, 0.75))
    assert ci.entities_leak_rate.low == pytest.approx(percentile(leaks, 0.25))
    assert ci.entities_leak_rate.high == pytest.approx(percentile(leaks, 0.75))


def test_identical_documents_give_an_interval_of_zero_width():
    from piilab.evaluation import DocumentCounts, bootstrap_counts

    ci = bootstrap_counts([DocumentCounts(tp=2, fp=1, fn=1, gold=3, leaked=1)] * 20, n=50)
    assert ci.f1.low == ci.f1.estimate == ci.f1.high == pytest.approx(2 / 3)
    assert ci.documents_leak_rate.format() == "1.000 [1.000, 1.000]"


def test_more_documents_give_a_narrower_interval():
    from piilab.evaluation import DocumentCounts, bootstrap_counts

    mixed = [DocumentCounts(1, 0, 0, 1, 0), DocumentCounts(0, 0, 1, 1, 1)]
    small, large = bootstrap_counts(mixed * 10, n=500), bootstrap_counts(mixed * 200, n=500)
    assert small.f1.estimate == large.f1.estimate == 0.6666666666666666
    assert large.f1.high - large.f1.low < (small.f1.high - small.f1.low) / 2


@pytest.mark.parametrize("kwargs, reason", [
    ({"n": 0}, "n must be at least 1"),
    ({"level": 1.0}, "level must lie between 0 and 1"),
])
def test_bootstrap_settings_are_checked(kwargs, reason):
    from piilab.evaluation import DocumentCounts, bootstrap_counts

    with pytest.raises(EvaluationError, match=reason):
        bootstrap_counts([DocumentCounts(1, 0, 0, 1, 0)], **kwargs)
    with pytest.raises(EvaluationError, match="no documents"):
        bootstrap_counts([])
    with pytest.raises(TypeError):
        bootstrap_counts([DocumentCounts(1, 0, 0, 1, 0)], n=10.0)


def test_document_counts_round_trip_and_sum_to_the_result(corpus):
    from piilab.evaluation import DocumentCounts, document_counts

    records = corpus["test"][:50]
    preds = _baseline(records)
    counts = document_counts(records, preds)
    result = evaluate(records, preds)
    assert [DocumentCounts.from_dict(c.to_dict()) for c in counts] == list(counts)
    assert sum(c.tp for c in counts) == result.entity.tp
    assert sum(c.fn for c in counts) == result.entity.fn
    assert sum(c.leaked > 0 for c in counts) / len(counts) == result.documents.leak_rate


# --- paired comparison -----------------------------------------------------------------------


def test_a_system_against_itself_is_inconclusive(corpus):
    from piilab.evaluation import paired_bootstrap

    records = corpus["test"][:60]
    preds = _baseline(records)
    same = paired_bootstrap(records, preds, preds, n=200)
    for diff in (same.f1, same.documents_leak_rate):
        assert (diff.estimate, diff.low, diff.high) == (0.0, 0.0, 0.0)
        assert diff.verdict == "inconclusive"


def test_the_oracle_is_better_than_the_baseline_and_swapping_negates(corpus):
    from piilab.evaluation import paired_bootstrap

    records = corpus["test"][:100]
    oracle, rules = oracle_predictions(records), _baseline(records)
    ahead = paired_bootstrap(records, oracle, rules, n=300, seed=3)
    behind = paired_bootstrap(records, rules, oracle, n=300, seed=3)
    assert ahead.f1.verdict == "better" and ahead.f1.low > 0
    assert ahead.documents_leak_rate.verdict == "better" and ahead.documents_leak_rate.high < 0
    assert behind.f1.verdict == "worse" and behind.documents_leak_rate.verdict == "worse"
    assert behind.f1.low == pytest.approx(-ahead.f1.high)
    assert behind.f1.high == pytest.approx(-ahead.f1.low)
    result_o, result_r = evaluate(records, oracle), evaluate(records, rules)
    assert ahead.f1.estimate == pytest.approx(result_o.entity.f1 - result_r.entity.f1)


def test_a_verdict_needs_an_interval_that_excludes_zero():
    from piilab.evaluation import Difference

    assert Difference(0.2, 0.0, 0.4).verdict == "inconclusive"  # zero is inside
    assert Difference(0.2, 0.01, 0.4).verdict == "better"
    assert Difference(0.2, 0.01, 0.4, higher_is_better=False).verdict == "worse"
    assert Difference(-0.1, -0.2, -0.01, higher_is_better=False).verdict == "better"
    assert Difference(-0.1, -0.2, -0.01).format() == "-0.100 [-0.200, -0.010]"


def test_paired_counts_must_describe_the_same_documents():
    from piilab.evaluation import DocumentCounts, paired_bootstrap_counts

    one = [DocumentCounts(1, 0, 0, 1, 0)]
    with pytest.raises(EvaluationError, match="same documents"):
        paired_bootstrap_counts(one, one * 2)
    with pytest.raises(EvaluationError, match="different gold pairs"):
        paired_bootstrap_counts(one, [DocumentCounts(0, 0, 2, 2, 0)])


def test_intervals_and_comparisons_are_plain_json(corpus):
    import json

    from piilab.evaluation import bootstrap_intervals, paired_bootstrap

    records = corpus["test"][:40]
    oracle, rules = oracle_predictions(records), _baseline(records)
    ci = bootstrap_intervals(records, rules, n=50)
    cmp = paired_bootstrap(records, oracle, rules, n=50)
    data = json.loads(json.dumps({"ci": ci.to_dict(), "cmp": cmp.to_dict()}))
    assert data["ci"]["f1"]["low"] == ci.f1.low and data["ci"]["resamples"] == 50
    assert data["cmp"]["f1"]["verdict"] == cmp.f1.verdict
    assert len(ci.format().splitlines()) == 5 and len(cmp.format().splitlines()) == 2
