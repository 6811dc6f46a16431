"""Checkers for the exercises of chapter 02 ("Synthetic PII data").

- `check_luhn(function)`: the learner writes a Luhn validator; the checker runs it on
  `LUHN_CASES` (card-shaped strings: published test numbers, numbers written the way the
  generator writes them, random lengths from 2 to 19 digits, with and without spaces and
  hyphens) and compares every answer with `piilab.checksums.luhn_valid`. When they disagree it
  names the most likely mistake (separators, where the doubling starts, the subtract-9 step)
  and one input that came out wrong, never the code that would be right.
- `SUSPECTS` and `check_could_be_real(answer)`: card- and RRN-shaped values; the learner lists
  those that pass the check digit rule of their label, the values a reviewer of a synthetic
  data set would have to treat as possibly real.

Every message comes in English and Japanese (`piilab.course.exercises._say`, from the catalogs
in `messages/`). The expected answers are computed from `piilab.checksums`, the reference the
chapter teaches, so they cannot drift.

Deliberately not here: a second implementation of the check digit rules. The "typical
mistakes" below exist only to recognise a wrong answer, and are never shown to the learner.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from piilab.checksums import (
    invalid_card_number,
    invalid_digit,
    invalid_rrn,
    luhn_check_digit,
    luhn_valid,
    rrn_valid,
)
from piilab.course.exercises import CheckResult, _as_string_list, _say

# --------------------------------------------------------------------------------------------
# Exercise 1: your own Luhn check
# --------------------------------------------------------------------------------------------

#: Card numbers that payment providers publish for testing: they pass the Luhn check.
PUBLISHED_TEST_CARDS: tuple[str, ...] = (
    "4111111111111111",
    "4111 1111 1111 1111",
    "5555-5555-5555-4444",
    "378282246310005",
    "3782 822463 10005",
)


def _grouped(digits: str, sep: str) -> str:
    """`digits` in groups of four joined by `sep` (the way cards are usually written)."""
    return sep.join(digits[i:i + 4] for i in range(0, len(digits), 4))


def _build_luhn_cases() -> tuple[str, ...]:
    rng = random.Random(202)  # fixed: every learner gets the same cases, in the same order
    cases: list[str] = [*PUBLISHED_TEST_CARDS, "4111111111111112", "00", "18", "59", "91", "0000"]
    for _ in range(6):  # numbers as the generator writes them: invalid by construction
        number = invalid_card_number(rng, prefix=rng.choice(("4", "51", "55")))
        cases += [number, _grouped(number, rng.choice(" -"))]
    for length in range(2, 20):  # both parities of length matter for where doubling starts
        for _ in range(4):
            payload = "".join(str(rng.randrange(10)) for _ in range(length - 1))
            correct = luhn_check_digit(payload)
            valid, wrong = payload + str(correct), payload + str(invalid_digit(correct))
            cases += [valid, wrong]
            if length >= 8:
                cases.append(_grouped(valid, rng.choice(" -")))
    return tuple(dict.fromkeys(cases))  # drop repeats, keep the order


#: The inputs `check_luhn` tries: ASCII digits, optionally grouped by spaces or hyphens,
#: at least two digits each. About half pass the Luhn check.
LUHN_CASES: tuple[str, ...] = _build_luhn_cases()


def _digits(number: str) -> list[int]:
    return [int(ch) for ch in number if ch.isdigit()]


def _luhn_variant(number: str, *, double_check_digit: bool = False, from_left: bool = False,
                  subtract_nine: bool = True) -> bool:
    """A Luhn check with one typical mistake switched on (used only to diagnose answers)."""
    digits = _digits(number)
    order = digits if from_left else digits[::-1]
    total = 0
    for position, digit in enumerate(order):
        doubled = position % 2 == (0 if double_check_digit or from_left else 1)
        if doubled:
            digit *= 2
            if subtract_nine and digit > 9:
                digit -= 9
        total += digit
    return total % 10 == 0


#: Typical mistakes, in the order they are diagnosed, with the key of the hint each one earns.
_MISTAKES: tuple[tuple[Callable[[str], bool], str], ...] = (
    (lambda n: _luhn_variant(n, from_left=True), "ch02.luhn_mistake_from_left"),
    (lambda n: _luhn_variant(n, double_check_digit=True), "ch02.luhn_mistake_doubles_check_digit"),
    (lambda n: _luhn_variant(n, subtract_nine=False), "ch02.luhn_mistake_no_subtract_nine"),
)


def check_luhn(function: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 02, exercise 1: `function(number) -> bool` is a correct Luhn check.

    `function` is called on every string of `LUHN_CASES` and must return exactly what
    `piilab.checksums.luhn_valid` returns. The first problem found is reported: not callable,
    an exception, a result that is not a bool, a recognised typical mistake, or else how many
    answers are wrong, with one example input.
    """
    if not callable(function):
        return CheckResult(False, _say(lang, "ch02.luhn_not_callable",
                                       type=type(function).__name__))
    answers: dict[str, bool] = {}
    for number in LUHN_CASES:
        try:
            result = function(number)
        except Exception as exc:
            key = "ch02.luhn_raised" if number.isdigit() else "ch02.luhn_raised_on_separators"
            return CheckResult(False, _say(lang, key, error=type(exc).__name__, number=number))
        if not isinstance(result, bool):
            return CheckResult(False, _say(
                lang, "ch02.luhn_not_a_bool", number=number, type=type(result).__name__,
                result=result,
            ))
        answers[number] = result

    wrong = [n for n in LUHN_CASES if answers[n] != luhn_valid(n)]
    if not wrong:
        return CheckResult(True, _say(lang, "ch02.luhn_correct", total=len(LUHN_CASES)))
    if len(set(answers.values())) == 1:
        verdict = next(iter(answers.values()))
        return CheckResult(False, _say(lang, "ch02.luhn_constant", verdict=verdict))
    if all(not n.isdigit() for n in wrong):
        return CheckResult(False, _say(lang, "ch02.luhn_separators", example=wrong[0]))
    for mistake, hint in _MISTAKES:
        if all(answers[n] == mistake(n) for n in LUHN_CASES):
            return CheckResult(False, _say(lang, hint))
    example = wrong[0]
    should = luhn_valid(example)
    return CheckResult(False, _say(
        lang, "ch02.luhn_wrong_should_pass" if should else "ch02.luhn_wrong_should_fail",
        wrong=len(wrong), total=len(LUHN_CASES), example=example, returned=answers[example],
    ))


