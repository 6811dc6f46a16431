"""The one safety checker (`piilab.safety`): its rules, its text audit, and its three users."""

from __future__ import annotations

import doctest
import importlib.util
from pathlib import Path

import pytest

from piilab import safety as S
from piilab.checksums import luhn_check_digit, rrn_check_digit

REPO = Path(__file__).resolve().parent.parent


def test_doctests():
    assert doctest.testmod(S).failed == 0


@pytest.mark.parametrize(("address", "ok"), [
    ("kim@example.com", True), ("kim@mail.example.com", True), ("kim@corp.example.net", True),
    ("kim@EXAMPLE.ORG", True), ("kim@shop.example", True), ("kim@mail.test", True),
    ("kim@nowhere.invalid", True),
    ("kim@example.org.kr", False), ("kim@notexample.com", False), ("kim@gmail.com", False),
    ("kim@example", False), ("kim@test", False), ("kim@example.com.evil.com", False),
])
def test_only_reserved_domains(address, ok):
    assert S.email_ok(address) is ok


@pytest.mark.parametrize(("number", "ok"), [
    ("010-0123-4567", True), ("010 1234 5678", True), ("01012345678", True),
    ("+82 10-1234-5678", True), ("(010) 0123-4567", True), ("02-0123-4567", True),
    ("031-123-4567", True), ("공일공 영일이삼 사오육칠", True),
    ("(212) 555-0134", True), ("+1 212 555 0199", True), ("555-0156", True),
    ("two one two, five five five, oh one two three", True),
    ("07700 900123", True), ("+44 (0)7700 900123", True), ("+44 7700 900999", True),
    ("010-2345-6789", False), ("02-555-1234", False), ("(212) 555-1234", False),
    ("555-0256", False), ("07700 901123", False), ("010-0123-456", True),
    ("443-555-0134", True), ("1234", False),
])
def test_placeholder_phone_ranges(number, ok):
    assert S.phone_ok(number) is ok


def test_registration_numbers_fail_both_check_digits_and_are_dates():
    body = "900101123456"
    correct = rrn_check_digit(body)
    foreign = (correct + 2) % 10  # the foreigner check digit of the same body
    assert not S.registration_ok(body + str(correct))
    assert not S.registration_ok(body + str(foreign))
    assert S.registration_ok(body + str(foreign), foreign_check=False)
    assert S.registration_ok(body + str((correct + 5) % 10))
    assert S.registration_ok(body + str((correct + 5) % 10), "RRN")
    assert not S.registration_ok(body + str((correct + 5) % 10), "FRN")  # gender digit 1
    assert not S.registration_ok("901301-1234567") and not S.registration_ok("12345")


def test_card_numbers_fail_luhn():
    body = "411111111111111"
    assert not S.card_ok(body + str(luhn_check_digit(body)))
    assert S.card_ok(body + str((luhn_check_digit(body) + 5) % 10))
    assert not S.card_ok("1234 5678")  # not a card number at all


def test_digits_are_read_in_every_spelling():
    assert S.digits_of("０１０-０１２３-４５６７") == "01001234567"
    assert S.digits_of("공일공 영일이삼") == "0100123"
    assert S.digits_of("010-1O74-2519") == "01010742519"
    assert S.digits_of("call me") == ""


def test_the_text_audit_names_places_never_values():
    body = "900101123456"
    rrn = f"{body[:6]}-{body[6:]}{rrn_check_digit(body)}"
    card = "5500-0000-0000-000" + str(luhn_check_digit("550000000000000"))
    fullwidth = card.translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    text = f"법인등록번호 {rrn}\n상품권 {card}\n전각 {fullwidth}"
    problems = S.text_problems(text, "doc 7")
    assert len(problems) == 3 and all(p.startswith("doc 7: the ") for p in problems)
    assert f"character {text.index(rrn)}" in problems[0]
    assert not any(rrn in p or card in p or fullwidth in p for p in problems)
    assert S.text_problems(text, "doc 7", labelled=[rrn, card, fullwidth]) == []
    # Strings that fail their checks pass the audit.
    failing = f"{body[:6]}-{body[6:]}{(rrn_check_digit(body) + 5) % 10}"
    assert S.text_problems(f"ref {failing}", "d") == []


def test_record_problems_name_the_entity_and_never_the_value():
    record = {"id": "r1", "source_text": "x", "entities": [
        {"type": "RRN", "value": "900101-1******"},  # masked: nothing to check
        {"type": "EMAIL", "value": "lee@example.org.kr"},
        {"type": "PERSON", "value": "김가상"},
    ]}
    problems = S.safety_problems(record)
    assert problems == ["record r1: entities[1] (EMAIL) is not on a reserved domain "
                        "(example.com, .net, .org; .example, .test, .invalid)"]


def test_the_three_checkers_use_these_rules():
    from piilab.finance import verify

    for name in ("luhn_passes", "registration_ok", "email_ok", "phone_ok", "licence_ok",
                 "passport_ok", "RRN_SHAPE", "CARD_SHAPE"):
        assert getattr(verify, name) is getattr(S, name), name
    spec = importlib.util.spec_from_file_location("validate_holdout",
                                                  REPO / "tools" / "validate_holdout.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.placeholder_phone is S.phone_ok and tool.read_digits is S.digits_of
    unsafe = {"id": "holdout-ko-001", "entities": [{"type": "EMAIL", "value": "a@gmail.com"}]}
    assert tool.safety_problems(unsafe) == S.safety_problems(unsafe)
    # `piilab verify` runs `safety_problems` on a wide corpus (tests/test_wide.py plants a
    # card number and sees it reported); the name it imports is this module's.
    from piilab import wide

    assert wide.safety_problems is S.safety_problems
