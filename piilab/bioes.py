"""BIOES tags: character spans <-> one tag per token, and span-level scores (chapter 08).

Chapter 08 ("Token classification") teaches this module. The course's main
model *lists* PII as ``TYPE<TAB>VALUE`` rows; the other common design is an
encoder that *labels every token* of the document. Its training targets and its
predictions are tag sequences, one tag per token, in the BIOES scheme:

* ``S-PERSON``: the token is a whole PERSON span on its own (single);
* ``B-PERSON``, ``I-PERSON``, ``E-PERSON``: the first, an inner and the last
  token of a span of several tokens (begin, inside, end);
* ``O``: the token is outside every span.

With N labels that makes 4N + 1 classes (`bioes_classes`).

Tokens are given by their character offsets, exactly as a fast tokenizer's
``offset_mapping`` gives them: ``(start, end)``, half-open, into the text. A
token with empty offsets (``start == end``: a special token such as ``[CLS]``
at ``(0, 0)``, or whitespace a tokenizer trimmed away) holds no character: it
is tagged ``O`` and is skipped when tags are decoded. Several tokens may share
one character's offsets (a byte-level tokenizer can cut a Hangul syllable into
byte pieces); they are simply all inside or all outside a span.

The three steps, in the order the chapter explains them:

1. **Alignment** (`check_alignment`). A span can only be tagged when its
   boundaries are token boundaries. A span that starts or ends *inside* a token
   (``김가상`` when the tokenizer made one token of ``상님``) cannot be expressed
   at all: projecting it would silently move its boundary, so it is reported
   (`Misalignment`) and `spans_to_bioes` raises `AlignmentError`. So is a span
   that starts or ends in characters no token covers, and a span with no token.
2. **Encoding** (`spans_to_bioes`): spans -> tags.
3. **Decoding** (`bioes_to_spans`): tags -> spans. Model output can be ill
   formed; the repair rule (below) keeps every tagged token, and
   `decoding_repairs` lists where it had to be applied.

For aligned, non-overlapping spans the round trip is exact:
``bioes_to_spans(offsets, spans_to_bioes(offsets, spans)) == sorted(spans)``.

**The decoding rule for ill-formed sequences.** Tokens are read left to right
(tokens with empty offsets are skipped); at most one span is open.

* ``O`` closes the open span.
* ``B-X`` closes the open span and opens an X span; ``S-X`` closes the open
  span and makes a one-token X span.
* ``I-X`` and ``E-X`` continue the open span when it is an X span (``E-X``
  then closes it). Otherwise (no open span: an ``I-`` or ``E-`` without a
  ``B-``; or an open span of another label: a label change inside a span)
  the open span is closed where it was, and the token *starts* a new X span,
  as if it were tagged ``B-X`` (``I-X``) or ``S-X`` (``E-X``).
* A span left open (``B-X`` followed by ``O``, ``B-``, ``S-`` or the end) ends
  at its last token.

So every token with a non-``O`` tag ends up in exactly one span, with the label
of its own tag: nothing a model tagged is dropped, and no token changes label.
(seqeval's strict mode, by contrast, discards ill-formed chunks; on
well-formed sequences both read the same spans.) Decoded spans are in token
order; two can overlap only when tokens share offsets.

**Span scores** (`span_scores`): exact matching of ``(start, end, label)``
triples, per document, summed over documents, as seqeval's strict IOBES mode
counts chunks (Ramshaw & Marcus, 1995; CoNLL-2003). A span with the right
offsets and the wrong label, or the right label and one token too many, is both
a false positive and a false negative.

What this module deliberately does not do: it does not tokenize (it takes
offsets from any fast tokenizer), it does not decide which of two overlapping
gold spans wins (it rejects overlaps: BIOES gives each token one label; the
caller resolves them, see `piilab.ner.gold_spans`), and it never reads the
text, so no message can echo a value: errors name offsets and token indexes.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from piilab.errors import PiilabError

__all__ = [
    "OPERATING_POINTS",
    "OUTSIDE",
    "PREFIXES",
    "TRANSITIONS",
    "AlignmentError",
    "BIOESError",
    "EntitySpan",
    "Misalignment",
    "Repair",
    "bioes_classes",
    "bioes_to_spans",
    "check_alignment",
    "decoding_repairs",
    "span_scores",
    "spans_to_bioes",
    "tag_tokens",
    "viterbi_decode",
]

#: The tag of a token outside every span.
OUTSIDE = "O"

#: The position prefixes, in the order `bioes_classes` lists them per label.
PREFIXES: tuple[str, ...] = ("B", "I", "E", "S")

Offsets = Sequence[tuple[int, int]]


class BIOESError(PiilabError):
    """Bad input to the tagging, decoding or scoring functions of this module: overlapping
    spans, a tag that is not BIOES, lengths that disagree, an unknown operating point. The
    message names positions, offsets and counts, never a value (a `ValueError`, as
    every `PiilabError` is)."""


class AlignmentError(PiilabError):
    """A span's boundary is not a token boundary (the message names offsets, never text)."""


