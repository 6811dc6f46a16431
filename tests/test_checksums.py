"""Check digits and invalid-by-construction values (piilab.checksums)."""

import datetime
import random

import pytest

from piilab.checksums import (
    invalid_card_number,
    invalid_rrn,
    luhn_check_digit,
    luhn_valid,
    rrn_check_digit,
    rrn_valid,
)

# Published card-network test numbers (they pass the Luhn check by design).
PUBLISHED_TEST_CARDS = [
    "4111111111111111",  # Visa
    "4242 4242 4242 4242",  # Visa (payment-processor sandbox number)
    "5555555555554444",  # Mastercard
    "5105-1051-0510-5100",  # Mastercard
    "378282246310005",  # American Express
    "6011111111111117",  # Discover
]


@pytest.mark.parametrize("number", PUBLISHED_TEST_CARDS)
def test_luhn_accepts_published_test_numbers(number):
    assert luhn_valid(number)


@pytest.mark.parametrize("number", ["4111111111111112", "5555555555554440", "1234567812345678"])
def test_luhn_rejects_wrong_check_digit(number):
    assert not luhn_valid(number)


def test_luhn_rejects_non_digits_and_fullwidth_digits():
    assert not luhn_valid("4111-1111-1111-111a")
    assert not luhn_valid("４１１１１１１１１１１１１１１１")
    assert not luhn_valid("7")


def test_rrn_check_digit_worked_example():
    # 8*2 + 0*3 + 0*4 + 1*5 + 0*6 + 1*7 + 1*8 + 2*9 + 3*2 + 4*3 + 5*4 + 6*5 = 122;
    # 122 mod 11 = 1; (11 - 1) mod 10 = 0.
    assert rrn_check_digit("800101123456") == 0
    assert rrn_valid("800101-1234560")
    assert rrn_valid("8001011234560")


@pytest.mark.parametrize("bad", ["800101-1234561", "800101-123456", "80010a-1234560", ""])
def test_rrn_rejects_wrong_or_malformed(bad):
    assert not rrn_valid(bad)


def test_luhn_check_digit_agrees_with_validator():
    rng = random.Random(7)
    for _ in range(500):
        payload = "".join(str(rng.randrange(10)) for _ in range(rng.randrange(5, 19)))
        assert luhn_valid(payload + str(luhn_check_digit(payload)))


def test_invalid_generators_always_fail_their_check():
    rng = random.Random(0)
    for _ in range(2000):
        assert not luhn_valid(invalid_card_number(rng))
        assert not luhn_valid(invalid_card_number(rng, prefix="37", length=15))
        assert not rrn_valid(invalid_rrn(rng))


def test_invalid_rrn_follows_the_birth_date():
    value = invalid_rrn(random.Random(1), birth=datetime.date(2003, 7, 9))
    assert value.startswith("030709-")
    assert value[7] in "34"  # born in the 2000s
