"""The checkers of chapter 04 (`piilab.course.exercises.ch04`): right answers pass, typical wrong
answers get a specific message in both languages, and no failure message gives the answer away."""

from __future__ import annotations

import pytest

from piilab.course.exercises import CheckResult
from piilab.course.exercises.ch04 import (
    LEAK_OUTPUT,
    LEAK_RECORD,
    SCORE_FIELDS,
    SCORING_OUTPUTS,
    SCORING_RECORDS,
    check_entity_scores,
    check_leak_offsets,
)
from piilab.evaluation import evaluate, score_document
from piilab.predictions import make_prediction, parse_flag

SOURCE = LEAK_RECORD["source_text"]
PHONE = (SOURCE.index("010-0123-4567"), SOURCE.index("010-0123-4567") + len("010-0123-4567"))
SPACED = (SOURCE.index("김 가 상"), SOURCE.index("김 가 상") + len("김 가 상"))
RIGHT_LEAKS = [PHONE, SPACED]


def _both(check, answer):
    return check(answer, lang="en"), check(answer, lang="ja")


# ---------------------------------------------------------------------------- exercise 1: leaks


def test_the_leak_exercise_has_the_two_leaks_the_chapter_describes():
    score = score_document(LEAK_RECORD, make_prediction("ex04-leak", LEAK_OUTPUT, SOURCE))
    assert sorted(score.leak_spans) == sorted(RIGHT_LEAKS)
    assert "-" in score.mask.masked_text  # the separator between the two phone tokens
    assert "김 가 상" in score.mask.masked_text  # REL gets no spacing variants
    assert "gasang.kim@example.com" not in score.mask.masked_text


@pytest.mark.parametrize("answer", [RIGHT_LEAKS, RIGHT_LEAKS[::-1], [list(p) for p in RIGHT_LEAKS],
                                    tuple(RIGHT_LEAKS)])
def test_the_leaked_occurrences_in_any_order_and_shape_pass(answer):
    for result in _both(check_leak_offsets, answer):
        assert isinstance(result, CheckResult) and result.ok and bool(result)
    assert str(check_leak_offsets(answer, lang="ja")).startswith("✓ 正解です")


@pytest.mark.parametrize(
    ("answer", "en_part", "ja_part"),
    [
        ("(14, 27)", "expected a list of (start, end) pairs", "のリストを渡してください"),
        (None, "expected a list", "のリストを渡してください"),
        ([(14,)], "not a (start, end) pair", "組ではありません"),
        ([(1.0, 3.0)], "not a (start, end) pair", "組ではありません"),
        ([(True, 3)], "not a (start, end) pair", "組ではありません"),
        ([(5, 500)], "not a span of the source", "原文の外を指しています"),
        ([(7, 7)], "not a span of the source", "原文の外を指しています"),
        ([PHONE, PHONE], "listed twice", "2 回出てきます"),
        ([], "2 leaked occurrence(s) still missing", "あと 2 つ"),
        ([PHONE], "1 leaked occurrence(s) still missing", "あと 1 つ"),
        ([SPACED], "1 leaked occurrence(s) still missing", "あと 1 つ"),
    ],
)
def test_wrong_leak_answers_say_what_is_wrong(answer, en_part, ja_part):
    en, ja = _both(check_leak_offsets, answer)
    assert not en.ok and not ja.ok
    assert en_part in en.message
    assert ja_part in ja.message


def test_a_fully_masked_occurrence_is_not_a_leak():
    name = (SOURCE.index("김가상"), SOURCE.index("김가상") + 3)  # masked as [REL_1]
    email = (SOURCE.index("gasang"), SOURCE.index("gasang") + len("gasang.kim@example.com"))
    for pair in (name, email):
        en, ja = _both(check_leak_offsets, [*RIGHT_LEAKS, pair])
        assert "every character there is masked" in en.message
        assert "マスクされている" in ja.message


def test_only_the_exposed_characters_are_not_enough():
    hyphen = (PHONE[0] + 3, PHONE[0] + 4)  # the one character the masking left
    en, ja = _both(check_leak_offsets, [hyphen, SPACED])
    assert "bounds are off" in en.message and "範囲がずれています" in ja.message


def test_text_that_is_no_gold_value_is_named():
    en, ja = _both(check_leak_offsets, [(0, 2), *RIGHT_LEAKS])
    assert "not an occurrence of a gold value" in en.message
    assert "出現箇所ではありません" in ja.message


