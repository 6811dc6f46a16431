"""The exercise checkers of chapter 03 (`piilab.course.exercises.ch03`): right answers pass, typical
mistakes get a message that names the rule, and no message gives the answer away."""

from __future__ import annotations

import re

import pytest

from piilab.course.exercises.ch03 import (
    MASK_CANDIDATES,
    MASK_SOURCE,
    MATCH_CASES,
    check_masked_text,
    check_match_answers,
    check_restore_function,
    restore_cases,
)
from piilab.tokenization import mask_text, reassemble_text

#: The answers of the matching exercise as docs/contract.md (section 4) states them (written
#: out by hand, so that a change in `piilab.matching` that breaks the spec shows up here).
SPEC_MATCHES = {
    "spaced-name": True,  # one space between every character: a PERSON variant
    "mixed-joiners": False,  # a space and a tab: joiners must be uniform
    "long-name": False,  # 9 characters: no PERSON variants
    "phone-spaces": True,  # same digits, one separator between groups
    "four-separators": False,  # " -- " is 4 characters between two digits
    "inside-a-number": False,  # digits on both sides
    "phone-group": True,  # the middle group of a phone number
    "alias": False,  # a letter: no numeric variants, and no literal occurrence
    "fullwidth": False,  # fullwidth digits are not digits
}

#: The masked text of the prediction exercise, written out by hand from docs/contract.md, section 5.
SPEC_MASKED = (
    "[PHONE_1] is the old number. Call [PERSON_1] on [PHONE_2] or [ACCOUNT_1], not 1555-0142. "
    "[PERSON_2] replied from [EMAIL_1]."
)


# ---------------------------------------------------------------------------- match or not


def test_match_cases_follow_the_spec():
    assert [case.id for case in MATCH_CASES] == list(SPEC_MATCHES)
    assert check_match_answers(SPEC_MATCHES, lang="en").ok


def test_match_answers_pass_in_both_languages():
    result = check_match_answers(SPEC_MATCHES, lang="ja")
    assert result.ok and "正解" in result.message


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (["spaced-name"], "expected a dict"),
        ({**SPEC_MATCHES, "typo": True}, "'typo' is not a case id"),
        ({"spaced-name": True}, "8 case(s) have no answer yet"),
        ({**SPEC_MATCHES, "alias": "no"}, "answer True or False"),
        ({**SPEC_MATCHES, "alias": 0}, "answer True or False"),
    ],
)
def test_match_answers_report_the_shape_first(answer, hint):
    result = check_match_answers(answer, lang="en")
    assert not result.ok
    assert hint in result.message


def test_match_answers_count_mistakes_and_name_rules_not_cases():
    answer = {**SPEC_MATCHES, "inside-a-number": True, "fullwidth": True}
    message = check_match_answers(answer, lang="en").message
    assert "2 of 9 answers are wrong" in message
    assert "numeric boundaries" in message and "what counts as a digit" in message
    assert "inside-a-number" not in message and "fullwidth" not in message


def test_all_true_names_every_rule_once():
    message = check_match_answers({case.id: True for case in MATCH_CASES}, lang="ja").message
    assert "9 問中 6 問が違います" in message
    assert message.count("PERSON の変形") == 1


# ---------------------------------------------------------------------------- predict the mask


def test_prediction_exercise_follows_the_spec():
    assert mask_text(MASK_SOURCE, MASK_CANDIDATES).masked_text == SPEC_MASKED
    assert check_masked_text(SPEC_MASKED, lang="en").ok


