"""Where a value occurs in a document: literals, variants, numeric boundaries.

Chapter 03 ("Deterministic tokenization") teaches this module. It is the one
implementation of source matching that parsing (`piilab.parsing`), masking
(`piilab.tokenization`) and evaluation all use, so that "this prediction
matches the document" means the same thing everywhere.

The rules (SPEC section 4):

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
masker; `PatternTable` only applies it), and its rules are not phone,
account or identity number validators.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

from piilab.labels import LABEL_PRIORITY, LABELS

__all__ = [
    "PERSON_JOINERS",
    "SEPARATORS",
    "Occurrence",
    "PatternTable",
    "digit_runs",
    "digit_sequence",
    "find_occurrences",
    "has_match",
    "is_ascii_digit",
    "is_numeric_value",
    "is_numeric_variant",
    "numeric_spans",
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
    variants = person_variants(value) if label == "PERSON" else ()
    return (value, *(variant for variant in variants if variant != value))


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


def numeric_spans(source: str, digit_keys: Collection[str]) -> list[tuple[int, int]]:
    """Every span of `source` that is a numeric variant of one of `digit_keys`.

    `digit_keys` are digit sequences (``digit_sequence(value)`` of numeric
    values). Each returned ``(start, end)`` starts and ends with a digit,
    respects the numeric boundaries and has the digits of one of the keys; a
    value's literal occurrences are among them when the literal has the
    shape of a variant. The result is sorted by ``(start, end)``; overlapping
    spans are all kept.

    >>> numeric_spans("tel 010 1234-5678, 12345", {"12345678", "1234"})
    [(8, 12), (8, 17)]
    """
    return sorted(_numeric_matches(source, digit_keys)) if digit_keys else []


def _numeric_matches(source: str, digit_keys: Collection[str]) -> Iterator[tuple[int, int]]:
    """The spans of `numeric_spans`, in no particular order (`digit_keys` nonempty).

    Cost: one pass over the source for its digit runs. A run of one group is
    its own only candidate: one look-up. Inside a run of several groups, a
    few keys are each searched in the run's digits; many keys are looked up
    instead for each stretch of consecutive groups no longer than the
    longest key. Either way the work per run does not grow with the length
    of the document.
    """
    many_keys = len(digit_keys) > _FEW_KEYS
    max_digits = max(map(len, digit_keys)) if many_keys else 0
    for match in _NUMERIC_VARIANT.finditer(source):  # the digit runs
        run = match.group()
        if run.isdigit():  # one group (the usual case)
            if run in digit_keys:
                yield match.span()
        elif many_keys:
            yield from _group_stretches(run, match.start(), digit_keys, max_digits)
        else:
            yield from _keys_in_run(run, match.start(), digit_keys)


#: Up to this many keys, `numeric_spans` searches each key in a run's digits.
_FEW_KEYS = 8


def _keys_in_run(text: str, run_start: int, digit_keys: Iterable[str]) -> list[tuple[int, int]]:
    """Search each key in the digits of one run; keep hits that start and end on group edges."""
    digits = digit_sequence(text)
    found: list[tuple[int, int]] = []
    if digits in digit_keys:  # the whole run (the usual case)
        found.append((run_start, run_start + len(text)))
    edges = None
    for key in digit_keys:
        # Only a shorter key can occur inside the run (`in` is a cheap first test).
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


def _group_stretches(
    text: str, run_start: int, digit_keys: Collection[str], max_digits: int
) -> list[tuple[int, int]]:
    """Look up the digits of every stretch of consecutive groups of one run."""
    starts, ends = _group_edges(text, run_start)
    groups = _GAP.split(text)[::2]
    group_starts = list(starts.values())
    group_ends = list(ends.values())
    found: list[tuple[int, int]] = []
    for first in range(len(groups)):
        digits = ""
        for last in range(first, len(groups)):
            digits += groups[last]
            if len(digits) > max_digits:
                break
            if digits in digit_keys:
                found.append((group_starts[first], group_ends[last]))
    return found


def _group_edges(text: str, run_start: int) -> tuple[dict[int, int], dict[int, int]]:
    """Where the digit groups of a run start and end.

    Returns two dicts keyed by offsets in the run's digits: the digit offset
    where a group starts -> its source offset, and the digit offset just after
    a group -> the source offset just after it.
    """
    starts: dict[int, int] = {}
    ends: dict[int, int] = {}
    offset, digit_offset = run_start, 0
    # ["010", "-", "1234", "-", "5678"]: digit groups at even, gaps at odd indexes
    for index, part in enumerate(_GAP.split(text)):
        if index % 2 == 0:
            starts[digit_offset] = offset
            digit_offset += len(part)
            ends[digit_offset] = offset + len(part)
        offset += len(part)
    return starts, ends


@dataclass(frozen=True)
class Occurrence:
    """One place where a value (or a permitted variant) occurs: ``source[start:end]``.

    `literal` is True when the matched text is exactly the value.
    """

    start: int
    end: int
    literal: bool


def find_occurrences(source: str, label: str, value: str) -> list[Occurrence]:
    """Every occurrence of `value` or a permitted variant in `source`, within boundaries.

    All start positions are reported, overlapping ones included; for a numeric
    value every qualifying ``(start, end)`` is. The result is sorted by
    ``(start, end)``. `source` and `value` are assumed NFC-normalized and
    `value` trimmed (parsing and masking do that before they call here);
    `label` is an uppercase label (only ``PERSON`` changes anything).

    >>> [(o.start, o.end, o.literal) for o in find_occurrences("010 1234 5678", "PHONE", "1234")]
    [(4, 8, True)]
    >>> find_occurrences("12345", "PHONE", "1234")
    []
    """
    found: dict[tuple[int, int], bool] = {}
    for spelling in spellings(label, value):
        literal = spelling == value
        start = source.find(spelling)
        while start != -1:
            end = start + len(spelling)
            if within_boundaries(source, start, end):
                found[start, end] = found.get((start, end), False) or literal
            start = source.find(spelling, start + 1)
    if value and is_numeric_value(value):
        for start, end in numeric_spans(source, (digit_sequence(value),)):
            found[start, end] = found.get((start, end), False) or source[start:end] == value
    return [Occurrence(start, end, literal) for (start, end), literal in sorted(found.items())]


def has_match(source: str, label: str, value: str) -> bool:
    """True when `value` or a permitted variant occurs in `source` within boundaries.

    Same assumptions as `find_occurrences`.

    >>> has_match("id alias999 / 123456", "ACCOUNT", "alias123456")
    False
    """
    for spelling in spellings(label, value):
        start = source.find(spelling)
        while start != -1:
            if within_boundaries(source, start, start + len(spelling)):
                return True
            start = source.find(spelling, start + 1)
    return bool(value) and is_numeric_value(value) and bool(
        numeric_spans(source, (digit_sequence(value),))
    )


class PatternTable(NamedTuple):
    """The patterns of one candidate set, built once and scanned once (the masker's table).

    Every pattern has an *owner*, the label its match is masked with. One
    spelling can come from several candidates: a literal prediction beats a
    variant generated from another prediction, and among equals the
    type-priority order of `LABELS` decides (SPEC section 5, step 2). Owners
    are stored as ranks, lower wins: ``LABEL_PRIORITY[label]`` for a literal,
    ``len(LABELS) + LABEL_PRIORITY[label]`` for a variant.

    - `spelling_rank`: exact spelling (literal or PERSON variant) -> rank;
    - `digit_rank`: digit sequence of a numeric value -> rank of its numeric
      variants (numeric literals and variants are found in the digit runs);
    - `searched`: the spellings the scan looks for with `str.find`; a numeric
      literal shaped like a variant is left to the digit-run pass.

    How the spellings are found depends on how many there are: a few (up to
    24) are each searched with `str.find`, one C-speed pass each; many are
    indexed by their first two characters, and the source is walked once per
    distinct first character, which the alphabet in use bounds however many
    candidates there are. Either way the cost grows linearly with the length
    of the document.

    (A named tuple rather than a frozen dataclass: one is built for every
    document, and a tuple is several times cheaper to create.)

    >>> table = PatternTable.build([("PERSON", "김가상")])
    >>> table.longest_matches("김가상, 김 가 상님")
    [(0, 3, 'PERSON'), (5, 10, 'PERSON')]
    """

    spelling_rank: dict[str, int]
    digit_rank: dict[str, int]
    searched: frozenset[str]

    @classmethod
    def build(cls, candidates: Iterable[tuple[str, str]]) -> PatternTable:
        """Prepare the patterns of normalized ``(label, value)`` pairs.

        Labels must be in `LABELS`; values NFC, trimmed and nonempty.
        Duplicates are harmless.
        """
        spelling_rank: dict[str, int] = {}
        digit_rank: dict[str, int] = {}
        searched: set[str] = set()
        for label, value in candidates:
            rank = LABEL_PRIORITY[label]
            if rank < spelling_rank.get(value, _NO_RANK):
                spelling_rank[value] = rank
            if label == "PERSON":
                for variant in person_variants(value):
                    searched.add(variant)
                    # (the literal, if it is one of them, keeps its better rank)
                    if rank + _VARIANT < spelling_rank.get(variant, _NO_RANK):
                        spelling_rank[variant] = rank + _VARIANT
            if value[0] in _NUMERIC_START:  # (a cheap test first: most values are not numeric)
                key = _numeric_key(value)
                if key is not None:
                    if rank + _VARIANT < digit_rank.get(key, _NO_RANK):
                        digit_rank[key] = rank + _VARIANT
                    if _has_variant_shape(value, key):
                        # Its literal is also one of its numeric variants: the
                        # digit-run pass finds it, so it needs no search of its own.
                        continue
            searched.add(value)
        return cls(spelling_rank, digit_rank, frozenset(searched))

    def owner(self, spelling: str) -> str:
        """The label of a match spelled `spelling` (KeyError if it is no pattern here)."""
        rank = self.spelling_rank.get(spelling, _NO_RANK)
        if rank >= _VARIANT and self.digit_rank and _NUMERIC_VARIANT.fullmatch(spelling):
            rank = min(rank, self.digit_rank.get(digit_sequence(spelling), _NO_RANK))
        if rank == _NO_RANK:
            raise KeyError("the spelling is not a pattern of this table")
        return LABELS[rank % _VARIANT]

    def longest_matches(self, source: str) -> list[tuple[int, int, str]]:
        """The matches of one left-to-right scan: ``(start, end, label)`` in source order.

        At each position the longest spelling or numeric variant that respects
        the numeric boundaries wins, and the scan continues after it, so the
        matches never overlap. Matches of the same length are the same
        spelling; its owner gives the label.
        """
        # 1. For every start, the end of the longest match starting there.
        longest: dict[int, int] = {}
        if self.digit_rank:
            for start, end in _numeric_matches(source, self.digit_rank):
                if end > longest.get(start, -1):
                    longest[start] = end
        if len(self.searched) <= _FEW_SPELLINGS:
            _find_each(source, self.searched, longest)
        else:
            _find_indexed(source, self.searched, longest)

        # 2. One sweep in source order: the longest match at the leftmost free
        #    position wins; the scan resumes after it.
        ranks = self.spelling_rank
        matches: list[tuple[int, int, str]] = []
        cursor = 0
        for start in sorted(longest):
            if start >= cursor:
                cursor = longest[start]
                spelling = source[start:cursor]
                rank = ranks.get(spelling, _NO_RANK)
                # A literal's rank is final; a variant may still lose to a
                # numeric variant of a higher-priority candidate.
                label = LABELS[rank] if rank < _VARIANT else self.owner(spelling)
                matches.append((start, cursor, label))
        return matches


#: Up to this many spellings, `PatternTable` searches each one with `str.find`.
_FEW_SPELLINGS = 24

_VARIANT = len(LABELS)  # rank offset of variants (ranks below it are literals)
_NO_RANK = 2 * len(LABELS)  # worse than every real rank
_NUMERIC_START = frozenset("0123456789" + SEPARATORS)  # how a trimmed numeric value starts


def _numeric_key(value: str) -> str | None:
    """The digit sequence of a numeric value, None for any other value."""
    digits = value.replace("-", "").replace(" ", "").replace(".", "").replace("/", "")
    if digits.isascii() and digits.isdigit():  # fast path: the usual separators only
        return digits
    return _NON_DIGITS.sub("", value) if _NUMERIC_VALUE.fullmatch(value) else None


def _has_variant_shape(value: str, key: str) -> bool:
    """`is_numeric_variant(value)` for a numeric value whose digits are `key`."""
    # Shortcut: a value that starts and ends with a digit and has at most 3
    # non-digit characters in all cannot hold a gap of 4 or more.
    if value[0] in _DIGITS and value[-1] in _DIGITS and len(value) - len(key) <= 3:
        return True
    return _NUMERIC_VARIANT.fullmatch(value) is not None


def _keep_if_longer(source: str, start: int, end: int, longest: dict[int, int]) -> None:
    """Record ``source[start:end]`` if it respects the boundaries and beats the match there."""
    if end > longest.get(start, -1) and within_boundaries(source, start, end):
        longest[start] = end


def _find_each(source: str, searched: Iterable[str], longest: dict[int, int]) -> None:
    """A few spellings: search each one (all its occurrences) with `str.find`."""
    size = len(source)
    for spelling in searched:
        start = source.find(spelling)
        if start == -1:  # (an absent spelling costs one pass and nothing more)
            continue
        # Only a spelling that starts (ends) with a digit can break a boundary.
        check_start = spelling[0] in _DIGITS
        check_end = spelling[-1] in _DIGITS
        while start != -1:
            end = start + len(spelling)
            if not (
                (check_start and start > 0 and source[start - 1] in _DIGITS)
                or (check_end and end < size and source[end] in _DIGITS)
                or end <= longest.get(start, -1)
            ):
                longest[start] = end
            start = source.find(spelling, start + 1)


def _find_indexed(source: str, searched: Iterable[str], longest: dict[int, int]) -> None:
    """Many spellings: index them by their first two characters, walk each first character.

    Where a first character occurs, the next two characters pick the few
    spelling lengths worth a look-up; spellings of one character are keyed
    by that character alone.
    """
    searched = set(searched)
    lengths: dict[str, set[int]] = {}
    for spelling in searched:
        lengths.setdefault(spelling[:2], set()).add(len(spelling))
    size = len(source)
    for first in {prefix[0] for prefix in lengths}:
        single = first in searched
        digit_first = first in _DIGITS
        start = source.find(first)
        while start != -1:
            # (inside a number, the boundary rule rules out every spelling)
            if not (digit_first and start > 0 and source[start - 1] in _DIGITS):
                if single:
                    _keep_if_longer(source, start, start + 1, longest)
                for length in lengths.get(source[start : start + 2], ()):
                    end = start + length
                    # (a slice past the end is shorter than asked: check the end first)
                    if end <= size and source[start:end] in searched:
                        _keep_if_longer(source, start, end, longest)
            start = source.find(first, start + 1)
