"""Deterministic, reversible tokenization (docs/contract.md, section 5).

Examples and regressions.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata

import pytest

from piilab.generator import generate_dataset
from piilab.tokenization import (
    Candidate,
    MaskResult,
    Span,
    mask_text,
    normalize_candidates,
    number_tokens,
    reassemble_text,
)


def masked(source: str, *candidates: tuple[str, str]) -> str:
    return mask_text(source, list(candidates)).masked_text


def round_trips(source: str, candidates) -> bool:
    result = mask_text(source, candidates)
    return reassemble_text(result.masked_text, result.mapping) == unicodedata.normalize(
        "NFC", source
    )


# --- the worked example of the spec ---


def test_worked_example():
    result = mask_text("김가상 / 김 가 상 / [PERSON_1]", [("PERSON", "김가상")])
    assert result.masked_text == "[PERSON_2] / [PERSON_3] / [PERSON_1]"
    assert result.mapping == {"[PERSON_2]": "김가상", "[PERSON_3]": "김 가 상"}
    assert result.spans == (
        Span(0, 3, "PERSON", "[PERSON_2]"),
        Span(6, 11, "PERSON", "[PERSON_3]"),
    )
    assert reassemble_text(result.masked_text, result.mapping) == "김가상 / 김 가 상 / [PERSON_1]"


# --- tokens ---


def test_token_already_in_source_is_skipped():
    source = "[PERSON_1] [PERSON_2] [EMAIL_1] 김가상 이가상 a@example.com"
    result = mask_text(source, [("PERSON", "김가상"), ("PERSON", "이가상"),
                                ("EMAIL", "a@example.com")])
    assert result.masked_text == "[PERSON_1] [PERSON_2] [EMAIL_1] [PERSON_3] [PERSON_4] [EMAIL_2]"
    assert reassemble_text(result.masked_text, result.mapping) == source


def test_same_spelling_reuses_its_token():
    result = mask_text("김가상, 김가상, 그리고 김가상", [("PERSON", "김가상")])
    assert result.masked_text == "[PERSON_1], [PERSON_1], 그리고 [PERSON_1]"
    assert len(result.spans) == 3


def test_two_spellings_of_one_name_get_two_tokens_and_both_restore():
    source = "김가상 님과 김 가 상 님"
    result = mask_text(source, [("PERSON", "김가상")])
    assert result.masked_text == "[PERSON_1] 님과 [PERSON_2] 님"
    assert result.mapping == {"[PERSON_1]": "김가상", "[PERSON_2]": "김 가 상"}
    assert reassemble_text(result.masked_text, result.mapping) == source


def test_tokens_are_numbered_per_type_in_source_order():
    source = "b@example.com 김가상 a@example.com 이가상"
    candidates = [("PERSON", "이가상"), ("EMAIL", "a@example.com"), ("PERSON", "김가상"),
                  ("EMAIL", "b@example.com")]
    assert masked(source, *candidates) == "[EMAIL_1] [PERSON_1] [EMAIL_2] [PERSON_2]"


def test_same_value_under_two_types_in_different_places_gets_the_priority_type():
    # One spelling, two predicted types: the LABELS order decides (PHONE before PERSON).
    assert masked("call 1234", ("PERSON", "1234"), ("PHONE", "1234")) == "call [PHONE_1]"


# --- what wins where matches compete ---


def test_literal_beats_a_variant_of_another_prediction():
    source = "a 010-1234-5678 b 01012345678 c 010 1234 5678"
    result = mask_text(source, [("ACCOUNT", "01012345678"), ("PHONE", "010-1234-5678")])
    assert result.masked_text == "a [PHONE_1] b [ACCOUNT_1] c [ACCOUNT_2]"
    # (the last one is a variant of both; ACCOUNT comes first in LABELS)


def test_spaced_literal_beats_person_variant():
    assert masked("김 가 상", ("PERSON", "김가상"), ("REL", "김 가 상")) == "[REL_1]"


def test_overlapping_values_longest_wins_without_overlap():
    source = "서울시 가상구 테스트로 12"
    result = mask_text(source, [("ADDRESS", "서울시 가상구 테스트로 12"), ("ADDRESS", "가상구"),
                                ("ACCOUNT", "12")])
    assert result.masked_text == "[ADDRESS_1]"
    assert len(result.spans) == 1


def test_partly_overlapping_values_leftmost_longest_wins():
    result = mask_text("가나다라", [("REL", "가나다"), ("PERSON", "다라")])
    assert result.masked_text == "[REL_1]라"
    assert reassemble_text(result.masked_text, result.mapping) == "가나다라"


# --- numeric rules ---


def test_numeric_variants_are_masked():
    source = "010-1234-5678 / 010 1234 5678 / 01012345678"
    assert masked(source, ("PHONE", "010-1234-5678")) == "[PHONE_1] / [PHONE_2] / [PHONE_3]"


def test_absent_alias_is_not_accepted_because_its_digits_occur():
    result = mask_text("code 123456", [("ACCOUNT", "alias123456")])
    assert result.masked_text == "code 123456"
    assert result.spans == ()


def test_number_is_not_masked_inside_a_longer_number():
    assert masked("12345 and 1234", ("ACCOUNT", "1234")) == "12345 and [ACCOUNT_1]"


def test_number_is_masked_as_a_group_of_a_phone_number():
    assert masked("010-1234-5678", ("ACCOUNT", "1234")) == "010-[ACCOUNT_1]-5678"


def test_four_separators_break_a_numeric_variant():
    assert masked("010 -- 1234", ("PHONE", "010-1234")) == "010 -- 1234"
    assert masked("010 - 1234", ("PHONE", "010-1234")) == "[PHONE_1]"


def test_fullwidth_digits_are_not_digits():
    assert masked("０１０-１２３４", ("PHONE", "010-1234")) == "０１０-１２３４"
    assert masked("x１２３４５", ("ACCOUNT", "１２３４")) == "x[ACCOUNT_1]５"


# --- normalization ---


def test_nfd_source_and_values_are_masked_in_nfc():
    source = unicodedata.normalize("NFD", "김가상 and José, 김 가 상")
    value = unicodedata.normalize("NFD", "김가상")
    other = unicodedata.normalize("NFD", "José")
    result = mask_text(source, [("person", value), (" PERSON ", other)])
    assert result.masked_text == "[PERSON_1] and [PERSON_2], [PERSON_3]"
    assert result.mapping == {
        "[PERSON_1]": "김가상", "[PERSON_2]": "José", "[PERSON_3]": "김 가 상"
    }
    restored = reassemble_text(result.masked_text, result.mapping)
    assert restored == unicodedata.normalize("NFC", source)


def test_tab_inside_a_value_is_kept():
    source = "이름: 김\t가\t상"
    assert masked(source, ("PERSON", "김\t가\t상")) == "이름: [PERSON_1]"


def test_empty_values_are_dropped_and_duplicates_merged():
    pairs = [("person", " 김가상 "), ("PERSON", "김가상"), ("EMAIL", "  ")]
    assert normalize_candidates(pairs) == {("PERSON", "김가상")}
    assert mask_text("abc", [("EMAIL", "   ")]).spans == ()


def test_unknown_type_raises_value_error_without_the_value():
    with pytest.raises(ValueError, match="candidate 1: type is not a PII label") as excinfo:
        mask_text("김가상", [("PERSON", "김가상"), ("NAME", "비밀값")])
    assert "비밀값" not in str(excinfo.value)
    assert "김가상" not in str(excinfo.value)


def test_bad_masker_input_is_a_masking_error_naming_no_value():
    from piilab.errors import PiilabError
    from piilab.masking import MaskingError, MaskResult, number_tokens

    with pytest.raises(MaskingError) as excinfo:
        mask_text("김가상", [("NAME", "비밀값")])
    assert isinstance(excinfo.value, PiilabError) and "비밀값" not in str(excinfo.value)
    with pytest.raises(MaskingError, match="span 1"):
        number_tokens("abcdef", [(3, 5, "PERSON"), (0, 2, "PERSON")])
    with pytest.raises(MaskingError, match="missing field 'mapping'"):
        MaskResult.from_dict({"masked_text": "비밀값"})


def test_swapped_type_and_value_are_not_echoed():
    with pytest.raises(ValueError) as excinfo:
        mask_text("김가상", [("김가상", "PERSON")])
    assert "김가상" not in str(excinfo.value)


def test_non_pairs_are_rejected_without_the_value():
    with pytest.raises(TypeError) as excinfo:
        mask_text("x", [("PERSON", "a", "비밀값")])
    assert "비밀값" not in str(excinfo.value)


def test_candidates_may_be_tuples_or_candidate_objects():
    source = "김가상 kim@example.com"
    pairs = [("PERSON", "김가상"), ("EMAIL", "kim@example.com")]
    objects = [Candidate(t, v) for t, v in pairs]
    assert mask_text(source, pairs) == mask_text(source, objects) == mask_text(source, iter(pairs))


def test_candidate_order_does_not_change_the_result():
    source = "010-1234-5678 김가상 01012345678 김 가 상 어머니"
    candidates = [("PERSON", "김가상"), ("ACCOUNT", "01012345678"), ("PHONE", "010-1234-5678"),
                  ("REL", "어머니"), ("PERSON", "어머니")]
    assert mask_text(source, candidates) == mask_text(source, candidates[::-1])


# --- restoring ---


def test_unknown_tokens_survive_restoration():
    assert reassemble_text("[PERSON_1] met [PERSON_9] and [FOO_2]", {"[PERSON_1]": "김가상"}) == (
        "김가상 met [PERSON_9] and [FOO_2]"
    )


def test_restoration_is_one_pass():
    mapping = {"[PERSON_1]": "[PERSON_2]", "[PERSON_2]": "김가상"}
    assert reassemble_text("[PERSON_1] / [PERSON_2]", mapping) == "[PERSON_2] / 김가상"


def test_value_that_looks_like_a_token_round_trips():
    source = "[PERSON_1]는 가명이고 [EMAIL_1]은 메일입니다"
    assert round_trips(source, [("PERSON", "[PERSON_1]"), ("EMAIL", "[EMAIL_1]")])
    result = mask_text(source, [("PERSON", "[PERSON_1]")])
    assert result.masked_text == "[PERSON_2]는 가명이고 [EMAIL_1]은 메일입니다"


def test_text_without_candidates_is_returned_unchanged():
    result = mask_text("nothing here", [])
    assert result == MaskResult("nothing here", {}, ())
    assert reassemble_text("nothing here", {}) == "nothing here"


# --- values and JSON ---


def test_results_are_frozen():
    result = mask_text("김가상", [("PERSON", "김가상")])
    with pytest.raises(AttributeError):
        result.masked_text = "x"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        result.spans[0].token = "x"  # type: ignore[misc]


def test_tokenization_is_the_masking_module_under_its_old_name():
    from piilab import masking, tokenization

    assert tokenization.mask_text is masking.mask_text
    assert tokenization.Span is masking.Span
    assert set(tokenization.__all__) == set(masking.__all__)


# --- number_tokens: step 4 on its own ---


def test_number_tokens_numbers_given_spans_per_type_and_spelling():
    source = "[PHONE_1] 김가상, 010-0000-1111, 김가상, 010 0000 1111"
    result = number_tokens(source, [(10, 13, "PERSON"), (15, 28, "PHONE"), (30, 33, "PERSON"),
                                    (35, 48, "PHONE")])
    assert result.masked_text == "[PHONE_1] [PERSON_1], [PHONE_2], [PERSON_1], [PHONE_3]"
    assert result.mapping == {"[PERSON_1]": "김가상", "[PHONE_2]": "010-0000-1111",
                              "[PHONE_3]": "010 0000 1111"}
    assert reassemble_text(result.masked_text, result.mapping) == source


def test_number_tokens_skips_taken_names_of_labels_with_underscores():
    # Another taxonomy's labels (finance: CARD_NUMBER) are numbered by the same rule.
    source = "[CARD_NUMBER_1] 4111"
    assert number_tokens(source, [(16, 20, "CARD_NUMBER")]).masked_text == \
        "[CARD_NUMBER_1] [CARD_NUMBER_2]"


@pytest.mark.parametrize("spans", [[(3, 3, "PERSON")], [(0, 3, "PERSON"), (2, 4, "REL")],
                                   [(2, 4, "REL"), (0, 1, "PERSON")], [(0, 99, "PERSON")]])
def test_number_tokens_rejects_empty_overlapping_unsorted_or_outside_spans(spans):
    with pytest.raises(ValueError, match="span") as info:
        number_tokens("김가상 님", spans)
    assert "김가상" not in str(info.value)


def test_mask_result_json_round_trip():
    result = mask_text("김가상 010-1234-5678", [("PERSON", "김가상"), ("PHONE", "010-1234-5678")])
    text = json.dumps(result.to_dict(), ensure_ascii=False)
    assert MaskResult.from_dict(json.loads(text)) == result
    candidate = Candidate("PERSON", "김가상")
    assert Candidate.from_dict(candidate.to_dict()) == candidate


@pytest.mark.parametrize(
    "broken",
    [
        {"masked_text": "x", "mapping": {}},
        {"masked_text": 1, "mapping": {}, "spans": []},
        {"masked_text": "x", "mapping": {"[A_1]": 2}, "spans": []},
        {"masked_text": "x", "mapping": {}, "spans": [{"start": "0", "end": 1, "type": "A",
                                                       "token": "[A_1]"}]},
    ],
)
def test_mask_result_from_bad_dict_raises_value_error(broken):
    with pytest.raises(ValueError):
        MaskResult.from_dict(broken)


# --- the whole default corpus ---


@pytest.mark.slow
def test_every_corpus_record_round_trips_and_is_deterministic():
    corpus = generate_dataset(seed=42)
    records = [record for split in corpus.values() for record in split]
    assert len(records) == 2200
    failures = []
    for record in records:
        source = record["source_text"]
        candidates = [(e["type"], e["value"]) for e in record["entities"]]
        result = mask_text(source, candidates)
        if reassemble_text(result.masked_text, result.mapping) != unicodedata.normalize(
            "NFC", source
        ):
            failures.append((record["id"], "round trip"))
        if mask_text(source, candidates[::-1]) != result:
            failures.append((record["id"], "order"))
        if candidates and not result.spans:
            failures.append((record["id"], "nothing masked"))
    assert failures == []


#: SHA-256 of every masked result over the default corpus (see below), recorded with the
#: masker before `mask_text` became the sweep over `find_occurrences`: the rewrite changed
#: no masked text, mapping or span.
CORPUS_MASK_SHA256 = "b4b31ad51547e24a37cd830af162d10eabe4bdb4a05f82d491628552995ee71f"


def test_masked_corpus_is_byte_identical_to_the_recorded_hash(all_records):
    # Per record: its gold candidates, then harder ones (each value unspaced as a PERSON,
    # its digits as an ACCOUNT, its inside as a REL), so variants, priorities and
    # partial overlaps are all exercised.
    digest = hashlib.sha256()
    for record in all_records:
        gold = [(e["type"], e["value"]) for e in record["entities"]]
        harder = list(gold)
        for _, value in gold:
            harder.append(("PERSON", value.replace(" ", "")))
            harder.append(("ACCOUNT", "".join(c for c in value if c.isdigit()) or value))
            if len(value) > 3:
                harder.append(("REL", value[1:-1].strip() or value))
        for candidates in (gold, harder):
            result = mask_text(record["source_text"], candidates)
            digest.update(json.dumps([record["id"], result.to_dict()], ensure_ascii=False)
                          .encode())
            digest.update(b"\n")
    assert digest.hexdigest() == CORPUS_MASK_SHA256