def test_prediction_accepts_an_nfd_spelling_of_the_right_answer():
    import unicodedata

    assert check_masked_text(unicodedata.normalize("NFD", SPEC_MASKED), lang="en").ok


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (42, "expected the masked text as a string"),
        ("  ", "your answer is empty"),
        (SPEC_MASKED + "\n", "extra whitespace"),
        (MASK_SOURCE, "Call ' the masker puts a token"),  # nothing masked
        ("Call", "at the very start the masker puts a token"),
        (SPEC_MASKED.replace("[ACCOUNT_1]", "555 0142"), "the masker puts a token"),
        (SPEC_MASKED.replace("[PERSON_2]", "이 가 상"), "the masker puts a token"),
        (SPEC_MASKED.replace("1555-0142", "1[PHONE_2]"), "the masker leaves the source text"),
        (SPEC_MASKED.replace("[ACCOUNT_1]", "[PHONE_3]"), "wrong type"),
        (SPEC_MASKED.replace("[PHONE_1] is", "[PHONE_9] is"), "already holds a token-like"),
        (SPEC_MASKED.replace("[PHONE_2] or", "[PHONE_1] or"), "already occurs in the source"),
        (SPEC_MASKED.replace("[PERSON_2]", "[PERSON_1]"), "right type but the wrong number"),
        (SPEC_MASKED.replace("number.", "number"), "differs from the source text"),
        (SPEC_MASKED[:-1], "stops too early"),
        (SPEC_MASKED + " Bye.", "too long"),
    ],
)
def test_prediction_points_at_the_first_mistake(answer, hint):
    result = check_masked_text(answer, lang="en")
    assert not result.ok
    assert hint in result.message


def test_prediction_messages_never_quote_a_token_still_to_be_found():
    # The learner left "555 0142" visible: the message may quote the text before it, which the
    # learner already has right, but not the token that belongs there.
    message = check_masked_text(SPEC_MASKED.replace("[ACCOUNT_1]", "555 0142"), lang="en").message
    assert "ACCOUNT" not in message


def test_prediction_speaks_japanese():
    result = check_masked_text(SPEC_MASKED.replace("[PERSON_2]", "[PERSON_1]"), lang="ja")
    assert "番号が違います" in result.message


def test_prediction_checker_works_for_other_documents():
    source = "김가상 / 김 가 상 / [PERSON_1]"
    assert check_masked_text("[PERSON_2] / [PERSON_3] / [PERSON_1]", source,
                             [("PERSON", "김가상")], lang="en").ok
    result = check_masked_text("[PERSON_1] / [PERSON_2] / [PERSON_1]", source,
                               [("PERSON", "김가상")], lang="en")
    assert "already occurs in the source" in result.message


# ---------------------------------------------------------------------------- restore


def test_reassemble_text_passes_the_restore_checker():
    result = check_restore_function(reassemble_text, lang="en")
    assert result.ok
    assert f"all {len(restore_cases())} cases pass" in result.message


def test_restore_cases_agree_with_reassemble_text():
    for case in restore_cases():
        assert reassemble_text(case.masked, case.mapping) == case.expected, case.id


def _naive_replace(text, mapping):
    for token, value in mapping.items():
        text = text.replace(token, value)
    return text


def _strict_lookup(text, mapping):
    return re.sub(r"\[[A-Z]+_[0-9]+\]", lambda m: mapping[m.group()], text)


def _expanding(text, mapping):
    """One pass, but `Match.expand` reads the value as a template (backslashes included)."""
    pattern = "|".join(map(re.escape, mapping))
    if not pattern:
        return text
    return re.sub(pattern, lambda m: m.expand(mapping[m.group()]), text)


def _unescaped_regex(text, mapping):
    for token, value in mapping.items():
        text = re.sub(token, lambda _m, v=value: v, text)  # "[PERSON_1]" is a character class
    return text


def _mutating(text, mapping):
    restored = reassemble_text(text, mapping)
    mapping.clear()
    return restored


@pytest.mark.parametrize(
    ("restore", "hint"),
    [
        (_naive_replace, "case 5 (one-pass)"),
        (_strict_lookup, "case 1 (worked-example)"),
        (_expanding, "case 6 (backslash)"),
        (_unescaped_regex, "case 1 (worked-example)"),
        (_mutating, "changed the mapping"),
        (lambda text, mapping: None, "returned NoneType, not a string"),
        (lambda text, mapping: text, "case 1 (worked-example)"),
        ("reassemble_text", "expected a function"),
    ],
)
def test_restore_checker_names_the_first_failing_case(restore, hint):
    result = check_restore_function(restore, lang="en")
    assert not result.ok
    assert hint in result.message


def test_restore_checker_reports_an_exception_instead_of_raising():
    result = check_restore_function(_strict_lookup, lang="ja")
    assert not result.ok
    assert "KeyError" in result.message and "ケース 1" in result.message


def test_a_wrong_restore_names_the_right_result_in_japanese():
    result = check_restore_function(lambda text, mapping: text, lang="ja")
    assert not result.ok
    assert "正しい結果は" in result.message and "期待される" not in result.message
