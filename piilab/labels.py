"""The experiment's label taxonomy (chapter 02, "Synthetic PII data").

`LABELS` lists the nine labels of this course in *type-priority order*: when one
spelling is predicted with several types, the label that comes first wins (see
`piilab.masking`). The order is part of the contract, so do not sort it.

These are annotation rules of this experiment, not a universal sensitivity
taxonomy: a relationship word such as "어머니" is a positive (REL), while a
company switchboard number only ever appears in negative documents as a decoy.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Mapping

from piilab.errors import PiilabError

LABELS: tuple[str, ...] = (
    "EMAIL",
    "RRN",
    "CARD",
    "ACCOUNT",
    "PHONE",
    "DOB",
    "ADDRESS",
    "PERSON",
    "REL",
)

#: Short English descriptions, used in CLI help, plots and the book.
LABEL_DESCRIPTIONS: dict[str, str] = {
    "EMAIL": "email address",
    "RRN": "Korean resident-registration-number-shaped identifier",
    "CARD": "payment card number",
    "ACCOUNT": "bank account number",
    "PHONE": "phone number",
    "DOB": "date of birth",
    "ADDRESS": "postal address",
    "PERSON": "person name",
    "REL": "family or relationship expression",
}

#: Position of each label in the priority order (0 = highest priority).
LABEL_PRIORITY: dict[str, int] = {label: i for i, label in enumerate(LABELS)}


def normalize_label(label: str) -> str:
    """Trim and uppercase a label as parsing and masking do (`" person "` -> `"PERSON"`)."""
    return label.strip().upper()


def is_label(label: str) -> bool:
    """True when `label`, once normalized, is one of `LABELS`."""
    return normalize_label(label) in LABEL_PRIORITY


# --------------------------------------------------------------------------------
# The one normalization rule. Masker, evaluator, parser, split audit and NER export
# must agree on it, or the leak metric measures something other than the masker.
# --------------------------------------------------------------------------------


def nfc(text: str) -> str:
    """`text` in Unicode NFC, the one form in which every comparison of the course is made."""
    return unicodedata.normalize("NFC", text)


class PairError(PiilabError):
    """A ``(type, value)`` pair that cannot be normalized.

    `reason` says what is wrong without quoting either string (with swapped
    columns the "type" would be a value). Callers prefix it with their own
    context (a record id, a line number) and raise their own error class.
    """

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def normalize_pair(label: str, value: str) -> tuple[str, str] | None:
    """The normalized ``(TYPE, VALUE)`` pair, or None when the value is empty.

    The type is trimmed and uppercased and must be one of `LABELS`; the value is
    put in NFC and trimmed. Raises `PairError` for a non-string or an unknown type.

    >>> normalize_pair(" person ", " 김가상 ")
    ('PERSON', '김가상')
    >>> normalize_pair("EMAIL", "   ") is None
    True
    """
    if not isinstance(label, str) or not isinstance(value, str):
        raise PairError("type and value must be strings")
    label = normalize_label(label)
    if label not in LABEL_PRIORITY:
        raise PairError("type outside LABELS")
    value = nfc(value).strip()
    return (label, value) if value else None


def gold_pairs(record: Mapping) -> Iterator[tuple[int, tuple[str, str]]]:
    """``(index, (TYPE, VALUE))`` for each gold entity of `record`, in entity order.

    Each entity must be a mapping with string ``type`` and ``value``, a type in
    `LABELS` and a non-empty value; otherwise `PairError` names the entity by
    index (``entities[3]: ...``). Duplicates are yielded as they come: callers
    collect them into the container they need.
    """
    for i, entity in enumerate(record.get("entities") or []):
        if not (isinstance(entity, Mapping) and isinstance(entity.get("type"), str)
                and isinstance(entity.get("value"), str)):
            raise PairError(f"entities[{i}] must have string 'type' and 'value'")
        try:
            pair = normalize_pair(entity["type"], entity["value"])
        except PairError as err:
            raise PairError(f"entities[{i}] has a {err.reason}") from None
        if pair is None:
            raise PairError(f"entities[{i}] has an empty value")
        yield i, pair
