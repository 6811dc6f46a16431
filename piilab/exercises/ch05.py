"""Checkers for chapter 05 ("Data augmentation workshop"): a skeleton by hand, a family split.

- `check_skeleton(answer)`: the learner writes the skeleton of `SKELETON_RECORD` by hand
  (every gold occurrence, spaced and re-separated spellings included, becomes ``{LABEL}``;
  every other ASCII digit run becomes ``{DIGITS}``). The expected answer is computed with
  `piilab.splits.skeleton`, the audit's own function.
- `check_family_split(answer)`: the learner splits the default corpus (`exercise_records()`,
  all 2,200 records) into ``train``/``validation``/``test`` without `family_split`. The
  checker looks the records up by id (so editing them changes nothing), audits the split with
  `piilab.splits.audit_splits`, and then checks the sizes against 80/10/10 (within
  `SIZE_TOLERANCE`) and that every split holds both languages.

Both follow the pattern of `piilab.exercises`: validate the shape of the answer first, then
say what is wrong, in the reader's language, without printing the solution. Messages name
labels, counts, split names and family ids, never a source text or a PII value. The record
below is synthetic (a ``010-0XXX`` phone number, an invented name).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from functools import cache
from typing import Any

from piilab.exercises import CheckResult, _say
from piilab.labels import LABELS
from piilab.matching import find_occurrences
from piilab.splits import DEFAULT_TARGETS, DIGITS_MARK, audit_splits, leak_free, skeleton

__all__ = [
    "SIZE_TOLERANCE",
    "SKELETON_RECORD",
    "check_family_split",
    "check_skeleton",
    "exercise_records",
]


# --------------------------------------------------------------------------------------------
# Exercise 1: a skeleton by hand
# --------------------------------------------------------------------------------------------

#: A delivery note: an order number (not PII), a name written twice (once spaced), a relative,
#: and one phone number written with two different separators.
SKELETON_RECORD: dict[str, Any] = {
    "id": "ex05-skeleton",
    "split": "train",
    "language": "ko",
    "source_text": "주문 2024-0815 배송 건: 수령인 김가상 님 대신 어머니가 받으셨습니다. "
    "연락처 010-0123-4567 / 김 가 상 님께 010 0123 4567 로 안내 문자 발송.",
    "entities": [
        {"type": "PERSON", "value": "김가상"},
        {"type": "REL", "value": "어머니"},
        {"type": "PHONE", "value": "010-0123-4567"},
    ],
    "target_tsv": "PERSON\t김가상\nREL\t어머니\nPHONE\t010-0123-4567",
    "template_id": "ex05-delivery",
}

#: A placeholder in a skeleton: ``{PERSON}``, ``{DIGITS}`` (or anything else in braces).
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_DIGIT_RUN = re.compile(r"[0-9]+")
_DIGITS_NAME = DIGITS_MARK.strip("{}")


def _hint(label: str, lang: str | None) -> str:
    """Where the missing occurrences of `label` usually hide."""
    if label == "PERSON":
        return _say(lang, en="a name written with spaces between its syllables is the same name",
                    ja="音節のあいだに空白を入れて書いた名前も、同じ名前です")
    if label == _DIGITS_NAME:
        return _say(lang, en="each run of digits outside a gold value is one {DIGITS}",
                    ja="正解の値の外にある数字の連続は、ひと続きごとに {DIGITS} 1 つです")
    return _say(lang, en=f"a gold number becomes one {{{label}}} wherever it occurs, whatever "
                "separators it is written with",
                ja=f"正解の番号は、どんな区切り文字で書かれていても、出現箇所ごとに {{{label}}} "
                "1 つになります")


def check_skeleton(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 05, exercise 1: the skeleton of `SKELETON_RECORD`, written by hand.

    Reports, in this order: a wrong shape; a gold value (or a variant of it) still in the
    answer; digits left in the answer; a placeholder that is not ``{LABEL}`` or ``{DIGITS}``;
    a placeholder that occurs too often or too rarely; placeholders in the wrong order; and
    the first place where the text between the placeholders differs from the source.
    """
    if not isinstance(answer, str):
        return CheckResult(False, _say(
            lang,
            en=f"expected the skeleton as one string, got {type(answer).__name__}",
            ja=f"骨格は 1 つの文字列で書いてください({type(answer).__name__} が渡されました)",
        ))
    record = SKELETON_RECORD
    expected = skeleton(record["source_text"], record["entities"])
    if answer == expected:
        return CheckResult(True, _say(
            lang,
            en="correct: this is exactly what piilab.splits.skeleton computes",
            ja="正解です: piilab.splits.skeleton の計算結果と完全に一致します",
        ))
    # 1. PII left in the skeleton.
    for entity in record["entities"]:
        if find_occurrences(answer, entity["type"], entity["value"]):
            return CheckResult(False, _say(
                lang,
                en=f"a {entity['type']} value is still in your skeleton: every occurrence of "
                f"a gold value becomes {{{entity['type']}}} ({_hint(entity['type'], 'en')})",
                ja=f"{entity['type']} の値が骨格に残っています。正解の値はすべての出現箇所を "
                f"{{{entity['type']}}} に置き換えます({_hint(entity['type'], 'ja')})",
            ))
    # 2. Digits left over.
    runs = len(_DIGIT_RUN.findall(answer))
    if runs:
        return CheckResult(False, _say(
            lang,
            en=f"{runs} run(s) of digits are left: digits that are not part of a gold value "
            "become {DIGITS}, one per run",
            ja=f"数字の連続が {runs} か所残っています。正解の値に含まれない数字は、"
            "ひと続きごとに {DIGITS} に置き換えます",
        ))
    # 3. Placeholders: names, then counts, then order.
    got = _PLACEHOLDER.findall(answer)
    want = _PLACEHOLDER.findall(expected)
    unknown = [name for name in got if name not in LABELS and name != _DIGITS_NAME]
    if unknown:
        return CheckResult(False, _say(
            lang,
            en=f"{{{unknown[0]}}} is not a placeholder: write {{LABEL}} with a label of "
            "piilab.LABELS (uppercase), or {DIGITS}",
            ja=f"{{{unknown[0]}}} はプレースホルダーではありません。piilab.LABELS のラベル"
            "(大文字)で {LABEL} と書くか、{DIGITS} と書いてください",
        ))
    have, need = Counter(got), Counter(want)
    for name in [*LABELS, _DIGITS_NAME]:
        if have[name] != need[name]:
            return CheckResult(False, _say(
                lang,
                en=f"{{{name}}} appears {have[name]} time(s), which is "
                f"{'too few' if have[name] < need[name] else 'too many'}: "
                f"{_hint(name, 'en')}",
                ja=f"{{{name}}} が {have[name]} 回出てきますが、"
                f"{'少なすぎます' if have[name] < need[name] else '多すぎます'}。"
                f"{_hint(name, 'ja')}",
            ))
    if got != want:
        return CheckResult(False, _say(
            lang,
            en="the right placeholders, in the wrong order: follow the source from left to right",
            ja="プレースホルダーの種類と数は合っていますが、順序が違います。原文を左から右へたどってください",
        ))
    # 4. The text around the placeholders.
    pieces, wanted = _PLACEHOLDER.split(answer)[::2], _PLACEHOLDER.split(expected)[::2]
    for position, (mine, theirs) in enumerate(zip(pieces, wanted, strict=True)):
        if mine != theirs:
            where_en = "before the first placeholder" if position == 0 else (
                f"after placeholder #{position}")
            where_ja = "最初のプレースホルダーの前" if position == 0 else (
                f"{position} 番目のプレースホルダーの後ろ")
            return CheckResult(False, _say(
                lang,
                en=f"the text {where_en} differs from the source: keep every other character "
                "(spaces and punctuation included) exactly as it is",
                ja=f"{where_ja}の文字が原文と違います。置き換える部分以外は、空白や句読点も含めて"
                "原文のまま残してください",
            ))
    raise AssertionError("unreachable: equal pieces and placeholders make equal strings")


