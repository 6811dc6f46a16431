"""Building blocks of synthetic values, shared by the course, wide and finance generators.

Chapters 02 and 09 teach the generators (`piilab.generator` and the wide
profile `piilab.wide`, `piilab.finance.values` with `piilab.finance.templates`). Each keeps its own
distributions (which formats, how often, which vocabularies); the rules that
make a value *safe* and the shapes of the decoys live here, once:

* `seeded_random`: a `random.Random` seeded from a SHA-256 of its key parts
  (never `hash()`, so ``PYTHONHASHSEED`` does not matter);
* `digits` and `group`: random digits and their grouping;
* the **unassigned number ranges**: a Korean phone group that starts with 0
  or 1 after the prefix (`ko_unassigned_group`: no subscriber has one) and
  the US line numbers 555-0100..0199 reserved for fiction
  (`us_fiction_line`);
* the **decoys** the generators write (label O: an order number, an amount,
  a product code, a company switchboard, and the wide corpus's look-alikes of
  identifiers: `registration_shaped` numbers that fail their check digits by
  construction). A switchboard decoy starts with one
  of `KO_SWITCHBOARD_PREFIXES`, the prefixes of Korean representative numbers
  (대표번호), which belong to companies, never to a person.

What it deliberately does not do: choose distributions. The generators
draw switchboard prefixes from different subsets of `KO_SWITCHBOARD_PREFIXES`
and amounts from different ranges; making them equal would change the course
corpus and the finance dataset byte for byte, so each generator names its own
draw and a test checks it stays inside the set here.

>>> rng = seeded_random("piilab-doc", 1)
>>> len(digits(rng, 6)), group("0100000111", (3, 3, 4), "-")
(6, '010-000-0111')
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import random
from collections.abc import Sequence

from piilab.checksums import invalid_digit, rrn_check_digit

__all__ = [
    "KO_SWITCHBOARD_PREFIXES",
    "amount",
    "birth_date",
    "digits",
    "group",
    "ko_unassigned_group",
    "order_number",
    "product_code",
    "registration_shaped",
    "seeded_random",
    "switchboard",
    "us_fiction_line",
]

#: Prefixes of Korean 8-digit representative numbers (대표번호, ``1588-0000``): company lines.
KO_SWITCHBOARD_PREFIXES: tuple[str, ...] = ("1544", "1566", "1577", "1588", "1600", "1661",
                                            "1666", "1899")

def seeded_random(*parts: object) -> random.Random:
    """A `random.Random` seeded from the SHA-256 of ``":".join(parts)`` (first 8 bytes).

    >>> seeded_random("a", 1).random() == seeded_random("a", 1).random()
    True
    """
    key = ":".join(str(part) for part in parts).encode()
    return random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))


def digits(rng: random.Random, n: int) -> str:
    """`n` random ASCII digits."""
    return "".join(str(rng.randrange(10)) for _ in range(n))


def group(number: str, sizes: Sequence[int], sep: str) -> str:
    """`number` cut into groups of `sizes`, joined by `sep`."""
    parts, start = [], 0
    for size in sizes:
        parts.append(number[start:start + size])
        start += size
    return sep.join(parts)


def birth_date(rng: random.Random, ctx: dict, years: tuple[int, int]) -> _dt.date:
    """The birth date of a document's person, drawn once per document and kept in
    ``ctx["birth_date"]`` (so an RRN agrees with the date of birth next to it).

    `years` is the generator's range, ``randrange(*years)``; days stop at 28, so every
    month has them.

    >>> ctx = {}
    >>> birth_date(seeded_random("d"), ctx, (1950, 2006)) is ctx["birth_date"]
    True
    """
    if "birth_date" not in ctx:
        ctx["birth_date"] = _dt.date(rng.randrange(*years), rng.randrange(1, 13),
                                     rng.randrange(1, 29))
    return ctx["birth_date"]


# --------------------------------------------------------------------------------
# Unassigned number ranges
# --------------------------------------------------------------------------------


def ko_unassigned_group(rng: random.Random, length: int) -> str:
    """The group after a Korean phone prefix, starting with 0 or 1: assigned to no one."""
    return rng.choice("01") + digits(rng, length - 1)


def us_fiction_line(rng: random.Random) -> str:
    """A US line number 0100-0199 (after the exchange 555): reserved for fiction."""
    return f"01{rng.randrange(100):02d}"


# --------------------------------------------------------------------------------
# Decoys (label O): number-like text that is not PII
# --------------------------------------------------------------------------------


def order_number(rng: random.Random, years: tuple[int, int] = (2024, 2027)) -> str:
    """An order number, ``ORD-YYYYMM-NNNNN`` (the year ``randrange(*years)``)."""
    return f"ORD-{rng.randrange(*years)}{rng.randrange(1, 13):02d}-{digits(rng, 5)}"


def amount(rng: random.Random, language: str, below: int) -> str:
    """An amount of money: ko thousands of won under ``below * 1000``, en dollars and cents."""
    if language == "ko":
        return f"{rng.randrange(1, below) * 1000:,}원"
    return f"${rng.randrange(5, below):,}.{rng.randrange(100):02d}"


def product_code(rng: random.Random, prefixes: Sequence[str]) -> str:
    """A product code, ``PREFIX-A0000``."""
    return f"{rng.choice(prefixes)}-{rng.choice('ABCDEFGH')}{digits(rng, 4)}"


def registration_shaped(rng: random.Random, head: str) -> str:
    """13 digits that start with `head`, shaped like a registration number (a corporate
    registration number, a product barcode) and never one: the last digit is the resident
    check digit moved by 5 (`piilab.checksums.invalid_digit`), so it fails the resident
    check and the foreigner check (that one's digit is the resident one plus 2).

    >>> from piilab.checksums import rrn_valid
    >>> number = registration_shaped(seeded_random("d"), "880")
    >>> len(number), number[:3], rrn_valid(number)
    (13, '880', False)
    """
    body = head + digits(rng, 12 - len(head))
    return body + str(invalid_digit(rrn_check_digit(body)))


def switchboard(rng: random.Random, language: str, prefixes: Sequence[str]) -> str:
    """A company line: ko one of `prefixes` (a subset of `KO_SWITCHBOARD_PREFIXES`) and four
    digits, en a 1-800 number."""
    if language == "ko":
        return f"{rng.choice(prefixes)}-{digits(rng, 4)}"
    return f"1-800-{rng.randrange(200, 999)}-{digits(rng, 4)}"