class EntitySpan(NamedTuple):
    """A labelled character span ``text[start:end]`` (half-open offsets).

    A named tuple rather than a frozen dataclass so that it compares equal to
    the plain ``(start, end, label)`` tuples callers pass in, and sorts by
    position.
    """

    start: int
    end: int
    label: str


@dataclass(frozen=True)
class Misalignment:
    """A span that cannot be expressed in tags over these tokens, and why.

    `reason` is one of ``"starts inside a token"``, ``"ends inside a token"``,
    ``"starts where no token starts"``, ``"ends where no token ends"`` (the
    boundary lies in characters no token covers, such as trimmed whitespace).
    `token` is the index of the token the boundary falls in, when there is one.
    """

    start: int
    end: int
    label: str
    reason: str
    token: int | None = None

    def message(self) -> str:
        where = f" (token {self.token})" if self.token is not None else ""
        return f"{self.label} span ({self.start}, {self.end}) {self.reason}{where}"


@dataclass(frozen=True)
class Repair:
    """One place where `bioes_to_spans` applied its repair rule.

    `index` is the token index; `reason` is ``"I- without an open span"``,
    ``"E- without an open span"``, ``"label change inside a span"``,
    ``"span not closed by E-"`` (reported at the span's last token) or
    ``"tag on a token with no characters"`` (the tag was ignored).
    """

    index: int
    reason: str


def bioes_classes(labels: Iterable[str]) -> tuple[str, ...]:
    """The 4N + 1 tag classes of `labels`: ``O``, then B, I, E, S per label, in order.

    >>> bioes_classes(["PERSON"])
    ('O', 'B-PERSON', 'I-PERSON', 'E-PERSON', 'S-PERSON')
    >>> len(bioes_classes(["PERSON", "PHONE", "EMAIL"]))
    13
    """
    labels = list(labels)
    if len(set(labels)) != len(labels):
        raise BIOESError("labels must be unique")
    if not all(isinstance(label, str) and label for label in labels):
        raise BIOESError("a label must be a nonempty string")
    return (OUTSIDE, *(f"{prefix}-{label}" for label in labels for prefix in PREFIXES))


def _spans(spans: Iterable[tuple[int, int, str]]) -> list[EntitySpan]:
    """Check, deduplicate and sort spans; reject overlaps (one label per token)."""
    out: set[EntitySpan] = set()
    for index, item in enumerate(spans):
        try:
            start, end, label = item
        except (TypeError, ValueError):
            raise TypeError(f"span {index} is not a (start, end, label) triple") from None
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end):
            raise BIOESError(f"span {index}: offsets ({start}, {end}) are not 0 <= start < end")
        if not isinstance(label, str) or not label:
            raise BIOESError(f"span {index}: the label must be a nonempty string")
        out.add(EntitySpan(start, end, label))
    ordered = sorted(out)
    for first, second in itertools.pairwise(ordered):
        if second.start < first.end:
            raise BIOESError(
                f"spans ({first.start}, {first.end}) and ({second.start}, {second.end}) overlap: "
                "BIOES gives each token one label, so overlapping spans must be resolved first"
            )
    return ordered


def _token_edges(offsets: Offsets) -> tuple[set[int], set[int], dict[int, int]]:
    """Where tokens start and end, and which positions lie strictly inside a token.

    Returns ``(starts, ends, inside)``; `inside` maps a character offset ``c``
    with ``start < c < end`` for some token to that token's index. Tokens
    barely overlap, so this costs about one entry per character.
    """
    starts: set[int] = set()
    ends: set[int] = set()
    inside: dict[int, int] = {}
    for index, (start, end) in enumerate(offsets):
        if start >= end:  # no characters: a special token or trimmed whitespace
            continue
        starts.add(start)
        ends.add(end)
        for position in range(start + 1, end):
            inside.setdefault(position, index)
    return starts, ends, inside


