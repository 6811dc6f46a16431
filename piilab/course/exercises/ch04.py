"""Checkers for chapter 04 ("Evaluation"): find a leak by its offsets, score two documents by hand.

- `check_leak_offsets(answer)`: the learner reads the masked text of `LEAK_RECORD` (masked
  with the candidates of `LEAK_OUTPUT`) and lists the ``(start, end)`` offsets of the gold
  occurrences that are not fully masked. The expected answer is computed with
  `piilab.evaluation.uncovered_occurrences`, the evaluator's own leak check.
- `check_entity_scores(answer)`: the learner computes tp/fp/fn, precision, recall and F1 of
  `SCORING_OUTPUTS` on `SCORING_RECORDS` by hand. The expected answer is computed with
  `piilab.evaluation.evaluate`.

Both follow the pattern of `piilab.course.exercises`: validate the shape of the answer first, then
say what is wrong, in the reader's language, without printing the solution. All data here is
synthetic (``example.com`` addresses, ``555-01XX`` and ``010-0XXX`` phone numbers).
"""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Real
from typing import Any

from piilab.course.exercises import CheckResult, _not_a_list, _say
from piilab.evaluation import evaluate, score_document, uncovered_occurrences
from piilab.predictions import make_prediction

__all__ = [
    "LEAK_OUTPUT",
    "LEAK_RECORD",
    "SCORE_FIELDS",
    "SCORING_OUTPUTS",
    "SCORING_RECORDS",
    "check_entity_scores",
    "check_leak_offsets",
]


# --------------------------------------------------------------------------------------------
# Exercise 1: find the leak
# --------------------------------------------------------------------------------------------

#: A member note: a name (written twice, once spaced), a phone number and an e-mail address.
LEAK_RECORD: dict[str, Any] = {
    "id": "ex04-leak",
    "source_text": "회원 김가상 님의 휴대폰 010-0123-4567 로 회신했습니다. "
    "서명: 김 가 상 (gasang.kim@example.com)",
    "entities": [
        {"type": "PERSON", "value": "김가상"},
        {"type": "PHONE", "value": "010-0123-4567"},
        {"type": "EMAIL", "value": "gasang.kim@example.com"},
    ],
}

#: What a model answered for `LEAK_RECORD`: every value found, two of them not quite right.
LEAK_OUTPUT = "REL\t김가상\nPHONE\t010\nPHONE\t0123-4567\nEMAIL\tgasang.kim@example.com"


def _leak_facts() -> tuple[str, list[tuple[int, int]], set[int]]:
    """(source, the expected leaked offsets, the offsets of the masked characters)."""
    record = LEAK_RECORD
    source = record["source_text"]
    score = score_document(record, make_prediction(record["id"], LEAK_OUTPUT, source))
    spans = [(span.start, span.end) for span in score.mask.spans]
    covered = {i for start, end in spans for i in range(start, end)}
    leaked = sorted({span for found in uncovered_occurrences(source, score.gold, spans).values()
                     for span in found})
    return source, leaked, covered


def _as_offset_pairs(
    answer: Any, size: int, lang: str | None
) -> list[tuple[int, int]] | CheckResult:
    """`answer` as a list of ``(start, end)`` int pairs inside a text of `size` characters."""
    refused = _not_a_list(answer, lang, "ch04.what_offset_pairs")
    if refused is not None:
        return refused
    pairs = []
    for item in answer:
        ok_shape = (
            isinstance(item, (tuple, list)) and len(item) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) for x in item)
        )
        if not ok_shape:
            return CheckResult(False, _say(lang, "ch04.not_a_pair", item=item))
        start, end = item
        if not 0 <= start < end <= size:
            return CheckResult(False, _say(
                lang, "ch04.pair_out_of_range", start=start, end=end, size=size
            ))
        pairs.append((start, end))
    return pairs


