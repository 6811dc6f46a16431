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
  `piilab.inference.make_prediction`.

Both follow the pattern of `piilab.exercises`: validate the shape of the answer first, then
say what is wrong, in the reader's language, without printing the solution. All data here is
synthetic (``example.org`` addresses, ``555-01XX`` and ``010-0XXX`` phone numbers, a card
number that fails the Luhn check).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from piilab.exercises import CheckResult, _not_a_list, _say
from piilab.inference import make_prediction
from piilab.labels import LABELS
from piilab.parsing import parse_model_output, remove_think_blocks

__all__ = [
    "MASK_OUTPUT",
    "MASK_SOURCE",
    "PREDICTION_OUTPUTS",
    "PREDICTION_RECORDS",
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
    refused = _not_a_list(answer, lang, "(TYPE, VALUE) pairs", "(TYPE, VALUE) の組")
    if refused is not None:
        return refused
    pairs = []
    for item in answer:
        if not (isinstance(item, (tuple, list)) and len(item) == 2
                and all(isinstance(x, str) for x in item)):
            return CheckResult(False, _say(
                lang,
                en=f"{item!r} is not a (TYPE, VALUE) pair of two strings",
                ja=f"{item!r} は 2 つの文字列からなる (TYPE, VALUE) の組ではありません",
            ))
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
        return CheckResult(False, _say(
            lang,
            en=f"{repeated[0]} is listed twice: the parser keeps each candidate once, however "
            "often the model repeats it",
            ja=f"{repeated[0]} が 2 回出てきます。モデルが何度繰り返しても、"
            "パーサーは各候補を 1 回だけ残します",
        ))
    for label, value in pairs:
        pair = (label, value)
        normalized = label.strip().upper()
        if label != normalized and normalized in LABELS:
            return CheckResult(False, _say(
                lang,
                en=f"{pair}: write the type as the parser normalizes it, {normalized!r} "
                "(trimmed and uppercased)",
                ja=f"{pair}: 型はパーサーが正規化した形 {normalized!r} で書いてください"
                "(前後の空白を除き、大文字にします)",
            ))
        if normalized not in LABELS:
            return CheckResult(False, _say(
                lang,
                en=f"{pair}: {label!r} is not one of the labels, so the parser ignores that "
                "line: it is not a row at all",
                ja=f"{pair}: {label!r} はラベルではないので、パーサーはその行を無視します。"
                "そもそも行として扱われません",
            ))
        if pair in expected:
            continue
        if pair in think_rows and pair not in unmatched:
            return CheckResult(False, _say(
                lang,
                en=f"{pair} is only written inside the think block, and complete think blocks "
                "are removed before any row is read",
                ja=f"{pair} は思考ブロックの中にしか書かれていません。"
                "完結した思考ブロックは、行を読む前に取り除かれます",
            ))
        if pair in unmatched:
            return CheckResult(False, _say(
                lang,
                en=f"{pair} is a row of the output, but its value does not occur in the "
                "document: a hallucinated row is reported as unmatched and never masked",
                ja=f"{pair} は出力の行ですが、その値は文書に現れません。"
                "ハルシネーションの行は一致なしとして報告され、マスキングには使われません",
            ))
        same_digits = [c for c in expected if c[0] == label and _digits(value)
                       and _digits(c[1]) == _digits(value)]
        if same_digits:
            return CheckResult(False, _say(
                lang,
                en=f"{pair}: the candidate keeps the spelling of the model's row, not the "
                "document's; the masker then finds the document's spelling as a variant",
                ja=f"{pair}: 候補は文書の綴りではなく、モデルが書いた行の綴りのまま残ります。"
                "文書中の綴りは、マスキングのときに変形として見つかります",
            ))
        return CheckResult(False, _say(
            lang,
            en=f"{pair} is not a row of the output: candidates come from the model's rows, "
            "never from the document itself",
            ja=f"{pair} は出力の行ではありません。候補はモデルが書いた行から作られ、"
            "文書そのものからは作られません",
        ))
    missing = [pair for pair in expected if pair not in pairs]
    if missing:
        return CheckResult(False, _say(
            lang,
            en=f"{len(missing)} candidate(s) missing: read every line after the think block; "
            "a row counts when its type is a label and its value occurs in the document, "
            "literally or as a permitted variant",
            ja=f"候補があと {len(missing)} つ足りません。"
            "思考ブロックの後の行をすべて読んでください。型がラベルで、値が文書にそのまま、または認められた変形として現れる行が候補になります",
        ))
    return CheckResult(True, _say(
        lang,
        en=f"correct: {len(expected)} candidates are masked; the other "
        f"{len(parsed.rows) - len(expected)} row(s) and every other line are never used",
        ja=f"正解です: マスクに使われる候補は {len(expected)} つです。残りの "
        f"{len(parsed.rows) - len(expected)} 行と、それ以外の行は使われません",
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
    refused = _not_a_list(
        answer, lang, f"{len(PREDICTION_RECORDS)} dicts, one per record",
        f"レコードごとに 1 つ、計 {len(PREDICTION_RECORDS)} つの dict ",
    )
    if refused is not None:
        return refused
    lines = list(answer)
    if len(lines) != len(PREDICTION_RECORDS) or not all(isinstance(x, Mapping) for x in lines):
        return CheckResult(False, _say(
            lang,
            en=f"expected exactly {len(PREDICTION_RECORDS)} dicts, one per record, in the order "
            "of PREDICTION_RECORDS",
            ja=f"PREDICTION_RECORDS の順に、レコードごとに 1 つ、ちょうど "
            f"{len(PREDICTION_RECORDS)} つの dict が必要です",
        ))
    for number, (line, record) in enumerate(zip(lines, PREDICTION_RECORDS, strict=True),
                                            start=1):
        missing = [key for key in _LINE_KEYS if key not in line]
        extra = sorted(str(key) for key in line if key not in _LINE_KEYS)
        if missing or extra:
            return CheckResult(False, _say(
                lang,
                en=f"line {number}: a prediction line has exactly the keys id, output, "
                f"parse_success" + (f"; missing {', '.join(missing)}" if missing else "")
                + (f"; not expected {', '.join(extra)}" if extra else ""),
                ja=f"{number} 行目: 予測の行のキーは id、output、parse_success の 3 つだけです"
                + (f"。足りないキー: {', '.join(missing)}" if missing else "")
                + (f"。不要なキー: {', '.join(extra)}" if extra else ""),
            ))
        expected = make_prediction(record["id"], PREDICTION_OUTPUTS[record["id"]],
                                   record["source_text"])
        if line["id"] != expected["id"]:
            return CheckResult(False, _say(
                lang,
                en=f"line {number}: id must be the record's id, {expected['id']!r} (lines go in "
                "the order of the records)",
                ja=f"{number} 行目: id はレコードの id {expected['id']!r} にしてください"
                "(行はレコードの順に並べます)",
            ))
        if line["output"] != expected["output"]:
            cleaned = remove_think_blocks(expected["output"])
            stripped = isinstance(line["output"], str) and line["output"].strip() == cleaned.strip()
            return CheckResult(False, _say(
                lang,
                en=f"line {number}: output must be the model's raw output, unchanged"
                + (", think block included: the evaluator removes it itself" if stripped else
                   ": the evaluator parses it and counts hallucinated rows from it"),
                ja=f"{number} 行目: output にはモデルの生の出力を、手を加えずに入れてください"
                + ("。思考ブロックも含めます。取り除くのは評価コードの仕事です" if stripped else
                   "。評価コードがそれをパースし、ハルシネーションの行もそこから数えます"),
            ))
        flag = line["parse_success"]
        if not isinstance(flag, bool):
            return CheckResult(False, _say(
                lang,
                en=f"line {number}: parse_success is True or False, not {flag!r}",
                ja=f"{number} 行目: parse_success は True か False で、{flag!r} ではありません",
            ))
        if flag != expected["parse_success"]:
            return CheckResult(False, _say(
                lang,
                en=f"line {number}: parse_success is wrong. An output parses when, after complete "
                "think blocks are removed, it is empty or holds at least one TYPE<TAB>VALUE row "
                "that matches the document; other rows do not change that",
                ja=f"{number} 行目: parse_success が違います。"
                "完結した思考ブロックを取り除いた後で、出力が空であるか、"
                "文書と一致する TYPE<TAB>VALUE の行が少なくとも 1 つあれば、"
                "パースは成功です。ほかの行があってもなくても、それは変わりません",
            ))
    return CheckResult(True, _say(
        lang,
        en="correct: these are the lines make_prediction writes and piilab evaluate reads",
        ja="正解です: make_prediction が書き、piilab evaluate が読む行そのものです",
    ))
