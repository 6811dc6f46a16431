"""Checkers for chapter 09 ("A token-classification dataset for finance").

- `check_finance_tags(answer)`: the learner writes the BIOES class of every o200k token of
  `TAG_TEXT` (tokens and offsets from `tag_tokens`, i.e. `piilab.finance.tokens.tokenize`)
  for the spans `TAG_SPANS`. The expected classes are computed with
  `piilab.bioes.spans_to_bioes`, as the finance builder computes ``token_classes``.
- `SUSPECTS` and `check_verify_rejects(answer)`: values of four finance labels; the learner
  lists the ones that ``piilab finance verify`` would reject, because the invalidation rule
  of their label does not prove them invalid (so each could be a real one). The rules are the
  card's, as `piilab.finance.verify` states them: a card number of 13 or more digits fails Luhn; an
  RRN fails both registration check digits; an English phone number is 555-0100..0199; a
  passport number starts with an unissued letter (`tests/test_exercises_ch09.py` checks that
  these rules agree with `verify`'s own).

It follows the pattern of `piilab.course.exercises`: validate the shape of the answer first,
then say what is wrong, in the reader's language, without printing the solution (the tag
messages name the first wrong token and the kind of mistake, never the right class; the value
messages name a value the learner wrote, never one they left out). All values here are
synthetic.
"""

from __future__ import annotations

import re
from typing import Any

from piilab.bioes import spans_to_bioes
from piilab.course.exercises import (
    CheckResult,
    ExerciseError,
    _as_string_list,
    _check_tags,
    _say,
)

__all__ = [
    "SUSPECTS",
    "TAG_SPANS",
    "TAG_TEXT",
    "check_finance_tags",
    "check_verify_rejects",
    "tag_tokens",
]

# --------------------------------------------------------------------------------
# Exercise 1: BIOES classes over o200k tokens
# --------------------------------------------------------------------------------

#: The sentence of exercise 1 (its card number fails Luhn: check digit + 5).
TAG_TEXT = "Card 4929 1234 5678 9010, CVC 381, holder Ann Lee."

#: Its gold spans, ``(start, end, label)``.
TAG_SPANS: tuple[tuple[int, int, str], ...] = (
    (5, 24, "CARD_NUMBER"),
    (30, 33, "CVC"),
    (42, 49, "PERSON"),
)


def tag_tokens() -> list[tuple[str, tuple[int, int]]]:
    """The o200k tokens of `TAG_TEXT` as written in ``tokens``, with their offsets."""
    from piilab.finance.tokens import tokenize

    tokens, offsets = tokenize(TAG_TEXT)
    return list(zip(tokens, offsets, strict=True))


#: The messages of exercise 1 (`piilab.course.exercises._check_tags`).
KEYS = {
    "not_a_tag": "ch09.not_a_tag", "wrong_count": "ch09.wrong_count",
    "tags_correct": "ch09.tags_correct", "token_outside": "ch09.token_outside",
    "token_inside": "ch09.token_inside", "wrong_label": "ch09.wrong_label",
    "wrong_prefix": "ch09.wrong_prefix", "space_outside": "ch09.space_outside",
    "space_inside": "ch09.space_inside",
}


def _expected() -> list[str]:
    return spans_to_bioes([offsets for _, offsets in tag_tokens()], TAG_SPANS)


def check_finance_tags(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 09, exercise 1: one BIOES class per o200k token of `TAG_TEXT`, in order.

    Reports, in this order: a wrong shape; a string that is not one of the 73 classes; a wrong
    number of tags; then the first wrong token, saying whether it should be tagged at all
    (with a hint of its own for a token that is only a space), or whether its label or its
    position prefix (B, I, E, S) is wrong.
    """
    items = _as_string_list(answer, lang, "ch09.what_tags")
    if isinstance(items, CheckResult):
        return items
    from piilab.taxonomy import finance_labels

    return _check_tags(items, lang=lang, text=TAG_TEXT,
                       offsets=[span for _, span in tag_tokens()], expected=_expected(),
                       labels=finance_labels(), spans=len(TAG_SPANS), keys=KEYS)


# --------------------------------------------------------------------------------
# Exercise 2: which values would `verify` reject?
# --------------------------------------------------------------------------------

#: ``(label, value)`` pairs: some fail their label's rule (as the generators make them), some
#: do not. Phone numbers are US-style (the ``en`` rule).
SUSPECTS: tuple[tuple[str, str], ...] = (
    ("CARD_NUMBER", "4929 1234 5678 9010"),
    ("PHONE", "(212) 555-2368"),
    ("RRN", "800101-1234565"),
    ("PASSPORT", "X48213907"),
    ("CARD_NUMBER", "5412 7531 0098 4413"),
    ("PHONE", "(212) 555-0147"),
    ("PASSPORT", "M48213907"),
    ("RRN", "800101-1234560"),
)


def _digits(value: str) -> str:
    return re.sub(r"[^0-9]", "", value)


def _fails_its_rule(label: str, value: str) -> bool:
    """True when the rule of `label` proves `value` invalid (``verify`` accepts it)."""
    from piilab.finance.values import UNISSUED_PASSPORT_PREFIXES
    from piilab.safety import frn_passes, luhn_passes, rrn_passes

    digits = _digits(value)
    if label == "CARD_NUMBER":
        return len(digits) >= 13 and not luhn_passes(digits)
    if label == "RRN":
        return len(digits) == 13 and not rrn_passes(digits) and not frn_passes(digits)
    if label == "PHONE":
        digits = digits[1:] if len(digits) == 11 and digits[0] == "1" else digits
        return len(digits) == 10 and digits[3:6] == "555" and digits[6:8] == "01"
    if label == "PASSPORT":
        return value[:1] in UNISSUED_PASSPORT_PREFIXES and value[1:].isdigit()
    raise ExerciseError("no rule for that label in this exercise")


def check_verify_rejects(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 09, exercise 2: the values of `SUSPECTS` that ``verify`` would reject.

    `answer` is a list of values, copied exactly as `SUSPECTS` prints them; order does not
    matter. Reports a wrong shape, a value that is not in `SUSPECTS`, a repeated value, a value
    that its rule proves invalid (``verify`` accepts it), then how many are missing.
    """
    items = _as_string_list(answer, lang, "ch09.what_values")
    if isinstance(items, CheckResult):
        return items
    label_of = {value: label for label, value in SUSPECTS}
    unknown = [item for item in items if item not in label_of]
    if unknown:
        return CheckResult(False, _say(lang, "ch09.not_a_suspect", item=unknown[0]))
    repeated = [item for i, item in enumerate(items) if item in items[:i]]
    if repeated:
        return CheckResult(False, _say(lang, "ch09.value_repeated", item=repeated[0]))
    accepted = [item for item in items if _fails_its_rule(label_of[item], item)]
    if accepted:
        item = accepted[0]
        return CheckResult(False, _say(lang, "ch09.value_is_invalid", item=item,
                                       label=label_of[item]))
    rejected = [value for label, value in SUSPECTS if not _fails_its_rule(label, value)]
    missing = len(rejected) - len(items)
    if missing:
        return CheckResult(False, _say(lang, "ch09.values_missing", count=missing))
    return CheckResult(True, _say(lang, "ch09.values_correct", count=len(rejected)))
