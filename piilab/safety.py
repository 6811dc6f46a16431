"""Invalid by construction: the one checker of synthetic values (chapters 02, 05 and 09).

Every dataset of the course promises the same thing: no value in it is a real identifier.
Numbers fail their check digit, phone numbers lie in placeholder ranges, e-mail addresses
use reserved domains. The generators keep that promise with `piilab.checksums` and
`piilab.safe_values`; this module *checks* it, with rules written again here and shared
with no generator, so that a mistake in a generator is not repeated by its check. Three
commands use it: ``piilab verify`` (every record of a wide corpus), ``piilab finance
verify`` (`piilab.finance.verify`) and the holdout validator (``tools/validate_holdout.py``).

The rules, one function each:

* registration numbers (`registration_ok`): 13 digits whose gender digit agrees with the
  label (RRN 1-4, FRN 5-8), whose first six digits are a calendar date, and which fail
  both the resident (`rrn_passes`) and the pre-2020 foreigner (`frn_passes`) check digits;
* card numbers (`card_ok`): 13 digits or more that fail the Luhn check (`luhn_passes`);
* e-mail addresses (`email_ok`): a domain reserved for examples by RFC 2606 and RFC 6761:
  ``example.com``, ``example.net``, ``example.org`` (or a name under them), or a name
  under the top-level domains ``.example``, ``.test`` or ``.invalid``;
* phone numbers (`phone_ok`): a Korean area or mobile prefix followed by a group that
  starts with 0 or 1 (assigned to no subscriber), a US line 555-0100..0199 (reserved for
  fiction), or the UK's drama range 07700 900000-900999;
* driving licences and passports (`licence_ok`, `passport_ok`, finance labels): an
  unassigned region code, an unissued passport letter;
* and the **text audit** (`text_problems`): no RRN-shaped string anywhere in a document
  passes a registration check digit and no card-shaped string passes Luhn, labelled or
  not, so a decoy shaped like an identifier is never a valid one.

Numbers are read however they are spelled (`digits_of`): separators, full-width digits,
digits read aloud, and the OCR look-alikes ``O`` and ``l`` between digits. Problems name
the record, the entity index and the label, or a character offset, never a value.
Standard library only.
"""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = [
    "CARD_SHAPE",
    "KO_PHONE_PREFIXES",
    "RESERVED_DOMAINS",
    "RESERVED_TLDS",
    "RRN_SHAPE",
    "card_ok",
    "digits_of",
    "email_ok",
    "frn_passes",
    "licence_ok",
    "luhn_passes",
    "only_digits",
    "passport_ok",
    "phone_ok",
    "registration_ok",
    "rrn_passes",
    "safety_problems",
    "shaped",
    "text_problems",
    "value_problem",
]

# --------------------------------------------------------------------------------------
# Reading digits
# --------------------------------------------------------------------------------------

_SPOKEN_DIGITS = {"공": "0", "영": "0", "일": "1", "이": "2", "삼": "3", "사": "4", "오": "5",
                  "육": "6", "칠": "7", "팔": "8", "구": "9", "zero": "0", "oh": "0", "one": "1",
                  "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
                  "seven": "7", "eight": "8", "nine": "9"}
_FULLWIDTH_DIGITS = str.maketrans("０１２３４５６７８９", "0123456789")
#: Letters a scanner reads for digits (the holdout writes them on purpose).
_OCR_DIGITS = {"O": "0", "o": "0", "l": "1", "I": "1"}


def only_digits(value: str) -> str:
    """The ASCII digits of `value`, in order."""
    return re.sub(r"[^0-9]", "", value)


