"""The experiment's label taxonomy (chapter 02, "Synthetic PII data").

`LABELS` lists the nine labels of this course in *type-priority order*: when one
spelling is predicted with several types, the label that comes first wins (see
`piilab.tokenization`). The order is part of the contract, so do not sort it.

These are annotation rules of this experiment, not a universal sensitivity
taxonomy: a relationship word such as "어머니" is a positive (REL), while a
company switchboard number only ever appears in negative documents as a decoy.
"""

from __future__ import annotations

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
