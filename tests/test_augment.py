"""Training-only augmentation (docs/contract.md, section 7): `piilab.augment`."""

from __future__ import annotations

import itertools
import random
import re

import pytest
from conftest import record

from piilab import augment
from piilab.augment import (
    AugmentError,
    ValuePool,
    augment_record,
    augment_records,
    build_value_pools,
    gold_problems,
    pool_key,
    value_split,
)
from piilab.checksums import luhn_valid, rrn_valid
from piilab.evaluation import evaluate, oracle_predictions
from piilab.splits import audit_splits, family_split, leak_free


def rec(text, pairs, rid="r1", language="ko"):
    return record(text, *pairs, id=rid, language=language)


@pytest.fixture(scope="module")
def family(all_records):
    return family_split(all_records, seed=0)


@pytest.fixture(scope="module")
def held_out_values(family):
    return {e["value"] for name in ("validation", "test") for r in family[name]
            for e in r["entities"]}


@pytest.fixture(scope="module")
def augmented(family, held_out_values):
    return augment_records(family["train"], copies=1, seed=0, exclude_values=held_out_values)


def new_values(copy, originals):
    before = {e["value"] for e in originals[copy["augmented_from"]]["entities"]}
    return [(e["type"], e["value"]) for e in copy["entities"] if e["value"] not in before]


# --------------------------------------------------------------------------------
# Augmented records on the default corpus
# --------------------------------------------------------------------------------


def test_augmented_records_keep_valid_gold(augmented):
    assert len(augmented) > 1000
    assert [p for r in augmented for p in gold_problems(r)] == []


def test_oracle_is_perfect_on_augmented_records(augmented):
    result = evaluate(augmented, oracle_predictions(augmented))
    assert result.entity.f1 == 1.0
    assert result.documents.leak_rate == result.entities.leak_rate == 0.0
    assert result.tokenization.round_trip_rate == 1.0


def test_augmented_records_are_new_linked_and_in_training_only(family, augmented):
    originals = {r["id"]: r for r in family["train"]}
    held_ids = {r["id"] for name in ("validation", "test") for r in family[name]}
    ids = [r["id"] for r in augmented]
    assert len(set(ids)) == len(ids) and not set(ids) & (set(originals) | held_ids)
    sources = {r["source_text"] for r in family["train"]}
    for r in augmented:
        origin = originals[r["augmented_from"]]  # every copy comes from a training record
        assert r["id"] == f"{origin['id']}-aug1"
        assert r["split"] == "train"
        assert (r["template_id"], r["language"]) == (origin["template_id"], origin["language"])
        assert r["source_text"] not in sources
        assert r["augmentation"] and all(":" not in op or op.split(":")[1].isupper()
                                         for op in r["augmentation"])
        sources.add(r["source_text"])


def test_augmenting_the_training_split_keeps_the_audit_clean(family, augmented):
    splits = {**family, "train": family["train"] + augmented}
    assert leak_free(audit_splits(splits))


def test_every_operation_is_used(augmented):
    used = {op.split(":")[0] for r in augmented for op in r["augmentation"]}
    assert used == set(augment.OPERATIONS)


def test_augmented_values_stay_invalid_and_in_placeholder_ranges(augmented):
    for r in augmented:
        for e in r["entities"]:
            value, label = e["value"], e["type"]
            if label == "CARD":
                assert not luhn_valid(value), r["id"]
            elif label == "RRN":
                assert not rrn_valid(value), r["id"]
            elif label == "EMAIL":
                assert value.rsplit("@", 1)[1] in ("example.com", "example.net", "example.org")
            elif label == "PHONE" and r["language"] == "ko":
                assert re.sub(r"\D", "", value)[3] in "01", r["id"]
            elif label == "PHONE":
                assert re.sub(r"\D", "", value)[-7:-2] == "55501", r["id"]  # 555-01XX


def test_no_held_out_value_is_written_into_training(family, augmented, held_out_values):
    originals = {r["id"]: r for r in family["train"]}
    for r in augmented:
        for _, value in new_values(r, originals):
            assert value not in held_out_values, r["id"]


def test_substituted_values_come_from_the_training_pool(family):
    records = family["train"][:300]
    originals = {r["id"]: r for r in records}
    train_pool = build_value_pools()["train"].all_values()
    copies = augment_records(records, copies=1, seed=4, operations=("substitute",))
    assert copies
    for r in copies:
        for _, value in new_values(r, originals):
            assert value in train_pool, r["id"]
            assert value_split(value) == "train"


