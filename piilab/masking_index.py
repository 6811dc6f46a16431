"""An opt-in masker for many candidates in a long document: `mask_text_indexed`.

`piilab.masking.mask_text` is the masker the course teaches and the one that
runs by default. It searches each candidate through the whole document, so its
cost is (number of candidates) x (length): linear in the length for a given set
of candidates, but a document that is 100 times longer and holds 100 times more
distinct values costs about 100 times more per character. That is the workload
of one long file (a chat export, a day of call notes) masked as one document.

This module gives the same result from an index of the document, built once:

* literal spellings: where in the source each four-character piece of some
  spelling occurs (one pass); each spelling checks only the places of its
  rarest piece;
* numeric values: the digit runs of the source (one pass, as the default masker
  does); in each run, every stretch that starts and ends on a group edge is
  looked up among the digit sequences of all numeric candidates at once,
  stopping when the stretch is longer than the longest of them.

The spans, their owners, the sweep and the numbering are the default masker's
(`piilab.masking.leftmost_longest`, `piilab.masking.number_tokens`), so the
masked text, the mapping and the spans are identical to ``mask_text`` for any
input; tests/test_masking_index.py checks it on generated documents, the course
corpus and the benchmark's long documents. The cost is the length of the
document plus, per candidate, the places of its rarest piece: about flat per
character as the document and its number of candidates grow together. For a
short document with a few candidates the default is
faster (building the index costs more than a few searches): use this one when a
document is long and its candidates many (`benchmarks/bench_mask.py` prints
both).

>>> r = mask_text_indexed("Call 010-1234-5678 or 010 1234 5678.", [("PHONE", "010-1234-5678")])
>>> r.masked_text, r.mapping
('Call [PHONE_1] or [PHONE_2].', {'[PHONE_1]': '010-1234-5678', '[PHONE_2]': '010 1234 5678'})
"""

from __future__ import annotations

from collections.abc import Iterable

from piilab.labels import LABEL_PRIORITY, nfc
from piilab.masking import (
    Candidate,
    MaskResult,
    leftmost_longest,
    normalize_candidates,
    number_tokens,
)
from piilab.matching import (
    digit_runs,
    digit_sequence,
    group_spans,
    is_numeric_value,
    spellings,
    within_boundaries,
)

__all__ = ["indexed_matches", "mask_text_indexed"]

Owner = dict[tuple[int, int], tuple[bool, int]]


def mask_text_indexed(
    source_text: str, candidates: Iterable[Candidate | tuple[str, str]]
) -> MaskResult:
    """`piilab.masking.mask_text`, computed from an index of the document.

    Same arguments, same result, same errors (ValueError for a type outside
    `LABELS`, naming the candidate by position, never its value).
    """
    source = nfc(source_text)
    pairs = normalize_candidates(candidates)
    return number_tokens(source, indexed_matches(source, pairs))


def indexed_matches(
    source: str, pairs: Iterable[tuple[str, str]]
) -> list[tuple[int, int, str]]:
    """`piilab.masking.longest_matches`, from an index: the same matches, in source order."""
    owner: Owner = {}
    numeric: dict[str, list[tuple[str, int]]] = {}  # digit sequence -> (value, priority)
    literal_spellings: list[tuple[str, str, int]] = []  # (spelling, value, priority)
    for label, value in pairs:
        priority = LABEL_PRIORITY[label]
        for spelling in spellings(label, value):
            literal_spellings.append((spelling, value, priority))
        if value and is_numeric_value(value):
            numeric.setdefault(digit_sequence(value), []).append((value, priority))
    _literal_occurrences(source, literal_spellings, owner)
    _numeric_occurrences(source, numeric, owner)
    return leftmost_longest(owner)


def _claim(owner: Owner, span: tuple[int, int], rank: tuple[bool, int]) -> None:
    if span not in owner or rank < owner[span]:
        owner[span] = rank


#: The length of the substrings the literal index is keyed by.
GRAM = 4


def _literal_occurrences(source: str, wanted: list[tuple[str, str, int]], owner: Owner) -> None:
    """Every occurrence of every spelling within boundaries, found from a substring index.

    The index holds, for every substring of `GRAM` characters that some spelling contains,
    where it occurs in the source (and, for a spelling shorter than that, where the whole
    spelling occurs). Each spelling then checks only the places of its own rarest substring:
    a phone number is looked up by its last digits, not by the ``010-`` every phone shares.
    """
    if not wanted:
        return
    grams: set[str] = set()
    short: set[str] = set()
    for spelling, _, _ in wanted:
        if len(spelling) < GRAM:
            short.add(spelling)
        else:
            grams.update(spelling[o:o + GRAM] for o in range(len(spelling) - GRAM + 1))
    short_lengths = sorted({len(spelling) for spelling in short})
    positions: dict[str, list[int]] = {}
    for i in range(len(source)):
        gram = source[i:i + GRAM]
        if gram in grams:
            positions.setdefault(gram, []).append(i)
        for length in short_lengths:
            piece = source[i:i + length]
            if piece in short:
                positions.setdefault(piece, []).append(i)
    for spelling, value, priority in wanted:
        rank = (spelling != value, priority)
        length = len(spelling)
        if length < GRAM:
            offset, places = 0, positions.get(spelling, ())
        else:
            offset, places = min(
                ((o, positions.get(spelling[o:o + GRAM], ())) for o in range(length - GRAM + 1)),
                key=lambda item: len(item[1]))
        for place in places:
            start = place - offset
            end = start + length
            if (start >= 0 and source.startswith(spelling, start)
                    and within_boundaries(source, start, end)):
                _claim(owner, (start, end), rank)


def _numeric_occurrences(
    source: str, numeric: dict[str, list[tuple[str, int]]], owner: Owner
) -> None:
    """Every numeric variant of every numeric value: group-aligned stretches of each run."""
    if not numeric:
        return
    longest = max(len(key) for key in numeric)
    for run_start, run in digit_runs(source):
        groups = ([(run_start, run_start + len(run))] if run.isdigit()  # one group
                  else group_spans(run, run_start))
        for first in range(len(groups)):
            start = groups[first][0]
            digits = ""
            for group_start, end in groups[first:]:
                digits += source[group_start:end]
                if len(digits) > longest:
                    break
                holders = numeric.get(digits)
                if holders:
                    text = source[start:end]
                    for value, priority in holders:
                        _claim(owner, (start, end), (text != value, priority))