def digits_of(value: str) -> str:
    """The digits of a number however it is spelled: ASCII, full-width, read aloud, or with
    the OCR look-alikes ``O``/``o`` (0) and ``l``/``I`` (1) among its digits.

    >>> digits_of("０１０-０１２３-４５６７"), digits_of("공일공 영일이삼")
    ('01001234567', '0100123')
    >>> digits_of("010-1O74-2519"), digits_of("five five five oh one")
    ('01010742519', '55501')
    """
    value = unicodedata.normalize("NFKC", value)  # full-width digits become ASCII
    if any(c.isascii() and c.isdigit() for c in value):
        return "".join(c if c.isascii() and c.isdigit() else _OCR_DIGITS.get(c, "")
                       for c in value)
    words = value.replace(",", " ").replace("-", " ").split()
    if words and all(w.lower() in _SPOKEN_DIGITS or all(c in _SPOKEN_DIGITS for c in w)
                     for w in words):
        return "".join(_SPOKEN_DIGITS[w.lower()] if w.lower() in _SPOKEN_DIGITS
                       else "".join(_SPOKEN_DIGITS[c] for c in w) for w in words)
    return ""


# --------------------------------------------------------------------------------------
# Check digits, written again (the generators use `piilab.checksums`)
# --------------------------------------------------------------------------------------

_REG_WEIGHTS = (2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5)


def _weighted(digits: str) -> int:
    return sum(int(d) * w for d, w in zip(digits[:12], _REG_WEIGHTS, strict=True))


def rrn_passes(digits13: str) -> bool:
    """The resident-registration check: last digit = (11 - S mod 11) mod 10."""
    return (11 - _weighted(digits13) % 11) % 10 == int(digits13[12])


def frn_passes(digits13: str) -> bool:
    """The pre-2020.10 foreign-registration check: last digit = (13 - S mod 11) mod 10."""
    return (13 - _weighted(digits13) % 11) % 10 == int(digits13[12])


def luhn_passes(digits: str) -> bool:
    """Luhn: from the right, every second digit doubled (its digit sum), total = 0 mod 10."""
    total = 0
    for position, ch in enumerate(digits[::-1]):
        value = int(ch) * (2 if position % 2 else 1)
        total += value // 10 + value % 10
    return total % 10 == 0


# --------------------------------------------------------------------------------------
# One rule per kind of value
# --------------------------------------------------------------------------------------

RESERVED_DOMAINS: tuple[str, ...] = ("example.com", "example.net", "example.org")
RESERVED_TLDS: tuple[str, ...] = ("example", "test", "invalid")
#: Korean area codes and mobile prefixes, checked longest first.
KO_PHONE_PREFIXES: tuple[str, ...] = (
    "02", "031", "032", "033", "041", "042", "043", "044", "051", "052", "053", "054", "055",
    "061", "062", "063", "064", "070", "010", "011", "016", "017", "018", "019")
_KO_ASSIGNED_LICENCE = {*range(11, 27), 28}
#: US states, DC, territories and military mail codes (the assigned licence regions).
_US_CODES = frozenset({
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "FL", "GA", "HI", "ID", "IL", "IN", "IA",
    "KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ",
    "NM", "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT",
    "VA", "WA", "WV", "WI", "WY", "DC", "AS", "GU", "MP", "PR", "VI", "UM", "AA", "AE", "AP",
    "FM", "MH", "PW",
})
_UNISSUED_PASSPORT = ("Q", "X", "Z")


def registration_ok(value: str, label: str | None = None, *, foreign_check: bool = True) -> bool:
    """A registration number that is a calendar date and fails both check digits.

    `label` ``"RRN"`` wants gender digit 1-4, ``"FRN"`` 5-8, None either (the course's
    RRN label covers both). With ``foreign_check=False`` only the resident check must fail:
    the hand-written holdout's rule (``tools/validate_holdout.py`` says why).

    >>> registration_ok("900101-1234563"), registration_ok("900101-1234568")
    (True, False)
    >>> registration_ok("900101-5234563", "RRN"), registration_ok("901301-1234567")
    (False, False)
    """
    digits = digits_of(value)
    if len(digits) != 13:
        return False
    gender = digits[6]
    if gender not in "12345678" or (label is not None and (label == "RRN") != (gender in "1234")):
        return False
    century = 1900 if gender in "1256" else 2000
    try:
        _dt.date(century + int(digits[:2]), int(digits[2:4]), int(digits[4:6]))
    except ValueError:
        return False
    return not rrn_passes(digits) and not (foreign_check and frn_passes(digits))


