"""Value generators for the 18 finance labels, invalid by construction, and the value pools.

Chapter 09 ("A token-classification dataset for finance") teaches this module.
Every PII value of the finance dataset that is not replayed from the course
corpus comes from one function here, one per label, for Korean (``ko``) and
US-style English (``en``) formats. Each value is shaped like the real thing
and provably not a real one:

=============== ==============================================================
RRN             pre-2020.10 scheme (``YYMMDD-GNNNNNC``, G = 1-4), check digit
                written as (correct + 5) mod 10
FRN             pre-2020.10 foreign-registration scheme (G = 5-8, an even
                registration-office code, digit 12 in 6-9), check digit
                (correct + 5) mod 10 under the FRN rule
CARD_NUMBER     13 digits or more, Luhn check digit (correct + 5) mod 10
ACCOUNT_NUMBER  random digits; one of 13 digits or more also fails Luhn, so a
                card-shaped account number is never a valid card number
EMAIL           RFC 2606 reserved domains: example.com / .net / .org
PHONE           ko: the group after the prefix starts with 0 or 1 (not
                assigned to subscribers); en: 555-0100..0199
DRIVER_LICENSE  ko: region code 90-99 (no licence office has one);
                en: a two-letter region code that is no US state or territory
PASSPORT        a prefix letter that neither passport authority issues (Q, X, Z)
CVC             only drawn in a row that also holds an invalid card number
=============== ==============================================================

PERSON, ADDRESS, ZIPCODE, DATE, USER_ID, GENERIC_ID, SECRET, CARD_EXPIRY and
IPIN are random draws from small vocabularies and number ranges: a value alone
singles nobody out. The IPIN format is this course's own (the real one is not
public): 13 upper-case letters and digits in 4-4-5 groups.

**Value pools** (`pool_split`). A value may appear in one split only: the
MD5 of its normalized form (`normalize_value`: NFC, case-folded, separators
and spaces removed, so ``010-1234-5678`` and ``01012345678`` are one value)
decides which. `draw` redraws until the value falls in the split's part of
the partition; the builder checks afterwards that the splits' value sets are
pairwise disjoint (and raises a `BuildError` when they are not).

What it deliberately does not do: produce realistic distributions (vocabulary
sizes and ranges are small and uniform), or guarantee that an avoidance rule
(PASSPORT, DRIVER_LICENSE, PHONE) stays true if an authority later assigns those
prefixes. The checks that prove the rules live apart from this code, in
`piilab.finance.verify`.
"""

from __future__ import annotations

import datetime as _dt
import random
import string
from collections.abc import Callable

from piilab import templates as course_vocabulary
from piilab.checksums import invalid_card_number, invalid_digit, invalid_rrn
from piilab.errors import PiilabError
from piilab.labels import nfc
from piilab.pools import partition
from piilab.safe_values import digits as _digits
from piilab.safe_values import group as _group
from piilab.safe_values import ko_unassigned_group, us_fiction_line

__all__ = [
    "DEFAULT_SPLIT_SHARES",
    "GENERATORS",
    "PoolError",
    "draw",
    "frn_check_digit",
    "normalize_value",
    "pool_split",
]

#: The share of the MD5 partition each split owns (validation gets the first 20 %).
DEFAULT_SPLIT_SHARES: tuple[tuple[str, float], ...] = (("validation", 0.2), ("train", 0.8))

#: How often `draw` redraws a value that belongs to another split (or repeats one).
MAX_DRAWS = 200

# Characters dropped by `normalize_value`: the separators values are written with.
_SEPARATORS = str.maketrans("", "", " -./()+,:_")

_FRN_WEIGHTS = (2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5)


class PoolError(PiilabError, RuntimeError):
    """No value of the split's pool could be drawn, or `draw` was asked for a label that is
    not a finance label (names the label and split it draws, never a value or an unknown
    label)."""


# --------------------------------------------------------------------------------
# The MD5 partition
# --------------------------------------------------------------------------------


def normalize_value(value: str) -> str:
    """The form of a value that decides its pool: NFC, case-folded, no separators.

    >>> normalize_value("010-1234 5678") == normalize_value("01012345678")
    True
    """
    return nfc(value).casefold().translate(_SEPARATORS)


def pool_split(value: str,
               shares: tuple[tuple[str, float], ...] = DEFAULT_SPLIT_SHARES) -> str:
    """The split whose pool holds `value`: the MD5 of its normalized form, first 4 bytes as a
    fraction of 2**32 (`piilab.pools.partition`, the card's partition).

    >>> pool_split("010-1234-5678") == pool_split("01012345678")
    True
    """
    return partition(normalize_value(value), shares, digest="md5")