def check_alignment(offsets: Offsets, spans: Iterable[tuple[int, int, str]]) -> list[Misalignment]:
    """The spans that cannot be tagged over these tokens (empty when all can).

    A span is aligned when it starts where a token starts, ends where a token
    ends, and neither boundary falls strictly inside a token: then the tokens
    inside it reproduce it exactly. Overlapping spans raise `BIOESError`.

    >>> offsets = [(0, 3), (3, 4), (5, 8)]            # "김가상" "님" " 고객" (trimmed)
    >>> check_alignment(offsets, [(0, 3, "PERSON")])
    []
    >>> [m.message() for m in check_alignment(offsets, [(0, 2, "PERSON")])]
    ['PERSON span (0, 2) ends inside a token (token 0)']
    """
    starts, ends, inside = _token_edges(offsets)
    problems: list[Misalignment] = []
    for span in _spans(spans):
        if span.start in inside:
            problems.append(Misalignment(*span, "starts inside a token", inside[span.start]))
        elif span.end in inside:
            problems.append(Misalignment(*span, "ends inside a token", inside[span.end]))
        elif span.start not in starts:
            problems.append(Misalignment(*span, "starts where no token starts"))
        elif span.end not in ends:
            problems.append(Misalignment(*span, "ends where no token ends"))
    return problems


def spans_to_bioes(offsets: Offsets, spans: Iterable[tuple[int, int, str]]) -> list[str]:
    """One BIOES tag per token for these character spans.

    `offsets` are the tokens' ``(start, end)`` offsets (a fast tokenizer's
    ``offset_mapping``), `spans` ``(start, end, label)`` triples (duplicates are
    merged). Tokens with empty offsets get ``O``. Raises `AlignmentError` (a
    ValueError) when a span is not aligned (see `check_alignment`), naming its
    offsets, and `BIOESError` when spans overlap.

    >>> offsets = [(0, 0), (0, 3), (3, 4), (5, 8), (8, 9), (10, 13), (0, 0)]
    >>> spans_to_bioes(offsets, [(0, 3, "PERSON"), (5, 13, "PHONE")])
    ['O', 'S-PERSON', 'O', 'B-PHONE', 'I-PHONE', 'E-PHONE', 'O']
    """
    spans = _spans(spans)
    problems = check_alignment(offsets, spans)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise AlignmentError(f"{problems[0].message()}{more}: its tokens cannot express it")

    # Which span each token lies in: spans are sorted and disjoint, so the only
    # candidate is the last span starting at or before the token.
    span_starts = [span.start for span in spans]
    members: list[list[int]] = [[] for _ in spans]
    for index, (start, end) in enumerate(offsets):
        if start >= end:
            continue
        k = bisect.bisect_right(span_starts, start) - 1
        if k >= 0 and end <= spans[k].end:
            members[k].append(index)

    tags = [OUTSIDE] * len(offsets)
    for span, tokens in zip(spans, members, strict=True):
        tag_tokens(tags, tokens, span.label)
    return tags


def tag_tokens(tags: list[str], tokens: Sequence[int], label: str) -> None:
    """Tag the tokens at indexes `tokens` (one span, in order) in place: ``S-`` for one
    token, else ``B-``, ``I-`` ..., ``E-``.

    >>> tags = ["O"] * 4
    >>> tag_tokens(tags, [1, 2, 3], "PHONE"); tags
    ['O', 'B-PHONE', 'I-PHONE', 'E-PHONE']
    """
    if len(tokens) == 1:
        tags[tokens[0]] = f"S-{label}"
        return
    tags[tokens[0]] = f"B-{label}"
    for index in tokens[1:-1]:
        tags[index] = f"I-{label}"
    tags[tokens[-1]] = f"E-{label}"


def _parse_tag(index: int, tag: str) -> tuple[str, str]:
    """``"B-PERSON"`` -> ``("B", "PERSON")``; ``"O"`` -> ``("O", "")``."""
    if tag == OUTSIDE:
        return OUTSIDE, ""
    if not isinstance(tag, str) or len(tag) < 3 or tag[1] != "-" or tag[0] not in PREFIXES:
        raise BIOESError(f"tag {index} is not a BIOES tag (O, or B-/I-/E-/S- and a label)")
    return tag[0], tag[2:]


