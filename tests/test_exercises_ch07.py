"""The checkers of chapter 07 (`piilab.course.exercises.ch07`): right answers pass, typical wrong
answers get a specific message in both languages, and no failure message gives the answer away."""

from __future__ import annotations

import copy

import pytest

from piilab.checksums import luhn_valid
from piilab.course.exercises import CheckResult
from piilab.course.exercises.ch07 import (
    MASK_OUTPUT,
    MASK_SOURCE,
    PREDICTION_OUTPUTS,
    PREDICTION_RECORDS,
    check_masked_rows,
    check_prediction_lines,
)
from piilab.parsing import parse_model_output
from piilab.predictions import make_prediction
from piilab.tokenization import mask_text

RIGHT_ROWS = [
    ("PERSON", "박민서"),
    ("REL", "남편"),
    ("CARD", "5276 1382 4366 6392"),
    ("PHONE", "010-0456-7788"),
]
RIGHT_LINES = [make_prediction(r["id"], PREDICTION_OUTPUTS[r["id"]], r["source_text"])
               for r in PREDICTION_RECORDS]


def _both(check, answer):
    return check(answer, lang="en"), check(answer, lang="ja")


# ---------------------------------------------------------------------------- exercise 1: rows


def test_the_output_has_the_traps_the_chapter_describes():
    parsed = parse_model_output(MASK_OUTPUT, MASK_SOURCE)
    assert [tuple(c) for c in parsed.candidates] == RIGHT_ROWS
    assert [tuple(c) for c in parsed.unmatched] == [
        ("EMAIL", "minseo.park@example.com"), ("ADDRESS", "서울특별시 중구 세종대로 110")]
    assert "EMAIL\tminseo.park@example.org" in MASK_OUTPUT.split("</think>")[0]
    masked = mask_text(MASK_SOURCE, parsed.candidates).masked_text
    assert "minseo.park@example.org" in masked  # the e-mail address leaks
    assert "박 민 서" not in masked and "5276" not in masked  # variants are masked
    assert not luhn_valid("5276138243666392")  # invalid by construction, like the corpus


@pytest.mark.parametrize("answer", [RIGHT_ROWS, RIGHT_ROWS[::-1], [list(p) for p in RIGHT_ROWS],
                                    tuple(RIGHT_ROWS)])
def test_the_candidates_in_any_order_and_shape_pass(answer):
    for result in _both(check_masked_rows, answer):
        assert isinstance(result, CheckResult) and result.ok
    assert "4 candidates" in check_masked_rows(answer, lang="en").message
    assert str(check_masked_rows(answer, lang="ja")).startswith("✓ 正解です")


@pytest.mark.parametrize(
    ("answer", "en_part", "ja_part"),
    [
        ("PERSON\t박민서", "expected a list of (TYPE, VALUE) pairs", "のリストを渡してください"),
        ({"PERSON": "박민서"}, "expected a list", "のリストを渡してください"),
        ([("PERSON",)], "not a (TYPE, VALUE) pair", "組ではありません"),
        ([("PERSON", 1)], "not a (TYPE, VALUE) pair", "組ではありません"),
        ([*RIGHT_ROWS, ("PHONE", "010-0456-7788")], "listed twice", "2 回出てきます"),
        ([("person", "박민서"), *RIGHT_ROWS[1:]], "'PERSON'", "'PERSON'"),
        ([*RIGHT_ROWS, ("NAME", "박민서")], "not one of the labels", "ラベルではない"),
        ([*RIGHT_ROWS, ("EMAIL", "minseo.park@example.org")], "inside the think block",
         "思考ブロック"),
        ([*RIGHT_ROWS, ("EMAIL", "minseo.park@example.com")], "hallucinated row",
         "ハルシネーション"),
        ([*RIGHT_ROWS, ("ADDRESS", "서울특별시 중구 세종대로 110")], "hallucinated row",
         "ハルシネーション"),
        ([("CARD", "5276-1382-4366-6392") if p[0] == "CARD" else p for p in RIGHT_ROWS],
         "keeps the spelling of the model's row", "綴りのまま"),
        ([*RIGHT_ROWS, ("PERSON", "박 민 서")], "not a row of the output",
         "出力の行ではありません"),
        ([], "4 candidate(s) missing", "あと 4 つ"),
        (RIGHT_ROWS[:3], "1 candidate(s) missing", "あと 1 つ"),
    ],
)
def test_wrong_row_answers_say_what_is_wrong(answer, en_part, ja_part):
    en, ja = _both(check_masked_rows, answer)
    assert not en.ok and not ja.ok
    assert en_part in en.message
    assert ja_part in ja.message


def test_row_failure_messages_do_not_list_the_missing_candidates():
    en, ja = _both(check_masked_rows, RIGHT_ROWS[:2])
    for message in (en.message, ja.message):
        assert "5276" not in message and "010-0456" not in message


# ---------------------------------------------------------------------------- exercise 2: lines


def test_the_two_outputs_parse_differently():
    assert [line["parse_success"] for line in RIGHT_LINES] == [True, False]
    assert "</think>" not in PREDICTION_OUTPUTS["ex07-b"]  # ran out of tokens while thinking