# --------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------


def _date(rng: random.Random, first_year: int, last_year: int) -> _dt.date:
    return _dt.date(rng.randrange(first_year, last_year + 1), rng.randrange(1, 13),
                    rng.randrange(1, 29))


# Shapes that card numbers and account numbers share in the type-2 hard negatives:
# (group sizes, separator). A row of a CARD_NUMBER <-> ACCOUNT_NUMBER family draws one
# and writes both values in it, so only the words around them tell them apart.
SHARED_SHAPES: tuple[tuple[tuple[int, ...], str], ...] = (
    ((4, 4, 4, 4), "-"),
    ((4, 4, 4, 4), " "),
    ((16,), ""),
    ((14,), ""),
)


def shape_of(value: str) -> str:
    """A value's shape: each digit as ``d``, each letter as ``a``, other characters kept.

    >>> shape_of("1234-5678 90ab")
    'dddd-dddd ddaa'
    """
    return "".join("d" if ch.isdigit() else "a" if ch.isalpha() else ch for ch in value)


# --------------------------------------------------------------------------------
# One generator per label: (rng, language, context) -> value. The context carries
# what a row already decided (the shared shape of a type-2 row).
# --------------------------------------------------------------------------------

Generator = Callable[[random.Random, str, dict], str]


def _person(rng: random.Random, lang: str, ctx: dict) -> str:
    if lang == "ko":
        return rng.choice(course_vocabulary.KO_SURNAMES) + rng.choice(course_vocabulary.KO_GIVEN)
    return f"{rng.choice(course_vocabulary.EN_FIRST)} {rng.choice(course_vocabulary.EN_LAST)}"


def _rrn(rng: random.Random, lang: str, ctx: dict) -> str:
    value = invalid_rrn(rng)  # pre-2020.10 scheme, check digit + 5
    return value.replace("-", "") if rng.random() < 0.1 else value


def frn_check_digit(first12: str) -> int:
    """The check digit of a pre-2020.10 foreign registration number: (13 - S mod 11) mod 10.

    S is the weighted digit sum of the RRN rule (weights 2..9, 2..5).

    >>> frn_check_digit("800101512346")
    9
    """
    total = sum(int(d) * w for d, w in zip(first12, _FRN_WEIGHTS, strict=True))
    return (13 - total % 11) % 10


def _frn(rng: random.Random, lang: str, ctx: dict) -> str:
    birth = _date(rng, 1950, 2005)
    gender = rng.choice("56") if birth.year < 2000 else rng.choice("78")
    office = f"{rng.randrange(0, 50) * 2:02d}"  # the old scheme's even office code
    body = (f"{birth.year % 100:02d}{birth.month:02d}{birth.day:02d}{gender}{office}"
            f"{_digits(rng, 2)}{rng.choice('6789')}")
    check = invalid_digit(frn_check_digit(body))
    value = f"{body[:6]}-{body[6:]}{check}"
    return value.replace("-", "") if rng.random() < 0.1 else value


def _card_digits(rng: random.Random, length: int) -> str:
    prefix = rng.choice(("4", "51", "52", "53", "54", "55", "9410", "9490")) if length != 15 \
        else rng.choice(("34", "37"))
    return invalid_card_number(rng, prefix=prefix, length=length)


def _card(rng: random.Random, lang: str, ctx: dict) -> str:
    if "shape" in ctx:
        sizes, sep = ctx["shape"]
        return _group(_card_digits(rng, sum(sizes)), sizes, sep)
    kind = rng.randrange(5)
    if kind == 4:  # 15 digits, 4-6-5
        return _group(_card_digits(rng, 15), (4, 6, 5), rng.choice(("-", " ")))
    return _group(_card_digits(rng, 16), (4, 4, 4, 4), ("-", " ", "-", "")[kind])


def _account(rng: random.Random, lang: str, ctx: dict) -> str:
    if "shape" in ctx:
        sizes, sep = ctx["shape"]
    elif lang == "ko":
        sizes = rng.choice(((3, 3, 6), (4, 3, 6), (3, 2, 6), (6, 2, 6), (3, 4, 4, 2),
                            (3, 6, 2, 3)))
        # Unseparated only when that cannot read as a 13-digit registration number.
        sep = "-" if rng.random() < 0.8 or sum(sizes) == 13 else ""
    else:
        sizes, sep = (rng.choice((8, 9, 10, 11, 12)),), ""
    digits = rng.choice("123456789") + _digits(rng, sum(sizes) - 1)
    if len(digits) >= 13:  # card-length: its Luhn digit is made wrong (no digit is drawn)
        digits = invalid_card_number(rng, digits[:-1], len(digits))
    return _group(digits, sizes, sep)


