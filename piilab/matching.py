"""Where a value occurs in a document: literals, variants, numeric boundaries.

Chapter 03 ("Deterministic tokenization") teaches this module. It is the one
implementation of source matching that parsing (`piilab.parsing`), masking
(`piilab.masking`) and evaluation all use, so that "this prediction
matches the document" means the same thing everywhere.

The rules (docs/contract.md, section 4):

* A *digit* is an ASCII ``0``-``9``; fullwidth digits such as ``１`` are not
  digits. *Whitespace* is whatever ``str.isspace()`` accepts.
* **Numeric boundary**: a match whose first (last) character is a digit is
  rejected when the source character just before (after) it is a digit too.
  ``1234`` does not match inside ``12345`` but does match the ``1234`` group
  of ``010-1234-5678``.
* **PERSON variants**: when the value without whitespace has 2-6 characters,
  those characters joined uniformly by nothing, one space, one tab or one
  newline (``김가상``, ``김 가 상``, ``김\\t가\\t상``, ``김\\n가\\n상``).
* **Numeric variants**: a value made only of digits, whitespace and the
  separators ``-`` ``.`` ``/`` (at least one digit) also matches any source
  substring that starts and ends with a digit, holds only digits, whitespace
  and separators, has at most 3 non-digit characters between two digits and
  has the same digit sequence (``010-1234-5678`` ~ ``010 1234 5678`` ~
  ``01012345678``). A value with any other character gets no numeric
  variants (an absent ``alias123456`` is not accepted because ``123456``
  occurs), although it can still match literally.

How numeric variants are found: they live in *digit runs*, the maximal
stretches of the source made of digit groups joined by 1-3 whitespace or
separator characters (``010-1234-5678``: three groups). A numeric variant
that respects the boundaries starts where a group starts and ends where a
group ends, inside one run; so one pass over the runs, comparing digit
sequences, finds them all. No pattern is compiled per document or per value.

What this module deliberately does not do: it does not normalize (inputs are
assumed NFC and, for values, trimmed: the callers do that once), it does not
decide which of several overlapping matches wins (that rule belongs to the
masker, `piilab.masking.longest_matches`), and its rules are not phone,
account or identity number validators.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import NamedTuple

__all__ = [
    "PERSON_JOINERS",
    "SEPARATORS",
    "Occurrence",
    "digit_groups",
    "digit_runs",
    "digit_sequence",
    "find_occurrences",
    "group_spans",
    "has_match",
    "is_ascii_digit",
    "is_numeric_value",
    "is_numeric_variant",
    "next_occurrence",
    "numeric_spans",
    "occurrence_spans",
    "person_variants",
    "spellings",
    "within_boundaries",
]

#: The separators a numeric value may contain besides digits and whitespace.
SEPARATORS = "-./"

#: How the characters of a PERSON value may be joined in a variant.
PERSON_JOINERS: tuple[str, ...] = ("", " ", "\t", "\n")

#: PERSON values whose whitespace-free form has this many characters get variants.
PERSON_VARIANT_SIZES = range(2, 7)

_DIGITS = frozenset("0123456789")

# `\s` in a str pattern matches exactly the characters `str.isspace()` accepts
# (both use the same Unicode whitespace table; a test checks every code point).
#: The shape of a numeric variant: digit groups joined by 1-3 non-digit characters.
#: Searched (not only fully matched), it finds the digit runs: the greedy
#: repetition stops at a gap of 4 or more, so every match is a whole run.
#: (``[0-9][0-9]*`` means ``[0-9]+``; written so, the pattern opens with a plain
#: character class, which lets `re` skip ahead to the next digit instead of
#: starting a match attempt at every position: about twice as fast on prose.)
_NUMERIC_VARIANT = re.compile(r"[0-9][0-9]*(?:[\s./-]{1,3}[0-9]+)*")
#: A numeric value: digits, whitespace and separators, at least one digit.
_NUMERIC_VALUE = re.compile(r"[\s./-]*[0-9][0-9\s./-]*")
#: The gaps between the groups of a run, captured so that `split` keeps them.
_GAP = re.compile(r"([\s./-]+)")
_NON_DIGITS = re.compile(r"[^0-9]+")


def is_ascii_digit(ch: str) -> bool:
    """True for the single characters ``0``-``9`` only (``"１"`` is not a digit)."""
    return ch in _DIGITS


def is_numeric_value(value: str) -> bool:
    """True when `value` has only digits, whitespace and ``-./``, and at least one digit.

    Such values get numeric variants, whatever their label.

    >>> is_numeric_value("010-1234-5678"), is_numeric_value("alias123456")
    (True, False)
    """
    return _NUMERIC_VALUE.fullmatch(value) is not None


def is_numeric_variant(text: str) -> bool:
    """True when `text` has the shape of a numeric variant.

    It starts and ends with a digit, holds only digits, whitespace and
    ``-./``, and has at most 3 non-digit characters between two digits.

    >>> is_numeric_variant("010 1234-5678"), is_numeric_variant("010    1234")
    (True, False)
    """
    return _NUMERIC_VARIANT.fullmatch(text) is not None


def digit_sequence(text: str) -> str:
    """The ASCII digits of `text`, in order (``"010-1234"`` -> ``"0101234"``)."""
    # Fast path (this runs for every numeric value and digit run): removing the
    # usual separators with `str.replace` is several times cheaper than a
    # regex substitution; anything else falls back to the regex.
    digits = text.replace("-", "").replace(" ", "").replace(".", "").replace("/", "")
    if digits.isascii() and digits.isdigit():
        return digits
    return _NON_DIGITS.sub("", text)


def digit_groups(text: str) -> list[str]:
    """The digit groups of a numeric variant, in order (the gaps between them dropped).

    >>> digit_groups("010-1234 5678")
    ['010', '1234', '5678']
    """
    return _GAP.split(text)[::2]


def within_boundaries(source: str, start: int, end: int) -> bool:
    """True when ``source[start:end]`` respects the numeric boundary rule.

    A match that starts (ends) with a digit must not have a digit just before
    (after) it in the source.

    >>> within_boundaries("12345", 0, 4), within_boundaries("010-1234-5678", 4, 8)
    (False, True)
    """
    if start > 0 and source[start] in _DIGITS and source[start - 1] in _DIGITS:
        return False
    return not (end < len(source) and source[end - 1] in _DIGITS and source[end] in _DIGITS)


def person_variants(value: str) -> tuple[str, ...]:
    """The spacing variants of a PERSON value (empty when it gets none).

    >>> person_variants("김 가상")
    ('김가상', '김 가 상', '김\\t가\\t상', '김\\n가\\n상')
    >>> person_variants("Alexander")  # 9 characters: no variants
    ()
    """
    chars = "".join(value.split())
    if len(chars) not in PERSON_VARIANT_SIZES:
        return ()
    # The four PERSON_JOINERS, spelled out (this runs for every PERSON
    # candidate); the characters are split into a list once, not per join.
    letters = list(chars)
    return (chars, " ".join(letters), "\t".join(letters), "\n".join(letters))


def spellings(label: str, value: str) -> tuple[str, ...]:
    """The exact spellings a candidate may take: its literal, then its PERSON variants.

    Numeric variants are not listed (there are too many); they are found by
    comparing digit sequences instead (`numeric_spans`).

    >>> spellings("PERSON", "김가상")
    ('김가상', '김 가 상', '김\\t가\\t상', '김\\n가\\n상')
    """
    if not value:
        return ()
    if label != "PERSON":
        return (value,)
    return (value, *(variant for variant in person_variants(value) if variant != value))


def digit_runs(source: str) -> Iterator[tuple[int, str]]:
    """The digit runs of `source` as ``(start, text)``, in source order.

    A run is a maximal stretch of digit groups joined by 1-3 whitespace or
    separator characters. Every digit of the source belongs to exactly one run.

    >>> list(digit_runs("tel 010-1234-5678 or 12    34"))
    [(4, '010-1234-5678'), (21, '12'), (27, '34')]
    """
    position = 0
    # The runs' texts via `findall`, cheaper than match objects. Each run
    # starts at the first digit after the previous run, so `find` from there
    # recovers its offset.
    for run in _NUMERIC_VARIANT.findall(source):
        start = source.find(run, position)
        yield start, run
        position = start + len(run)


def numeric_spans(
    source: str, digit_keys: Collection[str], runs: Sequence[tuple[int, str]] | None = None
) -> list[tuple[int, int]]:
    """Every span of `source` that is a numeric variant of one of `digit_keys`.

    `digit_keys` are digit sequences (``digit_sequence(value)`` of numeric
    values). Each returned ``(start, end)`` starts and ends with a digit,
    respects the numeric boundaries and has the digits of one of the keys; a
    value's literal occurrences are among them when the literal has the
    shape of a variant. The result is sorted by ``(start, end)``; overlapping
    spans are all kept. `runs`, when given, must be ``list(digit_runs(source))``
    (a caller that searches many values in one source finds them once).

    Cost: one pass over the source for its digit runs, then per run one
    look-up (a run of one group) or, per key, one search in the run's digits.

    >>> numeric_spans("tel 010 1234-5678, 12345", {"12345678", "1234"})
    [(8, 12), (8, 17)]
    """
    if not digit_keys:
        return []
    found: list[tuple[int, int]] = []
    for start, run in digit_runs(source) if runs is None else runs:
        if run.isdigit():  # one group (the usual case)
            if run in digit_keys:
                found.append((start, start + len(run)))
        else:
            found += _keys_in_run(run, start, digit_keys)
    return sorted(found)


def _keys_in_run(text: str, run_start: int, digit_keys: Iterable[str]) -> list[tuple[int, int]]:
    """Search each key in the digits of one run; keep hits that start and end on group edges."""
    digits = digit_sequence(text)
    found: list[tuple[int, int]] = []
    if digits in digit_keys:  # the whole run
        found.append((run_start, run_start + len(text)))
    edges = None
    for key in digit_keys:
        # Only a shorter key can occur inside the run.
        if len(key) >= len(digits) or key not in digits:
            continue
        if edges is None:
            edges = _group_edges(text, run_start)
        starts, ends = edges
        hit = digits.find(key)
        while hit != -1:
            stop = hit + len(key)
            if hit in starts and stop in ends:
                found.append((starts[hit], ends[stop]))
            hit = digits.find(key, hit + 1)
    return found


def group_spans(text: str, run_start: int = 0) -> list[tuple[int, int]]:
    """The ``(start, end)`` source offsets of the digit groups of a run, in order.

    `text` is a digit run (`digit_runs`) that starts at `run_start` in the source.

    >>> group_spans("010-1234 5678", 4)
    [(4, 7), (8, 12), (13, 17)]
    """
    spans: list[tuple[int, int]] = []
    offset = run_start
    # ["010", "-", "1234", "-", "5678"]: digit groups at even, gaps at odd indexes
    for index, part in enumerate(_GAP.split(text)):
        if index % 2 == 0:
            spans.append((offset, offset + len(part)))
        offset += len(part)
    return spans


def _group_edges(text: str, run_start: int) -> tuple[dict[int, int], dict[int, int]]:
    """Where the digit groups of a run start and end.

    Returns two dicts keyed by offsets in the run's digits: the digit offset
    where a group starts -> its source offset, and the digit offset just after
    a group -> the source offset just after it.
    """
    starts: dict[int, int] = {}
    ends: dict[int, int] = {}
    digit_offset = 0
    for start, end in group_spans(text, run_start):
        starts[digit_offset] = start
        digit_offset += end - start
        ends[digit_offset] = end
    return starts, ends


def next_occurrence(source: str, spelling: str, position: int = 0) -> int:
    """Where `spelling` first occurs in `source` at or after `position`, within boundaries.

    -1 when it does not occur there. Occurrences that break the numeric
    boundary rule are skipped, so the search goes on after them.

    >>> next_occurrence("12345 / 1234", "1234"), next_occurrence("12345", "1234")
    (8, -1)
    """
    start = source.find(spelling, position)
    while start != -1 and not within_boundaries(source, start, start + len(spelling)):
        start = source.find(spelling, start + 1)
    return start


class Occurrence(NamedTuple):
    """One place where a value (or a permitted variant) occurs: ``source[start:end]``.

    `literal` is True when the matched text is exactly the value. An immutable named tuple
    (the masker builds one per occurrence, and a frozen dataclass costs several times more
    to build).
    """

    start: int
    end: int
    literal: bool


def find_occurrences(
    source: str, label: str, value: str, runs: Sequence[tuple[int, str]] | None = None
) -> list[Occurrence]:
    """Every occurrence of `value` or a permitted variant in `source`, within boundaries.

    All start positions are reported, overlapping ones included; for a numeric
    value every qualifying ``(start, end)`` is. The result is sorted by
    ``(start, end)``. `source` and `value` are assumed NFC-normalized and
    `value` trimmed (parsing and masking do that before they call here);
    `label` is an uppercase label (only ``PERSON`` changes anything).
    `runs`, when given, must be ``list(digit_runs(source))``: a caller that
    looks for many values in one source (the masker) finds the runs once.
    `occurrence_spans` gives the same occurrences unsorted, as a dict.

    >>> [(o.start, o.end, o.literal) for o in find_occurrences("010 1234 5678", "PHONE", "1234")]
    [(4, 8, True)]
    >>> find_occurrences("12345", "PHONE", "1234")
    []
    """
    found = occurrence_spans(source, label, value, runs)
    spans = sorted(found.items()) if len(found) > 1 else found.items()
    return [Occurrence(start, end, literal) for (start, end), literal in spans]


def occurrence_spans(
    source: str, label: str, value: str, runs: Sequence[tuple[int, str]] | None = None
) -> dict[tuple[int, int], bool]:
    """The occurrences of `find_occurrences` as ``{(start, end): literal}``, in no order.

    This is where the matching rules run; `find_occurrences` sorts its result into
    `Occurrence` tuples. (The masker applies the same rules lazily: it asks
    `next_occurrence` for one occurrence at a time, from its cursor on.)

    >>> occurrence_spans("010 1234 5678 / 010-1234-5678", "PHONE", "010-1234-5678")
    {(16, 29): True, (0, 13): False}
    """
    found: dict[tuple[int, int], bool] = {}
    for spelling in spellings(label, value):
        literal = spelling == value
        start = next_occurrence(source, spelling)
        while start != -1:
            end = start + len(spelling)
            found[start, end] = found.get((start, end), False) or literal
            start = next_occurrence(source, spelling, start + 1)
    if value and is_numeric_value(value):
        for start, end in numeric_spans(source, (digit_sequence(value),), runs):
            found[start, end] = found.get((start, end), False) or source[start:end] == value
    return found


def has_match(source: str, label: str, value: str) -> bool:
    """True when `value` or a permitted variant occurs in `source` within boundaries.

    Same assumptions as `find_occurrences`.

    >>> has_match("id alias999 / 123456", "ACCOUNT", "alias123456")
    False
    """
    if any(next_occurrence(source, spelling) != -1 for spelling in spellings(label, value)):
        return True
    return bool(value) and is_numeric_value(value) and bool(
        numeric_spans(source, (digit_sequence(value),))
    )