@pytest.mark.parametrize("answer", [RIGHT_LINES, tuple(RIGHT_LINES),
                                    [dict(reversed(list(line.items()))) for line in RIGHT_LINES]])
def test_the_lines_make_prediction_writes_pass(answer):
    for result in _both(check_prediction_lines, answer):
        assert result.ok
    assert "make_prediction" in check_prediction_lines(answer, lang="en").message


def _changed(index, **changes):
    lines = copy.deepcopy(RIGHT_LINES)
    lines[index].update(changes)
    return lines


def _without(index, key):
    lines = copy.deepcopy(RIGHT_LINES)
    del lines[index][key]
    return lines


@pytest.mark.parametrize(
    ("answer", "en_part", "ja_part"),
    [
        (RIGHT_LINES[0], "expected a list of 2 dicts", "のリストを渡してください"),
        ("lines", "expected a list of 2 dicts", "のリストを渡してください"),
        (RIGHT_LINES[:1], "exactly 2 dicts", "ちょうど 2 つ"),
        ([RIGHT_LINES[0], "x"], "exactly 2 dicts", "ちょうど 2 つ"),
        (_without(0, "parse_success"), "line 1: a prediction line has exactly the keys",
         "足りないキー: parse_success"),
        (_changed(1, source_text="..."), "not expected source_text", "不要なキー: source_text"),
        (RIGHT_LINES[::-1], "line 1: id must be the record's id", "1 行目: id"),
        (_changed(0, output="PERSON\tMina Cho\nPHONE\t555-0199"), "think block included",
         "思考ブロックも含めます"),
        (_changed(0, output="PERSON\tMina Cho"), "raw output, unchanged: the evaluator parses",
         "ハルシネーションの行もそこから数えます"),
        (_changed(1, parse_success="False"), "line 2: parse_success is True or False",
         "2 行目: parse_success は True か False"),
        (_changed(0, parse_success=False), "line 1: parse_success is wrong",
         "1 行目: parse_success が違います"),
        (_changed(1, parse_success=True), "line 2: parse_success is wrong",
         "2 行目: parse_success が違います"),
    ],
)
def test_wrong_lines_say_what_is_wrong(answer, en_part, ja_part):
    en, ja = _both(check_prediction_lines, answer)
    assert not en.ok and not ja.ok
    assert en_part in en.message
    assert ja_part in ja.message


def test_flag_messages_state_the_rule_not_the_answer():
    for index in (0, 1):
        wrong = _changed(index, parse_success=not RIGHT_LINES[index]["parse_success"])
        message = check_prediction_lines(wrong, lang="en").message
        assert "True" not in message.split("is wrong", 1)[1]
        assert "False" not in message.split("is wrong", 1)[1]


# ---------------------------------------------------------------------------- exercise 4: no leaks

from piilab.course.exercises.ch07 import check_mask_everything  # noqa: E402

TRADE_OFF_RECORDS = [
    {"id": "t-1", "source_text": "고객 김가상 님\n연락처 010-0123-4567",
     "entities": [{"type": "PERSON", "value": "김가상"},
                  {"type": "PHONE", "value": "010-0123-4567"}]},
    {"id": "t-2", "source_text": "Dear Mina Cho, thank you.",
     "entities": [{"type": "PERSON", "value": "Mina Cho"}]},
]


def _on_records(answer, *, lang):
    return check_mask_everything(answer, TRADE_OFF_RECORDS, lang=lang)


def _every_line(text):
    return "\n".join(f"PERSON\t{line}" for line in text.split("\n") if line.strip())


def _every_word(text):
    return "\n".join(f"PERSON\t{word}" for word in text.split())


def test_masking_every_line_leaks_nothing_and_the_verdict_states_the_cost():
    assert all(result.ok for result in _both(_on_records, _every_line))
    en = check_mask_everything(_every_line, TRADE_OFF_RECORDS, lang="en")
    assert "over-redaction 1.000" in str(en) and "F1 0.000" in str(en)


def test_masking_word_by_word_leaks_the_space_inside_a_name():
    en, ja = _both(_on_records, _every_word)
    assert not en.ok and not ja.ok
    assert "1 of 2 documents still leak" in str(en)
    assert "Mina" not in str(en) and "Mina" not in str(ja)  # no value is quoted


def test_a_model_that_finds_the_gold_values_passes_without_over_redaction():
    def exact(text):
        record = next(r for r in TRADE_OFF_RECORDS if r["source_text"] == text)
        return "\n".join(f"{e['type']}\t{e['value']}" for e in record["entities"])

    result = check_mask_everything(exact, TRADE_OFF_RECORDS, lang="en")
    assert result.ok and "over-redaction 0.000" in str(result) and "F1 1.000" in str(result)


@pytest.mark.parametrize(("answer", "hint"), [
    ("PERSON\tMina Cho", "pass your function itself"),
    (lambda text: None, "record t-1: the function must return"),
    (lambda text: "", "2 of 2 documents still leak"),
])
def test_wrong_answers_to_the_trade_off_get_a_specific_message(answer, hint):
    en, ja = _both(_on_records, answer)
    assert not en.ok and not ja.ok
    assert hint in str(en)