# --------------------------------------------------------------------------------------------
# Exercise 2: a family split by hand
# --------------------------------------------------------------------------------------------

#: How far (in fraction of all records) a split may land from its 80/10/10 target.
SIZE_TOLERANCE = 0.05


@cache
def _corpus() -> tuple[dict, ...]:
    from piilab.generator import generate_dataset

    return tuple(r for records in generate_dataset().values() for r in records)


def exercise_records() -> list[dict]:
    """The records exercise 2 splits: the default corpus (seed 42), all splits, as copies."""
    return [dict(r) for r in _corpus()]


def _ids_of(answer: Any, lang: str | None) -> dict[str, list[str]] | CheckResult:
    """`answer` as ``{split: [record ids]}``, or a failed CheckResult saying what is wrong."""
    names = list(DEFAULT_TARGETS)
    if not isinstance(answer, Mapping):
        return CheckResult(False, _say(
            lang,
            en=f"expected a dict {{split name: list of records}}, got {type(answer).__name__}",
            ja=f"{{分割名: レコードのリスト}} の dict を期待していますが、"
            f"{type(answer).__name__} が渡されました",
        ))
    if sorted(map(str, answer)) != sorted(names):
        return CheckResult(False, _say(
            lang,
            en=f"the split names must be exactly {', '.join(names)}; "
            f"got {', '.join(map(str, answer)) or 'none'}",
            ja=f"分割名はちょうど {', '.join(names)} にしてください"
            f"(渡されたのは {', '.join(map(str, answer)) or 'なし'})",
        ))
    out: dict[str, list[str]] = {}
    for name in names:
        records = answer[name]
        if isinstance(records, str | bytes | Mapping) or not hasattr(records, "__iter__"):
            return CheckResult(False, _say(
                lang,
                en=f"{name} must be a list of records, got {type(records).__name__}",
                ja=f"{name} はレコードのリストにしてください({type(records).__name__} "
                "が渡されました)",
            ))
        ids = []
        for record in records:
            if not isinstance(record, Mapping) or not isinstance(record.get("id"), str):
                return CheckResult(False, _say(
                    lang,
                    en=f"every item of {name} must be a record (a dict with an 'id')",
                    ja=f"{name} の要素はすべてレコード('id' を持つ dict)にしてください",
                ))
            ids.append(record["id"])
        out[name] = ids
    return out