_PASSWORD_CHARS = string.ascii_letters + string.digits
_PASSWORD_SYMBOLS = "!@#$%^&*"
_HEX_LETTERS = str.maketrans("abcdef", "      ")


def _secret(rng: random.Random, lang: str, ctx: dict) -> str:
    kind = rng.randrange(4)
    if kind == 0:  # a one-time code
        return _digits(rng, 6)
    if kind == 1:  # an API token (never with a run of 13 digits: no registration-number shape)
        while True:
            token = "".join(rng.choice("0123456789abcdef") for _ in range(24))
            if not any(len(run) >= 13 for run in token.translate(_HEX_LETTERS).split()):
                return "tk-" + token
    # A password: letters and digits with one symbol inside (never last, so it cannot
    # merge with the punctuation after it).
    body = [rng.choice(_PASSWORD_CHARS) for _ in range(rng.randrange(8, 13))]
    body.insert(rng.randrange(1, len(body)), rng.choice(_PASSWORD_SYMBOLS))
    return "".join(body)


def _roman_name(rng: random.Random, lang: str) -> tuple[str, str]:
    """A romanized (ko) or English given name and surname, lowercase, for ids and e-mails."""
    if lang == "ko":
        return (rng.choice(course_vocabulary.KO_ROMAN_GIVEN),
                rng.choice(course_vocabulary.KO_ROMAN_SURNAMES))
    return (rng.choice(course_vocabulary.EN_FIRST).lower(),
            rng.choice(course_vocabulary.EN_LAST).lower())


def _user_id(rng: random.Random, lang: str, ctx: dict) -> str:
    first, last = _roman_name(rng, lang)
    style = rng.randrange(3)
    return (f"{first}{rng.randrange(10, 1000)}", f"{last}_{first[:3]}{rng.randrange(1, 100)}",
            f"{first[0]}{last}{rng.randrange(1970, 2006)}")[style]


def _email(rng: random.Random, lang: str, ctx: dict) -> str:
    first, last = _roman_name(rng, lang)
    local = rng.choice((f"{first}.{last}", f"{first[0]}{last}{rng.randrange(10, 100)}",
                        f"{last}_{first}"))
    return f"{local}@{rng.choice(course_vocabulary.EMAIL_DOMAINS)}"


_KO_MOBILE = ("010",)
_KO_LANDLINE = ("02", "031", "032", "042", "051", "053", "062", "064", "070")


def _phone(rng: random.Random, lang: str, ctx: dict) -> str:
    if lang == "ko":
        prefix = rng.choice(_KO_MOBILE) if rng.random() < 0.7 else rng.choice(_KO_LANDLINE)
        middle_len = 4 if prefix == "010" else rng.choice((3, 4))
        middle = ko_unassigned_group(rng, middle_len)
        sep = rng.choice(("-", "-", "-", " ", "."))
        return sep.join((prefix, middle, _digits(rng, 4)))
    area = rng.choice(course_vocabulary.EN_AREA_CODES)
    line = us_fiction_line(rng)  # 555-0100..0199
    return rng.choice((f"({area}) 555-{line}", f"{area}-555-{line}", f"{area}.555.{line}",
                       f"+1 {area} 555 {line}"))


#: Passport prefix letters that neither the Korean nor the US authority issues (avoidance).
UNISSUED_PASSPORT_PREFIXES = ("Q", "X", "Z")


def _passport(rng: random.Random, lang: str, ctx: dict) -> str:
    return rng.choice(UNISSUED_PASSPORT_PREFIXES) + _digits(rng, 8)


#: Korean licence region codes that no licence office uses (assigned: 11-26 and 28).
UNASSIGNED_KO_LICENCE_REGIONS = tuple(range(90, 100))
#: Two-letter codes that are no US state, district, territory or military mail code.
UNASSIGNED_US_LICENCE_REGIONS = ("QB", "QX", "XJ", "XZ", "ZQ", "ZW")


def _driver_license(rng: random.Random, lang: str, ctx: dict) -> str:
    if lang == "ko":
        region = rng.choice(UNASSIGNED_KO_LICENCE_REGIONS)
        return f"{region}-{rng.randrange(0, 100):02d}-{_digits(rng, 6)}-{_digits(rng, 2)}"
    return f"{rng.choice(UNASSIGNED_US_LICENCE_REGIONS)}-{_digits(rng, 7)}"


_GENERIC_PREFIXES = ("CUS", "MBR", "CID", "KYC")


