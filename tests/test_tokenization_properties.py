"""Properties of `mask_text` / `reassemble_text` over generated documents.

The rules are those of docs/contract.md, section 5.

The sources mix Korean syllables (some decomposed, NFD), English letters,
ASCII and fullwidth digits, separators, spaces, tabs, newlines, brackets and
ready-made ``[TYPE_n]`` markers; the candidates are partly cut from the source
(so they occur), partly made up (so most do not).
"""

from __future__ import annotations

import itertools
import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from piilab.labels import LABEL_PRIORITY, LABELS
from piilab.matching import find_occurrences
from piilab.tokenization import Span, mask_text, reassemble_text

PIECES = [
    "김", "가", "상", "이", "나", "\u1100\u1161",  # 가 decomposed (NFD)
    "J", "o", "e", "\u0301",  # a combining accent after "e" composes to "é"
    "0", "1", "2", "5", "０", "-", ".", "/", "@",
    " ", " ", "\t", "\n", "\u00a0", "[", "]", "_",
]
#: Ready-made spellings that are variants of one another.
SPELLINGS = [
    "김가상", "김 가 상", "김\t가\t상", "가 상", "010-12", "010 12", "01012", "1 2.3", "12-3",
]
#: Values whose variants the pieces above spell.
FAMILIES = ["김가상", "김 가 상", "가상", "010-12", "01012", "010 12", "123", "1.2.3", "12"]
MARKERS = st.builds(lambda label, n: f"[{label}_{n}]", st.sampled_from(LABELS), st.integers(1, 3))
PIECE_LISTS = st.lists(
    # mostly characters, some whole spellings, about one marker in seven pieces
    st.one_of(*[st.sampled_from(PIECES)] * 5, st.sampled_from(SPELLINGS), MARKERS),
    max_size=30,
)
TYPES = st.sampled_from([*LABELS, "PERSON", "PERSON", "PHONE", "ACCOUNT", " person "])
FREE_VALUES = st.lists(st.sampled_from(PIECES), min_size=1, max_size=6).map("".join)


@st.composite
def documents(draw):
    """A source and candidates: runs of its pieces (often respelled) and made-up values."""
    pieces = draw(PIECE_LISTS)
    source = "".join(pieces)
    candidates = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.integers(0, 3))
        if kind == 0:
            value = draw(st.sampled_from(FAMILIES))
        elif pieces and kind > 1:
            start = draw(st.integers(0, len(pieces) - 1))
            end = draw(st.integers(start + 1, min(len(pieces), start + 3)))
            value = "".join(pieces[start:end])
            # Sometimes respell it, so that the source holds a variant of the value.
            respell = draw(st.sampled_from([None, "unspaced", "dashed", "spaced"]))
            if respell == "unspaced":
                value = "".join(value.split())
            elif respell == "dashed":
                value = re.sub(r"[\s./-]+", "-", value)
            elif respell == "spaced":
                value = " ".join(value)
        else:
            value = draw(FREE_VALUES)
        label = draw(st.sampled_from(["PERSON", "PHONE"]) if kind == 0 else TYPES)
        candidates.append((label, value))
    return source, candidates


def normalized(candidates):
    """Step 1 of the spec, written out plainly."""
    pairs = set()
    for label, value in candidates:
        value = unicodedata.normalize("NFC", value).strip()
        if value:
            pairs.add((label.strip().upper(), value))
    return pairs


def reference_mask(source_text, candidates):
    """docs/contract.md, section 5, read literally.

    Every occurrence, then a position-by-position scan.
    """
    source = unicodedata.normalize("NFC", source_text)
    pairs = normalized(candidates)
    matches = {}  # (start, end) -> best (variant?, priority, label)
    for label, value in pairs:
        for occ in find_occurrences(source, label, value):
            text = source[occ.start : occ.end]
            rank = (text != value, LABEL_PRIORITY[label], label)
            key = (occ.start, occ.end)
            matches[key] = min(matches.get(key, rank), rank)
    taken = set(re.findall(r"\[[A-Z]+_[0-9]+\]", source))
    counters, tokens, mapping, spans, out = {}, {}, {}, [], []
    position = 0
    while position < len(source):
        here = [(end, rank) for (start, end), rank in matches.items() if start == position]
        if not here:
            out.append(source[position])
            position += 1
            continue
        end, (_, _, label) = max(here, key=lambda item: (item[0], [-x for x in item[1][:2]]))
        text = source[position:end]
        if (label, text) not in tokens:
            n = counters.get(label, 0) + 1
            while f"[{label}_{n}]" in taken:
                n += 1
            counters[label] = n
            tokens[label, text] = f"[{label}_{n}]"
            mapping[tokens[label, text]] = text
        out.append(tokens[label, text])
        spans.append(Span(position, end, label, tokens[label, text]))
        position = end
    return "".join(out), mapping, tuple(spans)