def check_family_split(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 05, exercise 2: a leak-free 80/10/10 split of `exercise_records()`.

    Reports, in this order: a wrong shape; records missing, repeated or unknown (counts);
    what the audit finds shared between two splits (families, skeletons, sources); a split
    whose share of the records is more than `SIZE_TOLERANCE` away from its target (the
    furthest one); a split
    without Korean or without English records.
    """
    ids = _ids_of(answer, lang)
    if isinstance(ids, CheckResult):
        return ids
    by_id = {r["id"]: r for r in _corpus()}
    placed = Counter(i for split_ids in ids.values() for i in split_ids)
    unknown = sum(n for i, n in placed.items() if i not in by_id)
    repeated = sum(n - 1 for i, n in placed.items() if i in by_id and n > 1)
    missing = sum(i not in placed for i in by_id)
    if unknown:
        return CheckResult(False, _say(
            lang,
            en=f"{unknown} record(s) are not in exercise_records(): split those records, "
            "unchanged ids",
            ja=f"exercise_records() にないレコードが {unknown} 件あります。"
            "id を変えずに、そのレコードを分割してください",
        ))
    if repeated or missing:
        return CheckResult(False, _say(
            lang,
            en=f"every record goes into exactly one split: {missing} missing, "
            f"{repeated} placed more than once",
            ja=f"各レコードはちょうど 1 つの分割に入れます。抜けているもの {missing} 件、"
            f"2 回以上入っているもの {repeated} 件",
        ))
    splits = {name: [by_id[i] for i in split_ids] for name, split_ids in ids.items()}
    audit = audit_splits(splits)
    if not leak_free(audit):
        pair, counts = max(audit["pairs"].items(),
                           key=lambda item: (item[1]["shared_families"],
                                             item[1]["shared_skeletons"]))
        return CheckResult(False, _say(
            lang,
            en=f"the audit finds leakage: {pair} share {counts['shared_families']} template "
            f"famil{'y' if counts['shared_families'] == 1 else 'ies'} and "
            f"{counts['shared_skeletons']} skeleton(s); put every record of a family "
            "(template_id) into the same split",
            ja=f"監査でリーケージが見つかりました: {pair} がテンプレートファミリーを "
            f"{counts['shared_families']} 個、骨格を {counts['shared_skeletons']} 個"
            "共有しています。"
            "同じファミリー(template_id)のレコードは、すべて同じ分割に入れてください",
        ))
    total = sum(len(records) for records in splits.values())
    shares = {name: len(splits[name]) / total for name in DEFAULT_TARGETS}
    name = max(DEFAULT_TARGETS, key=lambda n: abs(shares[n] - DEFAULT_TARGETS[n]))
    share, fraction = shares[name], DEFAULT_TARGETS[name]
    if abs(share - fraction) > SIZE_TOLERANCE:
        return CheckResult(False, _say(
            lang,
            en=f"no leakage, but {name} holds {share:.1%} of the records; its target is "
            f"{fraction:.0%} (±{SIZE_TOLERANCE:.0%}): move whole families between splits",
            ja=f"リーケージはありませんが、{name} にレコードの {share:.1%} が入っています。"
            f"目標は {fraction:.0%}(±{SIZE_TOLERANCE:.0%})です。"
            "ファミリー単位で分割間を移してください",
        ))
    for name, records in splits.items():
        languages = {r["language"] for r in records}
        for language, en_name, ja_name in (("ko", "Korean", "韓国語"), ("en", "English", "英語")):
            if language not in languages:
                return CheckResult(False, _say(
                    lang,
                    en=f"no leakage and good sizes, but {name} has no {en_name} record: "
                    "balance each language on its own",
                    ja=f"リーケージもサイズも問題ありませんが、{name} に{ja_name}のレコードが"
                    "ありません。言語ごとに分けてバランスを取ってください",
                ))
    sizes = " / ".join(f"{name} {len(records)}" for name, records in splits.items())
    return CheckResult(True, _say(
        lang,
        en=f"correct: the audit finds nothing shared, and the sizes are close to 80/10/10 "
        f"({sizes})",
        ja=f"正解です: 監査で共有は見つからず、サイズも 80/10/10 に近くなっています({sizes})",
    ))
