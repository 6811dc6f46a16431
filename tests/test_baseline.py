"""The rule baseline finds the phone formats the course itself writes (issue 38)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from piilab.baseline import extract, rule_spans

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("text, value", [
    ("Customer Jane Roe called from 555-0142", "555-0142"),  # chapters 00 and 03
    ("Call 555-0142.", "555-0142"),
    ("call (503) 555-0148 today", "(503) 555-0148"),
    ("call 503-555-0148 today", "503-555-0148"),
    ("call +1 503 555 0148 today", "+1 503 555 0148"),
    ("연락처 010-0123-4567", "010-0123-4567"),
])
def test_phone_formats_of_the_course_are_found(text, value):
    assert ("PHONE", value) in extract(text)


@pytest.mark.parametrize("text", [
    "order 2024-1234",        # four digits first: not a US exchange
    "ref 123-4567-890",       # part of a longer hyphenated number
    "office 02-555-0142",     # a Korean area code before it: not a bare local number
    "version 1.555-0142",     # a decimal before it
    "code 055-0142",          # an exchange never starts with 0 or 1
    "code 155-0142",
])
def test_local_number_rule_needs_a_whole_us_shaped_number(text):
    assert [label for *_, label in rule_spans(text) if label == "PHONE"] == []


def test_every_phone_the_course_generator_writes_is_found():
    path = REPO / "data" / "train.jsonl"
    if not path.exists():
        pytest.skip("data/ not generated (make data)")
    phones = missed = 0
    for line in path.open(encoding="utf-8"):
        record = json.loads(line)
        found = {value for label, value in extract(record["source_text"]) if label == "PHONE"}
        for entity in record["entities"]:
            if entity["type"] == "PHONE":
                phones += 1
                missed += entity["value"] not in found
    assert phones > 100
    assert missed == 0
