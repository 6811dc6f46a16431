"""Checkers for chapter 03 ("Deterministic tokenization"): matching, masking, restoring.

Three exercises of the chapter are checked here:

- `check_match_answers`: for each case of `MATCH_CASES` (a value, its type and a source), does
  the value match the source under the rules of `piilab.matching`?
- `check_masked_text`: predict, by hand, what `piilab.mask_text` makes of `MASK_SOURCE` with
  `MASK_CANDIDATES`.
- `check_restore_function`: write your own restore function; the checker runs it on the cases
  of `restore_cases()` (token-like values, unknown tokens, backslashes, ...).

Every expected answer is computed with `piilab` itself (`has_match`, `mask_text`), so the
checkers can never disagree with the library the chapter teaches. Messages come in English and
Japanese (`_say`), say what is wrong and which rule to reread, and do not print the answer.

Deliberately not here: grading, storing answers, timing the learner's code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from piilab.course.exercises import CheckResult, _say
from piilab.labels import nfc
from piilab.masking import TOKEN_PATTERN, mask_text
from piilab.matching import has_match

__all__ = [
    "MASK_CANDIDATES",
    "MASK_SOURCE",
    "MATCH_CASES",
    "MatchCase",
    "RestoreCase",
    "check_masked_text",
    "check_match_answers",
    "check_restore_function",
    "restore_cases",
]


# --------------------------------------------------------------------------------------------
# Exercise: match or no match?
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MatchCase:
    """One question of the matching exercise: does `value` (typed `label`) match `source`?

    `topic` names the rule of docs/contract.md (section 4) that decides the case (a key of
    `_TOPICS`).
    """

    id: str
    label: str
    value: str
    source: str
    topic: str


#: The cases of the matching exercise, in the order the chapter prints them.
MATCH_CASES: tuple[MatchCase, ...] = (
    MatchCase("spaced-name", "PERSON", "김가상", "담당자: 김 가 상", "person"),
    MatchCase("mixed-joiners", "PERSON", "김가상", "담당자: 김 가\t상", "person"),
    MatchCase("long-name", "PERSON", "Alexander", "signed: A l e x a n d e r", "person"),
    MatchCase("phone-spaces", "PHONE", "010-0123-4567", "연락처 010 0123 4567", "numeric"),
    MatchCase("four-separators", "PHONE", "010-0123-4567", "연락처 010 -- 0123 -- 4567",
              "numeric"),
    MatchCase("inside-a-number", "ACCOUNT", "0123", "주문번호 9012345", "boundary"),
    MatchCase("phone-group", "ACCOUNT", "0123", "연락처 010-0123-4567", "boundary"),
    MatchCase("alias", "ACCOUNT", "acct-0123", "계좌 0123", "letters"),
    MatchCase("fullwidth", "PHONE", "010-0123-4567", "연락처 ０１０-０１２３-４５６７",
              "fullwidth"),
)

#: The message key of each rule a case depends on (`MatchCase.topic`).
_TOPICS: dict[str, str] = {
    "person": "ch03.topic_person",
    "numeric": "ch03.topic_numeric",
    "boundary": "ch03.topic_boundary",
    "letters": "ch03.topic_letters",
    "fullwidth": "ch03.topic_fullwidth",
}


def _expected_matches() -> dict[str, bool]:
    """The right answers, computed by `piilab.matching.has_match` (NFC, trimmed values)."""
    answers = {}
    for case in MATCH_CASES:
        source = nfc(case.source)
        value = nfc(case.value).strip()
        answers[case.id] = has_match(source, case.label, value)
    return answers


def check_match_answers(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 03, matching exercise: `answer` maps every case id of `MATCH_CASES` to a bool.

    Reports a wrong shape, unknown or missing ids and non-bool values first; then how many
    answers are wrong and which rules to reread, without naming the wrong cases (with yes/no
    answers, naming a wrong case would give its answer away).
    """
    if not isinstance(answer, Mapping):
        return CheckResult(False, _say(lang, "ch03.not_a_dict", type=type(answer).__name__))
    ids = [case.id for case in MATCH_CASES]
    unknown = [key for key in answer if key not in ids]
    if unknown:
        return CheckResult(False, _say(
            lang, "ch03.not_a_case", item=unknown[0], ids=", ".join(ids)
        ))
    missing = [key for key in ids if key not in answer]
    if missing:
        return CheckResult(False, _say(
            lang, "ch03.cases_missing", count=len(missing), cases=", ".join(missing)
        ))
    not_bool = [key for key in ids if not isinstance(answer[key], bool)]
    if not_bool:
        return CheckResult(False, _say(
            lang, "ch03.answer_not_a_bool", case=not_bool[0], value=answer[not_bool[0]]
        ))
    expected = _expected_matches()
    wrong = [case for case in MATCH_CASES if answer[case.id] != expected[case.id]]
    if wrong:
        topics = list(dict.fromkeys(case.topic for case in wrong))
        rules = _say(lang, "ch03.topic_separator").join(
            _say(lang, _TOPICS[topic]) for topic in topics
        )
        return CheckResult(False, _say(
            lang, "ch03.matches_wrong", wrong=len(wrong), total=len(ids), rules=rules
        ))
    return CheckResult(True, _say(lang, "ch03.matches_correct", total=len(ids)))


