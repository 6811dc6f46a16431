"""The exercise checkers of chapter 02 (`piilab.course.exercises.ch02`).

A checker accepts the right answer, rejects typical wrong ones with a message that says what
is wrong (in English and in Japanese) without giving the solution away, and computes what is
right from `piilab.checksums`, the reference the chapter teaches.
"""

from __future__ import annotations

import pytest

from piilab.checksums import luhn_valid, rrn_valid
from piilab.course.exercises import CheckResult
from piilab.course.exercises.ch02 import (
    LUHN_CASES,
    PUBLISHED_TEST_CARDS,
    SUSPECTS,
    check_could_be_real,
    check_luhn,
)


def learners_luhn(number: str) -> bool:
    """A correct Luhn check written the way the chapter's solution writes it."""
    digits = [int(ch) for ch in number if ch.isdigit()]
    total = 0
    for position, digit in enumerate(reversed(digits)):
        if position % 2 == 1:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return len(digits) >= 2 and total % 10 == 0


def luhn_from_the_left(number: str) -> bool:
    digits = [int(ch) for ch in number if ch.isdigit()]
    total = sum((d * 2 - 9 if d * 2 > 9 else d * 2) if i % 2 == 0 else d
                for i, d in enumerate(digits))
    return total % 10 == 0


def luhn_without_subtracting_nine(number: str) -> bool:
    digits = [int(ch) for ch in number if ch.isdigit()][::-1]
    return sum(d * 2 if i % 2 == 1 else d for i, d in enumerate(digits)) % 10 == 0


def luhn_doubling_the_check_digit(number: str) -> bool:
    digits = [int(ch) for ch in number if ch.isdigit()][::-1]
    total = sum((d * 2 - 9 if d * 2 > 9 else d * 2) if i % 2 == 0 else d
                for i, d in enumerate(digits))
    return total % 10 == 0


def passing_suspects() -> list[str]:
    checks = {"CARD": luhn_valid, "RRN": rrn_valid}
    return [value for label, value in SUSPECTS if checks[label](value)]


# ---------------------------------------------------------------------------- the cases


def test_luhn_cases_are_in_the_documented_domain_and_mixed():
    assert len(LUHN_CASES) == len(set(LUHN_CASES)) >= 150
    for case in LUHN_CASES:
        assert set(case) <= set("0123456789 -")
        assert sum(ch.isdigit() for ch in case) >= 2
    passing = sum(map(luhn_valid, LUHN_CASES))
    assert 0.35 < passing / len(LUHN_CASES) < 0.65, "about half should pass"
    lengths = {sum(ch.isdigit() for ch in case) for case in LUHN_CASES}
    assert set(range(2, 20)) <= lengths, "odd and even lengths both matter"
    assert any(" " in case for case in LUHN_CASES) and any("-" in case for case in LUHN_CASES)


def test_published_test_cards_pass_the_luhn_check():
    assert all(luhn_valid(card) for card in PUBLISHED_TEST_CARDS)


def test_the_cases_are_the_same_on_every_import():
    import importlib

    from piilab.course.exercises import ch02

    before = (ch02.LUHN_CASES, ch02.SUSPECTS)
    importlib.reload(ch02)
    assert before == (ch02.LUHN_CASES, ch02.SUSPECTS)


# ---------------------------------------------------------------------------- check_luhn


@pytest.mark.parametrize("function", [luhn_valid, learners_luhn])
def test_a_correct_luhn_check_passes(function):
    result = check_luhn(function, lang="en")
    assert result.ok and bool(result)
    assert f"all {len(LUHN_CASES)} numbers" in result.message


@pytest.mark.parametrize(
    ("function", "expected"),
    [
        (luhn_from_the_left, "count positions from the left"),
        (luhn_without_subtracting_nine, "subtract 9"),
        (luhn_doubling_the_check_digit, "you double the check digit too"),
        (lambda n: n.isdigit() and learners_luhn(n), "spaces and hyphens are separators"),
        (lambda n: False, "returns False for every number"),
        (lambda n: True, "returns True for every number"),
    ],
)
def test_typical_luhn_mistakes_are_named(function, expected):
    result = check_luhn(function, lang="en")
    assert not result.ok
    assert expected in result.message


def test_every_diagnosed_mistake_really_is_wrong_somewhere():
    for function in (luhn_from_the_left, luhn_without_subtracting_nine,
                     luhn_doubling_the_check_digit):
        assert any(function(case) != luhn_valid(case) for case in LUHN_CASES)


