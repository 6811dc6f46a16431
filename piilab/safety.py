"""Invalid by construction, whatever the spelling (chapter 02, the wide profile).

The default corpus writes numbers one way; the wide corpus (`piilab.wide`) writes them with
separators, spaces, country codes, full-width digits or read aloud. `digits_of` reads the
digits of any of those spellings and `safety_problems` checks every value of a record
against the rules of `piilab.checksums`: card numbers fail the Luhn check, RRNs fail their
check digit, phone numbers are in placeholder ranges (Korean 010-0xxx/1xxx, US 555-01xx, the
UK's 07700 900xxx), and e-mail addresses use reserved example domains. `piilab verify` runs it
on every record of a wide corpus. Standard library only.
"""

from __future__ import annotations

import unicodedata

from piilab.checksums import luhn_valid, rrn_valid

_SPOKEN_DIGITS = {"공": "0", "영": "0", "일": "1", "이": "2", "삼": "3", "사": "4", "오": "5",
                  "육": "6", "칠": "7", "팔": "8", "구": "9", "zero": "0", "oh": "0", "one": "1",
                  "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
                  "seven": "7", "eight": "8", "nine": "9"}
_RESERVED_DOMAIN_TAILS = ("example.com", "example.net", "example.org", "example.org.kr")


def digits_of(value: str) -> str:
    """The digits of a number however it is spelled: ASCII, full-width or read aloud.

    >>> digits_of("０１０-０１２３-４５６７"), digits_of("공일공 영일이삼")
    ('01001234567', '0100123')
    """
    value = unicodedata.normalize("NFKC", value)  # full-width digits become ASCII
    words = value.replace(",", " ").replace("-", " ").split()
    if words and all(w.lower() in _SPOKEN_DIGITS or all(c in _SPOKEN_DIGITS for c in w)
                     for w in words) and not any(c.isdigit() for c in value):
        out = []
        for w in words:
            out.append(_SPOKEN_DIGITS[w.lower()] if w.lower() in _SPOKEN_DIGITS
                       else "".join(_SPOKEN_DIGITS[c] for c in w))
        return "".join(out)
    return "".join(c for c in value if c.isascii() and c.isdigit())


def _phone_is_placeholder(d: str) -> bool:
    if d.startswith("82"):
        d = "0" + d[2:]
    if d.startswith("010") and len(d) == 11:
        return d[3] in "01"
    if d.startswith("44"):
        d = "0" + d[2:].lstrip("0")
    if d.startswith("07700900") and len(d) == 11:
        return True
    if d.startswith("1") and len(d) == 11:
        d = d[1:]
    return len(d) == 10 and d[3:8] == "55501"


def safety_problems(record: dict, where: str = "") -> list[str]:
    """What in `record` is not invalid by construction (empty when safe). Names the record
    and the entity index, never a value."""
    prefix = where or f"record {record.get('id')}"
    problems = []
    for i, e in enumerate(record.get("entities", [])):
        t, v = e.get("type"), e.get("value", "")
        d = digits_of(v)
        if t == "CARD" and (len(d) not in (15, 16) or luhn_valid(d)):
            problems.append(f"{prefix}: entities[{i}] (CARD) passes the Luhn check")
        elif t == "RRN" and (len(d) != 13 or rrn_valid(d[:6] + "-" + d[6:])):
            problems.append(f"{prefix}: entities[{i}] (RRN) passes the RRN check")
        elif t == "EMAIL" and not v.lower().endswith(_RESERVED_DOMAIN_TAILS):
            problems.append(f"{prefix}: entities[{i}] (EMAIL) is not on a reserved domain")
        elif t == "PHONE" and not _phone_is_placeholder(d):
            problems.append(f"{prefix}: entities[{i}] (PHONE) is outside the placeholder ranges")
    return problems