PROPERTY_SETTINGS = settings(max_examples=200, deadline=None)


@PROPERTY_SETTINGS
@given(documents())
def test_round_trip_gives_the_nfc_source(document):
    source, candidates = document
    result = mask_text(source, candidates)
    assert reassemble_text(result.masked_text, result.mapping) == unicodedata.normalize(
        "NFC", source
    )


@PROPERTY_SETTINGS
@given(documents(), st.randoms(use_true_random=False))
def test_result_does_not_depend_on_candidate_order(document, rng):
    source, candidates = document
    shuffled = list(candidates)
    rng.shuffle(shuffled)
    assert mask_text(source, shuffled) == mask_text(source, candidates)
    assert mask_text(source, candidates + candidates[:2]) == mask_text(source, candidates)


@PROPERTY_SETTINGS
@given(documents())
def test_no_assigned_token_occurs_in_the_source(document):
    source, candidates = document
    nfc = unicodedata.normalize("NFC", source)
    for token in mask_text(source, candidates).mapping:
        assert token not in nfc


@PROPERTY_SETTINGS
@given(documents())
def test_spans_are_sorted_disjoint_and_spell_their_mapping_values(document):
    source, candidates = document
    nfc = unicodedata.normalize("NFC", source)
    result = mask_text(source, candidates)
    for before, after in itertools.pairwise(result.spans):
        assert before.end <= after.start
    for span in result.spans:
        assert span.start < span.end
        assert result.mapping[span.token] == nfc[span.start : span.end]
        assert span.token.startswith(f"[{span.type}_")
    # Same (type, spelling) <-> same token.
    pairs = {(s.type, nfc[s.start : s.end]) for s in result.spans}
    assert len(pairs) == len(result.mapping) == len({s.token for s in result.spans})


@PROPERTY_SETTINGS
@given(documents())
def test_every_occurrence_is_masked_at_least_from_its_first_character(document):
    # An occurrence is always masked where it starts; it can lose its tail to a
    # longer match that started earlier (partly overlapping values cannot both
    # be masked whole).
    source, candidates = document
    nfc = unicodedata.normalize("NFC", source)
    result = mask_text(source, candidates)
    covered = {i for span in result.spans for i in range(span.start, span.end)}
    occurrences = [
        occ for label, value in normalized(candidates)
        for occ in find_occurrences(nfc, label, value)
    ]
    for occ in occurrences:
        assert occ.start in covered
    # Where no two occurrences partly overlap, each one is masked whole.
    partly = any(
        a.start < b.start < a.end < b.end for a, b in itertools.permutations(occurrences, 2)
    )
    if not partly:
        for occ in occurrences:
            assert all(i in covered for i in range(occ.start, occ.end))


@PROPERTY_SETTINGS
@given(documents())
def test_mask_text_equals_the_reference_reading_of_the_spec(document):
    source, candidates = document
    result = mask_text(source, candidates)
    assert (result.masked_text, result.mapping, result.spans) == reference_mask(source, candidates)


@PROPERTY_SETTINGS
@given(documents())
def test_many_candidates_scan_like_few(document):
    # Candidates that occur nowhere change nothing, however many there are.
    source, candidates = document
    decoys = [(LABELS[i % len(LABELS)], f"없는값{i}") for i in range(30)]
    decoys += [("ACCOUNT", f"{900000 + i}") for i in range(10)]  # many numeric keys
    assert mask_text(source, candidates + decoys) == mask_text(source, candidates)
