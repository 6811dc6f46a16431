"""Source matching (docs/contract.md, section 4).

Literals, PERSON and numeric variants, numeric boundaries.
"""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from piilab.labels import LABELS
from piilab.masking import leftmost_longest, longest_matches
from piilab.matching import (
    PERSON_JOINERS,
    Occurrence,
    digit_runs,
    digit_sequence,
    find_occurrences,
    has_match,
    is_ascii_digit,
    is_numeric_value,
    is_numeric_variant,
    numeric_spans,
    occurrence_spans,
    person_variants,
    spellings,
    within_boundaries,
)


def spans_of(source: str, label: str, value: str) -> list[tuple[int, int, bool]]:
    return [(o.start, o.end, o.literal) for o in find_occurrences(source, label, value)]


# --- a brute-force reading of docs/contract.md, section 4, to check the fast code against ---

DIGITS = "0123456789"


def reference_occurrences(source: str, label: str, value: str) -> list[tuple[int, int, bool]]:
    """Every substring that the spec accepts, found by trying them all (slow, obvious)."""
    if not value:
        return []
    chars = "".join(ch for ch in value if not ch.isspace())
    person = (
        {joiner.join(chars) for joiner in ("", " ", "\t", "\n")}
        if label == "PERSON" and 2 <= len(chars) <= 6
        else set()
    )
    numeric = any(c in DIGITS for c in value) and all(
        c in DIGITS or c in "-./" or c.isspace() for c in value
    )
    value_digits = "".join(c for c in value if c in DIGITS)
    found = []
    for start in range(len(source)):
        for end in range(start + 1, len(source) + 1):
            text = source[start:end]
            if text[0] in DIGITS and start > 0 and source[start - 1] in DIGITS:
                continue
            if text[-1] in DIGITS and end < len(source) and source[end] in DIGITS:
                continue
            accepted = text == value or text in person
            if not accepted and numeric and text[0] in DIGITS and text[-1] in DIGITS:
                shape = all(c in DIGITS or c in "-./" or c.isspace() for c in text)
                gaps = re.findall(r"[^0-9]+", text)
                accepted = (
                    shape
                    and all(len(gap) <= 3 for gap in gaps)
                    and "".join(c for c in text if c in DIGITS) == value_digits
                )
            if accepted:
                found.append((start, end, text == value))
    return found


# --- characters ---


def test_only_ascii_digits_are_digits():
    assert all(is_ascii_digit(d) for d in "0123456789")
    assert not any(is_ascii_digit(d) for d in "０１２３４５６７８９٣")
    assert not is_ascii_digit("12")
    assert not is_ascii_digit("")


def test_regex_whitespace_is_exactly_str_isspace():
    # The numeric patterns use `\s`; the spec says whitespace is `str.isspace()`.
    pattern = re.compile(r"\s")
    mismatched = [
        cp
        for cp in range(sys.maxunicode + 1)
        if (pattern.fullmatch(chr(cp)) is not None) != chr(cp).isspace()
    ]
    assert mismatched == []


# --- numeric boundaries ---


def test_number_does_not_match_inside_a_longer_number():
    assert spans_of("12345", "ACCOUNT", "1234") == []
    assert spans_of("01234", "ACCOUNT", "1234") == []
    assert not has_match("x12345y", "PHONE", "1234")


def test_number_matches_a_group_of_a_phone_number():
    assert spans_of("010-1234-5678", "PHONE", "1234") == [(4, 8, True)]


def test_numbers_separated_by_a_space_both_stay_matchable():
    assert spans_of("1234 5678", "ACCOUNT", "1234") == [(0, 4, True)]
    assert spans_of("1234 5678", "ACCOUNT", "5678") == [(5, 9, True)]


def test_boundary_only_looks_at_digits():
    assert spans_of("a1234b", "ACCOUNT", "1234") == [(1, 5, True)]
    assert spans_of("１1234１", "ACCOUNT", "1234") == [(1, 5, True)]  # fullwidth neighbours
    assert within_boundaries("x-1234-", 1, 7)