# --------------------------------------------------------------------------------------------
# Exercise: predict the masked text
# --------------------------------------------------------------------------------------------

#: The document of the prediction exercise (synthetic: a 555-01XX number, example.com).
MASK_SOURCE = (
    "[PHONE_1] is the old number. Call 이가상 on 555-0142 or 555 0142, not 1555-0142. "
    "이 가 상 replied from lee@example.com."
)

#: What a model listed for `MASK_SOURCE`. One row is a mistake: a spelling of the phone
#: number predicted as an account number.
MASK_CANDIDATES: tuple[tuple[str, str], ...] = (
    ("PERSON", "이가상"),
    ("PHONE", "555-0142"),
    ("ACCOUNT", "555 0142"),
    ("EMAIL", "lee@example.com"),
)

_PLACEHOLDER = "\x00"  # stands for a token in a skeleton (no text contains it)


def _skeleton(text: str) -> str:
    """`text` with every token-like `[TYPE_n]` replaced by one placeholder character."""
    return TOKEN_PATTERN.sub(_PLACEHOLDER, text)


def _text_before(text: str, skeleton_index: int) -> str:
    """The part of `text` whose skeleton is `_skeleton(text)[:skeleton_index]`."""
    position = 0
    remaining = skeleton_index
    for match in TOKEN_PATTERN.finditer(text):
        gap = match.start() - position
        if remaining <= gap:
            break
        remaining -= gap + 1
        position = match.end()
        if remaining == 0:
            return text[:position]
    return text[: position + remaining]


def _context(text: str, width: int = 24) -> str:
    """The end of `text` (about `width` characters, cut after a space where possible)."""
    if len(text) <= width:
        return text
    tail = text[-width:]
    space = tail.find(" ")
    if 0 <= space < len(tail) - 1:
        tail = tail[space + 1 :]
    return "…" + tail


def check_masked_text(
    answer: Any,
    source: str = MASK_SOURCE,
    candidates: Any = MASK_CANDIDATES,
    *,
    lang: str | None = None,
) -> CheckResult:
    """Compare a hand-written prediction with `mask_text(source, candidates).masked_text`.

    The diagnosis looks at the text between tokens first (is something left visible that the
    masker replaces, or masked that it leaves alone?), then at the tokens one by one (type,
    number, names that already occur in the source). It quotes only text that the learner's
    answer and the masked text share, never the part still to be found.
    """
    if not isinstance(answer, str):
        return CheckResult(False, _say(
            lang, "ch03.masked_not_a_string", type=type(answer).__name__
        ))
    if not answer.strip():
        return CheckResult(False, _say(lang, "ch03.masked_empty"))
    expected = mask_text(source, candidates).masked_text
    answer = nfc(answer)
    if answer == expected:
        return CheckResult(True, _say(lang, "ch03.masked_correct"))
    if answer.strip() == expected:
        return CheckResult(False, _say(lang, "ch03.masked_whitespace"))

    # 1. The text between tokens.
    mine, theirs = _skeleton(answer), _skeleton(expected)
    if mine != theirs:
        index = next(
            (i for i, (a, b) in enumerate(zip(mine, theirs, strict=False)) if a != b),
            min(len(mine), len(theirs)),
        )
        before = _text_before(answer, index)
        shared = repr(_context(before)) if before else None
        where = (_say(lang, "ch03.where_after", shared=shared) if shared
                 else _say(lang, "ch03.where_start"))
        if index == len(mine):
            return CheckResult(False, _say(lang, "ch03.masked_too_short", where=where))
        if index == len(theirs):
            return CheckResult(False, _say(lang, "ch03.masked_too_long", shared=shared))
        if theirs[index] == _PLACEHOLDER:
            return CheckResult(False, _say(lang, "ch03.masked_token_expected", where=where))
        if mine[index] == _PLACEHOLDER:
            return CheckResult(False, _say(lang, "ch03.masked_token_unexpected", where=where))
        return CheckResult(False, _say(lang, "ch03.masked_text_differs", where=where))

    # 2. Same places, so the same number of tokens: compare them one by one.
    in_source = set(TOKEN_PATTERN.findall(nfc(source)))
    mine_tokens, their_tokens = TOKEN_PATTERN.findall(answer), TOKEN_PATTERN.findall(expected)
    for number, (got, want) in enumerate(zip(mine_tokens, their_tokens, strict=True), start=1):
        if got == want:
            continue
        if want in in_source and got not in in_source:
            return CheckResult(False, _say(lang, "ch03.token_kept_in_source", number=number))
        if got in in_source:
            return CheckResult(False, _say(
                lang, "ch03.token_name_in_source", number=number, token=got
            ))
        if got[1 : got.rindex("_")] != want[1 : want.rindex("_")]:
            return CheckResult(False, _say(lang, "ch03.token_wrong_type", number=number))
        return CheckResult(False, _say(lang, "ch03.token_wrong_number", number=number))
    # Unreachable in practice: equal skeletons and equal tokens make equal texts.
    return CheckResult(False, _say(lang, "ch03.masked_not_quite"))


