"""Parsing model output into candidate rows: `parse_model_output`.

Chapter 03 ("Deterministic tokenization") teaches this module. The model
reads a document and lists the PII it finds, one ``TYPE<TAB>ORIGINAL`` row
per line; it never edits the document. Parsing turns that raw output into
rows, keeps the ones that really occur in the document (`candidates`) and
sets aside the ones that do not (`unmatched`: hallucinations).

The steps, in order (docs/contract.md, section 3):

1. NFC-normalize the output and the source.
2. Remove complete ``<think>...</think>`` blocks (case-sensitive), repeatedly
   taking the leftmost shortest one: ``<think>a<think>b</think>c</think>``
   leaves ``c</think>``. An unclosed ``<think>`` stays as text.
3. Split into lines on ``\\n`` only. Per line, split at the first TAB (any
   later TAB belongs to the value), trim both sides (a trailing ``\\r`` goes
   with it) and uppercase the type. Rows with an allowed type and a nonempty
   value are kept; prose lines and unknown types are not rows.
4. A row matches when its value, or a permitted variant, occurs in the source
   within numeric boundaries (`piilab.matching`).

What it deliberately does not do: it does not repair malformed rows (a line
without a TAB is prose, even if it names a label), it does not guess a type
for a value, and it does not decide what to mask when matches overlap (that
is `piilab.masking`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from piilab.labels import LABELS, PairError, nfc, normalize_label, normalize_pair
from piilab.masking import Candidate
from piilab.matching import has_match

__all__ = ["ParsedOutput", "parse_model_output", "remove_think_blocks"]

_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"


@dataclass(frozen=True)
class ParsedOutput:
    """What one model output yields.

    - `rows`: every nonempty allowed-type row, normalized, in emitted order
      (duplicates kept);
    - `candidates`: the distinct rows that match the source, in order of first
      emission;
    - `unmatched`: the rows without a source match (hallucinations), in emitted
      order, duplicates kept;
    - `parse_success`: True when the output is empty (after think-block removal
      and stripping) or has at least one source-matching row.
    """

    rows: tuple[Candidate, ...]
    candidates: tuple[Candidate, ...]
    unmatched: tuple[Candidate, ...]
    parse_success: bool


def remove_think_blocks(text: str) -> str:
    """Remove complete ``<think>...</think>`` blocks, leftmost shortest first, repeatedly.

    >>> remove_think_blocks("<think>a<think>b</think>c</think>rest")
    'c</think>rest'
    >>> remove_think_blocks("<think>never closed")
    '<think>never closed'

    One pass, linear in the length of `text` (searching again after each
    removal, or trying every unclosed ``<think>`` against the rest of the text,
    is quadratic: 20,000 unclosed tags took seconds). The kept text is built
    in `out`. Both tags end with ``>``, so a tag is complete exactly when a
    ``>`` is appended: then the end of `out` is looked at. ``opened`` is where
    the leftmost ``<think>`` of `out` starts; a ``</think>`` after it closes the
    leftmost shortest block, which is cut off `out`. What is left before the
    cut holds no ``<think>``, and a tag that the cut joins together (``<thi``
    before it, ``nk>`` after it) is found when its ``>`` arrives, as a search
    of the text after the removal would find it.
    """
    if _THINK_CLOSE not in text or _THINK_OPEN not in text:
        return text  # nothing can be removed (a removal is what joins new tags)
    out: list[str] = []
    opened: int | None = None
    for piece in text.split(">"):
        out.extend(piece)
        out.append(">")
        if opened is None and "".join(out[-7:]) == _THINK_OPEN:
            opened = len(out) - 7
        elif opened is not None and "".join(out[-8:]) == _THINK_CLOSE:
            del out[opened:]
            opened = None
    out.pop()  # the ">" after the last piece
    return "".join(out)


def _allowed_types(allowed_types: Iterable[str]) -> frozenset[str]:
    """The normalized allowed types; a bare string or a non-string member is refused."""
    if isinstance(allowed_types, str | bytes):
        raise TypeError("allowed_types must be a collection of labels, not one string "
                        "(write ('PERSON',), not 'PERSON')")
    try:
        types = list(allowed_types)
    except TypeError:
        raise TypeError("allowed_types must be a collection of labels") from None
    if not all(isinstance(label, str) for label in types):
        raise TypeError("allowed_types must hold only strings (labels)")
    return frozenset(normalize_label(label) for label in types)


def parse_model_output(
    output: str, source_text: str, allowed_types: Iterable[str] = LABELS
) -> ParsedOutput:
    """Parse ``TYPE<TAB>VALUE`` rows and check each against the source (docs/contract.md,
    section 3).

    `allowed_types` is a collection of labels (a tuple, list or set of
    strings); a single string such as ``"PERSON"`` is refused with `TypeError`
    rather than read as its characters, which would drop every row.

    >>> parsed = parse_model_output("<think>hmm</think>person\\t김가상\\nPHONE\\t010-0000-0000",
    ...                             "김 가 상 고객님")
    >>> parsed.candidates
    (Candidate(type='PERSON', value='김가상'),)
    >>> parsed.unmatched
    (Candidate(type='PHONE', value='010-0000-0000'),)
    >>> parsed.parse_success
    True
    """
    if not isinstance(output, str) or not isinstance(source_text, str):
        raise TypeError("parse_model_output takes the output and the source as strings")
    allowed = _allowed_types(allowed_types)
    # 1. NFC.
    output = nfc(output)
    source = nfc(source_text)

    # 2. Think blocks.
    output = remove_think_blocks(output)

    # 3. Rows.
    rows: list[Candidate] = []
    for line in output.split("\n"):
        label, tab, value = line.partition("\t")
        if not tab:
            continue  # prose: no TAB, no row
        try:
            pair = normalize_pair(label, value)
        except PairError:
            continue  # a type outside LABELS is not a row
        if pair is not None and pair[0] in allowed:
            rows.append(Candidate(*pair))

    # 4. Source matching (each distinct row once).
    matches: dict[Candidate, bool] = {}
    for row in rows:
        if row not in matches:
            matches[row] = has_match(source, row.type, row.value)
    candidates = tuple(row for row, matched in matches.items() if matched)
    unmatched = tuple(row for row in rows if not matches[row])
    parse_success = not output.strip() or bool(candidates)
    return ParsedOutput(tuple(rows), candidates, unmatched, parse_success)