def test_boundary_applies_to_letters_and_digits_mixed():
    # A value that ends in a digit cannot end just before another digit.
    assert spans_of("ab123", "EMAIL", "ab12") == []
    assert spans_of("ab12 3", "EMAIL", "ab12") == [(0, 4, True)]
    # ...but a value that ends in a letter can.
    assert spans_of("12ab3", "EMAIL", "2ab") == []  # starts with a digit after a digit
    assert spans_of("x2ab3", "EMAIL", "2ab") == [(1, 4, True)]


# --- numeric variants ---


def test_numeric_variants_of_a_phone_number():
    source = "A 010-1234-5678 B 010 1234 5678 C 01012345678 D"
    found = spans_of(source, "PHONE", "010-1234-5678")
    assert [(source[s:e], literal) for s, e, literal in found] == [
        ("010-1234-5678", True),
        ("010 1234 5678", False),
        ("01012345678", False),
    ]
    for spelling in ("010 1234 5678", "01012345678"):
        assert has_match(source.replace("010-1234-5678", "x"), "PHONE", spelling)


def test_numeric_variant_allows_up_to_three_separators_between_digits():
    assert spans_of("010 - 1234", "PHONE", "0101234") == [(0, 10, False)]
    assert spans_of("010 -- 1234", "PHONE", "0101234") == []  # four non-digits
    assert spans_of("010    1234", "PHONE", "0101234") == []
    assert not is_numeric_variant("010    1234")


def test_numeric_variant_needs_the_same_digit_sequence():
    assert spans_of("010-1234-5679", "PHONE", "010-1234-5678") == []
    assert spans_of("0101-234-5678", "PHONE", "010-1234-5678") == [(0, 13, False)]


def test_numeric_variant_uses_str_isspace_whitespace():
    nbsp, ideographic = "\u00a0", "\u3000"
    assert has_match(f"010{nbsp}1234{ideographic}5678", "PHONE", "01012345678")
    # A zero-width space is not whitespace, so it breaks the number.
    assert not has_match("010\u200b1234\u200b5678", "PHONE", "01012345678")


def test_numeric_variants_report_every_qualifying_span():
    assert spans_of("12 34 12 34", "ACCOUNT", "1234") == [(0, 5, False), (6, 11, False)]
    assert spans_of("1 1 1", "ACCOUNT", "11") == [(0, 3, False), (2, 5, False)]


def test_value_with_a_letter_gets_no_numeric_variants():
    source = "user id alias-123456 and code 123456"
    assert not has_match(source, "ACCOUNT", "alias123456")
    assert has_match("id alias123456", "ACCOUNT", "alias123456")
    assert not is_numeric_value("alias123456")


def test_fullwidth_digits_are_not_digits():
    assert not is_numeric_value("１２３４")
    assert spans_of("１２３４５", "ACCOUNT", "１２３４") == [(0, 4, True)]  # no boundary rule
    assert spans_of("１２３４", "ACCOUNT", "1234") == []
    assert spans_of("1234", "ACCOUNT", "１２３４") == []


def test_numeric_value_with_leading_separator_matches_literally_and_as_variant():
    assert spans_of("no. -1234", "ACCOUNT", "-1234") == [(4, 9, True), (5, 9, False)]


def test_digit_sequence_keeps_ascii_digits_only():
    assert digit_sequence("010-1234 56.78/9") == "010123456789"
    assert digit_sequence("0\t1\u00a02") == "012"
    assert digit_sequence("1２3") == "13"


def test_digit_runs_split_at_long_gaps():
    assert list(digit_runs("a 1-2 3    4. 5--x 6")) == [(2, "1-2 3"), (11, "4. 5"), (19, "6")]


def test_numeric_spans_with_many_keys_equal_few_keys():
    source = "tel 010 1234-5678, 12345 / 1 2 3 4 5 6 7 8"
    keys = {"12345678", "1234", "0101234", "5678"}
    decoys = {str(n) for n in range(900000, 900020)}  # forces the many-keys path
    assert numeric_spans(source, keys) == numeric_spans(source, keys | decoys)


