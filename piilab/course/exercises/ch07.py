"""Checkers for chapter 07 ("Inference and results"): which rows get masked, and what a
prediction line holds.

- `check_masked_rows(answer)`: the learner reads `MASK_OUTPUT`, a raw model output for
  `MASK_SOURCE` with a think block, prose, a lowercase type, an unknown type, a repeated row,
  a numeric variant and two hallucinated rows, and lists the ``(TYPE, VALUE)`` pairs that
  masking will use. The expected answer is computed with `piilab.parse_model_output`
  (its ``candidates``).
- `check_prediction_lines(answer)`: the learner writes the two prediction lines
  ``{"id", "output", "parse_success"}`` for `PREDICTION_RECORDS` and `PREDICTION_OUTPUTS`,
  as ``piilab predict`` would. The expected lines are computed with
  `piilab.predictions.make_prediction`.
- `check_mask_everything(mask_everything, records)`: the learner writes a "model" that leaves
  no document of `records` (the holdout, on the page) leaking, whatever the documents say. The
  checker scores it with `piilab.evaluate` and, once nothing leaks, reports what that cost:
  the over-redaction rate and F1. It teaches that a leak rate is read with over-redaction.

Both follow the pattern of `piilab.course.exercises`: validate the shape of the answer first, then
say what is wrong, in the reader's language, without printing the solution. All data here is
synthetic (``example.org`` addresses, ``555-01XX`` and ``010-0XXX`` phone numbers, a card
number that fails the Luhn check).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from piilab.course.exercises import CheckResult, _not_a_list, _say
from piilab.evaluation import evaluate
from piilab.labels import LABELS, normalize_label
from piilab.parsing import parse_model_output, remove_think_blocks
from piilab.predictions import make_prediction

__all__ = [
    "MASK_OUTPUT",
    "MASK_SOURCE",
    "PREDICTION_OUTPUTS",
    "PREDICTION_RECORDS",
    "check_mask_everything",
    "check_masked_rows",
    "check_prediction_lines",
]


# --------------------------------------------------------------------------------------------
# Exercise 1: which rows will be masked?
# --------------------------------------------------------------------------------------------

#: A counselling note: a name (written twice, once spaced), a relationship word, a card number,
#: an e-mail address and a phone number.
MASK_SOURCE = (
    "상담 메모: 고객 박민서 님이 남편 명의 카드 5276-1382-4366-6392 분실을 신고했습니다. "
    "회신은 minseo.park@example.org 또는 010-0456-7788 로 부탁하셨습니다. 서명: 박 민 서"
)

#: What a model answered for `MASK_SOURCE`, raw: it thought first, then wrote its rows.
MASK_OUTPUT = (
    "<think>\nThe note names 박민서 and a card. Rows:\nPERSON\t박민서\n"
    "EMAIL\tminseo.park@example.org\n</think>\n"
    "Here are the rows:\n"
    "person\t박민서\n"
    "REL\t남편\n"
    "CARD\t5276 1382 4366 6392\n"
    "EMAIL\tminseo.park@example.com\n"
    "PHONE\t010-0456-7788\n"
    "PHONE\t010-0456-7788\n"
    "NAME\t박민서\n"
    "ADDRESS\t서울특별시 중구 세종대로 110"
)

_THINK_CONTENT = re.compile(r"<think>(.*?)</think>", re.DOTALL)


def _digits(text: str) -> str:
    return "".join(ch for ch in text if "0" <= ch <= "9")


def _as_pairs(answer: Any, lang: str | None) -> list[tuple[str, str]] | CheckResult:
    """`answer` as a list of ``(TYPE, VALUE)`` string pairs, or a failed CheckResult."""
    refused = _not_a_list(answer, lang, "ch07.what_pairs")
    if refused is not None:
        return refused
    pairs = []
    for item in answer:
        if not (isinstance(item, (tuple, list)) and len(item) == 2
                and all(isinstance(x, str) for x in item)):
            return CheckResult(False, _say(lang, "ch07.not_a_pair", item=item))
        pairs.append((item[0], item[1]))
    return pairs


def check_masked_rows(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 07, exercise 1: the ``(TYPE, VALUE)`` pairs of `MASK_OUTPUT` that masking of
    `MASK_SOURCE` will use, i.e. the ``candidates`` of `parse_model_output`.

    Order does not matter. Reports, in this order: a wrong shape; a pair listed twice; a type
    written differently from the parser's normalized form; a type that is not a label; a pair
    that only occurs inside the think block; a hallucinated row; a value spelled as in the
    document rather than as in the row; any other pair that is no row of the output; pairs
    still missing (how many).
    """
    pairs = _as_pairs(answer, lang)
    if isinstance(pairs, CheckResult):
        return pairs
    parsed = parse_model_output(MASK_OUTPUT, MASK_SOURCE)
    expected = [(c.type, c.value) for c in parsed.candidates]
    unmatched = {(c.type, c.value) for c in parsed.unmatched}
    think_rows = {
        (c.type, c.value)
        for block in _THINK_CONTENT.findall(MASK_OUTPUT)
        for c in parse_model_output(block, MASK_SOURCE).rows
    }
    repeated = sorted({pair for pair in pairs if pairs.count(pair) > 1})
    if repeated:
        return CheckResult(False, _say(lang, "ch07.pair_repeated", pair=repeated[0]))
    for label, value in pairs:
        pair = (label, value)
        normalized = normalize_label(label)
        if label != normalized and normalized in LABELS:
            return CheckResult(False, _say(
                lang, "ch07.type_not_normalized", pair=pair, label=normalized
            ))
        if normalized not in LABELS:
            return CheckResult(False, _say(lang, "ch07.type_not_a_label", pair=pair, label=label))
        if pair in expected:
            continue
        if pair in think_rows and pair not in unmatched:
            return CheckResult(False, _say(lang, "ch07.pair_in_think_block", pair=pair))
        if pair in unmatched:
            return CheckResult(False, _say(lang, "ch07.pair_hallucinated", pair=pair))
        same_digits = [c for c in expected if c[0] == label and _digits(value)
                       and _digits(c[1]) == _digits(value)]
        if same_digits:
            return CheckResult(False, _say(lang, "ch07.pair_document_spelling", pair=pair))
        return CheckResult(False, _say(lang, "ch07.pair_not_a_row", pair=pair))
    missing = [pair for pair in expected if pair not in pairs]
    if missing:
        return CheckResult(False, _say(lang, "ch07.candidates_missing", count=len(missing)))
    return CheckResult(True, _say(
        lang, "ch07.candidates_correct", count=len(expected),
        rest=len(parsed.rows) - len(expected),
    ))