def check_leak_offsets(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 04, exercise 1: the ``(start, end)`` offsets, in `LEAK_RECORD`'s source, of the
    gold occurrences that the masking of `LEAK_OUTPUT` leaves exposed.

    Order does not matter. Reports, in this order: a wrong shape; a pair listed twice; a pair
    whose characters are all masked; a pair that overlaps a leaked occurrence but has the
    wrong bounds; a pair that is no gold occurrence; leaked occurrences still missing (how
    many).
    """
    source, leaked, covered = _leak_facts()
    pairs = _as_offset_pairs(answer, len(source), lang)
    if isinstance(pairs, CheckResult):
        return pairs
    repeated = sorted({pair for pair in pairs if pairs.count(pair) > 1})
    if repeated:
        return CheckResult(False, _say(lang, "ch04.pair_repeated", pair=repeated[0]))
    for start, end in sorted(pairs):
        if (start, end) in leaked:
            continue
        if all(i in covered for i in range(start, end)):
            return CheckResult(False, _say(lang, "ch04.pair_masked", start=start, end=end))
        if any(start < e and s < end for s, e in leaked):
            return CheckResult(False, _say(lang, "ch04.pair_bounds_off", start=start, end=end))
        return CheckResult(False, _say(lang, "ch04.pair_not_gold", start=start, end=end))
    missing = [pair for pair in leaked if pair not in pairs]
    if missing:
        return CheckResult(False, _say(lang, "ch04.leaks_missing", count=len(missing)))
    return CheckResult(True, _say(lang, "ch04.leaks_correct", count=len(leaked)))


# --------------------------------------------------------------------------------------------
# Exercise 2: precision, recall and F1 by hand
# --------------------------------------------------------------------------------------------

#: Two documents, one English and one Korean, with their gold entities.
SCORING_RECORDS: tuple[dict[str, Any], ...] = (
    {
        "id": "doc-a",
        "source_text": "Dear Mina Cho, your sister Hana Cho asked us to call 555-0147 "
        "before Friday.",
        "entities": [
            {"type": "PERSON", "value": "Mina Cho"},
            {"type": "REL", "value": "your sister"},
            {"type": "PERSON", "value": "Hana Cho"},
            {"type": "PHONE", "value": "555-0147"},
        ],
    },
    {
        "id": "doc-b",
        "source_text": "고객 이서연 님이 어머니 명의 계좌 110-234-567890 의 해지를 문의했습니다. "
        "연락처 010-0123-4567.",
        "entities": [
            {"type": "PERSON", "value": "이서연"},
            {"type": "REL", "value": "어머니"},
            {"type": "ACCOUNT", "value": "110-234-567890"},
            {"type": "PHONE", "value": "010-0123-4567"},
        ],
    },
)

#: The model output for each document of `SCORING_RECORDS`, by record id.
SCORING_OUTPUTS: dict[str, str] = {
    "doc-a": "person\tMina Cho\nPERSON\tMina Cho\nPERSON\tHana Cho\nREL\tsister\nPHONE\t555-0147",
    "doc-b": "PERSON\t이서연\nREL\t어머니\nACCOUNT\t110 234 567890\nPHONE\t010-0123-4567\n"
    "PERSON\t홍길동",
}

#: The keys an answer to `check_entity_scores` must have.
SCORE_FIELDS: tuple[str, ...] = ("tp", "fp", "fn", "precision", "recall", "f1")

#: How far a learner's rate may be from the exact value (two decimals are enough).
_TOLERANCE = 0.006

#: The message key of the counting rule of each count.
_COUNT_RULES = {
    "tp": "ch04.count_rule_tp",
    "fp": "ch04.count_rule_fp",
    "fn": "ch04.count_rule_fn",
}

_RATE_FORMULAS = {
    "precision": "tp / (tp + fp)",
    "recall": "tp / (tp + fn)",
    "f1": "2 * precision * recall / (precision + recall)",
}


def _expected_scores() -> dict[str, float | int]:
    predictions = [
        make_prediction(r["id"], SCORING_OUTPUTS[r["id"]], r["source_text"])
        for r in SCORING_RECORDS
    ]
    scores = evaluate(SCORING_RECORDS, predictions).entity
    return {key: getattr(scores, key) for key in SCORE_FIELDS}


def check_entity_scores(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 04, exercise 2: entity tp/fp/fn, precision, recall and F1 of `SCORING_OUTPUTS`.

    `answer` is a dict with the keys of `SCORE_FIELDS`: integer counts, and rates as numbers
    in [0, 1] (two decimals are enough). Reports a wrong shape, then the first wrong count
    (too high or too low, with the counting rule), then the first wrong rate (with its
    formula).
    """
    if not isinstance(answer, Mapping):
        return CheckResult(False, _say(
            lang, "ch04.scores_not_a_dict", keys=", ".join(SCORE_FIELDS),
            type=type(answer).__name__,
        ))
    missing = [key for key in SCORE_FIELDS if key not in answer]
    if missing:
        return CheckResult(False, _say(lang, "ch04.scores_missing_keys", keys=", ".join(missing)))
    for key in SCORE_FIELDS[:3]:
        value = answer[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return CheckResult(False, _say(lang, "ch04.count_not_a_count", key=key, value=value))
    for key in SCORE_FIELDS[3:]:
        value = answer[key]
        if not isinstance(value, Real) or isinstance(value, bool) or not 0 <= value <= 1:
            return CheckResult(False, _say(lang, "ch04.rate_not_a_rate", key=key, value=value))

    expected = _expected_scores()
    for key in SCORE_FIELDS[:3]:
        if answer[key] != expected[key]:
            high = answer[key] > expected[key]
            return CheckResult(False, _say(
                lang, "ch04.count_too_high" if high else "ch04.count_too_low", key=key,
                rule=_say(lang, _COUNT_RULES[key]),
            ))
    for key in SCORE_FIELDS[3:]:
        if abs(answer[key] - expected[key]) > _TOLERANCE:
            return CheckResult(False, _say(
                lang, "ch04.rate_wrong", key=key, formula=_RATE_FORMULAS[key]
            ))
    precision, recall, f1 = (f"{expected[key]:.3f}" for key in SCORE_FIELDS[3:])
    return CheckResult(True, _say(
        lang, "ch04.scores_correct", tp=expected["tp"], fp=expected["fp"], fn=expected["fn"],
        precision=precision, recall=recall, f1=f1,
    ))