@pytest.mark.parametrize("answer", [[], [PHONE], [(0, 2)], [(PHONE[0] + 3, PHONE[0] + 4)]])
def test_leak_failure_messages_never_give_the_answer(answer):
    for result in _both(check_leak_offsets, answer):
        for start, end in RIGHT_LEAKS:
            if (start, end) not in answer:
                assert f"({start}, {end})" not in result.message
                assert SOURCE[start:end] not in result.message


def test_the_language_follows_the_page_by_default(monkeypatch):
    monkeypatch.setenv("PIILAB_LANG", "ja")
    assert "正解です" in check_leak_offsets(RIGHT_LEAKS).message
    monkeypatch.setenv("PIILAB_LANG", "en")
    assert check_leak_offsets(RIGHT_LEAKS).message.startswith("correct")


# ---------------------------------------------------------------------------- exercise 2: scores


def _expected():
    predictions = [make_prediction(r["id"], SCORING_OUTPUTS[r["id"]], r["source_text"])
                   for r in SCORING_RECORDS]
    scores = evaluate(SCORING_RECORDS, predictions).entity
    return {key: getattr(scores, key) for key in SCORE_FIELDS}


RIGHT = {"tp": 6, "fp": 3, "fn": 2, "precision": 0.67, "recall": 0.75, "f1": 0.71}


def test_the_scoring_exercise_has_the_counts_the_chapter_teaches():
    expected = _expected()
    assert (expected["tp"], expected["fp"], expected["fn"]) == (6, 3, 2)
    # Every trap of the exercise is there: a duplicate, a lowercase type, a partial value,
    # a numeric variant and a hallucinated row, and every output parses.
    assert all(parse_flag(SCORING_OUTPUTS[r["id"]], r["source_text"]) for r in SCORING_RECORDS)


@pytest.mark.parametrize(
    "answer",
    [RIGHT, {**RIGHT, "precision": 2 / 3, "recall": 0.75, "f1": 12 / 17},
     {**RIGHT, "precision": 0.667, "f1": 0.706}],
)
def test_right_scores_pass_rounded_or_exact(answer):
    for result in _both(check_entity_scores, answer):
        assert result.ok
    assert "tp 6" in check_entity_scores(answer, lang="en").message


@pytest.mark.parametrize(
    ("change", "en_part", "ja_part"),
    [
        ({"tp": 7}, "tp is too high", "tp が多すぎます"),
        ({"tp": 5}, "tp is too low", "tp が少なすぎます"),
        ({"fp": 2}, "fp is too low", "fp が少なすぎます"),  # forgot the hallucinated row
        ({"fp": 4}, "fp is too high", "fp が多すぎます"),  # counted the duplicate twice
        ({"fn": 1}, "fn is too low", "fn が少なすぎます"),
        ({"precision": 0.75}, "the counts are right, but precision", "precision が違います"),
        ({"recall": 0.67}, "but recall is not", "recall が違います"),
        ({"f1": 0.5}, "but f1 is not", "f1 が違います"),
    ],
)
def test_wrong_scores_name_the_first_wrong_field(change, en_part, ja_part):
    en, ja = _both(check_entity_scores, {**RIGHT, **change})
    assert not en.ok and not ja.ok
    assert en_part in en.message and ja_part in ja.message


@pytest.mark.parametrize(
    ("answer", "en_part"),
    [
        ([6, 3, 2], "expected a dict"),
        ({"tp": 6}, "missing key(s): fp, fn, precision, recall, f1"),
        ({**RIGHT, "tp": 6.0}, "tp is a count"),
        ({**RIGHT, "fn": -2}, "fn is a count"),
        ({**RIGHT, "recall": 75}, "recall is a rate"),
        ({**RIGHT, "f1": "0.71"}, "f1 is a rate"),
    ],
)
def test_badly_shaped_scores_explain_the_expected_shape(answer, en_part):
    en, ja = _both(check_entity_scores, answer)
    assert not en.ok and not ja.ok
    assert en_part in en.message
    assert ja.message != en.message


def test_score_failure_messages_never_give_the_answer():
    expected = _expected()
    for field in SCORE_FIELDS[:3]:
        wrong = {**RIGHT, field: RIGHT[field] + 1}
        for result in _both(check_entity_scores, wrong):
            assert f"{field} {expected[field]}" not in result.message
            assert str(expected[field]) not in result.message.replace(str(RIGHT[field] + 1), "")
    for field in SCORE_FIELDS[3:]:
        for result in _both(check_entity_scores, {**RIGHT, field: 0.0}):
            assert f"{expected[field]:.2f}" not in result.message
