"""The three keys a record is compared by: NFC source, family, skeleton (`piilab.splits`).

Both the audit (`piilab.splits.audit`) and the groups (`piilab.splits.groups`) compare
records by these keys; `SplitError` names a record by its position, never its id.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from piilab.errors import PiilabError
from piilab.labels import LABEL_PRIORITY, nfc, normalize_label
from piilab.matching import find_occurrences
from piilab.records import check_record

__all__ = ["DIGITS_MARK", "SplitError", "skeleton"]

#: What a digit run left outside every gold occurrence becomes in a skeleton.
DIGITS_MARK = "{DIGITS}"

_DIGIT_RUN = re.compile(r"[0-9]+")  # ASCII digits only, as everywhere in piilab


class SplitError(PiilabError):
    """A record cannot be audited or split (names the record by position and the field)."""


def _field(record: Mapping, name: str, kind: type = str):
    """A required field of `record`; a missing or mistyped one raises `SplitError`."""
    check_record(record, where="", required={name: kind}, entities=False, error=SplitError)
    return record[name]


def _each(function, records: Sequence[Mapping], label: str) -> list:
    """`function` of every record; a `SplitError` names the record as ``<label> N``.

    The position, never the id: an id is data too.
    """
    out = []
    for number, record in enumerate(records, 1):
        try:
            out.append(function(record))
        except SplitError as exc:
            raise SplitError(f"{label} {number}: {exc}") from None
    return out


def skeleton(source_text: str, entities: Iterable[Mapping]) -> str:
    """The source with every gold occurrence -> ``{LABEL}`` and digit runs -> ``{DIGITS}``.

    Gold occurrences are found as everywhere else (`piilab.matching`: literals,
    PERSON and numeric variants, numeric boundaries). Where two occurrences
    overlap, the leftmost and then the longest wins (then `LABELS` order).
    Digits left over (order numbers, amounts, dates that are not PII) are
    replaced run by run. Two records with the same skeleton say the same thing
    about different people: a near-duplicate.

    >>> skeleton("김가상 님, 주문 2024-001 / 김 가 상",
    ...          [{"type": "PERSON", "value": "김가상"}])
    '{PERSON} 님, 주문 {DIGITS}-{DIGITS} / {PERSON}'
    """
    source = nfc(source_text)
    found = []
    for entity in entities:
        # The rule of `piilab.labels.normalize_pair`, but a type outside LABELS is kept
        # (ranked last): a skeleton is a similarity key, not a validation.
        label = normalize_label(str(entity["type"]))
        value = nfc(str(entity["value"])).strip()
        if not value:
            continue
        for occ in find_occurrences(source, label, value):
            found.append((occ.start, -occ.end, LABEL_PRIORITY.get(label, len(LABEL_PRIORITY)),
                          label))
    found.sort()
    pieces: list[str] = []
    cursor = 0
    for start, neg_end, _, label in found:
        if start < cursor:
            continue  # inside an occurrence already replaced
        pieces.append(_DIGIT_RUN.sub(DIGITS_MARK, source[cursor:start]))
        pieces.append("{" + label + "}")
        cursor = -neg_end
    pieces.append(_DIGIT_RUN.sub(DIGITS_MARK, source[cursor:]))
    return "".join(pieces)


@dataclass(frozen=True)
class _Keys:
    """What one record is compared by."""

    source: str
    family: str
    skeleton: str


def _keys(record: Mapping) -> _Keys:
    """The `_Keys` of one record (``source_text``, ``template_id``, ``entities``)."""
    source = _field(record, "source_text")
    family = _field(record, "template_id")
    entities = _field(record, "entities", list)
    try:
        skel = skeleton(source, entities)
    except (KeyError, TypeError):
        raise SplitError("field 'entities' needs 'type' and 'value'") from None
    return _Keys(nfc(source), family, skel)