def card_ok(value: str) -> bool:
    """13 digits or more that fail the Luhn check."""
    digits = digits_of(value)
    return len(digits) >= 13 and not luhn_passes(digits)


def email_ok(value: str) -> bool:
    """The address is on a domain reserved for examples (RFC 2606, RFC 6761).

    >>> email_ok("kim@mail.example.com"), email_ok("kim@shop.test"), email_ok("kim@example.org.kr")
    (True, True, False)
    """
    domain = value.rpartition("@")[2].lower().rstrip(".")
    return (any(domain == d or domain.endswith("." + d) for d in RESERVED_DOMAINS)
            or (domain.rpartition(".")[2] in RESERVED_TLDS and "." in domain))


def phone_ok(value: str) -> bool:
    """A Korean, US or UK number in a range assigned to no subscriber.

    >>> phone_ok("010-0123-4567"), phone_ok("+82 10-1234-5678"), phone_ok("010-2345-6789")
    (True, True, False)
    >>> phone_ok("(212) 555-0134"), phone_ok("+44 7700 900123"), phone_ok("212-555-1234")
    (True, True, False)
    """
    digits = digits_of(value)
    us = digits[1:] if digits.startswith("1") and len(digits) == 11 else digits  # +1
    if (len(us) == 10 and us[3:8] == "55501") or re.fullmatch(r"55501[0-9]{2}", us):
        return True
    uk = "0" + digits[2:].lstrip("0") if digits.startswith("44") else digits  # +44 (0)7700
    if uk.startswith("07700900") and len(uk) == 11:
        return True
    if digits.startswith("82"):  # +82 10-..., +82 2-...
        digits = "0" + digits[2:]
    for prefix in sorted(KO_PHONE_PREFIXES, key=len, reverse=True):
        if digits.startswith(prefix):
            return 9 <= len(digits) <= 11 and digits[len(prefix):len(prefix) + 1] in ("0", "1")
    return False


def licence_ok(value: str, language: str) -> bool:
    """A driving licence of an unassigned region (ko ``NN-NN-NNNNNN-NN``, en ``XX-NNNNNNN``)."""
    if language == "ko":
        match = re.fullmatch(r"([0-9]{2})-[0-9]{2}-[0-9]{6}-[0-9]{2}", value)
        return bool(match) and int(match.group(1)) not in _KO_ASSIGNED_LICENCE
    match = re.fullmatch(r"([A-Z]{2})-[0-9]{7}", value)
    return bool(match) and match.group(1) not in _US_CODES


def passport_ok(value: str) -> bool:
    """A passport number under a letter no country issues, followed by digits."""
    return value[:1] in _UNISSUED_PASSPORT and value[1:].isdigit()


# --------------------------------------------------------------------------------------
# The text audit
# --------------------------------------------------------------------------------------

#: A registration-number shape: 6 and 7 digits, with or without a hyphen.
RRN_SHAPE = re.compile(r"(?<![0-9-])[0-9]{6}-?[0-9]{7}(?![0-9])")
#: A card shape: 4-4-4-4 (one separator, a space, a hyphen or none) or 4-6-5.
CARD_SHAPE = re.compile(r"(?<![0-9])(?:[0-9]{4}([- ]?)[0-9]{4}\1[0-9]{4}\1[0-9]{4}"
                        r"|[0-9]{4}[- ][0-9]{6}[- ][0-9]{5})(?![0-9])")


