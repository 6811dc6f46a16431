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

Every message comes in English and Japanese (`piilab.exercises._say`). The expected answers
are computed from `piilab.checksums`, the reference the chapter teaches, so they cannot drift.

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
from piilab.exercises import CheckResult, _as_string_list, _say

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


#: Typical mistakes, in the order they are diagnosed, with the hint each one earns.
_MISTAKES: tuple[tuple[Callable[[str], bool], str, str], ...] = (
    (
        lambda n: _luhn_variant(n, from_left=True),
        "you count positions from the left: that happens to work for 16 digits but not for "
        "odd lengths such as 15-digit cards. Count from the right end, where the check digit is",
        "位置を左から数えています。16 桁ならたまたま合いますが、15 桁のカードのような奇数桁では"
        "合いません。チェックディジットのある右端から数えてください",
    ),
    (
        lambda n: _luhn_variant(n, double_check_digit=True),
        "you double the check digit too: the doubling starts with the second digit from the "
        "right, and the check digit itself is added as it is",
        "チェックディジットまで 2 倍にしています。2 倍にするのは右から 2 番目の桁からで、"
        "チェックディジット自体はそのまま足します",
    ),
    (
        lambda n: _luhn_variant(n, subtract_nine=False),
        "a doubled digit above 9 must be reduced to one digit (subtract 9, or add its two "
        "digits): 8 doubled counts as 7, not 16",
        "2 倍にして 9 を超えた桁は 1 桁に戻します(9 を引くか、2 つの桁を足す)。"
        "8 を 2 倍にしたら 16 ではなく 7 として数えます",
    ),
)


def check_luhn(function: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 02, exercise 1: `function(number) -> bool` is a correct Luhn check.

    `function` is called on every string of `LUHN_CASES` and must return exactly what
    `piilab.checksums.luhn_valid` returns. The first problem found is reported: not callable,
    an exception, a result that is not a bool, a recognised typical mistake, or else how many
    answers are wrong, with one example input.
    """
    if not callable(function):
        return CheckResult(False, _say(
            lang,
            en="pass your function itself, without calling it; got an object of type "
            f"{type(function).__name__}",
            ja="関数そのものを(呼び出さずに)渡してください。渡されたのは "
            f"{type(function).__name__} 型のオブジェクトです",
        ))
    answers: dict[str, bool] = {}
    for number in LUHN_CASES:
        try:
            result = function(number)
        except Exception as exc:
            hint_en, hint_ja = "", ""
            if not number.isdigit():
                hint_en = " (spaces and hyphens are separators: skip them)"
                hint_ja = "(空白とハイフンは区切りなので読み飛ばします)"
            return CheckResult(False, _say(
                lang,
                en=f"your function raised {type(exc).__name__} for {number!r}{hint_en}",
                ja=f"{number!r} で {type(exc).__name__} が発生しました{hint_ja}",
            ))
        if not isinstance(result, bool):
            return CheckResult(False, _say(
                lang,
                en=f"return True or False; for {number!r} your function returned "
                f"{type(result).__name__} {result!r}",
                ja=f"True か False を返してください。{number!r} に対して "
                f"{type(result).__name__} の {result!r} が返りました",
            ))
        answers[number] = result

    wrong = [n for n in LUHN_CASES if answers[n] != luhn_valid(n)]
    if not wrong:
        return CheckResult(True, _say(
            lang,
            en=f"correct: your function agrees with piilab.checksums.luhn_valid on all "
            f"{len(LUHN_CASES)} numbers",
            ja=f"正解です。{len(LUHN_CASES)} 個すべての番号で piilab.checksums.luhn_valid "
            "と同じ答えになりました",
        ))
    if len(set(answers.values())) == 1:
        verdict = next(iter(answers.values()))
        return CheckResult(False, _say(
            lang,
            en=f"your function returns {verdict} for every number; about half of them pass",
            ja=f"どの番号にも {verdict} を返しています。実際には約半分が検査に通ります",
        ))
    if all(not n.isdigit() for n in wrong):
        example = wrong[0]
        return CheckResult(False, _say(
            lang,
            en=f"right for plain digit strings, wrong for grouped ones such as {example!r}: "
            "spaces and hyphens are separators, skip them",
            ja=f"数字だけの文字列では正しいのに、{example!r} のような区切り入りでは"
            "間違えています。空白とハイフンは区切りなので読み飛ばしてください",
        ))
    for mistake, hint_en, hint_ja in _MISTAKES:
        if all(answers[n] == mistake(n) for n in LUHN_CASES):
            return CheckResult(False, _say(lang, en=hint_en, ja=hint_ja))
    example = wrong[0]
    should = luhn_valid(example)
    return CheckResult(False, _say(
        lang,
        en=f"wrong on {len(wrong)} of {len(LUHN_CASES)} numbers; for example, {example!r} "
        f"{'passes' if should else 'fails'} the Luhn check but your function returns "
        f"{answers[example]}",
        ja=f"{len(LUHN_CASES)} 個中 {len(wrong)} 個で間違えています。たとえば {example!r} は "
        f"Luhn 検査に{'通ります' if should else '通りません'}が、関数は {answers[example]} "
        "を返しました",
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
    items = _as_string_list(answer, lang, "values", "値")
    if isinstance(items, CheckResult):
        return items
    label_of = {value: label for label, value in SUSPECTS}
    for item in items:
        if item not in label_of:
            return CheckResult(False, _say(
                lang,
                en=f"{item!r} is not one of the SUSPECTS values: copy the values exactly as "
                "printed, separators included",
                ja=f"{item!r} は SUSPECTS の値ではありません。区切りも含めて、表示された"
                "とおりに写してください",
            ))
    repeated = [item for item in dict.fromkeys(items) if items.count(item) > 1]
    if repeated:
        return CheckResult(False, _say(
            lang,
            en=f"{repeated[0]!r} appears more than once: list each value once",
            ja=f"{repeated[0]!r} が 2 回以上出てきます。各値は 1 回だけ書いてください",
        ))
    for item in items:
        label = label_of[item]
        if not _could_be_real(label, item):
            return CheckResult(False, _say(
                lang,
                en=f"{item!r} fails the {label} check digit rule, so it cannot be a real "
                f"{label} value: leave it out",
                ja=f"{item!r} は {label} のチェックディジット規則に通らないので、"
                "実在する値ではありえません。リストから外してください",
            ))
    missing = [(label, value) for label, value in SUSPECTS
               if _could_be_real(label, value) and value not in items]
    if missing:
        per_label = {label: sum(1 for m, _ in missing if m == label) for label in _CHECKS}
        counts = ", ".join(f"{label} {n}" for label, n in per_label.items() if n)
        return CheckResult(False, _say(
            lang,
            en=f"{len(missing)} value(s) that pass their check are still missing ({counts}): "
            "run every value through the check of its own label",
            ja=f"検査に通る値があと {len(missing)} 個足りません({counts})。"
            "すべての値を、それぞれのラベルの検査にかけてください",
        ))
    return CheckResult(True, _say(
        lang,
        en=f"correct: these {len(items)} values pass their check, so a reviewer must treat "
        "them as possibly real",
        ja=f"正解です。この {len(items)} 個は検査に通るので、レビューする人は実在しうる値として"
        "扱わなければなりません",
    ))