# --------------------------------------------------------------------------------------------
# Exercise: write a restore function
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RestoreCase:
    """One test of a restore function: `restore(masked, mapping)` must return `expected`.

    `hint` is the message key of the rule the case tests (shown when the case fails).
    """

    id: str
    masked: str
    mapping: dict[str, str]
    expected: str
    hint: str


def restore_cases() -> tuple[RestoreCase, ...]:
    """The cases `check_restore_function` runs, simplest first (built with `mask_text`)."""
    cases = []
    for case_id, source, candidates, hint in (
        (
            "worked-example",
            "김가상 / 김 가 상 / [PERSON_1]",
            [("PERSON", "김가상")],
            "ch03.restore_rule_worked_example",
        ),
        (
            "several-types",
            "고객 김가상 님(010-0123-4567), 메일 kim@example.com, 다시 김가상 님",
            [("PERSON", "김가상"), ("PHONE", "010-0123-4567"), ("EMAIL", "kim@example.com")],
            "ch03.restore_rule_several_types",
        ),
    ):
        result = mask_text(source, candidates)
        cases.append(RestoreCase(case_id, result.masked_text, dict(result.mapping),
                                 nfc(source), hint))
    cases += [
        RestoreCase(
            "unknown-tokens",
            "TODO: call [PERSON_1]; ask [PERSON_9] and [FOO_2] later.",
            {"[PERSON_1]": "김가상"},
            "TODO: call 김가상; ask [PERSON_9] and [FOO_2] later.",
            "ch03.restore_rule_unknown_tokens",
        ),
        RestoreCase(
            "adjacent-tokens",
            "[[PERSON_1]][PERSON_2]",
            {"[PERSON_1]": "김가상", "[PERSON_2]": "이가상"},
            "[김가상]이가상",
            "ch03.restore_rule_adjacent_tokens",
        ),
        RestoreCase(
            "one-pass",
            "[PERSON_1] / [PERSON_2]",
            {"[PERSON_1]": "[PERSON_2]", "[PERSON_2]": "김가상"},
            "[PERSON_2] / 김가상",
            "ch03.restore_rule_one_pass",
        ),
        RestoreCase(
            "backslash",
            "mail [EMAIL_1], memo [PERSON_1]",
            {"[EMAIL_1]": "kim\\1@example.com", "[PERSON_1]": "김\\g<0>가상"},
            "mail kim\\1@example.com, memo 김\\g<0>가상",
            "ch03.restore_rule_backslash",
        ),
        RestoreCase(
            "empty-mapping",
            "nothing to restore in [PERSON_1]",
            {},
            "nothing to restore in [PERSON_1]",
            "ch03.restore_rule_empty_mapping",
        ),
    ]
    return tuple(cases)


def check_restore_function(
    restore: Callable[[str, dict[str, str]], str], *, lang: str | None = None
) -> CheckResult:
    """Run `restore(masked_text, mapping)` on every case of `restore_cases()`.

    Stops at the first failing case and names it, with its input, what came back, what was
    expected and the rule behind it. Also fails when `restore` raises, returns something other
    than a string, or changes the mapping it was given.
    """
    if not callable(restore):
        return CheckResult(False, _say(lang, "ch03.restore_not_callable",
                                       type=type(restore).__name__))
    cases = restore_cases()
    for number, case in enumerate(cases, start=1):
        mapping = dict(case.mapping)
        where = _say(lang, "ch03.restore_where", number=number, case=case.id,
                     masked=case.masked, mapping=case.mapping)
        try:
            got = restore(case.masked, mapping)
        except Exception as exc:  # the learner's code: report any error, do not crash
            return CheckResult(False, _say(
                lang, "ch03.restore_raised", where=where, error=type(exc).__name__, detail=exc
            ))
        if mapping != case.mapping:
            return CheckResult(False, _say(lang, "ch03.restore_changed_mapping", where=where))
        if not isinstance(got, str):
            return CheckResult(False, _say(
                lang, "ch03.restore_not_a_string", where=where, type=type(got).__name__
            ))
        if got != case.expected:
            return CheckResult(False, _say(
                lang, "ch03.restore_wrong", where=where, got=got, expected=case.expected,
                rule=_say(lang, case.hint),
            ))
    return CheckResult(True, _say(lang, "ch03.restore_correct", total=len(cases)))
