"""Leakage audit and family split (docs/contract.md, section 7): `piilab.splits`,
`piilab audit/resplit`."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import unicodedata

import pytest
from conftest import record

from piilab.cli import main
from piilab.dataset import verify_dataset
from piilab.labels import LABELS
from piilab.splits import (
    SplitAudit,
    SplitError,
    audit_splits,
    family_groups,
    family_split,
    leak_free,
    skeleton,
    split_deviation,
)


def rec(rid, text, family="f", entities=(), language="ko"):
    return record(text, *entities, id=rid, split="x", language=language, template_id=family,
                  ordered=False)


# --------------------------------------------------------------------------------
# Skeletons
# --------------------------------------------------------------------------------


def test_skeleton_replaces_gold_values_and_digit_runs_by_labels():
    text = "김가상 고객님, 주문 ORD-2024-00123, 연락처 010-0123-4567"
    ents = [{"type": "PERSON", "value": "김가상"}, {"type": "PHONE", "value": "010-0123-4567"}]
    assert skeleton(text, ents) == "{PERSON} 고객님, 주문 ORD-{DIGITS}-{DIGITS}, 연락처 {PHONE}"


def test_skeleton_replaces_variant_mentions_too():
    text = "김 가 상 님 / 김가상 / 010 0123 4567"
    ents = [{"type": "PERSON", "value": "김가상"}, {"type": "PHONE", "value": "010-0123-4567"}]
    assert skeleton(text, ents) == "{PERSON} 님 / {PERSON} / {PHONE}"


def test_two_documents_about_different_people_share_a_skeleton():
    a = skeleton("Hi Emily Carter, call 555-0101", [{"type": "PERSON", "value": "Emily Carter"}])
    b = skeleton("Hi Ada Park, call 555-0199", [{"type": "PERSON", "value": "Ada Park"}])
    assert a == b == "Hi {PERSON}, call {DIGITS}-{DIGITS}"


def test_fullwidth_digits_are_not_digit_runs():
    assert skeleton("주문 １２３ / 123", []) == "주문 １２３ / {DIGITS}"


# --------------------------------------------------------------------------------
# The audit
# --------------------------------------------------------------------------------


def test_audit_finds_planted_exact_duplicates_in_nfc():
    composed = "김가상 고객님 안녕하세요"
    decomposed = unicodedata.normalize("NFD", composed)
    assert composed != decomposed
    splits = {
        "train": [rec("t1", composed, "a"), rec("t2", "다른 문서", "b")],
        "validation": [rec("v1", decomposed, "c")],
        "test": [rec("s1", "또 다른 문서 하나", "d")],
    }
    audit = audit_splits(splits)
    pair = audit.pairs["train/validation"]
    assert pair.exact_duplicates == 1
    assert pair.exact_duplicate_records == {"train": 1, "validation": 1}
    assert pair.exact_duplicate_ids == ("t1", "v1")
    assert audit.pairs["train/test"].exact_duplicates == 0
    assert audit.groups_spanning_splits == 1
    assert not leak_free(audit)


def test_audit_finds_planted_near_duplicates():
    splits = {
        "train": [rec("t1", "고객 김가상 님 010-0123-4567", "a",
                      [("PERSON", "김가상"), ("PHONE", "010-0123-4567")])],
        "test": [rec("s1", "고객 박로운 님 010-1999-0000", "b",
                     [("PERSON", "박로운"), ("PHONE", "010-1999-0000")]),
                 rec("s2", "고객 박로운 님께 연락", "b", [("PERSON", "박로운")])],
    }
    pair = audit_splits(splits).pairs["train/test"]
    assert pair.exact_duplicates == 0
    assert pair.shared_families == 0
    assert pair.shared_skeletons == 1
    assert pair.shared_skeleton_records == {"train": 1, "test": 1}


def test_audit_counts_groups_once_however_many_splits_and_copies():
    same = "정기 점검 안내: 10월 3일"
    splits = {
        "train": [rec("t1", same), rec("t2", same), rec("t3", "x", "g")],
        "validation": [rec("v1", same)],
        "test": [rec("s1", same), rec("s2", "y", "g")],
    }
    audit = audit_splits(splits)
    assert audit.groups_spanning_splits == 1  # one unique source, in three splits
    assert audit.splits["train"].duplicate_records == 1
    assert audit.splits["train"].unique_sources == 2
    assert audit.pairs["train/test"].exact_duplicates == 1
    assert audit.pairs["train/test"].exact_duplicate_records == {"train": 2, "test": 1}
    assert audit.pairs["train/test"].shared_families == 2
    assert audit.pairs["train/test"].shared_family_ids == ("f", "g")
    assert audit.families_spanning_splits == 2


def test_audit_has_every_pair_in_the_given_order():
    splits = {name: [rec(name, name, name)] for name in ("c", "a", "b")}
    assert list(audit_splits(splits).pairs) == ["c/a", "c/b", "a/b"]


def test_audit_output_carries_no_source_text(corpus):
    text = json.dumps(audit_splits(corpus).to_dict(), ensure_ascii=False)
    assert not any(r["source_text"] in text for r in corpus["test"])
    assert not any(e["value"] in text for r in corpus["test"] for e in r["entities"]
                   if len(e["value"]) > 4)


def test_audit_error_names_record_and_field_not_text():
    bad = {"id": "r7", "source_text": "김가상 010-0123-4567", "entities": []}
    with pytest.raises(SplitError, match="record 1: missing field 'template_id'") as info:
        audit_splits({"train": [bad]})
    assert "김가상" not in str(info.value)


def test_default_corpus_audit_is_reported_as_it_is(corpus):
    audit = audit_splits(corpus)
    assert list(audit.pairs) == ["train/validation", "train/test", "validation/test"]
    families = len({r["template_id"] for split in corpus.values() for r in split})
    for pair in audit.pairs.values():
        assert pair.shared_families == families  # every family is in every split
        assert pair.shared_skeletons > 0
    assert audit.groups_spanning_splits == 0  # no identical source, by construction
    assert not leak_free(audit)



def test_the_audit_is_frozen_and_its_dict_is_plain_json(corpus):
    audit = audit_splits(corpus)
    assert isinstance(audit, SplitAudit)
    with pytest.raises(dataclasses.FrozenInstanceError):
        audit.groups_spanning_splits = 5
    plain = audit.to_dict()
    assert json.loads(json.dumps(plain)) == plain  # lists and dicts only, no tuples
    assert list(plain) == ["splits", "pairs", "groups_spanning_splits",
                           "families_spanning_splits", "skeletons_spanning_splits"]
    pair = plain["pairs"]["train/test"]
    assert pair["shared_families"] == audit.pairs["train/test"].shared_families
    assert pair["shared_family_ids"] == list(audit.pairs["train/test"].shared_family_ids)
    # The mapping view of the contract reads the same plain data.
    assert dict(audit) == plain
    assert audit["pairs"]["train/test"]["shared_skeletons"] == pair["shared_skeletons"]
    # leak_free reads both forms alike.
    assert leak_free(audit) is leak_free(plain) is audit.leak_free is False


def _sha256(data) -> str:
    return hashlib.sha256(json.dumps(data, ensure_ascii=False).encode()).hexdigest()


#: The family split (seed 0) of the default corpus and the audits, as computed before
#: `piilab.splits` became a package: the refactor changed no byte of either.
FAMILY_SPLIT_SHA256 = "860ec22439c3eb056b1af6a8f855e6da8681b2b7dca132de17aed75c66c6fd96"
CORPUS_AUDIT_SHA256 = "ee4a5b44994cb06168f3a8638b9b8385a29f204de1a3a282d5b34ea3a8724e38"
DEVIATION_SHA256 = "199c80e271f468706edd69d6cdce9061fa4406f24dee487a5dc47ce1cd069276"


def test_the_split_and_the_audit_of_the_default_corpus_are_pinned(corpus, all_records):
    family = family_split(all_records, seed=0)
    assert _sha256(family) == FAMILY_SPLIT_SHA256
    assert _sha256(audit_splits(corpus).to_dict()) == CORPUS_AUDIT_SHA256
    assert _sha256(split_deviation(family)) == DEVIATION_SHA256

# --------------------------------------------------------------------------------
# Groups and the family split
# --------------------------------------------------------------------------------


def test_families_sharing_a_skeleton_are_joined():
    records = [
        rec("1", "Hi Ann Lee, call 5", "x", [("PERSON", "Ann Lee")], "en"),
        rec("2", "Hi Bo Kim, call 7", "y", [("PERSON", "Bo Kim")], "en"),
        rec("3", "Unrelated", "z", (), "en"),
    ]
    groups = family_groups(records)
    assert [g.families for g in groups] == [("x", "y"), ("z",)]
    assert groups[0].indices == (0, 1)


def test_families_sharing_an_exact_source_are_joined_transitively():
    records = [rec("1", "A", "x"), rec("2", "B", "x"), rec("3", "B", "y"),
               rec("4", "C", "y"), rec("5", "D", "z")]
    assert [g.families for g in family_groups(records)] == [("x", "y"), ("z",)]


def test_joined_families_land_in_one_split():
    records = [rec(f"a{i}", f"Hi Ann {i}", "x", (), "en") for i in range(5)]
    records += [rec(f"b{i}", f"Hi Ann {i}!", "y", (), "en") for i in range(5)]
    records.append(rec("c", "Hi Ann 1", "y", (), "en"))  # exact duplicate joins x and y
    records += [rec(f"z{i}", f"other {i}", f"z{i % 3}", (), "en") for i in range(30)]
    out = family_split(records, {"train": 0.8, "test": 0.2})
    splits_of_xy = {r["split"] for split in out.values() for r in split
                    if r["template_id"] in "xy"}
    assert len(splits_of_xy) == 1
    assert leak_free(audit_splits(out))


@pytest.fixture(scope="module")
def resplit(all_records):
    return family_split(all_records, seed=0)


def test_family_split_leaves_zero_shared_sources_families_and_skeletons(resplit):
    audit = audit_splits(resplit)
    assert leak_free(audit)
    for pair in audit.pairs.values():
        assert pair.exact_duplicates == pair.shared_families == 0
        assert pair.shared_skeletons == 0
        assert pair.shared_family_ids == pair.exact_duplicate_ids == ()
    assert audit.groups_spanning_splits == 0


def test_family_split_keeps_every_record_once_and_sets_the_split_field(resplit, all_records):
    assert list(resplit) == ["train", "validation", "test"]
    ids = [r["id"] for split in resplit.values() for r in split]
    assert sorted(ids) == sorted(r["id"] for r in all_records)
    for name, records in resplit.items():
        assert all(r["split"] == name for r in records)
    originals = {r["id"]: r for r in all_records}
    for r in resplit["test"]:
        assert {**r, "split": originals[r["id"]]["split"]} == originals[r["id"]]


def test_family_split_is_deterministic_and_independent_of_input_order(resplit, all_records):
    again = family_split(all_records, seed=0)
    assert again == resplit
    shuffled = list(all_records)
    random.Random(7).shuffle(shuffled)
    membership = {name: sorted(r["id"] for r in recs) for name, recs in resplit.items()}
    assert {name: sorted(r["id"] for r in recs)
            for name, recs in family_split(shuffled, seed=0).items()} == membership


def test_family_split_comes_close_to_targets_and_reports_the_deviation(resplit):
    report = split_deviation(resplit)
    total = sum(s["records"] for s in report["splits"].values())
    assert total == 2200
    assert report["targets"] == {"train": 0.8, "validation": 0.1, "test": 0.1}
    for s in report["splits"].values():
        assert s["deviation"] == s["records"] - s["target_records"]
        assert abs(s["fraction"] - s["target_fraction"]) <= report["max_fraction_deviation"]
        for lang in s["languages"].values():
            # ko/en balance: within 25% of each language target in every split.
            assert abs(lang["deviation"]) <= 0.25 * lang["target_records"]
        assert all(n > 0 for n in s["labels"].values()), "a label vanished from a split"
    assert report["max_fraction_deviation"] < 0.02


def test_family_split_accepts_other_names_and_count_targets(all_records):
    out = family_split(all_records[:400], {"fit": 300, "holdout": 100})
    assert list(out) == ["fit", "holdout"]
    assert leak_free(audit_splits(out))
    assert all(r["split"] == "holdout" for r in out["holdout"])


def test_family_split_rejects_bad_targets(all_records):
    with pytest.raises(SplitError):
        family_split(all_records[:10], {"train": -1, "test": 2})
    with pytest.raises(SplitError):
        family_split(all_records[:10], {"train": 0, "test": 0})


def test_split_deviation_lists_labels_per_split():
    report = split_deviation({"a": [rec("1", "김가상", entities=[("PERSON", "김가상")])],
                              "b": [rec("2", "없음")]}, {"a": 1, "b": 1})
    assert report["splits"]["a"]["labels"]["PERSON"] == 1
    assert report["splits"]["b"]["labels"] == dict.fromkeys(LABELS, 0)
    assert report["splits"]["b"]["strata"]["ko/negative"]["records"] == 1


# --------------------------------------------------------------------------------
# The CLI
# --------------------------------------------------------------------------------



def test_audit_cli_prints_the_table_and_writes_json(dataset_dir, tmp_path, capsys):
    out = tmp_path / "audit.json"
    assert main(["audit", str(dataset_dir), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "train/test" in printed and "shared skeletons" in printed
    audit = json.loads(out.read_text(encoding="utf-8"))
    assert audit["pairs"]["train/test"]["shared_families"] > 0


def test_audit_cli_reports_a_missing_directory(tmp_path, capsys):
    assert main(["audit", str(tmp_path / "nope")]) == 2
    assert "file is missing" in capsys.readouterr().err


@pytest.mark.slow
def test_resplit_output_passes_verify_and_audits_clean(dataset_dir, tmp_path, capsys):
    out = tmp_path / "family"
    assert main(["resplit", str(dataset_dir), "--out", str(out), "--augment", "1",
                 "--seed", "3"]) == 0
    printed = capsys.readouterr().out
    assert "re-audit: zero shared" in printed
    report = verify_dataset(out)
    assert report.ok, report.problems
    assert main(["verify", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["augment"]["copies_per_record"] == 1 and manifest["augment"]["records"] > 0
    assert manifest["derived_from"]["method"] == "family_split"
    assert main(["audit", str(out)]) == 0
    assert "verdict: no shared source" in capsys.readouterr().out
    # Augmented records only in training.
    for name in ("validation", "test"):
        lines = (out / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        assert not any("augmented_from" in json.loads(line) for line in lines)


@pytest.mark.slow
def test_resplit_is_byte_identical_for_the_same_seed(dataset_dir, tmp_path):
    for name in ("a", "b"):
        assert main(["resplit", str(dataset_dir), "--out", str(tmp_path / name),
                     "--augment", "1", "--seed", "5"]) == 0
    for f in ("train.jsonl", "validation.jsonl", "test.jsonl", "manifest.json"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()


def test_resplit_refuses_its_input_directory_and_bad_options(dataset_dir, tmp_path, capsys):
    assert main(["resplit", str(dataset_dir), "--out", str(dataset_dir)]) == 2
    assert main(["resplit", str(dataset_dir), "--out", str(tmp_path / "x"),
                 "--augment", "-1"]) == 2
    assert main(["resplit", str(dataset_dir), "--out", str(tmp_path / "x"),
                 "--targets", "80,20"]) == 2
    err = capsys.readouterr().err
    assert "different directory" in err and "--targets" in err


@pytest.mark.slow
def test_resplit_refuses_to_overwrite_a_different_dataset(dataset_dir, tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["resplit", str(dataset_dir), "--out", str(out), "--seed", "1"]) == 0
    assert main(["resplit", str(dataset_dir), "--out", str(out), "--seed", "1"]) == 0
    assert main(["resplit", str(dataset_dir), "--out", str(out), "--seed", "2"]) == 2
    assert "--force" in capsys.readouterr().err
    assert main(["resplit", str(dataset_dir), "--out", str(out), "--seed", "2", "--force"]) == 0