# --- PERSON variants ---


@pytest.mark.parametrize("joiner", PERSON_JOINERS)
def test_person_spacing_variants(joiner):
    spelled = joiner.join("김가상")
    assert spans_of(f"고객 {spelled}님", "PERSON", "김가상") == [
        (3, 3 + len(spelled), joiner == "")
    ]


def test_person_variants_are_uniform():
    assert not has_match("김 가상", "PERSON", "김가상")
    assert not has_match("김  가  상", "PERSON", "김가상")
    assert not has_match("김 \t가 \t상", "PERSON", "김가상")


def test_spaced_person_value_matches_unspaced_source():
    assert spans_of("김가상", "PERSON", "김 가 상") == [(0, 3, False)]
    assert spans_of("김 가상", "PERSON", "김 가상") == [(0, 4, True)]


def test_person_variants_only_for_two_to_six_characters():
    assert person_variants("김") == ()
    assert person_variants("가나다라마바")[1] == "가 나 다 라 마 바"
    assert person_variants("가나다라마바사") == ()
    assert person_variants("Jane Roe") == ()  # 7 characters without the space
    assert person_variants("Li Na")[0] == "LiNa"


def test_variants_only_for_person():
    assert not has_match("어 머 니", "REL", "어머니")
    assert has_match("어 머 니", "PERSON", "어머니")
    assert spellings("REL", "어머니") == ("어머니",)


def test_overlapping_occurrences_are_all_reported():
    assert spans_of("가가가", "REL", "가가") == [(0, 2, True), (1, 3, True)]


def test_empty_value_matches_nothing():
    assert find_occurrences("abc", "PERSON", "") == []
    assert not has_match("abc", "PERSON", "")


def test_occurrence_is_a_frozen_value():
    occurrence = find_occurrences("a 1234", "ACCOUNT", "1234")[0]
    assert occurrence == Occurrence(2, 6, True)
    with pytest.raises(AttributeError):
        occurrence.start = 0  # type: ignore[misc]


# --- against the brute-force reference ---

ALPHABET = ["0", "1", "2", "-", ".", "/", " ", "\t", "\n", "\u00a0", "가", "나", "a", "１"]
sources = st.lists(st.sampled_from(ALPHABET), max_size=16).map("".join)
values = st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=7).map("".join).map(str.strip)


@settings(max_examples=300, deadline=None)
@given(source=sources, value=values, label=st.sampled_from(["PERSON", "PHONE", "REL"]))
def test_find_occurrences_equals_the_brute_force_reading_of_the_spec(source, value, label):
    assert spans_of(source, label, value) == reference_occurrences(source, label, value)
    # The masker's unsorted dict holds exactly the same occurrences.
    assert sorted((start, end, literal) for (start, end), literal
                  in occurrence_spans(source, label, value).items()) == \
        reference_occurrences(source, label, value)
    assert has_match(source, label, value) == bool(reference_occurrences(source, label, value))


@settings(max_examples=200, deadline=None)
@given(source=sources, data=st.data())
def test_value_taken_from_the_source_matches_unless_a_digit_boundary_forbids_it(source, data):
    start = data.draw(st.integers(0, max(0, len(source) - 1)))
    end = data.draw(st.integers(start, len(source)))
    value = source[start:end]
    if value and value == value.strip() and within_boundaries(source, start, end):
        assert (start, end, True) in spans_of(source, "ACCOUNT", value)


# --- the masker's sweep (piilab.masking.longest_matches) ---


def test_one_span_with_several_owners_prefers_literal_then_priority():
    candidates = [("PHONE", "010-1234-5678"), ("ACCOUNT", "01012345678"), ("PERSON", "김가상"),
                  ("REL", "김 가 상")]
    source = "010-1234-5678 / 01012345678 / 010 1234 5678 / 김 가 상 / 김\t가\t상"
    labels = [label for _, _, label in longest_matches(source, candidates)]
    # PHONE's literal (ACCOUNT's variant); ACCOUNT's literal; two variants: priority;
    # REL's literal beats PERSON's variant; PERSON's variant.
    assert labels == ["PHONE", "ACCOUNT", "ACCOUNT", "REL", "PERSON"]


