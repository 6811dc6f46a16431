"""Checkers for chapter 04 ("Evaluation"): find a leak by its offsets, score two documents by hand.

- `check_leak_offsets(answer)`: the learner reads the masked text of `LEAK_RECORD` (masked
  with the candidates of `LEAK_OUTPUT`) and lists the ``(start, end)`` offsets of the gold
  occurrences that are not fully masked. The expected answer is computed with
  `piilab.evaluation.uncovered_occurrences`, the evaluator's own leak check.
- `check_entity_scores(answer)`: the learner computes tp/fp/fn, precision, recall and F1 of
  `SCORING_OUTPUTS` on `SCORING_RECORDS` by hand. The expected answer is computed with
  `piilab.evaluation.evaluate`.

Both follow the pattern of `piilab.exercises`: validate the shape of the answer first, then
say what is wrong, in the reader's language, without printing the solution. All data here is
synthetic (``example.com`` addresses, ``555-01XX`` and ``010-0XXX`` phone numbers).
"""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Real
from typing import Any

from piilab.evaluation import evaluate, score_document, uncovered_occurrences
from piilab.exercises import CheckResult, _not_a_list, _say
from piilab.inference import make_prediction

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
    refused = _not_a_list(answer, lang, "(start, end) pairs", "(start, end) の組")
    if refused is not None:
        return refused
    pairs = []
    for item in answer:
        ok_shape = (
            isinstance(item, (tuple, list)) and len(item) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) for x in item)
        )
        if not ok_shape:
            return CheckResult(False, _say(
                lang,
                en=f"{item!r} is not a (start, end) pair of two integers",
                ja=f"{item!r} は 2 つの整数からなる (start, end) の組ではありません",
            ))
        start, end = item
        if not 0 <= start < end <= size:
            return CheckResult(False, _say(
                lang,
                en=f"({start}, {end}) is not a span of the source: offsets are half-open, "
                f"0 <= start < end <= {size}",
                ja=f"({start}, {end}) は原文の範囲ではありません。オフセットは半開区間で、"
                f"0 <= start < end <= {size} です",
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
        return CheckResult(False, _say(
            lang,
            en=f"{repeated[0]} is listed twice: list each occurrence once",
            ja=f"{repeated[0]} が 2 回出てきます。各出現箇所は 1 回だけ書いてください",
        ))
    for start, end in sorted(pairs):
        if (start, end) in leaked:
            continue
        if all(i in covered for i in range(start, end)):
            return CheckResult(False, _say(
                lang,
                en=f"({start}, {end}): every character there is masked, so nothing leaks there",
                ja=f"({start}, {end}): そこは 1 文字残らずマスクされているので、漏洩はありません",
            ))
        if any(start < e and s < end for s, e in leaked):
            return CheckResult(False, _say(
                lang,
                en=f"({start}, {end}) touches a leak, but its bounds are off: give the whole "
                "occurrence of the gold value (or of its variant), from its first to its last "
                "character, not only the exposed characters",
                ja=f"({start}, {end}) は漏洩箇所にかかっていますが、範囲がずれています。"
                "露出した文字だけでなく、正解の値(またはその変形)の出現箇所全体を、"
                "最初の文字から最後の文字まで指定してください",
            ))
        return CheckResult(False, _say(
            lang,
            en=f"({start}, {end}) is not an occurrence of a gold value: compare the span with "
            "the gold entities and with the masked text",
            ja=f"({start}, {end}) は正解の値の出現箇所ではありません。"
            "正解のエンティティとマスク済みテキストを見比べてください",
        ))
    missing = [pair for pair in leaked if pair not in pairs]
    if missing:
        return CheckResult(False, _say(
            lang,
            en=f"{len(missing)} leaked occurrence(s) still missing: check every occurrence of "
            "every gold value, variant spellings included, character by character",
            ja=f"漏洩している出現箇所があと {len(missing)} つあります。"
            "すべての正解の値について、変形した綴りも含め、出現箇所を 1 文字ずつ確かめてください",
        ))
    return CheckResult(True, _say(
        lang,
        en=f"correct: {len(leaked)} gold occurrence(s) are not fully masked",
        ja=f"正解です: 完全にはマスクされていない正解の出現箇所は {len(leaked)} つです",
    ))


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

_COUNT_HINTS = {
    "tp": (
        "a true positive is a (TYPE, VALUE) pair in both sets of the same document, after "
        "trimming and uppercasing the type; a pair listed twice counts once",
        "真陽性とは、同じ文書の両方の集合にある (TYPE, VALUE) の組です。型は前後の空白を除いて"
        "大文字にしてから比べ、2 回書かれた組も 1 回と数えます",
    ),
    "fp": (
        "every distinct predicted pair that is not gold counts once, also a value that is not "
        "in the document or that is spelled differently from the gold value",
        "正解にない予測の組は、重複を除いてそれぞれ 1 回数えます。文書にない値や、"
        "正解と綴りが違う値も含みます",
    ),
    "fn": (
        "every gold pair that the prediction does not list exactly, spelling and type included, "
        "counts once",
        "予測が綴りも型もそのとおりには挙げていない正解の組を、それぞれ 1 回数えます",
    ),
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
    return evaluate(SCORING_RECORDS, predictions)["entity"]


def check_entity_scores(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 04, exercise 2: entity tp/fp/fn, precision, recall and F1 of `SCORING_OUTPUTS`.

    `answer` is a dict with the keys of `SCORE_FIELDS`: integer counts, and rates as numbers
    in [0, 1] (two decimals are enough). Reports a wrong shape, then the first wrong count
    (too high or too low, with the counting rule), then the first wrong rate (with its
    formula).
    """
    if not isinstance(answer, Mapping):
        return CheckResult(False, _say(
            lang,
            en=f"expected a dict with the keys {', '.join(SCORE_FIELDS)}, "
            f"got {type(answer).__name__}",
            ja=f"キー {', '.join(SCORE_FIELDS)} を持つ dict を期待していますが、"
            f"{type(answer).__name__} が渡されました",
        ))
    missing = [key for key in SCORE_FIELDS if key not in answer]
    if missing:
        return CheckResult(False, _say(
            lang,
            en=f"missing key(s): {', '.join(missing)}",
            ja=f"キーが足りません: {', '.join(missing)}",
        ))
    for key in SCORE_FIELDS[:3]:
        value = answer[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return CheckResult(False, _say(
                lang,
                en=f"{key} is a count: write a whole number >= 0, not {value!r}",
                ja=f"{key} は件数です。{value!r} ではなく 0 以上の整数を書いてください",
            ))
    for key in SCORE_FIELDS[3:]:
        value = answer[key]
        if not isinstance(value, Real) or isinstance(value, bool) or not 0 <= value <= 1:
            return CheckResult(False, _say(
                lang,
                en=f"{key} is a rate: write a number between 0 and 1, not {value!r}",
                ja=f"{key} は割合です。{value!r} ではなく 0 から 1 までの数を書いてください",
            ))

    expected = _expected_scores()
    for key in SCORE_FIELDS[:3]:
        if answer[key] != expected[key]:
            en_hint, ja_hint = _COUNT_HINTS[key]
            high = answer[key] > expected[key]
            return CheckResult(False, _say(
                lang,
                en=f"{key} is too {'high' if high else 'low'}: {en_hint}",
                ja=f"{key} が{'多すぎ' if high else '少なすぎ'}ます。{ja_hint}",
            ))
    for key in SCORE_FIELDS[3:]:
        if abs(answer[key] - expected[key]) > _TOLERANCE:
            formula = _RATE_FORMULAS[key]
            return CheckResult(False, _say(
                lang,
                en=f"the counts are right, but {key} is not: {key} = {formula}, computed once "
                "from the totals of both documents (not per document)",
                ja=f"件数は合っていますが、{key} が違います。{key} = {formula} です。"
                "文書ごとではなく、2 つの文書を合計した件数から一度だけ計算します",
            ))
    rates = [f"{expected[key]:.3f}" for key in SCORE_FIELDS[3:]]
    return CheckResult(True, _say(
        lang,
        en=f"correct: tp {expected['tp']}, fp {expected['fp']}, fn {expected['fn']}; "
        f"precision {rates[0]}, recall {rates[1]}, F1 {rates[2]}",
        ja=f"正解です: tp {expected['tp']}、fp {expected['fp']}、fn {expected['fn']}。"
        f"適合率 {rates[0]}、再現率 {rates[1]}、F1 {rates[2]}",
    ))
