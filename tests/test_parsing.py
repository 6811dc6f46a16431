"""Parsing model output (docs/contract.md, section 3): think blocks, rows, source matching,
the parse flag."""

from __future__ import annotations

import unicodedata

import pytest

from piilab.parsing import ParsedOutput, parse_model_output, remove_think_blocks
from piilab.tokenization import Candidate

SOURCE = "김가상 고객님, 010-1234-5678 번호와 kim@example.com 으로 연락드렸습니다."


def rows(parsed: ParsedOutput) -> list[tuple[str, str]]:
    return [(c.type, c.value) for c in parsed.rows]


# --- think blocks ---


def test_complete_think_block_is_removed():
    assert remove_think_blocks("<think>PERSON\t김가상</think>EMAIL\tx") == "EMAIL\tx"


def test_nested_think_blocks_leave_the_outer_closing_tag():
    assert remove_think_blocks("<think>a<think>b</think>c</think>") == "c</think>"


def test_unclosed_think_stays_as_text():
    assert remove_think_blocks("<think>PERSON\t김가상") == "<think>PERSON\t김가상"
    parsed = parse_model_output("<think>PERSON\t김가상", SOURCE)
    # The line "<think>PERSON<TAB>김가상" has the type "<THINK>PERSON": not a row.
    assert parsed.rows == ()
    assert parsed.parse_success is False


def test_think_blocks_are_removed_repeatedly_leftmost_first():
    assert remove_think_blocks("<thi<think>x</think>nk>y</think>z") == "z"
    assert remove_think_blocks("<think>a</think>b<think>c</think>d") == "bd"
    assert remove_think_blocks("</think><think>a</think>") == "</think>"


def test_think_blocks_span_lines_and_are_case_sensitive():
    assert remove_think_blocks("<think>\nline\n</think>\nEMAIL\tx") == "\nEMAIL\tx"
    assert remove_think_blocks("<THINK>a</THINK>") == "<THINK>a</THINK>"


def test_rows_inside_a_think_block_are_ignored():
    parsed = parse_model_output("<think>PHONE\t010-1234-5678</think>PERSON\t김가상", SOURCE)
    assert rows(parsed) == [("PERSON", "김가상")]


# --- rows ---


def test_first_tab_splits_and_later_tabs_stay_in_the_value():
    parsed = parse_model_output("PERSON\t김\t가\t상", "김\t가\t상")
    assert rows(parsed) == [("PERSON", "김\t가\t상")]
    assert parsed.candidates == (Candidate("PERSON", "김\t가\t상"),)


def test_type_is_trimmed_and_uppercased_value_is_trimmed():
    parsed = parse_model_output("  person \t 김가상 \r\n", SOURCE)
    assert rows(parsed) == [("PERSON", "김가상")]


def test_prose_unknown_types_and_empty_values_are_not_rows():
    output = (
        "Here is what I found:\nNAME\t김가상\nPERSON\t   \nPERSON 김가상\nEMAIL\tkim@example.com"
    )
    assert rows(parse_model_output(output, SOURCE)) == [("EMAIL", "kim@example.com")]


def test_only_newline_splits_lines():
    parsed = parse_model_output("PERSON\t김가상\rEMAIL\tkim@example.com", SOURCE)
    assert rows(parsed) == [("PERSON", "김가상\rEMAIL\tkim@example.com")]
    parsed = parse_model_output("PERSON\t김가상\u2028EMAIL\tx", SOURCE)
    assert len(parsed.rows) == 1


def test_allowed_types_restrict_rows():
    output = "PERSON\t김가상\nEMAIL\tkim@example.com"
    parsed = parse_model_output(output, SOURCE, allowed_types=("email",))
    assert rows(parsed) == [("EMAIL", "kim@example.com")]


# --- matching against the source ---


def test_rows_candidates_and_unmatched():
    output = "PERSON\t김가상\nPHONE\t010 1234 5678\nPERSON\t박가짜\nPERSON\t김가상\nPERSON\t박가짜"
    parsed = parse_model_output(output, SOURCE)
    assert len(parsed.rows) == 5  # duplicates kept
    assert parsed.candidates == (Candidate("PERSON", "김가상"), Candidate("PHONE", "010 1234 5678"))
    assert parsed.unmatched == (Candidate("PERSON", "박가짜"), Candidate("PERSON", "박가짜"))
    assert parsed.parse_success is True


def test_spaced_person_row_matches_through_its_variant():
    parsed = parse_model_output("PERSON\t김 가 상", SOURCE)
    assert parsed.candidates == (Candidate("PERSON", "김 가 상"),)


def test_absent_alias_is_a_hallucination_even_if_its_digits_occur():
    parsed = parse_model_output("ACCOUNT\talias01012345678", "번호 010-1234-5678")
    assert parsed.candidates == ()
    assert len(parsed.unmatched) == 1
    assert parsed.parse_success is False


def test_number_inside_a_longer_number_is_a_hallucination():
    parsed = parse_model_output("ACCOUNT\t1234", "계좌 12345")
    assert parsed.unmatched == (Candidate("ACCOUNT", "1234"),)


def test_output_and_source_are_nfc_normalized():
    source_nfd = unicodedata.normalize("NFD", "김가상 고객님과 José")
    output_nfd = unicodedata.normalize("NFD", "PERSON\t김가상\nPERSON\tJosé")
    parsed = parse_model_output(output_nfd, source_nfd)
    assert parsed.candidates == (Candidate("PERSON", "김가상"), Candidate("PERSON", "José"))
    assert all(unicodedata.is_normalized("NFC", c.value) for c in parsed.rows)


# --- the parse flag ---


@pytest.mark.parametrize("output", ["", "   \n", "<think>nothing to report</think>\n"])
def test_empty_output_is_a_successful_parse(output):
    parsed = parse_model_output(output, SOURCE)
    assert parsed.parse_success is True
    assert parsed.rows == parsed.candidates == parsed.unmatched == ()


def test_prose_only_output_is_not_a_successful_parse():
    assert parse_model_output("I could not find any PII.", SOURCE).parse_success is False


def test_only_hallucinations_is_not_a_successful_parse():
    assert parse_model_output("PERSON\t박가짜", SOURCE).parse_success is False


def test_parsed_output_is_frozen():
    parsed = parse_model_output("PERSON\t김가상", SOURCE)
    with pytest.raises(AttributeError):
        parsed.parse_success = False  # type: ignore[misc]
    assert isinstance(parsed.rows, tuple)