def shaped(text: str) -> Iterator[tuple[str, re.Match]]:
    """Every RRN-shaped (``"rrn"``) and card-shaped (``"card"``) string of `text`
    (full-width digits read as digits)."""
    text = text.translate(_FULLWIDTH_DIGITS)  # one character for one: offsets hold
    for match in RRN_SHAPE.finditer(text):
        yield "rrn", match
    for match in CARD_SHAPE.finditer(text):
        yield "card", match


def text_problems(text: str, where: str, labelled: Iterable[str] = ()) -> list[str]:
    """The unlabelled RRN-shaped strings of `text` that pass a registration check digit and
    the unlabelled card-shaped ones that pass Luhn (named by offset, never by value).

    A shaped string inside an occurrence of one of the `labelled` values is left to the
    rule of its label (a 13-digit account number is an account number).

    >>> for problem in text_problems("ref 900101-1234568, card 4111 1111 1111 1111", "doc"):
    ...     print(problem)
    doc: the RRN-shaped string at character 4 passes a check digit
    doc: the card-shaped string at character 25 passes the Luhn check
    >>> text_problems("acct 900101-1234568", "doc", labelled=["900101-1234568"])
    []
    """
    spans = [(start, start + len(value)) for value in labelled if value
             for start in _starts(text, value)]
    problems = []
    for kind, match in shaped(text):
        if any(s <= match.start() and match.end() <= e for s, e in spans):
            continue
        digits = only_digits(match.group())
        if kind == "rrn" and (rrn_passes(digits) or frn_passes(digits)):
            problems.append(f"{where}: the RRN-shaped string at character {match.start()} "
                            "passes a check digit")
        elif kind == "card" and luhn_passes(digits):
            problems.append(f"{where}: the card-shaped string at character {match.start()} "
                            "passes the Luhn check")
    return problems


def _starts(text: str, value: str) -> Iterator[int]:
    start = text.find(value)
    while start >= 0:
        yield start
        start = text.find(value, start + 1)


# --------------------------------------------------------------------------------------
# Records of the course labels (the course, wide and holdout corpora)
# --------------------------------------------------------------------------------------

def value_problem(label: str, value: str, *, foreign_check: bool = True) -> str | None:
    """Why a value of a course label is not invalid by construction (None when it is).

    A masked RRN (digits hidden with ``*``, as the holdout writes some) holds no number to
    check and passes; `foreign_check` is `registration_ok`'s.
    """
    if label == "CARD" and not card_ok(value):
        return "passes the Luhn check or is not a card number"
    if label == "RRN" and "*" not in value and not registration_ok(
            value, foreign_check=foreign_check):
        return "passes a registration check digit or is not a 13-digit registration number"
    if label == "EMAIL" and not email_ok(value):
        return ("is not on a reserved domain (example.com, .net, .org; .example, .test, "
                ".invalid)")
    if label == "PHONE" and not phone_ok(value):
        return "is outside the placeholder ranges"
    return None


def safety_problems(record: Mapping[str, Any], where: str = "", *,
                    foreign_check: bool = True) -> list[str]:
    """What in `record` is not invalid by construction (empty when safe): every entity by
    its label's rule (`value_problem`), then the text audit (`text_problems`). Names the
    record and the entity index or the character offset, never a value."""
    prefix = where or f"record {record.get('id')}"
    problems = []
    for i, entity in enumerate(record.get("entities", [])):
        label, value = entity.get("type"), entity.get("value", "")
        if not isinstance(value, str):
            continue  # the record's shape is checked elsewhere
        reason = value_problem(label, value, foreign_check=foreign_check)
        if reason:
            problems.append(f"{prefix}: entities[{i}] ({label}) {reason}")
    text = record.get("source_text")
    if isinstance(text, str):
        labelled = [e.get("value") for e in record.get("entities", [])
                    if isinstance(e.get("value"), str)]
        problems += text_problems(text, prefix, labelled)
    return problems