def _generic_id(rng: random.Random, lang: str, ctx: dict) -> str:
    return f"{rng.choice(_GENERIC_PREFIXES)}-{_digits(rng, 8)}"


_KO_EXTRA_ROADS = ("테헤란로", "세종대로", "올림픽로", "중앙대로", "해운대로", "월드컵로", "은행로")


def _address(rng: random.Random, lang: str, ctx: dict) -> str:
    if lang == "ko":
        city, districts = rng.choice(course_vocabulary.KO_ADDRESS_CITIES)
        road = rng.choice(course_vocabulary.KO_ROADS + _KO_EXTRA_ROADS)
        address = f"{city} {rng.choice(districts)} {road} {rng.randrange(1, 400)}"
        if rng.random() < 0.5:
            floor, unit = rng.randrange(1, 25), rng.randrange(1, 5)
            address += f", {rng.randrange(101, 120)}동 {floor}{unit:02d}호"
        return address
    city, state = rng.choice(course_vocabulary.EN_CITIES)
    street = (f"{rng.randrange(10, 9900)} {rng.choice(course_vocabulary.EN_STREETS)} "
              f"{rng.choice(course_vocabulary.EN_STREET_TYPES)}")
    if rng.random() < 0.3:
        street += f", Apt {rng.randrange(1, 20)}{rng.choice('ABCD')}"
    return f"{street}, {city}, {state}"


def _zipcode(rng: random.Random, lang: str, ctx: dict) -> str:
    if lang == "ko":
        return f"{rng.randrange(1000, 63700):05d}"
    code = f"{rng.randrange(1001, 99951):05d}"
    return f"{code}-{_digits(rng, 4)}" if rng.random() < 0.2 else code


def _date_value(rng: random.Random, lang: str, ctx: dict) -> str:
    d = _date(rng, 1950, 2026)
    fmt = rng.randrange(3)
    if lang == "ko":
        return (f"{d.year}년 {d.month}월 {d.day}일", d.isoformat(),
                f"{d.year}.{d.month:02d}.{d.day:02d}")[fmt]
    return (f"{course_vocabulary.EN_MONTHS[d.month - 1]} {d.day}, {d.year}",
            f"{d.month:02d}/{d.day:02d}/{d.year}", d.isoformat())[fmt]


def _card_expiry(rng: random.Random, lang: str, ctx: dict) -> str:
    month, year = rng.randrange(1, 13), rng.randrange(24, 34)
    return f"{month:02d}/{year:02d}" if rng.random() < 0.8 else f"{month:02d}/20{year:02d}"


def _cvc(rng: random.Random, lang: str, ctx: dict) -> str:
    return _digits(rng, 3)


def _ipin(rng: random.Random, lang: str, ctx: dict) -> str:
    alphabet = string.ascii_uppercase + string.digits
    chars = "".join(rng.choice(alphabet) for _ in range(13))
    return f"{chars[:4]}-{chars[4:8]}-{chars[8:]}"


#: The generator of each label, in the taxonomy's (the card's) order.
GENERATORS: dict[str, Generator] = {
    "PERSON": _person,
    "RRN": _rrn,
    "FRN": _frn,
    "CARD_NUMBER": _card,
    "ACCOUNT_NUMBER": _account,
    "SECRET": _secret,
    "USER_ID": _user_id,
    "EMAIL": _email,
    "PHONE": _phone,
    "PASSPORT": _passport,
    "DRIVER_LICENSE": _driver_license,
    "GENERIC_ID": _generic_id,
    "ADDRESS": _address,
    "ZIPCODE": _zipcode,
    "DATE": _date_value,
    "CARD_EXPIRY": _card_expiry,
    "CVC": _cvc,
    "IPIN": _ipin,
}


def draw(label: str, rng: random.Random, language: str, split: str, ctx: dict | None = None,
         *, avoid: frozenset[str] | set[str] = frozenset()) -> str:
    """A fresh `label` value in `language` from `split`'s pool (`pool_split`).

    Redraws while the value belongs to another split or its normalized form is
    in `avoid` (values the row already holds). Raises `PoolError` after
    `MAX_DRAWS` tries.
    """
    if label not in GENERATORS:
        raise PoolError("draw: the label is not one of the finance labels")
    generate = GENERATORS[label]
    ctx = {} if ctx is None else ctx
    for _ in range(MAX_DRAWS):
        value = generate(rng, language, ctx)
        if pool_split(value) == split and normalize_value(value) not in avoid:
            return value
    raise PoolError(f"no {label} value for the {split} pool after {MAX_DRAWS} draws")