# --------------------------------------------------------------------------------------------
# Exercise 2: which values would a reviewer flag?
# --------------------------------------------------------------------------------------------

_CHECKS: dict[str, Callable[[str], bool]] = {"CARD": luhn_valid, "RRN": rrn_valid}


def _build_suspects() -> tuple[tuple[str, str], ...]:
    rng = random.Random(2024)  # fixed: the same list for every learner
    suspects = [
        ("CARD", "4111 1111 1111 1111"),  # published test numbers: they pass
        ("CARD", "5555-5555-5555-4444"),
        ("CARD", "3782 822463 10005"),
        ("CARD", "4111 1111 1111 1112"),  # one digit away from a test number: fails
        ("RRN", "800101-1234560"),  # the example of piilab.checksums.rrn_valid: passes
        ("RRN", "800101-1234565"),  # its check digit + 5: fails
    ]
    for _ in range(3):  # the way the generator writes them
        suspects.append(("CARD", _grouped(invalid_card_number(rng), rng.choice(" -"))))
        suspects.append(("RRN", invalid_rrn(rng)))
    rng.shuffle(suspects)
    return tuple(suspects)


#: `(label, value)` pairs: card-shaped (`CARD`) and resident-registration-number-shaped (`RRN`)
#: values. Some pass the check digit rule of their label, most do not.
SUSPECTS: tuple[tuple[str, str], ...] = _build_suspects()


def _could_be_real(label: str, value: str) -> bool:
    """True when `value` passes the check digit rule of `label` ("CARD" or "RRN")."""
    return _CHECKS[label](value)


def check_could_be_real(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 02, exercise 2: the values of `SUSPECTS` that pass their check digit rule.

    `answer` is a list of values, copied exactly as `SUSPECTS` prints them; order does not
    matter. Reports a wrong shape, a value that is not in `SUSPECTS`, a repeated value, a
    listed value that fails its check (by name: it cannot be real), or how many passing values
    are still missing (per label, without naming them).
    """
    items = _as_string_list(answer, lang, "ch02.what_values")
    if isinstance(items, CheckResult):
        return items
    label_of = {value: label for label, value in SUSPECTS}
    for item in items:
        if item not in label_of:
            return CheckResult(False, _say(lang, "ch02.not_a_suspect", item=item))
    repeated = [item for item in dict.fromkeys(items) if items.count(item) > 1]
    if repeated:
        return CheckResult(False, _say(lang, "ch02.value_repeated", item=repeated[0]))
    for item in items:
        label = label_of[item]
        if not _could_be_real(label, item):
            return CheckResult(False, _say(lang, "ch02.value_fails_check", item=item, label=label))
    missing = [(label, value) for label, value in SUSPECTS
               if _could_be_real(label, value) and value not in items]
    if missing:
        per_label = {label: sum(1 for m, _ in missing if m == label) for label in _CHECKS}
        counts = _say(lang, "ch02.label_count_separator").join(
            _say(lang, "ch02.label_count", label=label, count=n)
            for label, n in per_label.items() if n
        )
        return CheckResult(False, _say(
            lang, "ch02.values_missing", count=len(missing), counts=counts
        ))
    return CheckResult(True, _say(lang, "ch02.values_correct", count=len(items)))
