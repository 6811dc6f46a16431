"""The hand-written holdout (`data/holdout/holdout.jsonl`) and its validator."""

from __future__ import annotations

import copy
import importlib.util
import re
from pathlib import Path

import pytest
from conftest import record

from piilab.dataset import read_jsonl
from piilab.evaluation import evaluate, oracle_predictions
from piilab.labels import LABELS
from piilab.splits import audit_splits, leak_free

REPO = Path(__file__).resolve().parent.parent
HOLDOUT = REPO / "data" / "holdout" / "holdout.jsonl"


def _load_tool():
    spec = importlib.util.spec_from_file_location(
        "validate_holdout", REPO / "tools" / "validate_holdout.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tool = _load_tool()


@pytest.fixture(scope="module")
def holdout():
    return read_jsonl(HOLDOUT)


def test_holdout_passes_the_validator(holdout):
    assert tool.validate(holdout) == []
    assert tool.main([str(HOLDOUT)]) == 0


def test_holdout_has_the_planned_shape(holdout):
    summary = tool.summary(holdout)
    assert summary["records"] == 100
    assert summary["languages"] == {"ko": 70, "en": 30}
    assert len(summary["styles"]) >= 5
    assert summary["negative"] >= 5
    assert all(summary["labels"][label] > 0 for label in LABELS)
    # Mostly names the generator cannot produce.
    assert summary["person_values_outside_generator_vocabulary"] >= 0.8 * summary["person_values"]


def test_holdout_readme_states_the_current_counts(holdout):
    summary = tool.summary(holdout)
    readme = (HOLDOUT.parent / "README.md").read_text(encoding="utf-8")
    for phrase in (f"{summary['records']} documents", f"{summary['languages']['ko']} Korean",
                   f"{summary['languages']['en']} English", f"{summary['negative']} negative",
                   f"{summary['entities']} gold entities"):
        assert phrase in readme, phrase


def test_oracle_is_perfect_on_the_holdout(holdout):
    result = evaluate(holdout, oracle_predictions(holdout))
    assert result.entity.f1 == 1.0
    assert result.documents.leak_rate == 0.0
    assert result.tokenization.round_trip_rate == 1.0


def test_holdout_shares_no_source_family_or_skeleton_with_the_corpus(holdout, corpus):
    audit = audit_splits({**corpus, "holdout": holdout})
    for pair, counts in audit["pairs"].items():
        if pair.endswith("/holdout"):
            assert counts["exact_duplicates"] == counts["shared_families"] == 0, pair
            assert counts["shared_skeletons"] == 0, pair
    assert leak_free(audit_splits({"train": corpus["train"], "holdout": holdout}))


# --------------------------------------------------------------------------------
# The validator catches what it promises to catch
# --------------------------------------------------------------------------------


def _record(text, pairs, rid="holdout-ko-001", language="ko"):
    # Entities in the order given: some of these records break the order rule on purpose.
    return record(text, *pairs, id=rid, split="holdout", language=language,
                  template_id="holdout-test", ordered=False)


@pytest.mark.parametrize(("pairs", "text", "reason"), [
    ([("CARD", "4111 1111 1111 1111")], "카드 4111 1111 1111 1111", "Luhn"),
    ([("RRN", "800101-1234560")], "주민번호 800101-1234560", "check digit"),
    ([("EMAIL", "kim@gmail.com")], "메일 kim@gmail.com", "example.com"),
    ([("PHONE", "010-2345-6789")], "전화 010-2345-6789", "placeholder"),
    ([("PHONE", "(212) 555-1234")], "call (212) 555-1234", "placeholder"),
    ([("PERSON", "김다온")], "고객 김다온님", None),
])
def test_validator_flags_unsafe_values(pairs, text, reason):
    problems = tool.validate([_record(text, pairs)])
    if reason is None:
        assert problems == []
    else:
        assert any(reason in p for p in problems)
        assert not any(v in p for p in problems for _, v in pairs)  # values never echoed


def test_validator_flags_structure_problems():
    good = _record("고객 김다온님", [("PERSON", "김다온")])
    assert tool.validate([good]) == []
    twice = tool.validate([good, copy.deepcopy(good)])
    assert any("duplicate id" in p for p in twice)
    for field, value, reason in (("split", "test", "split"), ("id", "ko-1", "holdout-ko-001"),
                                 ("language", "en", "disagrees"),
                                 ("template_id", "chat", "holdout style")):
        bad = {**copy.deepcopy(good), field: value}
        assert any(reason in p for p in tool.validate([bad])), field


def test_validator_flags_gold_problems():
    missing = _record("고객 김다온님", [("PERSON", "박세린")])
    assert any("literally" in p for p in tool.validate([missing]))
    overlap = _record("전화 010-1234-5678", [("PHONE", "010-1234-5678"), ("ACCOUNT", "1234-5678")])
    assert any("partly overlap" in p for p in tool.validate([overlap]))


def test_digits_are_read_through_ocr_confusions_and_words():
    assert tool.read_digits("010-1O74-2519") == "01010742519"
    assert tool.read_digits("five five five oh one four two") == "5550142"
    assert tool.read_digits("공일공 일이삼사") == "0101234"
    assert tool.placeholder_phone("+82 10-1947-0356")
    assert tool.placeholder_phone("555-0156") and not tool.placeholder_phone("555-0256")


def test_every_style_is_a_named_holdout_style(holdout):
    assert all(re.fullmatch(r"holdout-[a-z]+", r["template_id"]) for r in holdout)
