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

Both follow the pattern of `piilab.course.exercises`: validate the shape of the answer first, then
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

from piilab.course.exercises import CheckResult, _say
from piilab.labels import LABELS
from piilab.matching import find_occurrences
from piilab.splits import DEFAULT_TARGETS, DIGITS_MARK, audit_splits, skeleton

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
        return _say(lang, "ch05.hint_person")
    if label == _DIGITS_NAME:
        return _say(lang, "ch05.hint_digits")
    return _say(lang, "ch05.hint_number", label=label)


def check_skeleton(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 05, exercise 1: the skeleton of `SKELETON_RECORD`, written by hand.

    Reports, in this order: a wrong shape; a gold value (or a variant of it) still in the
    answer; digits left in the answer; a placeholder that is not ``{LABEL}`` or ``{DIGITS}``;
    a placeholder that occurs too often or too rarely; placeholders in the wrong order; and
    the first place where the text between the placeholders differs from the source.
    """
    if not isinstance(answer, str):
        return CheckResult(False, _say(lang, "ch05.skeleton_not_a_string",
                                       type=type(answer).__name__))
    record = SKELETON_RECORD
    expected = skeleton(record["source_text"], record["entities"])
    if answer == expected:
        return CheckResult(True, _say(lang, "ch05.skeleton_correct"))
    # 1. PII left in the skeleton.
    for entity in record["entities"]:
        if find_occurrences(answer, entity["type"], entity["value"]):
            label = entity["type"]
            return CheckResult(False, _say(
                lang, "ch05.pii_left", label=label, hint=_hint(label, lang)
            ))
    # 2. Digits left over.
    runs = len(_DIGIT_RUN.findall(answer))
    if runs:
        return CheckResult(False, _say(lang, "ch05.digits_left", runs=runs))
    # 3. Placeholders: names, then counts, then order.
    got = _PLACEHOLDER.findall(answer)
    want = _PLACEHOLDER.findall(expected)
    unknown = [name for name in got if name not in LABELS and name != _DIGITS_NAME]
    if unknown:
        return CheckResult(False, _say(lang, "ch05.not_a_placeholder", name=unknown[0]))
    have, need = Counter(got), Counter(want)
    for name in [*LABELS, _DIGITS_NAME]:
        if have[name] != need[name]:
            key = ("ch05.placeholder_too_few" if have[name] < need[name]
                   else "ch05.placeholder_too_many")
            return CheckResult(False, _say(
                lang, key, name=name, count=have[name], hint=_hint(name, lang)
            ))
    if got != want:
        return CheckResult(False, _say(lang, "ch05.placeholders_wrong_order"))
    # 4. The text around the placeholders.
    pieces, wanted = _PLACEHOLDER.split(answer)[::2], _PLACEHOLDER.split(expected)[::2]
    for position, (mine, theirs) in enumerate(zip(pieces, wanted, strict=True)):
        if mine != theirs:
            where = (_say(lang, "ch05.where_before_first") if position == 0
                     else _say(lang, "ch05.where_after_placeholder", position=position))
            return CheckResult(False, _say(lang, "ch05.text_differs", where=where))
    raise AssertionError("unreachable: equal pieces and placeholders make equal strings")


# --------------------------------------------------------------------------------------------
# Exercise 2: a family split by hand
# --------------------------------------------------------------------------------------------

#: How far (in fraction of all records) a split may land from its 80/10/10 target.
SIZE_TOLERANCE = 0.05

#: The languages every split must hold, in the order they are checked, with the message key
#: of their name.
_LANGUAGE_NAMES = {"ko": "ch05.language_ko", "en": "ch05.language_en"}


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
        return CheckResult(False, _say(lang, "ch05.split_not_a_dict", type=type(answer).__name__))
    if sorted(map(str, answer)) != sorted(names):
        got = ", ".join(map(str, answer)) or _say(lang, "ch05.no_split_names")
        return CheckResult(False, _say(
            lang, "ch05.split_names_wrong", names=", ".join(names), got=got
        ))
    out: dict[str, list[str]] = {}
    for name in names:
        records = answer[name]
        if isinstance(records, str | bytes | Mapping) or not hasattr(records, "__iter__"):
            return CheckResult(False, _say(
                lang, "ch05.split_not_a_list", name=name, type=type(records).__name__
            ))
        ids = []
        for record in records:
            if not isinstance(record, Mapping) or not isinstance(record.get("id"), str):
                return CheckResult(False, _say(lang, "ch05.split_item_not_a_record", name=name))
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
        return CheckResult(False, _say(lang, "ch05.records_unknown", count=unknown))
    if repeated or missing:
        return CheckResult(False, _say(
            lang, "ch05.records_missing_or_repeated", missing=missing, repeated=repeated
        ))
    splits = {name: [by_id[i] for i in split_ids] for name, split_ids in ids.items()}
    audit = audit_splits(splits)
    if not audit.leak_free:
        pair, counts = max(audit.pairs.items(),
                           key=lambda item: (item[1].shared_families,
                                             item[1].shared_skeletons))
        families = counts.shared_families
        return CheckResult(False, _say(
            lang, "ch05.split_leakage_one_family" if families == 1 else "ch05.split_leakage",
            pair=pair, families=families, skeletons=counts.shared_skeletons,
        ))
    total = sum(len(records) for records in splits.values())
    shares = {name: len(splits[name]) / total for name in DEFAULT_TARGETS}
    name = max(DEFAULT_TARGETS, key=lambda n: abs(shares[n] - DEFAULT_TARGETS[n]))
    share, fraction = shares[name], DEFAULT_TARGETS[name]
    if abs(share - fraction) > SIZE_TOLERANCE:
        return CheckResult(False, _say(
            lang, "ch05.split_size", name=name, share=share, target=fraction,
            tolerance=SIZE_TOLERANCE,
        ))
    for name, records in splits.items():
        languages = {r["language"] for r in records}
        for language, language_key in _LANGUAGE_NAMES.items():
            if language not in languages:
                return CheckResult(False, _say(
                    lang, "ch05.split_missing_language", name=name,
                    language=_say(lang, language_key),
                ))
    sizes = " / ".join(f"{name} {len(records)}" for name, records in splits.items())
    return CheckResult(True, _say(lang, "ch05.split_correct", sizes=sizes))
