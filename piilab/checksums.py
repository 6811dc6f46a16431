"""Check digits, and values that are invalid by construction (chapter 02).

The synthetic corpus must never contain a number that could be a real person's
identifier or a usable card. So every generated card number fails the Luhn check
and every generated RRN-shaped value fails the Korean resident-registration check:
the generator computes the correct check digit and then deliberately writes
``(correct + 5) mod 10`` instead. The validators below are what the tests use to
prove it.

What this module does *not* do: it is not a validator for real identifiers. It
knows nothing about issuer ranges, birth-date plausibility or the 2020 change
that made newer Korean RRNs random; it only implements the two check-digit rules.
"""

from __future__ import annotations

import datetime
import random

from piilab.errors import PiilabError

# Weights of the Korean resident registration number check (first 12 digits).
_RRN_WEIGHTS = (2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5)

#: How far the generator moves a check digit away from the correct one.
INVALID_OFFSET = 5


class ChecksumError(PiilabError):
    """A payload that no check digit can be computed for (names the rule, never the digits)."""


def _digits(value: str) -> str:
    """The ASCII digits of `value`, in order (spaces and hyphens are dropped)."""
    return "".join(ch for ch in value if "0" <= ch <= "9")


def luhn_check_digit(payload: str) -> int:
    """The Luhn check digit that makes ``payload + digit`` valid.

    >>> luhn_check_digit("411111111111111")
    1
    """
    digits = _digits(payload)
    if not digits:
        raise ChecksumError("Luhn payload must contain digits")
    total = 0
    # Walk from the right; the digit next to the (future) check digit is doubled.
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return (10 - total % 10) % 10


def luhn_valid(number: str) -> bool:
    """True when `number` (spaces and hyphens allowed) passes the Luhn check.

    >>> luhn_valid("4111 1111 1111 1111")
    True
    >>> luhn_valid("4111 1111 1111 1112")
    False
    """
    if any(not (ch.isdigit() and ch.isascii()) and ch not in " -" for ch in number):
        return False
    digits = _digits(number)
    if len(digits) < 2:
        return False
    return luhn_check_digit(digits[:-1]) == int(digits[-1])


def rrn_check_digit(first12: str) -> int:
    """The check digit of a Korean resident registration number.

    ``(11 - sum(d_i * w_i) mod 11) mod 10`` with weights 2..9, 2..5.

    >>> rrn_check_digit("800101123456")
    0
    """
    digits = _digits(first12)
    if len(digits) != 12:
        raise ChecksumError("an RRN payload has exactly 12 digits")
    total = sum(int(d) * w for d, w in zip(digits, _RRN_WEIGHTS, strict=True))
    return (11 - total % 11) % 10


def rrn_valid(value: str) -> bool:
    """True when `value` (``YYMMDD-NNNNNNN`` or 13 digits) has a correct check digit.

    >>> rrn_valid("800101-1234560")
    True
    >>> rrn_valid("800101-1234565")
    False
    """
    compact = value.replace("-", "")
    if len(compact) != 13 or not all("0" <= ch <= "9" for ch in compact):
        return False
    return rrn_check_digit(compact[:12]) == int(compact[12])


def invalid_digit(correct: int) -> int:
    """The check digit the generator writes instead of `correct`."""
    return (correct + INVALID_OFFSET) % 10


def invalid_card_number(rng: random.Random, prefix: str = "4", length: int = 16) -> str:
    """A card-shaped digit string whose Luhn check digit is wrong on purpose.

    The last digit is ``(correct + 5) mod 10``, so `luhn_valid` is always False.
    """
    if not prefix.isdigit() or len(prefix) >= length:
        raise ChecksumError("prefix must be digits and shorter than the card length")
    body = prefix + "".join(str(rng.randrange(10)) for _ in range(length - len(prefix) - 1))
    return body + str(invalid_digit(luhn_check_digit(body)))


def invalid_rrn(rng: random.Random, birth: datetime.date | None = None) -> str:
    """An RRN-shaped ``YYMMDD-GNNNNNC`` value whose check digit is wrong on purpose.

    `birth` fixes the date part (so it agrees with a date of birth in the same
    document); otherwise a date between 1950 and 2005 is drawn.
    """
    if birth is None:
        birth = datetime.date(rng.randrange(1950, 2006), rng.randrange(1, 13), rng.randrange(1, 29))
    # 1/2: born 1900-1999; 3/4: born 2000-2099 (the digit also encodes the century).
    gender = rng.choice("12") if birth.year < 2000 else rng.choice("34")
    yymmdd = f"{birth.year % 100:02d}{birth.month:02d}{birth.day:02d}"
    body = f"{yymmdd}{gender}" + "".join(
        str(rng.randrange(10)) for _ in range(5)
    )
    check = invalid_digit(rrn_check_digit(body))
    return f"{body[:6]}-{body[6:]}{check}"
