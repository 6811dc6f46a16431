"""Deterministic, reversible masking: `mask_text`, `number_tokens` and `reassemble_text`.

Chapter 03 ("Deterministic tokenization") teaches this module (its old name,
`piilab.tokenization`, still works). Given a document and the candidates a
model listed (``(type, value)`` pairs), the masker replaces every occurrence
of each value, or of a permitted variant (`piilab.matching`), with a token
such as ``[PERSON_2]``; the mapping from token back to the exact matched
spelling restores the document.

The algorithm, in the order the chapter explains it (docs/contract.md, section 5):

1. NFC-normalize the source and the values; trim; uppercase the types; drop
   empty values; reject unknown types; deduplicate (`normalize_candidates`).
2. Find the occurrences of every candidate, literal or variant, with the
   rules of `piilab.matching` (`find_occurrences` lists them all). When one
   span is an occurrence of several candidates, a literal beats a variant,
   and then the type-priority order of `LABELS` decides.
3. Sweep the occurrences once, left to right: at each position the longest
   one wins; the sweep continues after it, so matches never overlap
   (steps 2 and 3 are `longest_matches`). The sweep asks each spelling only
   for its next occurrence after the cursor, so occurrences that start
   inside a match are never looked for.
4. Number tokens per type in source order, keyed by (type, matched spelling):
   the same spelling reuses its token, another spelling of the same name gets
   its own token. A token name that already occurs in the source is skipped
   (`number_tokens`, which any list of spans can use).
5. Return the masked text, the mapping token -> matched spelling, and the
   spans (half-open offsets into the NFC source).

Candidates that do not occur in the source simply produce no match.

What it deliberately does not do: it does not find PII by itself (it masks
what it is given), it does not resolve identity (two tokens may name one
person, one token may stand for two people who share a name), and it does
not protect the mapping, which holds every masked value and must be stored
like the original document. Nothing here logs or prints; error messages name
types and positions, never values.

Cost: each spelling is searched with `str.find`, from the cursor on, and the
numeric variants are read off the digit runs of the source once; a heap keeps
the next occurrence of each spelling in order. No span is ever compared with
every other span, and a spelling is searched again only when a match passes
its next occurrence, so the cost grows linearly with the length of the
document, even where the candidates overlap at every position (a run of one
character and candidates that are substrings of each other).

>>> result = mask_text("김가상 / 김 가 상 / [PERSON_1]", [("PERSON", "김가상")])
>>> result.masked_text
'[PERSON_2] / [PERSON_3] / [PERSON_1]'
>>> reassemble_text(result.masked_text, result.mapping)
'김가상 / 김 가 상 / [PERSON_1]'
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from piilab.errors import PiilabError
from piilab.labels import LABEL_PRIORITY, LABELS, PairError, nfc, normalize_pair
from piilab.matching import (
    digit_sequence,
    is_numeric_value,
    is_numeric_variant,
    next_occurrence,
    numeric_spans,
    spellings,
)

__all__ = [
    "TOKEN_PATTERN",
    "Candidate",
    "MaskResult",
    "MaskingError",
    "Span",
    "first_occurrences",
    "leftmost_longest",
    "longest_matches",
    "mask_text",
    "normalize_candidates",
    "number_tokens",
    "reassemble_text",
]

#: What a token looks like: ``[`` + uppercase label + ``_`` + number + ``]``.
TOKEN_PATTERN = re.compile(r"\[[A-Z]+_[0-9]+\]")

#: Token names `number_tokens` may assign, for labels of uppercase letters and
#: underscores (another taxonomy's ``CARD_NUMBER``, say). For the course's
#: labels, which have no underscore, it finds exactly what `TOKEN_PATTERN` finds.
_TOKEN_NAME = re.compile(r"\[[A-Z][A-Z_]*_[0-9]+\]")


class MaskingError(PiilabError):
    """Bad input to the masker: a candidate type outside `LABELS`, a span out of order, a
    result dict of the wrong shape. The message names the position or field, never a value
    (a `ValueError`, as every `PiilabError` is)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A predicted PII value: ``Candidate("PERSON", "김가상")``.

    It unpacks like a ``(type, value)`` pair: ``label, value = candidate``.
    """

    type: str
    value: str

    def __iter__(self) -> Iterator[str]:
        return iter((self.type, self.value))

    def to_dict(self) -> dict[str, str]:
        return {"type": self.type, "value": self.value}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Candidate:
        return cls(_field(data, "type", str), _field(data, "value", str))


class Span(NamedTuple):
    """One replacement: ``source[start:end]`` (NFC source) became `token`.

    An immutable named tuple, like `piilab.matching.Occurrence`: `mask_text` builds one per
    replacement, and a frozen dataclass costs several times more to build.
    """

    start: int
    end: int
    type: str
    token: str

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "type": self.type, "token": self.token}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Span:
        return cls(
            _field(data, "start", int),
            _field(data, "end", int),
            _field(data, "type", str),
            _field(data, "token", str),
        )


@dataclass(frozen=True, slots=True)
class MaskResult:
    """The output of `mask_text`.

    `mapping` (token -> exact matched spelling, in the order tokens were
    assigned) is sensitive: it holds every masked value. Treat it as
    read-only. `spans` are in source order.
    """

    masked_text: str
    mapping: dict[str, str]
    spans: tuple[Span, ...]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``json.dumps(result.to_dict(), ensure_ascii=False)``)."""
        return {
            "masked_text": self.masked_text,
            "mapping": dict(self.mapping),
            "spans": [span.to_dict() for span in self.spans],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MaskResult:
        """Rebuild a result from `to_dict` output; raises `MaskingError` on a bad shape."""
        mapping = _field(data, "mapping", dict)
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()):
            raise MaskingError("field 'mapping' must map strings to strings")
        spans = _field(data, "spans", list)
        return cls(
            _field(data, "masked_text", str),
            dict(mapping),
            tuple(Span.from_dict(span) for span in spans),
        )


