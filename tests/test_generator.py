"""The synthetic corpus (docs/contract.md, section 2): counts, content rules, determinism."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from piilab.checksums import luhn_valid, rrn_valid
from piilab.generator import GENERATOR_VERSION, overlapping_occurrences
from piilab.labels import LABELS
from piilab.matching import find_occurrences
from piilab.templates import SETTINGS, TEMPLATES

REPO = Path(__file__).resolve().parent.parent

EXPECTED = {"train": (1280, 320), "validation": (160, 40), "test": (320, 80)}


def test_generator_version_is_pinned():
    assert GENERATOR_VERSION == "1.0.0"


@pytest.mark.parametrize("split", list(EXPECTED))
def test_counts_per_split_and_language(corpus, split):
    langs = Counter(r["language"] for r in corpus[split])
    assert (langs["ko"], langs["en"]) == EXPECTED[split]
    assert all(r["split"] == split for r in corpus[split])


def test_ids_are_unique_across_splits(all_records):
    ids = [r["id"] for r in all_records]
    assert len(ids) == len(set(ids)) == 2200


def test_every_gold_value_occurs_literally(all_records):
    for r in all_records:
        for e in r["entities"]:
            assert e["value"] in r["source_text"], r["id"]


def test_entities_are_unique_pairs_in_order_of_first_occurrence(all_records):
    for r in all_records:
        pairs = [(e["type"], e["value"]) for e in r["entities"]]
        assert len(pairs) == len(set(pairs)), r["id"]
        firsts = [r["source_text"].find(v) for _, v in pairs]
        assert firsts == sorted(firsts), r["id"]


def test_target_tsv_equals_entities_in_order(all_records):
    for r in all_records:
        expected = "\n".join(f"{e['type']}\t{e['value']}" for e in r["entities"])
        assert r["target_tsv"] == expected, r["id"]


def test_no_two_gold_occurrences_partly_overlap(all_records):
    for r in all_records:
        assert overlapping_occurrences(r["source_text"], r["entities"]) == [], r["id"]


def test_overlap_check_detects_a_planted_overlap():
    # "1234" occurs inside the phone number "010-1234-5678": nested, so not allowed.
    entities = [{"type": "PHONE", "value": "010-1234-5678"}, {"type": "ACCOUNT", "value": "1234"}]
    assert overlapping_occurrences("전화 010-1234-5678", entities)


def test_negative_documents_have_no_entities_and_carry_decoys(all_records):
    negatives = [r for r in all_records if not r["entities"]]
    assert len(negatives) > 100
    decoy = re.compile(r"\d{4}-\d{4}|1-800-|ORD-|원|\$|SKU-|PRD-|KX-|REF-|POL-|A-\d")
    for r in negatives:
        assert r["target_tsv"] == ""
        assert decoy.search(r["source_text"]), r["id"]


def test_all_nine_labels_in_both_languages(all_records):
    for lang in ("ko", "en"):
        seen = {e["type"] for r in all_records if r["language"] == lang for e in r["entities"]}
        assert seen == set(LABELS), lang


def test_templates_cover_the_required_settings_and_counts():
    ko = [t for t in TEMPLATES if t.language == "ko"]
    en = [t for t in TEMPLATES if t.language == "en"]
    assert len(ko) >= 24 and len(en) >= 12
    assert len({t.setting for t in TEMPLATES}) >= 6
    assert {t.setting for t in TEMPLATES} <= set(SETTINGS)
    assert len({t.template_id for t in TEMPLATES}) == len(TEMPLATES)


def test_every_record_keeps_its_template_family(all_records):
    ids = {t.template_id for t in TEMPLATES}
    assert all(r["template_id"] in ids for r in all_records)


def test_some_documents_repeat_an_entity(all_records):
    repeated = [
        r for r in all_records
        if any(r["source_text"].count(e["value"]) >= 2 for e in r["entities"])
    ]
    assert len(repeated) > 50


def test_some_korean_names_appear_in_spaced_form(all_records):
    spaced = 0
    for r in all_records:
        for e in r["entities"]:
            if e["type"] == "PERSON" and r["language"] == "ko":
                occ = find_occurrences(r["source_text"], "PERSON", e["value"])
                if any(not o.literal for o in occ):
                    spaced += 1
                    assert " ".join(e["value"]) in r["source_text"]
    assert spaced > 50


def test_rel_positives_are_present(all_records):
    rels = Counter(e["value"] for r in all_records for e in r["entities"] if e["type"] == "REL")
    assert len(rels) >= 10


def test_every_rrn_and_card_fails_its_check(all_records):
    n_rrn = n_card = 0
    for r in all_records:
        for e in r["entities"]:
            if e["type"] == "RRN":
                n_rrn += 1
                assert not rrn_valid(e["value"]), r["id"]
            elif e["type"] == "CARD":
                n_card += 1
                assert not luhn_valid(e["value"]), r["id"]
    assert n_rrn > 50 and n_card > 50


def test_emails_only_on_reserved_example_domains(all_records):
    emails = [e["value"] for r in all_records for e in r["entities"] if e["type"] == "EMAIL"]
    assert emails
    for value in emails:
        assert value.rsplit("@", 1)[1] in {"example.com", "example.net", "example.org"}
    # and no other e-mail-looking string hides in the text
    for r in all_records:
        for m in re.finditer(r"@([A-Za-z0-9.-]+)", r["source_text"]):
            assert m.group(1).rstrip(".") in {"example.com", "example.net", "example.org"}


def test_phone_values_are_placeholders(all_records):
    for r in all_records:
        for e in r["entities"]:
            if e["type"] != "PHONE":
                continue
            digits = re.sub(r"\D", "", e["value"])
            if r["language"] == "ko":
                assert digits.startswith("010") and digits[3] in "01", r["id"]
            else:
                assert digits[-7:-2] == "55501", r["id"]


def test_generation_is_deterministic_in_process(corpus):
    from piilab.generator import generate_dataset

    again = generate_dataset()
    assert again == corpus


def _manifest_of(tmp_path, env=None):
    code = (
        "import sys; from piilab.dataset import write_dataset; write_dataset(sys.argv[1])"
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, env=env)
    return (tmp_path / "manifest.json").read_bytes()


@pytest.mark.slow
def test_regeneration_reproduces_the_committed_manifest(tmp_path):
    committed = (REPO / "data" / "manifest.json").read_bytes()
    env = dict(os.environ, PYTHONHASHSEED="12345")
    assert _manifest_of(tmp_path / "a", env) == committed
    env["PYTHONHASHSEED"] = "0"
    assert _manifest_of(tmp_path / "b", env) == committed


def test_manifest_hashes_match_the_files(tmp_path):
    from piilab.dataset import write_dataset

    manifest = write_dataset(tmp_path)
    for meta in manifest["splits"].values():
        blob = (tmp_path / meta["file"]).read_bytes()
        assert hashlib.sha256(blob).hexdigest() == meta["sha256"]
        lines = blob.decode().splitlines()
        assert len(lines) == meta["records"]
        first = json.loads(lines[0])
        assert lines[0] == json.dumps(first, ensure_ascii=False, sort_keys=True,
                                      separators=(",", ":"))
