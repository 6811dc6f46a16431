"""The checkers of chapter 05 (`piilab.course.exercises.ch05`): right answers pass, typical wrong
answers get a specific message in both languages, and no failure message gives the answer away
or echoes a PII value."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from piilab.course.exercises import CheckResult
from piilab.course.exercises.ch05 import (
    SIZE_TOLERANCE,
    SKELETON_RECORD,
    check_family_split,
    check_skeleton,
    exercise_records,
)
from piilab.records import gold_problems
from piilab.splits import family_split, skeleton

RIGHT_SKELETON = skeleton(SKELETON_RECORD["source_text"], SKELETON_RECORD["entities"])
VALUES = [e["value"] for e in SKELETON_RECORD["entities"]] + ["김 가 상", "010 0123 4567"]


def _both(check, answer):
    return check(answer, lang="en"), check(answer, lang="ja")


def _leaks_nothing(result: CheckResult, solution: str | None = None) -> None:
    assert not any(value in result.message for value in VALUES)
    if solution is not None:
        assert solution not in result.message


# ---------------------------------------------------------------------------- exercise 1


def test_the_skeleton_record_is_valid_gold_with_the_traps_the_chapter_describes():
    assert gold_problems(SKELETON_RECORD) == []
    source = SKELETON_RECORD["source_text"]
    assert "김 가 상" in source and "010 0123 4567" in source  # a spaced name, a re-separated phone
    assert RIGHT_SKELETON.count("{PERSON}") == 2 and RIGHT_SKELETON.count("{PHONE}") == 2
    assert RIGHT_SKELETON.count("{DIGITS}") == 2  # the order number: two digit runs


def test_the_right_skeleton_passes_in_both_languages():
    english, japanese = _both(check_skeleton, RIGHT_SKELETON)
    assert english.ok and japanese.ok
    assert str(japanese).startswith("✓ 正解です")


@pytest.mark.parametrize(
    ("answer", "en_part", "ja_part"),
    [
        (None, "one string", "1 つの文字列"),
        (["{PERSON}"], "one string", "1 つの文字列"),
        (SKELETON_RECORD["source_text"], "PERSON value is still", "PERSON の値が骨格に残って"),
        (RIGHT_SKELETON.replace("/ {PERSON}", "/ 김 가 상"), "with spaces", "空白"),
        (RIGHT_SKELETON.replace("께 {PHONE}", "께 010 0123 4567"), "PHONE value is still",
         "PHONE の値"),
        (RIGHT_SKELETON.replace("{DIGITS}-{DIGITS}", "2024-0815"), "2 run(s) of digits",
         "2 か所"),
        (RIGHT_SKELETON.replace("{DIGITS}-{DIGITS}", "{DIGITS}"), "{DIGITS} appears 1 time(s)",
         "{DIGITS} が 1 回"),
        (RIGHT_SKELETON.replace("께 {PHONE}", "께 {DIGITS} {DIGITS} {DIGITS}"),
         "{PHONE} appears 1 time(s), which is too few", "{PHONE} が 1 回"),
        (RIGHT_SKELETON.replace("{REL}", "{RELATION}"), "{RELATION} is not a placeholder",
         "プレースホルダーではありません"),
        (RIGHT_SKELETON.replace("{REL}", "{rel}"), "{rel} is not a placeholder",
         "プレースホルダーではありません"),
        (RIGHT_SKELETON.replace("수령인 {PERSON}", "수령인 {REL}").replace("{REL}가", "{PERSON}가"),
         "wrong order", "順序が違います"),
        (RIGHT_SKELETON.replace("배송 건", "배송건"), "after placeholder #2", "2 番目"),
        (RIGHT_SKELETON.replace("주문", "주문:"), "before the first placeholder", "最初の"),
        (RIGHT_SKELETON + " ", "after placeholder #7", "7 番目"),
    ],
)
def test_wrong_skeletons_say_what_is_wrong(answer, en_part, ja_part):
    english, japanese = _both(check_skeleton, answer)
    assert not english.ok and not japanese.ok
    assert en_part in english.message, english.message
    assert ja_part in japanese.message, japanese.message
    for result in (english, japanese):
        _leaks_nothing(result, RIGHT_SKELETON)


# ---------------------------------------------------------------------------- exercise 2


def hand_split(records, targets={"train": 0.8, "validation": 0.1, "test": 0.1}):  # noqa: B006
    """The chapter's solution: whole families, largest first, per language, each to the split
    furthest below its target."""
    families = defaultdict(list)
    for record in records:
        families[record["template_id"]].append(record)
    out = {name: [] for name in targets}
    for language in ("ko", "en"):
        mine = [f for f in families.values() if f[0]["language"] == language]
        total = sum(len(f) for f in mine)
        filled = dict.fromkeys(targets, 0)
        for family in sorted(mine, key=lambda f: (-len(f), f[0]["template_id"])):
            name = max(targets, key=lambda s: targets[s] * total - filled[s])
            out[name] += family
            filled[name] += len(family)
    return out


@pytest.fixture(scope="module")
def records():
    return exercise_records()


def random_split(records, seed=0):
    shuffled = list(records)
    random.Random(seed).shuffle(shuffled)
    a, b = int(0.8 * len(shuffled)), int(0.9 * len(shuffled))
    return {"train": shuffled[:a], "validation": shuffled[a:b], "test": shuffled[b:]}


def test_exercise_records_are_the_default_corpus_as_copies(all_records):
    mine = exercise_records()
    assert [r["id"] for r in mine] == [r["id"] for r in all_records]
    mine[0]["template_id"] = "edited"
    assert exercise_records()[0]["template_id"] != "edited"


def test_the_solution_and_family_split_pass(records):
    for answer in (hand_split(records), family_split(records)):
        english, japanese = _both(check_family_split, answer)
        assert english.ok and japanese.ok, english.message
        assert str(japanese).startswith("✓ 正解です")


def test_the_checker_audits_the_corpus_records_not_the_answers_copies(records):
    answer = random_split(records)
    for split_records in answer.values():
        for i, record in enumerate(split_records):
            split_records[i] = {**record, "template_id": "one-family"}  # hides nothing
    assert "leakage" in check_family_split(answer, lang="en").message


def test_a_record_level_random_split_is_caught_by_the_audit(records):
    english, japanese = _both(check_family_split, random_split(records))
    assert not english.ok
    assert "the audit finds leakage" in english.message
    assert "43 template families" in english.message
    assert "リーケージ" in japanese.message


def without_english_in_test(records):
    """A leak-free split of good sizes whose test split is Korean only."""
    ko = hand_split([r for r in records if r["language"] == "ko"])
    en = hand_split([r for r in records if r["language"] == "en"])
    return {"train": ko["train"] + en["train"] + en["test"],
            "validation": ko["validation"] + en["validation"], "test": ko["test"]}


@pytest.mark.parametrize(
    ("make", "en_part", "ja_part"),
    [
        (lambda rs: rs, "expected a dict", "dict を渡してください"),
        (lambda rs: {"train": rs}, "exactly train, validation, test", "ちょうど"),
        (lambda rs: {"train": rs, "validation": [], "test": "none"}, "test must be a list",
         "リストにして"),
        (lambda rs: {"train": rs, "validation": [1], "test": []}, "must be a record",
         "レコード('id'"),
        (lambda rs: {"train": rs[:-5], "validation": [], "test": []}, "5 missing", "5 件"),
        (lambda rs: {"train": rs, "validation": rs[:3], "test": []}, "3 placed more than once",
         "3 件"),
        (lambda rs: {"train": rs, "validation": [{"id": "nope"}], "test": []},
         "not in exercise_records()", "exercise_records() にない"),
        (lambda rs: {"train": rs, "validation": [], "test": []}, "train holds 100.0%",
         "目標は 80%"),
        (without_english_in_test, "test has no English record",
         "英語のレコードがありません"),
    ],
)
def test_wrong_splits_say_what_is_wrong(records, make, en_part, ja_part):
    answer = make(records)
    english, japanese = _both(check_family_split, answer)
    assert not english.ok and not japanese.ok
    assert en_part in english.message, english.message
    assert ja_part in japanese.message, japanese.message


def test_the_size_tolerance_is_what_the_message_says(records):
    assert SIZE_TOLERANCE == 0.05
    assert "±5%" in check_family_split({"train": records, "validation": [], "test": []},
                                       lang="en").message