def test_sweep_is_longest_first_without_overlaps():
    candidates = [("PERSON", "김가"), ("PERSON", "김가상"), ("REL", "상어")]
    assert longest_matches("김가상어", candidates) == [(0, 3, "PERSON")]
    assert longest_matches("김가 상어", candidates) == [(0, 2, "PERSON"), (3, 5, "REL")]


def test_decoy_candidates_do_not_change_the_sweep():
    source = "김가상, 김 가 상 010-1234-5678 어머니 [PERSON_1] x1"
    candidates = [("PERSON", "김가상"), ("PHONE", "010-1234-5678"), ("REL", "어머니"),
                  ("ACCOUNT", "x1")]
    decoys = [(LABELS[i % len(LABELS)], f"없는값{i}") for i in range(40)]
    assert longest_matches(source, candidates) == longest_matches(source, candidates + decoys)


def test_sweep_does_not_match_past_the_end_of_the_source():
    # Found by hypothesis against an indexed scan: a 7-character variant sharing its first
    # two characters with a 6-character literal was "found" in a 6-character source.
    assert longest_matches("김 가 상김", [("PERSON", "김 가 상김")]) == [(0, 6, "PERSON")]


class CountingSource(str):
    """A source that counts the `str.find` calls made on it: the sweep's work, not its time."""

    finds = 0

    def find(self, *args: object) -> int:
        self.finds += 1
        return super().find(*args)


def all_occurrences_sweep(source, candidates):
    """The sweep as docs/contract.md, section 5, states it.

    Every occurrence collected, ranked, then swept.
    """
    owner = {}
    for label, value in candidates:
        for (start, end), literal in occurrence_spans(source, label, value).items():
            rank = (not literal, LABELS.index(label))
            owner[start, end] = min(rank, owner.get((start, end), rank))
    return leftmost_longest(owner)


# Repetitive text with candidates that are substrings of each other (issue 37, N11): every
# candidate occurs at almost every position, but the sweep only looks from its cursor on.
REPETITIVE = {
    "letters": lambda n, k: ("Z" * n, [("PERSON", "Z" * (2 + i)) for i in range(k)]),
    "digits": lambda n, k: ("1" * n, [("ACCOUNT", "1" * (2 + i)) for i in range(k)]),
    "spaced": lambda n, k: (" ".join("Z" * n), [("PERSON", "Z" * (2 + i)) for i in range(5)]
                            + [("REL", " ".join("Z" * (1 + i))) for i in range(k)]),
    "mixed": lambda n, k: ("Z1" * n, [("PERSON", "Z1" * (1 + i)) for i in range(k)]
                           + [("ACCOUNT", "1")]),
}


@pytest.mark.parametrize("case", sorted(REPETITIVE))
def test_sweep_work_is_linear_in_the_length_whatever_the_overlaps(case):
    work = {}
    for n in (1000, 2000):
        for k in (20, 40):
            text, candidates = REPETITIVE[case](n, k)
            source = CountingSource(text)
            matches = longest_matches(source, candidates)
            if n == 1000:
                assert matches == all_occurrences_sweep(text, candidates)
            work[n, k] = source.finds
            # About one search per character at most, however many candidates overlap
            # (collecting every occurrence makes one per candidate per character).
            assert source.finds <= len(text) + 5 * len(candidates), (n, k, source.finds)
    # Twice the text, about twice the work; twice the candidates, about the same work.
    assert work[2000, 40] <= 2.2 * work[1000, 40] + 10
    assert work[2000, 40] <= 1.2 * work[2000, 20] + 10


def test_precomputed_digit_runs_give_the_same_occurrences():
    source = "tel 010 1234-5678, 12345 / 1234"
    runs = list(digit_runs(source))
    for value in ("010-1234-5678", "1234", "12345678", "0101234"):
        assert find_occurrences(source, "PHONE", value, runs) == \
            find_occurrences(source, "PHONE", value)