def test_an_unrecognised_mistake_gets_a_counterexample():
    def tripling(number: str) -> bool:
        digits = [int(ch) for ch in number if ch.isdigit()][::-1]
        return sum(d * 3 if i % 2 == 1 else d for i, d in enumerate(digits)) % 10 == 0

    result = check_luhn(tripling, lang="en")
    assert not result.ok
    assert "wrong on" in result.message and "for example" in result.message


def test_an_exception_names_the_input_and_hints_at_separators():
    result = check_luhn(lambda n: sum(int(ch) for ch in n) % 10 == 0, lang="en")
    assert not result.ok
    assert "raised ValueError" in result.message
    assert "separators" in result.message


def test_a_result_that_is_not_a_bool_is_rejected():
    result = check_luhn(lambda n: 1 if luhn_valid(n) else 0, lang="en")
    assert not result.ok
    assert "return True or False" in result.message


def test_passing_the_result_of_a_call_instead_of_the_function_is_explained():
    result = check_luhn(True, lang="en")
    assert not result.ok
    assert "without calling it" in result.message


def test_luhn_messages_come_in_japanese():
    assert "正解です" in check_luhn(learners_luhn, lang="ja").message
    assert "右端から数えて" in check_luhn(luhn_from_the_left, lang="ja").message


def test_the_language_follows_the_page(monkeypatch):
    monkeypatch.setenv("PIILAB_LANG", "ja")
    assert "正解です" in check_luhn(learners_luhn).message
    monkeypatch.setenv("PIILAB_LANG", "en")
    assert check_luhn(learners_luhn).message.startswith("correct")


def test_the_luhn_checker_never_shows_code():
    for function in (luhn_from_the_left, lambda n: False, luhn_without_subtracting_nine):
        for lang in ("en", "ja"):
            message = check_luhn(function, lang=lang).message
            assert "def " not in message and "luhn_check_digit" not in message


# ---------------------------------------------------------------------------- check_could_be_real


def test_suspects_hold_both_labels_and_both_verdicts():
    labels = {label for label, _ in SUSPECTS}
    assert labels == {"CARD", "RRN"}
    passing = passing_suspects()
    assert 0 < len(passing) < len(SUSPECTS)
    checks = {"CARD": luhn_valid, "RRN": rrn_valid}
    assert {label for label, value in SUSPECTS if checks[label](value)} == {"CARD", "RRN"}
    assert len({value for _, value in SUSPECTS}) == len(SUSPECTS)


def test_the_right_values_pass_in_any_order():
    answer = passing_suspects()
    assert check_could_be_real(answer, lang="en").ok
    assert check_could_be_real(list(reversed(answer)), lang="en").ok
    assert check_could_be_real(tuple(answer), lang="en").ok


def test_a_value_that_fails_its_check_is_named():
    failing = next(value for value in (v for _, v in SUSPECTS) if value not in passing_suspects())
    result = check_could_be_real([*passing_suspects(), failing], lang="en")
    assert not result.ok
    assert repr(failing) in result.message and "cannot be a real" in result.message


def test_missing_values_are_counted_not_named():
    passing = passing_suspects()
    result = check_could_be_real(passing[:1], lang="en")
    assert not result.ok
    assert f"{len(passing) - 1} value(s)" in result.message
    for value in passing[1:]:
        assert value not in result.message


def test_missing_values_are_counted_per_label_in_each_language():
    checks = {"CARD": luhn_valid, "RRN": rrn_valid}
    passing = {label: sum(checks[label](value) for m, value in SUSPECTS if m == label)
               for label in checks}
    assert all(passing.values()), "both labels need a passing suspect for this test"
    english = check_could_be_real([], lang="en").message
    japanese = check_could_be_real([], lang="ja").message
    assert f"(CARD {passing['CARD']}, RRN {passing['RRN']})" in english
    assert f"(CARD {passing['CARD']} 個、RRN {passing['RRN']} 個)" in japanese


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("4111 1111 1111 1111", "expected a list of values"),
        ([4111111111111111], "must be a string"),
        (["4111111111111111"], "not one of the SUSPECTS values"),
    ],
)
def test_wrong_shapes_and_spellings_are_explained(answer, expected):
    result = check_could_be_real(answer, lang="en")
    assert not result.ok
    assert expected in result.message


def test_a_repeated_value_is_reported():
    value = passing_suspects()[0]
    result = check_could_be_real([value, value], lang="en")
    assert not result.ok and "more than once" in result.message


def test_could_be_real_messages_come_in_japanese():
    assert "正解です" in check_could_be_real(passing_suspects(), lang="ja").message
    assert "足りません" in check_could_be_real([], lang="ja").message


def test_checkers_return_check_results():
    assert isinstance(check_luhn(luhn_valid, lang="en"), CheckResult)
    assert isinstance(check_could_be_real([], lang="en"), CheckResult)