def test_augmentation_is_deterministic_given_the_seed(family):
    records = family["train"][:100]
    first = augment_records(records, copies=2, seed=9)
    assert augment_records(records, copies=2, seed=9) == first
    assert augment_records(records, copies=2, seed=10) != first
    # ... and independent of record order: copy k of record r has its own generator.
    shuffled = list(records)
    random.Random(1).shuffle(shuffled)
    by_id = {r["id"]: r for r in augment_records(shuffled, copies=2, seed=9)}
    assert by_id == {r["id"]: r for r in first}


def test_zero_copies_add_nothing(family):
    assert augment_records(family["train"][:50], copies=0) == []


# --------------------------------------------------------------------------------
# The value pool
# --------------------------------------------------------------------------------


def test_value_pools_are_disjoint_and_follow_the_hash():
    pools = build_value_pools()
    assert list(pools) == ["train", "validation", "test"]
    values = {name: pool.all_values() for name, pool in pools.items()}
    for a, b in itertools.combinations(values, 2):
        assert not values[a] & values[b], f"{a} and {b} pools share values"
    for name, vals in values.items():
        assert vals and all(value_split(v) == name for v in vals)
    # Disjoint also as the matching rules see values: no number or name sits in two
    # pools under two spellings.
    keys = {name: {pool_key(v) for v in vals} for name, vals in values.items()}
    for a, b in itertools.combinations(keys, 2):
        assert not keys[a] & keys[b], f"{a} and {b} pools share a value in another spelling"
    # Roughly the 80/10/10 fractions.
    total = sum(len(v) for v in values.values())
    assert 0.75 < len(values["train"]) / total < 0.85


def test_spellings_of_one_value_share_a_pool():
    assert value_split("010-0123-4567") == value_split("01001234567") == value_split(
        "010 0123 4567")
    assert value_split("김 가 상") == value_split("김가상")


def test_value_split_is_stable_and_nfc_insensitive():
    assert value_split("김가상") == value_split("김가상")
    decomposed = "\u1100\u1161\u11b7"  # 감 written as jamo
    assert value_split(decomposed) == value_split("감")
    assert value_split("x", {"only": 1.0}) == "only"
    with pytest.raises(AugmentError):
        value_split("x", {"a": 0, "b": 0})


def test_excluded_values_are_in_no_pool():
    pools = build_value_pools()
    some = sorted(pools["train"].candidates("PERSON", "ko"))[:5]
    again = build_value_pools(exclude=some)
    assert not set(some) & set().union(*(p.all_values() for p in again.values()))


def test_pool_candidates_can_be_filtered_by_shape():
    pool = ValuePool("train", {("PHONE", "ko"): ("010-0123-4567", "01001234567")})
    assert pool.candidates("PHONE", "ko", "999-9999-9999") == ("010-0123-4567",)
    assert pool.candidates("PHONE", "ko") == ("010-0123-4567", "01001234567")


# --------------------------------------------------------------------------------
# The operations, one at a time
# --------------------------------------------------------------------------------


def test_substitution_respells_variant_mentions():
    record = rec("김다온 / 김 다 온 / 010-0123-4567 / 010 0123 4567",
                 [("PERSON", "김다온"), ("PHONE", "010-0123-4567")])
    pool = ValuePool("train", {("PERSON", "ko"): ("박세린",),
                               ("PHONE", "ko"): ("010-1111-2222",)})
    copy = augment_record(record, random.Random(0), pool, "r1-aug1", ("substitute",))
    assert copy["source_text"] == "박세린 / 박 세 린 / 010-1111-2222 / 010 1111 2222"
    assert copy["target_tsv"] == "PERSON\t박세린\nPHONE\t010-1111-2222"
    assert copy["augmented_from"] == "r1"
    assert copy["augmentation"] == ["substitute:PERSON", "substitute:PHONE"]
    assert gold_problems(copy) == []


def test_substitution_leaves_a_document_rrn_and_birth_date_alone():
    record = rec("성명 김다온, 생년월일 1990-01-02, 주민번호 900102-1234567",
                 [("PERSON", "김다온"), ("DOB", "1990-01-02"), ("RRN", "900102-1234567")])
    pool = build_value_pools()["train"]
    copy = augment_record(record, random.Random(0), pool, "x", ("substitute",))
    assert copy["augmentation"] == ["substitute:PERSON"]
    assert "1990-01-02" in copy["source_text"] and "900102-1234567" in copy["source_text"]