def _field(data: Mapping[str, Any], name: str, kind: type) -> Any:
    if not isinstance(data, Mapping):
        raise MaskingError(f"expected an object with field {name!r}")
    if name not in data:
        raise MaskingError(f"missing field {name!r}")
    value = data[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise MaskingError(f"field {name!r} must be of type {kind.__name__}")
    return value


def normalize_candidates(
    candidates: Iterable[Candidate | tuple[str, str]],
) -> frozenset[tuple[str, str]]:
    """Step 1: NFC, trim, uppercase types, drop empty values, deduplicate.

    Raises `MaskingError` for a type outside `LABELS` (the message names its
    position, never the type or value) and TypeError for an item that is not a
    pair of strings.
    """
    normalized: set[tuple[str, str]] = set()
    for index, item in enumerate(candidates):
        try:
            label, value = item
        except (TypeError, ValueError):
            raise TypeError(f"candidate {index} is not a (type, value) pair") from None
        if not isinstance(label, str) or not isinstance(value, str):
            raise TypeError(f"candidate {index}: type and value must be strings")
        try:
            pair = normalize_pair(label, value)
        except PairError:
            # The type is not echoed: with swapped columns it would be a value.
            raise MaskingError(
                f"candidate {index}: type is not a PII label "
                f"(expected one of {', '.join(LABELS)})"
            ) from None
        if pair is not None:
            normalized.add(pair)
    return frozenset(normalized)


def mask_text(
    source_text: str, candidates: Iterable[Candidate | tuple[str, str]]
) -> MaskResult:
    """Replace every match of the candidates with a numbered token (docs/contract.md, section 5).

    `candidates` are ``(type, value)`` pairs or `Candidate` objects, in any
    order: the result does not depend on it. Raises ValueError for a type
    outside `LABELS`.

    >>> r = mask_text("Call 010-1234-5678 or 010 1234 5678.",
    ...               [("PHONE", "010-1234-5678")])
    >>> r.masked_text
    'Call [PHONE_1] or [PHONE_2].'
    >>> r.mapping
    {'[PHONE_1]': '010-1234-5678', '[PHONE_2]': '010 1234 5678'}
    """
    source = nfc(source_text)  # step 1
    pairs = normalize_candidates(candidates)
    return number_tokens(source, longest_matches(source, pairs))  # steps 2-3, then 4-5


def longest_matches(
    source: str, pairs: Iterable[tuple[str, str]]
) -> list[tuple[int, int, str]]:
    """Steps 2 and 3: the matches of one left-to-right sweep, ``(start, end, label)``.

    `source` is NFC; `pairs` are normalized ``(label, value)`` pairs
    (`normalize_candidates`). The sweep keeps a cursor and a heap of
    occurrences (`first_occurrences`): for each spelling, its next occurrence
    at or after the cursor. The top of the heap is the leftmost occurrence, at
    one start the longest, for one span the best owner. A top that starts
    before the cursor lies inside a match: its spelling is searched again from
    the cursor. Any other top is a match, and the cursor moves to its end. The
    matches are in source order and never overlap, and an occurrence that
    starts inside a match is never looked for.

    >>> longest_matches("김가상어, 김 가 상", [("PERSON", "김가상"), ("REL", "상어")])
    [(0, 3, 'PERSON'), (6, 11, 'PERSON')]
    """
    heap = first_occurrences(source, pairs)  # (start, -end, rank, spelling)
    heapq.heapify(heap)
    matches: list[tuple[int, int, str]] = []
    cursor = 0
    while heap:
        start, minus_end, rank, spelling = heap[0]
        if start >= cursor:  # step 3: a match; the sweep continues after it
            cursor = -minus_end
            matches.append((start, cursor, LABELS[rank[1]]))
            continue
        start = next_occurrence(source, spelling, cursor) if spelling else -1
        if start == -1:  # a numeric variant, or a spelling that occurs no more
            heapq.heappop(heap)
        else:
            heapq.heapreplace(heap, (start, -start - len(spelling), rank, spelling))
    return matches


def first_occurrences(
    source: str, pairs: Iterable[tuple[str, str]]
) -> list[tuple[int, int, tuple[bool, int], str]]:
    """Step 2: ``(start, -end, rank, spelling)``, each spelling's first occurrence.

    A spelling's rank (lower wins) is the best of the candidates that spell it
    so: a literal beats a variant, then the `LABELS` order decides. Numeric
    variants are read off the digit runs, all of them at once (`spelling` is
    ``""``); a spelling shaped like a numeric variant is among them, so it is
    not searched.
    """
    ranks: dict[str, tuple[bool, int]] = {}
    numeric: dict[str, list[tuple[str, int]]] = {}  # digits -> [(value, priority)]
    for label, value in pairs:
        priority = LABEL_PRIORITY[label]
        for spelling in spellings(label, value):
            rank = (spelling != value, priority)
            ranks[spelling] = min(rank, ranks.get(spelling, rank))
        if is_numeric_value(value):
            numeric.setdefault(digit_sequence(value), []).append((value, priority))
    found = []
    for spelling, rank in ranks.items():
        if not is_numeric_variant(spelling):
            start = next_occurrence(source, spelling)
            if start != -1:
                found.append((start, -start - len(spelling), rank, spelling))
    for start, end in numeric_spans(source, numeric):
        text = source[start:end]
        holders = numeric[digit_sequence(text)]
        rank = min((text != value, priority) for value, priority in holders)
        found.append((start, -end, rank, ""))
    return found


def leftmost_longest(
    owner: Mapping[tuple[int, int], tuple[bool, int]],
) -> list[tuple[int, int, str]]:
    """Step 3 alone: sweep the occurrences ``{(start, end): (variant?, priority)}`` once.

    Leftmost first, and at one start the longest first; the sweep continues
    after each match, so the matches never overlap. The label of a match is
    its owner's (``LABELS[priority]``). `longest_matches` gives the same
    matches without collecting every occurrence first; the opt-in
    `piilab.masking_index` ends here.

    >>> leftmost_longest({(0, 3): (False, 0), (0, 5): (True, 4), (2, 7): (False, 0)})
    [(0, 5, 'PHONE')]
    """
    matches: list[tuple[int, int, str]] = []
    cursor = 0
    for start, minus_end in sorted((start, -end) for start, end in owner):
        if start >= cursor:
            cursor = -minus_end
            matches.append((start, cursor, LABELS[owner[start, cursor][1]]))
    return matches


def number_tokens(source: str, spans: Iterable[tuple[int, int, str]]) -> MaskResult:
    """Steps 4 and 5: replace each ``(start, end, label)`` span of `source` with a token.

    Tokens are numbered per label in source order, keyed by (label, spelling):
    the same spelling reuses its token, and a token name that already occurs
    in `source` is skipped. `spans` must be in source order, nonempty and
    disjoint (`MaskingError` otherwise, naming the span by position); labels are
    uppercase letters and underscores. Offsets index `source` as given (the
    masker passes the NFC source).

    >>> number_tokens("김가상 and 김가상, [PHONE_1] 010-0000-1111",
    ...               [(0, 3, "PERSON"), (8, 11, "PERSON"), (23, 36, "PHONE")]).masked_text
    '[PERSON_1] and [PERSON_1], [PHONE_1] [PHONE_2]'
    """
    taken = frozenset(_TOKEN_NAME.findall(source)) if "[" in source else frozenset()
    next_number: dict[str, int] = {}
    token_of: dict[tuple[str, str], str] = {}
    mapping: dict[str, str] = {}
    replaced: list[Span] = []
    pieces: list[str] = []
    cursor = 0
    for index, (start, end, label) in enumerate(spans):
        if not cursor <= start < end <= len(source):
            raise MaskingError(f"span {index} is empty, out of range, out of order or "
                               "overlaps the span before it")
        spelling = source[start:end]
        token = token_of.get((label, spelling))
        if token is None:
            number = next_number.get(label, 1)
            while f"[{label}_{number}]" in taken:
                number += 1
            token = f"[{label}_{number}]"
            next_number[label] = number + 1
            token_of[label, spelling] = token
            mapping[token] = spelling
        pieces.append(source[cursor:start])
        pieces.append(token)
        replaced.append(Span(start, end, label, token))
        cursor = end
    pieces.append(source[cursor:])
    return MaskResult("".join(pieces), mapping, tuple(replaced))


def reassemble_text(masked_text: str, mapping: Mapping[str, str]) -> str:
    """Put the original spellings back: the inverse of `mask_text`.

    Known tokens are replaced in one pass, so a restored value that itself
    looks like a token is never expanded again; tokens missing from `mapping`
    (such as a ``[PERSON_1]`` that was in the source) stay as they are. Every token
    name `number_tokens` can assign is restored, underscores included (the finance
    dataset's ``[CARD_NUMBER_1]``).

    >>> reassemble_text("[PERSON_2] met [PERSON_9]", {"[PERSON_2]": "김가상"})
    '김가상 met [PERSON_9]'

    The text must be a string and `mapping` a mapping of strings to strings
    (`TypeError` otherwise, naming the entry by position, never its value): a
    ``None`` value would silently delete its token.
    """
    if not isinstance(masked_text, str):
        raise TypeError("reassemble_text takes the masked text as a string")
    if not isinstance(mapping, Mapping):
        raise TypeError("reassemble_text takes the mapping as a {token: value} mapping")
    for index, (token, value) in enumerate(mapping.items(), start=1):
        if not isinstance(token, str) or not isinstance(value, str):
            raise TypeError(f"mapping entry {index}: token and value must be strings")
    if not mapping or "[" not in masked_text:
        return masked_text
    return _TOKEN_NAME.sub(lambda m: mapping.get(m.group(), m.group()), masked_text)
