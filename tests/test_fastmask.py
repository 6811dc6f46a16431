"""The compiled masking core (`piilab._fastmask`) against the Python reference.

`mask_text` runs steps 2-4 of SPEC section 5 either in C or in Python
(`piilab.tokenization._mask_python`). Every test of test_tokenization*.py
already runs with both; here the two are compared directly on inputs those
tests do not reach: characters outside the Basic Multilingual Plane, every
kind of Unicode whitespace, long documents with hundreds of candidates, the
whole corpus with distractor candidates. Also: errors never echo a value,
repeated calls do not leak memory, and PIILAB_PURE_PYTHON turns the core off.
"""

from __future__ import annotations

import importlib.util
import os
import random
import subprocess
import sys
import tracemalloc
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import piilab.tokenization as tokenization
from piilab.labels import LABELS
from piilab.tokenization import mask_text, normalize_candidates


@pytest.fixture(scope="module")
def core(compiled_core):
    return compiled_core


def python_mask(source, candidates):
    """The reference result: steps 1 and 5 as in `mask_text`, steps 2-4 in Python."""
    nfc = unicodedata.normalize("NFC", source)
    pairs = normalize_candidates(candidates)
    if not pairs:
        return tokenization.MaskResult(nfc, {}, ())
    taken = frozenset(tokenization.TOKEN_PATTERN.findall(nfc))
    return tokenization._mask_python(nfc, pairs, taken)


def assert_same(source, candidates):
    compiled = mask_text(source, candidates)
    reference = python_mask(source, candidates)
    assert compiled == reference
    # (dict equality ignores order; the mapping's order is part of the result)
    assert list(compiled.mapping) == list(reference.mapping)


# Pieces of text: Korean, Latin, ASCII and fullwidth digits, separators, every
# kind of whitespace `str.isspace` accepts (including U+001C-U+001F and the
# ideographic space), brackets and markers, characters outside the BMP.
PIECES = [
    "김", "가", "상", "민", "준", "J", "a", "n", "e", "@", ".", "-", "/", "_", "[", "]",
    "0", "1", "2", "3", "7", "9", "０", "١",  # (Arabic-Indic one: not an ASCII digit)
    " ", "  ", "\t", "\n", "\u00a0", "\u3000", "\u2003", "\x1c", "\x1f", "\x85",
    "😀", "𠀀", "\U0001d7ce",  # emoji, a CJK extension B ideograph, a math bold digit
    "[PERSON_1]", "[PHONE_2]", "010-1234-5678", "010 1234 5678", "김 민 준",
    "12", "345", " - ", "....", "-- /", "1 2  3   4    5",  # gaps of 1 to 4 characters
]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
TYPES = st.sampled_from([*LABELS, "person", " PHONE "])


@st.composite
def documents(draw):
    source = draw(TEXTS)
    candidates = []
    for _ in range(draw(st.integers(0, 8))):
        if source and draw(st.booleans()):  # a piece of the source: it occurs
            start = draw(st.integers(0, len(source) - 1))
            value = source[start : draw(st.integers(start + 1, min(len(source), start + 14)))]
        else:
            value = draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=4).map("".join))
        candidates.append((draw(TYPES), value))
    return source, candidates


@settings(max_examples=400, deadline=None)
@given(documents())
def test_compiled_core_equals_the_python_code(core, document):
    source, candidates = document
    assert_same(source, candidates)


@settings(max_examples=100, deadline=None)
@given(documents(), st.integers(25, 60))
def test_compiled_core_equals_the_python_code_with_many_candidates(core, document, extra):
    # More than 24 spellings switch the Python scan to its first-characters index.
    source, candidates = document
    rng = random.Random(extra)
    decoys = [
        (rng.choice(LABELS), "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 3))))
        for _ in range(extra)
    ]
    assert_same(source, candidates + decoys)


def test_whole_corpus_with_distractors(core, all_records):
    # Each record's gold values, plus the values of the next record (mostly absent)
    # and the digits of every numeric value (variants of them).
    for index, record in enumerate(all_records):
        gold = [(e["type"], e["value"]) for e in record["entities"]]
        following = all_records[(index + 1) % len(all_records)]["entities"]
        others = [(e["type"], e["value"]) for e in following]
        digits = [(t, "".join(ch for ch in v if ch.isdigit())) for t, v in gold]
        assert_same(record["source_text"], gold + others + digits)


def test_long_documents_with_hundreds_of_candidates(core, all_records):
    rng = random.Random(7)
    for _ in range(5):
        records = rng.sample(all_records, 120)
        source = "\n".join(record["source_text"] for record in records)
        candidates = [(e["type"], e["value"]) for r in records for e in r["entities"]]
        assert len(set(candidates)) > 100
        assert_same(source, candidates)


def test_bad_pairs_are_rejected_without_echoing_them(core):
    with pytest.raises(TypeError) as info:
        core("김가상 010-1234-5678", [("PERSON", "김가상", "extra")], None)
    assert "김가상" not in str(info.value)
    with pytest.raises(ValueError) as info:
        core("김가상", [("NOT_A_LABEL", "김가상")], None)
    assert "김가상" not in str(info.value) and "NOT_A_LABEL" not in str(info.value)
    with pytest.raises(TypeError):
        core("김가상", [("PERSON", "김가상")], ["[PERSON_1]"])  # taken must be a set


def test_repeated_calls_do_not_leak(core, all_records):
    inputs = [
        (r["source_text"], [(e["type"], e["value"]) for e in r["entities"]])
        for r in all_records[:200]
    ]

    def run(times):
        for _ in range(times):
            for text, candidates in inputs:
                mask_text(text, candidates)

    run(2)  # warm caches and free lists
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        run(20)  # 4,000 calls: one leaked object per call would be well over 100 KB
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64_000, f"traced memory grew by {grown} bytes over 4,000 calls"


def test_str_subclasses_are_refused(core):
    # A subclass could run Python code (a __hash__) that changes the pairs mid-call.
    class Label(str):
        pass

    with pytest.raises(TypeError):
        core("김가상", [(Label("PERSON"), "김가상")], None)
    with pytest.raises(TypeError):
        core("김가상", [("PERSON", Label("김가상"))], None)


def test_configure_during_a_call_does_not_change_that_call(core):
    # A set look-up in `taken` may run Python code; even a `configure` from there
    # leaves the running call with the labels it started with.
    from piilab import _fastmask

    class Reconfigure:
        def __hash__(self):
            return hash("[PERSON_1]")

        def __eq__(self, other):
            _fastmask.configure((*LABELS, *(f"X{i}" for i in range(20))), tokenization.Span)
            return False

    source = "김가상 김 가 상"
    pairs = normalize_candidates([("PERSON", "김가상")])
    try:
        masked, mapping, spans = core(source, pairs, {Reconfigure()})
    finally:
        _fastmask.configure(LABELS, tokenization.Span)
    assert masked == "[PERSON_1] [PERSON_2]"
    assert mapping == {"[PERSON_1]": "김가상", "[PERSON_2]": "김 가 상"}
    assert [span.type for span in spans] == ["PERSON", "PERSON"]


@pytest.mark.parametrize("setting, expected", [("1", "python"), ("0", None)])
def test_pure_python_switch(setting, expected):
    code = "import piilab.tokenization as t; print(t.IMPLEMENTATION)"
    env = {**os.environ, "PIILAB_PURE_PYTHON": setting}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    # "0" leaves the choice to what is built.
    built = importlib.util.find_spec("piilab._fastmask") is not None
    assert out == (expected or ("compiled" if built else "python"))