def test_spaced_name_of_the_only_mention_becomes_the_gold_value(monkeypatch):
    monkeypatch.setattr(augment, "SPACED_NAME_RATE", 1.0)
    record = rec("고객 김다온 님, 연락처 010-0123-4567",
                 [("PERSON", "김다온"), ("PHONE", "010-0123-4567")])
    copy = augment_record(record, random.Random(0), ValuePool("train", {}), "x",
                          ("spaced_name",))
    assert copy["source_text"] == "고객 김 다 온 님, 연락처 010-0123-4567"
    assert copy["entities"][0] == {"type": "PERSON", "value": "김 다 온"}
    assert gold_problems(copy) == []


def test_spaced_name_keeps_the_unspaced_gold_when_a_literal_remains(monkeypatch):
    monkeypatch.setattr(augment, "SPACED_NAME_RATE", 1.0)
    record = rec("김다온 님이 요청. 서명: 김다온", [("PERSON", "김다온")])
    copy = augment_record(record, random.Random(0), ValuePool("train", {}), "x",
                          ("spaced_name",))
    assert copy["source_text"].count("김 다 온") == 1
    assert copy["source_text"].count("김다온") == 1
    assert copy["entities"] == [{"type": "PERSON", "value": "김다온"}]
    assert copy["augmentation"] == ["spaced_name"]


def test_separator_change_makes_the_new_spelling_the_gold_value(monkeypatch):
    monkeypatch.setattr(augment, "SEPARATOR_RATE", 1.0)
    record = rec("연락처 010-0123-4567, 같은 번호 010-0123-4567로 발송",
                 [("PHONE", "010-0123-4567")])
    copy = augment_record(record, random.Random(0), ValuePool("train", {}), "x",
                          ("separator",))
    new = copy["entities"][0]["value"]
    assert new != "010-0123-4567" and re.sub(r"\D", "", new) == "01001234567"
    assert "010-0123-4567" not in copy["source_text"]
    assert copy["source_text"].count(new) == 2
    assert copy["target_tsv"] == f"PHONE\t{new}"
    assert copy["augmentation"] == ["separator:PHONE"]


def test_negative_documents_are_not_augmented():
    record = rec("정기 점검은 10월 3일입니다. 대표번호 1588-0000", [])
    assert augment_record(record, random.Random(0), build_value_pools()["train"], "x") is None


def test_invalid_input_is_refused_naming_the_record_not_the_value():
    record = rec("고객 김다온 님", [("PERSON", "김다온")], rid="bad-7")
    record["entities"] = [{"type": "PERSON", "value": "박세린"}]
    with pytest.raises(AugmentError, match="bad-7") as info:
        augment_records([record])
    assert "박세린" not in str(info.value)


def test_unknown_operations_are_refused():
    with pytest.raises(AugmentError, match="unknown"):
        augment_records([], operations=("shout",))


def test_an_id_collision_is_refused():
    a = rec("고객 김다온 님", [("PERSON", "김다온")], rid="r")
    b = rec("고객 박세린 님", [("PERSON", "박세린")], rid="r-aug1")
    with pytest.raises(AugmentError, match="already exists"):
        augment_records([a, b])


# --------------------------------------------------------------------------------
# The gold checks
# --------------------------------------------------------------------------------


@pytest.mark.parametrize(("change", "message"), [
    (lambda r: r.update(target_tsv="PERSON\t김"), "target_tsv"),
    (lambda r: r["entities"].reverse(), "order of first occurrence"),
    (lambda r: r["entities"].append({"type": "PERSON", "value": "없는이름"}), "literally"),
    (lambda r: r["entities"].append(dict(r["entities"][0])), "repeats"),
    (lambda r: r["entities"].append({"type": "NAME", "value": "김다온"}), "outside LABELS"),
    (lambda r: r["entities"].append({"type": "PHONE", "value": " 010"}), "untrimmed"),
])
def test_gold_problems_finds_each_kind_of_mistake_without_echoing_values(change, message):
    record = rec("고객 김다온 님, 010-0123-4567",
                 [("PERSON", "김다온"), ("PHONE", "010-0123-4567")])
    assert gold_problems(record) == []
    change(record)
    problems = gold_problems(record)
    assert problems and any(message in p for p in problems)
    assert not any(v in p for p in problems for v in ("김다온", "010-0123", "없는이름"))


def test_gold_problems_finds_partly_overlapping_occurrences():
    record = rec("전화 010-1234-5678", [("PHONE", "010-1234-5678"), ("ACCOUNT", "1234-5678")])
    assert any("partly overlap" in p for p in gold_problems(record))
