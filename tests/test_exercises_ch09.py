"""Chapter 09's checkers: BIOES classes over o200k tokens, and the values `verify` would reject
(`piilab.course.exercises.ch09`)."""

from __future__ import annotations

import pytest

pytest.importorskip("bpe_openai", reason="needs the finance extra: pip install -e '.[finance]'")

from piilab import safety
from piilab.bioes import bioes_to_spans, spans_to_bioes
from piilab.checksums import luhn_valid
from piilab.course.exercises import ch09
from piilab.course.exercises.ch09 import (
    SUSPECTS,
    TAG_SPANS,
    TAG_TEXT,
    check_finance_tags,
    check_verify_rejects,
    tag_tokens,
)

OFFSETS = [offsets for _, offsets in tag_tokens()]
RIGHT = spans_to_bioes(OFFSETS, TAG_SPANS)


def _both(check, answer):
    return check(answer, lang="en"), check(answer, lang="ja")


# ---------------------------------------------------------------------------- exercise 1


def test_the_exercise_row_is_aligned_and_uses_every_prefix_and_lone_spaces():
    assert [tuple(s) for s in bioes_to_spans(OFFSETS, RIGHT)] == sorted(TAG_SPANS)
    assert {tag[0] for tag in RIGHT} == {"O", "B", "I", "E", "S"}
    assert [TAG_TEXT[s:e] for s, e, _ in TAG_SPANS] == ["4929 1234 5678 9010", "381", "Ann Lee"]
    assert not luhn_valid(TAG_TEXT[5:24])  # the card number is invalid by construction
    spaces = [i for i, (start, end) in enumerate(OFFSETS) if TAG_TEXT[start:end].isspace()]
    assert {RIGHT[i] for i in spaces} == {"O", "I-CARD_NUMBER"}  # both kinds of lone space


def test_the_right_tags_pass_in_both_languages():
    en, ja = _both(check_finance_tags, list(RIGHT))
    assert en and ja
    assert str(en).startswith("✓ correct") and str(ja).startswith("✓ 正解です")
    assert check_finance_tags(tuple(RIGHT))


def _with(index, tag):
    answer = list(RIGHT)
    answer[index] = tag
    return answer


def _space(tag):
    return next(i for i, (s, e) in enumerate(OFFSETS)
                if TAG_TEXT[s:e].isspace() and RIGHT[i] == tag)


@pytest.mark.parametrize(
    ("answer", "en_part", "ja_part"),
    [
        ("O O O", "expected a list of tags", "のリストを渡してください"),
        ([1, 2], "must be a string", "文字列"),
        (["O"] * 3, "3 tags for 23 o200k tokens", "タグが 3 個"),
        (_with(0, "B-NAME"), "'B-NAME' is not one of the 73 classes", "73 クラスのどれでも"),
        (_with(0, "B-PHONE"), "token 0 ('Card') is not inside any span", "どのスパンにも"),
        (_with(_space("O"), "B-CARD_NUMBER"), "lone space just before a value", "直前にある空白"),
        (_with(_space("I-CARD_NUMBER"), "O"), "between two pieces of one value", "断片の間"),
        (_with(RIGHT.index("S-CVC"), "O"), "('381') lies inside a span", "タグが必要"),
        (_with(RIGHT.index("S-CVC"), "S-CARD_EXPIRY"), "wrong label", "ラベルが違います"),
        (_with(RIGHT.index("S-CVC"), "B-CVC"), "wrong prefix", "接頭辞が違います"),
        (_with(RIGHT.index("E-PERSON"), "I-PERSON"), "wrong prefix", "接頭辞が違います"),
    ],
)
def test_wrong_tags_say_what_is_wrong(answer, en_part, ja_part):
    en, ja = _both(check_finance_tags, answer)
    assert not en and not ja
    assert en_part in en.message
    assert ja_part in ja.message


def test_tag_messages_count_the_mistakes_without_the_solution():
    en, ja = _both(check_finance_tags, ["O"] * len(RIGHT))
    wrong = sum(tag != "O" for tag in RIGHT)
    assert f"({wrong} wrong tag(s) in all)" in en.message
    assert f"誤りは全部で {wrong} 個" in ja.message
    for message in (en.message, ja.message):
        assert not any(tag in message for tag in set(RIGHT) - {"O"})


# ---------------------------------------------------------------------------- exercise 2


def _rejected_by_verify(label, value):
    """What `piilab finance verify` itself says (the rule functions of `piilab.safety`, which
    it uses)."""
    if label == "RRN":
        return not safety.registration_ok(value, "RRN")
    if label == "CARD_NUMBER":
        return not safety.card_ok(value)
    if label == "PHONE":
        return not safety.phone_ok(value)
    return not safety.passport_ok(value)


REJECTED = [value for label, value in SUSPECTS if _rejected_by_verify(label, value)]


def test_the_checker_rules_agree_with_verify_and_the_answer_is_half_the_suspects():
    for label, value in SUSPECTS:
        assert ch09._fails_its_rule(label, value) is not _rejected_by_verify(label, value), value
    assert len(REJECTED) == len(SUSPECTS) // 2
    assert {label for label, value in SUSPECTS if value in REJECTED} == {
        "CARD_NUMBER", "RRN", "PHONE", "PASSPORT"}


def test_the_right_values_pass_in_any_order():
    en, ja = _both(check_verify_rejects, list(reversed(REJECTED)))
    assert en and ja
    assert str(en).startswith("✓ correct") and str(ja).startswith("✓ 正解です")


@pytest.mark.parametrize(
    ("answer", "en_part", "ja_part"),
    [
        ("4929 1234 5678 9010", "expected a list of values", "のリストを渡してください"),
        (["4929123456789010"], "not one of the SUSPECTS values", "表示されたとおり"),
        ([REJECTED[0], REJECTED[0]], "more than once", "2 回以上"),
        (["4929 1234 5678 9010"], "invalid by the rule of its label CARD_NUMBER", "外してください"),
        (["(212) 555-0147"], "invalid by the rule of its label PHONE", "ラベル PHONE"),
        ([*REJECTED, "X48213907"], "its label PASSPORT", "ラベル PASSPORT"),
        (REJECTED[:1], "3 value(s) that verify would reject are still missing", "まだ 3 個"),
        ([], "4 value(s)", "まだ 4 個"),
    ],
)
def test_wrong_values_say_what_is_wrong(answer, en_part, ja_part):
    en, ja = _both(check_verify_rejects, answer)
    assert not en and not ja
    assert en_part in en.message
    assert ja_part in ja.message


def test_value_messages_never_name_a_value_the_learner_left_out():
    en, ja = _both(check_verify_rejects, REJECTED[:1])
    for message in (en.message, ja.message):
        assert not any(value in message for value in REJECTED[1:])