def _decode(offsets: Offsets, tags: Sequence[str]) -> tuple[list[EntitySpan], list[Repair]]:
    """The decoder behind `bioes_to_spans` and `decoding_repairs` (rule: module docstring)."""
    if len(offsets) != len(tags):
        raise BIOESError(f"{len(tags)} tags for {len(offsets)} tokens: one tag per token expected")
    spans: list[EntitySpan] = []
    repairs: list[Repair] = []
    # The open span: label, start offset, end offset, index of its last token.
    open_label: str | None = None
    open_start = open_end = last = 0

    def close(well_formed: bool) -> None:
        nonlocal open_label
        if open_label is not None:
            spans.append(EntitySpan(open_start, open_end, open_label))
            if not well_formed:
                repairs.append(Repair(last, "span not closed by E-"))
        open_label = None

    for index, ((start, end), tag) in enumerate(zip(offsets, tags, strict=True)):
        prefix, label = _parse_tag(index, tag)
        if start >= end:  # no characters: nothing to tag, the token is skipped
            if prefix != OUTSIDE:
                repairs.append(Repair(index, "tag on a token with no characters"))
            continue
        if prefix == OUTSIDE:
            close(well_formed=False)
            continue
        if prefix in ("I", "E") and open_label == label:  # the well-formed continuation
            open_end, last = max(open_end, end), index
            if prefix == "E":
                close(well_formed=True)
            continue
        if prefix in ("I", "E"):  # repair: this token starts a new span
            reason = ("label change inside a span" if open_label is not None
                      else f"{prefix}- without an open span")
            repairs.append(Repair(index, reason))
        close(well_formed=False)
        open_label, open_start, open_end, last = label, start, end, index
        if prefix in ("S", "E"):
            close(well_formed=True)
    close(well_formed=False)
    return spans, sorted(repairs, key=lambda repair: repair.index)


def bioes_to_spans(offsets: Offsets, tags: Sequence[str]) -> list[EntitySpan]:
    """Decode one tag per token back into character spans, in token order.

    Ill-formed sequences are decoded by the repair rule of the module
    docstring: every non-``O`` token ends up in exactly one span, with its own
    tag's label. Tags on tokens with empty offsets are ignored (they hold no
    character; `decoding_repairs` reports them). A tag that is not ``O`` or
    ``B-``/``I-``/``E-``/``S-`` + label raises `BIOESError`.

    >>> offsets = [(0, 3), (3, 4), (5, 8), (8, 9), (10, 13)]
    >>> bioes_to_spans(offsets, ["S-PERSON", "O", "B-PHONE", "I-PHONE", "E-PHONE"])
    [EntitySpan(start=0, end=3, label='PERSON'), EntitySpan(start=5, end=13, label='PHONE')]
    >>> bioes_to_spans(offsets, ["I-PERSON", "O", "B-PHONE", "E-CARD", "E-CARD"])  # ill formed
    ... # doctest: +NORMALIZE_WHITESPACE
    [EntitySpan(start=0, end=3, label='PERSON'), EntitySpan(start=5, end=8, label='PHONE'),
     EntitySpan(start=8, end=9, label='CARD'), EntitySpan(start=10, end=13, label='CARD')]
    """
    return _decode(offsets, tags)[0]


def decoding_repairs(offsets: Offsets, tags: Sequence[str]) -> list[Repair]:
    """Where `bioes_to_spans` had to repair the sequence (empty when it is well formed).

    >>> decoding_repairs([(0, 3), (3, 4)], ["I-PERSON", "E-PHONE"])
    ... # doctest: +NORMALIZE_WHITESPACE
    [Repair(index=0, reason='I- without an open span'),
     Repair(index=0, reason='span not closed by E-'),
     Repair(index=1, reason='label change inside a span')]
    """
    return _decode(offsets, tags)[1]


def _prf(tp: int, fp: int, fn: int) -> dict[str, float | int]:
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "tp": tp, "fp": fp, "fn": fn}


