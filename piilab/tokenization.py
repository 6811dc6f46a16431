"""Deterministic, reversible tokenization: `mask_text` and `reassemble_text`.

Chapter 03 ("Deterministic tokenization") teaches this module. Given a
document and the candidates a model listed (``(type, value)`` pairs), the
masker replaces every occurrence of each value, or of a permitted variant
(`piilab.matching`), with a token such as ``[PERSON_2]``; the mapping from
token back to the exact matched spelling restores the document.

The algorithm, in the order the chapter explains it (SPEC section 5):

1. NFC-normalize the source and the values; trim; uppercase the types; drop
   empty values; reject unknown types; deduplicate.
2. Build the patterns once per document: every candidate's literal and its
   variants. When one spelling can be produced by several candidates, a
   literal prediction beats a variant produced by another prediction, and
   then the type-priority order of `LABELS` decides.
3. Scan the source once, left to right: at each position the longest match
   wins; the scan continues after it, so matches never overlap.
4. Number tokens per type in source order, keyed by (type, matched spelling):
   the same spelling reuses its token, another spelling of the same name gets
   its own token. A token name that already occurs in the source is skipped.
5. Return the masked text, the mapping token -> matched spelling, and the
   spans (half-open offsets into the NFC source).

Candidates that do not occur in the source simply produce no match.

What it deliberately does not do: it does not find PII by itself (it masks
what it is given), it does not resolve identity (two tokens may name one
person, one token may stand for two people who share a name), and it does
not protect the mapping, which holds every masked value and must be stored
like the original document. Nothing here logs or prints; error messages name
types and positions, never values.

"Scan once" describes the result; the implementation (`piilab.matching.PatternTable`)
gets there by collecting, for every start position, the longest match that
starts there (each spelling searched with `str.find`, numeric variants read
off the digit runs of the source), then sweeping those starts once in source
order. Patterns are built once per call, no regular expression is compiled
per document, and no span is ever compared with every other span, so the
cost grows linearly with the length of the document.

>>> result = mask_text("김가상 / 김 가 상 / [PERSON_1]", [("PERSON", "김가상")])
>>> result.masked_text
'[PERSON_2] / [PERSON_3] / [PERSON_1]'
>>> reassemble_text(result.masked_text, result.mapping)
'김가상 / 김 가 상 / [PERSON_1]'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from piilab.labels import LABELS, PairError, nfc, normalize_pair
from piilab.matching import PatternTable

__all__ = [
    "TOKEN_PATTERN",
    "Candidate",
    "MaskResult",
    "Span",
    "mask_text",
    "normalize_candidates",
    "reassemble_text",
]

#: What a token looks like: ``[`` + uppercase label + ``_`` + number + ``]``.
TOKEN_PATTERN = re.compile(r"\[[A-Z]+_[0-9]+\]")


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Span:
    """One replacement: ``source[start:end]`` (NFC source) became `token`."""

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


@dataclass(frozen=True)
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
        """Rebuild a result from `to_dict` output; raises ValueError on a bad shape."""
        mapping = _field(data, "mapping", dict)
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()):
            raise ValueError("field 'mapping' must map strings to strings")
        spans = _field(data, "spans", list)
        return cls(
            _field(data, "masked_text", str),
            dict(mapping),
            tuple(Span.from_dict(span) for span in spans),
        )


def _field(data: Mapping[str, Any], name: str, kind: type) -> Any:
    if not isinstance(data, Mapping):
        raise ValueError(f"expected an object with field {name!r}")
    if name not in data:
        raise ValueError(f"missing field {name!r}")
    value = data[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"field {name!r} must be of type {kind.__name__}")
    return value


def normalize_candidates(
    candidates: Iterable[Candidate | tuple[str, str]],
) -> frozenset[tuple[str, str]]:
    """Step 1: NFC, trim, uppercase types, drop empty values, deduplicate.

    Raises ValueError for a type outside `LABELS` (the message names the type,
    never the value) and TypeError for an item that is not a pair of strings.
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
            raise ValueError(
                f"candidate {index}: type is not a PII label "
                f"(expected one of {', '.join(LABELS)})"
            ) from None
        if pair is not None:
            normalized.add(pair)
    return frozenset(normalized)


def mask_text(
    source_text: str, candidates: Iterable[Candidate | tuple[str, str]]
) -> MaskResult:
    """Replace every match of the candidates with a numbered token (SPEC section 5).

    `candidates` are ``(type, value)`` pairs or `Candidate` objects, in any
    order: the result does not depend on it. Raises ValueError for a type
    outside `LABELS`.

    >>> r = mask_text("Call 010-1234-5678 or 010 1234 5678.", [("PHONE", "010-1234-5678")])
    >>> r.masked_text
    'Call [PHONE_1] or [PHONE_2].'
    >>> r.mapping
    {'[PHONE_1]': '010-1234-5678', '[PHONE_2]': '010 1234 5678'}
    """
    source = nfc(source_text)
    pairs = normalize_candidates(candidates)
    if not pairs:
        return MaskResult(source, {}, ())
    # Token names the source already holds (step 4 skips them).
    taken = frozenset(TOKEN_PATTERN.findall(source)) if "[" in source else frozenset()

    # Steps 2 and 3: patterns (and who owns each one) once, then one
    # left-to-right, longest-match scan.
    matches = PatternTable.build(pairs).longest_matches(source)
    if not matches:
        return MaskResult(source, {}, ())

    # Step 4: tokens per type in source order; skip names the source already holds.
    next_number: dict[str, int] = {}
    token_of: dict[tuple[str, str], str] = {}
    mapping: dict[str, str] = {}
    spans: list[Span] = []
    pieces: list[str] = []
    cursor = 0
    for start, end, label in matches:
        spelling = source[start:end]
        token = token_of.get((label, spelling))
        if token is None:
            number = next_number.get(label, 1)
            token = f"[{label}_{number}]"
            while token in taken:
                number += 1
                token = f"[{label}_{number}]"
            next_number[label] = number + 1
            token_of[label, spelling] = token
            mapping[token] = spelling
        pieces.append(source[cursor:start])
        pieces.append(token)
        cursor = end
        spans.append(_span(start, end, label, token))
    pieces.append(source[cursor:])

    # Step 5.
    return MaskResult("".join(pieces), mapping, tuple(spans))


_new_object = object.__new__


def _span(start: int, end: int, label: str, token: str) -> Span:
    """`Span(start, end, label, token)`, built twice as fast for the masker's hot loop.

    The generated ``__init__`` of a frozen dataclass sets each field through
    ``object.__setattr__``; writing the fields into the new instance's
    ``__dict__`` gives the same object (equality, hashing and immutability
    are unchanged) at half the cost.
    """
    span = _new_object(Span)
    fields = span.__dict__
    fields["start"] = start
    fields["end"] = end
    fields["type"] = label
    fields["token"] = token
    return span


def reassemble_text(masked_text: str, mapping: Mapping[str, str]) -> str:
    """Put the original spellings back: the inverse of `mask_text`.

    Known tokens are replaced in one pass, so a restored value that itself
    looks like a token is never expanded again; tokens missing from `mapping`
    (such as a ``[PERSON_1]`` that was in the source) stay as they are.

    >>> reassemble_text("[PERSON_2] met [PERSON_9]", {"[PERSON_2]": "김가상"})
    '김가상 met [PERSON_9]'
    """
    if not mapping or "[" not in masked_text:
        return masked_text
    return TOKEN_PATTERN.sub(lambda m: mapping.get(m.group(), m.group()), masked_text)