# --------------------------------------------------------------------------------------------
# Exercise 2: write the prediction lines
# --------------------------------------------------------------------------------------------

#: Two documents to predict, in this order.
PREDICTION_RECORDS: tuple[dict[str, Any], ...] = (
    {"id": "ex07-a", "source_text": "Dear Mina Cho, please call us on 555-0147 about your card."},
    {"id": "ex07-b",
     "source_text": "고객 이서준 님이 주소 변경을 요청했습니다. 처리 후 연락드리겠습니다."},
)

#: The raw model output for each record of `PREDICTION_RECORDS`, by record id. The second
#: model ran out of ``max_new_tokens`` while it was still thinking.
PREDICTION_OUTPUTS: dict[str, str] = {
    "ex07-a": "<think>One name and one phone number.</think>\nPERSON\tMina Cho\nPHONE\t555-0199",
    "ex07-b": "<think>\n고객 이름은 이서준 님이고, 주소는 아직 나오지 않았으니 행은",
}

_LINE_KEYS = ("id", "output", "parse_success")


def check_prediction_lines(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 07, exercise 2: the prediction lines of `PREDICTION_OUTPUTS`, one dict
    ``{"id", "output", "parse_success"}`` per record of `PREDICTION_RECORDS`, in order.

    Reports, in this order: a wrong shape (a list of two dicts); missing or extra keys; a
    wrong id; an output that is not the raw model output (think block removed, rows
    rewritten); a flag that is not a bool; a wrong flag, with the rule that decides it.
    """
    refused = _not_a_list(answer, lang, "ch07.what_prediction_dicts",
                          count=len(PREDICTION_RECORDS))
    if refused is not None:
        return refused
    lines = list(answer)
    if len(lines) != len(PREDICTION_RECORDS) or not all(isinstance(x, Mapping) for x in lines):
        return CheckResult(False, _say(lang, "ch07.lines_wrong_count",
                                       count=len(PREDICTION_RECORDS)))
    for number, (line, record) in enumerate(zip(lines, PREDICTION_RECORDS, strict=True),
                                            start=1):
        missing = [key for key in _LINE_KEYS if key not in line]
        extra = sorted(str(key) for key in line if key not in _LINE_KEYS)
        if missing or extra:
            key = ("ch07.line_keys_missing_and_extra" if missing and extra
                   else "ch07.line_keys_missing" if missing else "ch07.line_keys_extra")
            return CheckResult(False, _say(
                lang, key, number=number, missing=", ".join(missing), extra=", ".join(extra)
            ))
        expected = make_prediction(record["id"], PREDICTION_OUTPUTS[record["id"]],
                                   record["source_text"])
        if line["id"] != expected["id"]:
            return CheckResult(False, _say(
                lang, "ch07.line_wrong_id", number=number, id=expected["id"]
            ))
        if line["output"] != expected["output"]:
            cleaned = remove_think_blocks(expected["output"])
            stripped = isinstance(line["output"], str) and line["output"].strip() == cleaned.strip()
            return CheckResult(False, _say(
                lang, "ch07.output_think_removed" if stripped else "ch07.output_changed",
                number=number,
            ))
        flag = line["parse_success"]
        if not isinstance(flag, bool):
            return CheckResult(False, _say(lang, "ch07.flag_not_a_bool", number=number, flag=flag))
        if flag != expected["parse_success"]:
            return CheckResult(False, _say(lang, "ch07.flag_wrong", number=number))
    return CheckResult(True, _say(lang, "ch07.lines_correct"))


# --------------------------------------------------------------------------------------------
# Exercise 4: no document leaks, and what that costs
# --------------------------------------------------------------------------------------------


def check_mask_everything(mask_everything: Any, records: Iterable[Mapping[str, Any]], *,
                          lang: str | None = None) -> CheckResult:
    """Chapter 07, exercise 4: `mask_everything(text)` returns a raw model output (rows
    ``TYPE<TAB>VALUE``) for each document of `records`, and no document may leak.

    Reports, in this order: an answer that is not a function; an output that is not a string
    (naming the record); how many documents still leak. On success it states the
    over-redaction rate and the entity F1 of that output, the price of leaking nothing. No
    message quotes a document, a value or an output.
    """
    if not callable(mask_everything):
        return CheckResult(False, _say(lang, "ch07.not_a_function",
                                       type=type(mask_everything).__name__))
    documents = list(records)
    predictions = []
    for record in documents:
        output = mask_everything(record["source_text"])
        if not isinstance(output, str):
            return CheckResult(False, _say(lang, "ch07.output_not_a_string", id=record["id"],
                                           type=type(output).__name__))
        predictions.append(make_prediction(record["id"], output, record["source_text"]))
    result = evaluate(documents, predictions)
    leaking = round(result.documents.leak_rate * len(documents))
    if leaking:
        return CheckResult(False, _say(lang, "ch07.everything_still_leaks", count=leaking,
                                       total=len(documents)))
    return CheckResult(True, _say(
        lang, "ch07.everything_correct", total=len(documents),
        over=result.entities.over_redaction_rate, f1=result.entity.f1,
    ))