def span_scores(
    gold: Sequence[Iterable[tuple[int, int, str]]],
    predicted: Sequence[Iterable[tuple[int, int, str]]],
    labels: Iterable[str] | None = None,
) -> dict:
    """Span-level precision, recall and F1 with exact span-and-label matching.

    `gold` and `predicted` hold one list of ``(start, end, label)`` per
    document, in the same document order. Within a document each list is a
    set (a repeated triple counts once); a predicted triple is a true positive
    when the same document's gold has exactly that triple; counts are summed
    over documents. This is seqeval's strict IOBES mode, on spans instead of
    tags. Zero denominators give 0.

    Returns ``{"precision", "recall", "f1", "tp", "fp", "fn", "per_label":
    {label: {same six fields}}}``; `per_label` has an entry for each of
    `labels` (zeros included, in the given order), then for any other label
    seen, in sorted order.

    >>> gold = [[(0, 3, "PERSON"), (5, 13, "PHONE")]]
    >>> s = span_scores(gold, [[(0, 3, "PERSON"), (5, 8, "PHONE")]])
    >>> s["tp"], s["fp"], s["fn"], s["per_label"]["PHONE"]["f1"]
    (1, 1, 1, 0.0)
    """
    gold, predicted = list(gold), list(predicted)
    given = list(dict.fromkeys(labels or ()))
    if len(gold) != len(predicted):
        raise BIOESError(
            f"{len(gold)} gold documents but {len(predicted)} predicted: one list per document")
    counts: dict[str, list[int]] = {label: [0, 0, 0] for label in given}
    for gold_spans, predicted_spans in zip(gold, predicted, strict=True):
        g = {EntitySpan(*span) for span in gold_spans}
        p = {EntitySpan(*span) for span in predicted_spans}
        for column, found in ((0, g & p), (1, p - g), (2, g - p)):
            for span in found:
                counts.setdefault(span.label, [0, 0, 0])[column] += 1
    order = given + sorted(label for label in counts if label not in set(given))
    tp, fp, fn = (sum(c[i] for c in counts.values()) for i in range(3))
    return {**_prf(tp, fp, fn), "per_label": {label: _prf(*counts[label]) for label in order}}


# ---------------------------------------------------------------------------
# Constrained Viterbi decoding
# ---------------------------------------------------------------------------

#: The six transition biases of `viterbi_decode`, added to a path's score each time it
#: takes that kind of step. Positive values make the step more likely. "Outside" means
#: ``O``; a span "ends" at an ``E-`` or ``S-`` token.
TRANSITIONS: tuple[str, ...] = (
    "stay_outside",      # O -> O
    "outside_to_start",  # O -> B-X or S-X
    "continue",          # B-X or I-X -> I-X
    "end",               # B-X or I-X -> E-X
    "end_to_outside",    # E-X or S-X -> O
    "end_to_start",      # E-X or S-X -> B-Y or S-Y
)

#: Operating points: named sets of transition biases. ``neutral`` adds nothing (the most
#: likely legal sequence). A classifier's folder may carry its own points, chosen on a
#: validation split (`piilab.ner.pretrained`); these are the defaults.
OPERATING_POINTS: dict[str, dict[str, float]] = {
    "neutral": dict.fromkeys(TRANSITIONS, 0.0),
}


def _biases(point: str | dict[str, float] | None,
            points: dict[str, dict[str, float]] | None = None) -> dict[str, float]:
    table = {**OPERATING_POINTS, **(points or {})}
    if point is None:
        point = "neutral"
    if isinstance(point, str):
        if point not in table:
            raise BIOESError(f"unknown operating point (known: {', '.join(sorted(table))})")
        point = table[point]
    unknown = sorted(set(point) - set(TRANSITIONS))
    if unknown:
        raise BIOESError(f"unknown transition biases ({len(unknown)} of the names given; "
                         f"known: {', '.join(TRANSITIONS)})")
    return {name: float(point.get(name, 0.0)) for name in TRANSITIONS}


def viterbi_decode(scores: Sequence[Sequence[float]], classes: Sequence[str],
                   operating_point: str | dict[str, float] | None = None, *,
                   skip: Sequence[bool] | None = None,
                   points: dict[str, dict[str, float]] | None = None) -> list[str]:
    """The best *legal* BIOES tag sequence for per-token class scores (log-probabilities).

    Legal: a sequence starts and ends outside a span (its first tag is ``O``, ``B-`` or
    ``S-``; its last ``O``, ``E-`` or ``S-``); after ``B-X`` or ``I-X`` comes ``I-X`` or
    ``E-X``; after ``O``, ``E-`` or ``S-`` comes ``O``, ``B-`` or ``S-``. A path's score is
    the sum of its tokens' scores and of the `TRANSITIONS` biases of its steps
    (`operating_point`: a name of `OPERATING_POINTS` or of `points`, or a mapping).
    Tokens with ``skip[i]`` true (special tokens: no characters) are tagged ``O`` and left
    out of the path. When no legal path has a finite score (every legal tag scored
    ``-inf`` somewhere), each token takes its best class instead (argmax).

    Linear in the number of tokens and classes: the best predecessor of each kind of step
    is found once per token.

    >>> classes = bioes_classes(["PERSON"])
    >>> # the argmax reads B-PERSON then O: ill formed; Viterbi closes the span legally
    >>> scores = [[-2.0, -0.2, -3.0, -1.0, -1.9], [-0.3, -3.0, -2.0, -2.5, -3.0]]
    >>> viterbi_decode(scores, classes)
    ['S-PERSON', 'O']
    >>> viterbi_decode(scores, classes, {"end": 1.0})
    ['B-PERSON', 'E-PERSON']
    """
    neg = float("-inf")
    bias = _biases(operating_point, points)
    rows = [list(map(float, row)) for row in (scores.tolist() if hasattr(scores, "tolist")
                                               else scores)]
    skip = list(skip) if skip is not None else [False] * len(rows)
    if len(skip) != len(rows):
        raise BIOESError(f"{len(skip)} skip flags for {len(rows)} tokens")
    index = {tag: i for i, tag in enumerate(classes)}
    if OUTSIDE not in index:
        raise BIOESError("the classes have no 'O'")
    labels = list(dict.fromkeys(tag[2:] for tag in classes if tag != OUTSIDE))
    for label in labels:
        for prefix in PREFIXES:
            if f"{prefix}-{label}" not in index:
                raise BIOESError(f"the classes lack {prefix}- for a label: all four are needed")
    o = index[OUTSIDE]
    b = [index[f"B-{x}"] for x in labels]
    i_ = [index[f"I-{x}"] for x in labels]
    e = [index[f"E-{x}"] for x in labels]
    s = [index[f"S-{x}"] for x in labels]
    ends = e + s
    kept = [t for t in range(len(rows)) if not skip[t]]
    tags = [OUTSIDE] * len(rows)
    if not kept:
        return tags
    width = len(classes)
    back: list[list[int]] = []
    first = rows[kept[0]]
    score = [neg] * width
    score[o] = first[o]
    for k in range(len(labels)):
        score[b[k]] = first[b[k]] + bias["outside_to_start"]
        score[s[k]] = first[s[k]] + bias["outside_to_start"]
    for t in kept[1:]:
        row = rows[t]
        ptr = [-1] * width
        new = [neg] * width
        best_end = max(ends, key=lambda c: score[c])
        # to O
        from_o, from_end = score[o] + bias["stay_outside"], score[best_end] + bias["end_to_outside"]
        new[o], ptr[o] = (from_o, o) if from_o >= from_end else (from_end, best_end)
        # to B-Y / S-Y: from O or from the best E-/S-
        from_o = score[o] + bias["outside_to_start"]
        from_end = score[best_end] + bias["end_to_start"]
        start, start_ptr = (from_o, o) if from_o >= from_end else (from_end, best_end)
        for k in range(len(labels)):
            inside, inside_ptr = ((score[b[k]], b[k]) if score[b[k]] >= score[i_[k]]
                                  else (score[i_[k]], i_[k]))
            new[b[k]], ptr[b[k]] = start + row[b[k]], start_ptr
            new[s[k]], ptr[s[k]] = start + row[s[k]], start_ptr
            new[i_[k]], ptr[i_[k]] = inside + bias["continue"] + row[i_[k]], inside_ptr
            new[e[k]], ptr[e[k]] = inside + bias["end"] + row[e[k]], inside_ptr
        new[o] += row[o]
        back.append(ptr)
        score = new
    last = max([o, *ends], key=lambda c: score[c])
    if score[last] == neg:  # no legal path: fall back to the argmax of each token
        for t in kept:
            tags[t] = classes[max(range(width), key=lambda c: rows[t][c])]
        return tags
    path = [last]
    for ptr in reversed(back):
        path.append(ptr[path[-1]])
    path.reverse()
    for t, c in zip(kept, path, strict=True):
        tags[t] = classes[c]
    return tags
