"""Finance value generators: each label invalid as the card says; the MD5 pools (chapter 09)."""

from __future__ import annotations

import doctest
import random
import re

import pytest

from piilab import checksums, safety
from piilab.finance import templates as TPL
from piilab.finance import values as V
from piilab.finance import verify as independent
from piilab.taxonomy import finance_labels

DRAWS = 400


def _values(label: str, language: str, n: int = DRAWS, ctx: dict | None = None) -> list[str]:
    rng = random.Random(f"{label}-{language}")
    return [V.GENERATORS[label](rng, language, dict(ctx or {})) for _ in range(n)]


def test_doctests_pass():
    from piilab import pools, safe_values
    from piilab.finance import spec

    for module in (V, TPL, pools, safe_values, spec):
        assert doctest.testmod(module).failed == 0


def test_there_is_one_generator_per_finance_label_in_card_order():
    assert tuple(V.GENERATORS) == finance_labels()
    assert len(finance_labels()) == 18


@pytest.mark.parametrize("language", ["ko", "en"])
def test_rrn_values_fail_both_check_digits_and_keep_the_rrn_gender_digits(language):
    for value in _values("RRN", language):
        digits = value.replace("-", "")
        assert len(digits) == 13 and digits[6] in "1234"
        assert not checksums.rrn_valid(digits)
        assert not safety.rrn_passes(digits) and not safety.frn_passes(digits)


@pytest.mark.parametrize("language", ["ko", "en"])
def test_frn_values_follow_the_old_scheme_and_fail_their_check_digit(language):
    for value in _values("FRN", language):
        digits = value.replace("-", "")
        assert len(digits) == 13 and digits[6] in "5678"
        assert int(digits[7:9]) % 2 == 0 and digits[11] in "6789"  # pre-2020.10 structure
        assert int(digits[12]) == (V.frn_check_digit(digits[:12]) + 5) % 10
        assert not safety.frn_passes(digits) and not safety.rrn_passes(digits)


def test_the_frn_rule_is_the_rrn_rule_plus_two():
    rng = random.Random(0)
    for _ in range(200):
        body = "".join(str(rng.randrange(10)) for _ in range(12))
        assert V.frn_check_digit(body) == (checksums.rrn_check_digit(body) + 2) % 10


@pytest.mark.parametrize("language", ["ko", "en"])
def test_card_numbers_have_13_digits_or_more_and_fail_luhn(language):
    for value in _values("CARD_NUMBER", language):
        digits = re.sub(r"\D", "", value)
        assert len(digits) >= 13
        assert not checksums.luhn_valid(digits) and not safety.luhn_passes(digits)


@pytest.mark.parametrize("language", ["ko", "en"])
def test_long_account_numbers_fail_luhn_too_and_never_read_as_13_digit_registrations(language):
    for value in _values("ACCOUNT_NUMBER", language):
        digits = re.sub(r"\D", "", value)
        if len(digits) >= 13:
            assert not safety.luhn_passes(digits)
        assert not re.fullmatch(r"\d{13}", value)


@pytest.mark.parametrize("language", ["ko", "en"])
def test_structural_labels_use_reserved_or_unassigned_forms(language):
    assert all(v.rsplit("@", 1)[1] in ("example.com", "example.net", "example.org")
               for v in _values("EMAIL", language))
    assert all(safety.phone_ok(v) for v in _values("PHONE", language))
    assert all(safety.licence_ok(v, language) for v in _values("DRIVER_LICENSE", language))
    assert all(v[0] in "QXZ" and v[1:].isdigit() and len(v) == 9
               for v in _values("PASSPORT", language))


def test_the_phone_check_rejects_assigned_numbers():
    assert not safety.phone_ok("010-2345-6789")
    assert not safety.phone_ok("02-555-1234")
    assert safety.phone_ok("010-0345-6789")
    assert not safety.phone_ok("(212) 555-1234")
    assert safety.phone_ok("+1 212 555 0134")


def test_the_licence_and_registration_checks_reject_real_looking_values():
    assert not safety.licence_ok("11-23-123456-78", "ko")  # Seoul's code
    assert not safety.licence_ok("CA-1234567", "en")
    body = "900101123456"
    valid = body + str(checksums.rrn_check_digit(body))
    assert not safety.registration_ok(valid, "RRN")
    assert not safety.registration_ok("901301-1234567", "RRN")  # month 13


def test_secrets_never_hold_a_13_digit_run():
    assert not any(re.search(r"\d{13}", v) for v in _values("SECRET", "en", 2000))


def test_shared_shapes_write_cards_and_accounts_alike():
    for shape in V.SHARED_SHAPES:
        cards = {V.shape_of(v) for v in _values("CARD_NUMBER", "ko", 30, {"shape": shape})}
        accounts = {V.shape_of(v) for v in _values("ACCOUNT_NUMBER", "ko", 30, {"shape": shape})}
        assert len(cards) == 1 and cards == accounts


def test_pool_split_is_a_partition_of_normalized_values():
    assert V.normalize_value("010-1234 5678") == V.normalize_value("01012345678")
    assert V.pool_split("Kim.Minjun@Example.com") == V.pool_split("kim.minjun@example.com")
    rng = random.Random(1)
    splits = [V.pool_split(str(rng.random())) for _ in range(5000)]
    share = splits.count("validation") / len(splits)
    assert 0.17 < share < 0.23
    assert set(splits) == {"train", "validation"}


@pytest.mark.parametrize("label", finance_labels())
def test_draw_returns_values_of_the_requested_pool_only(label):
    rng = random.Random(label)
    for split in ("train", "validation"):
        for _ in range(20):
            value = V.draw(label, rng, "ko", split)
            assert V.pool_split(value) == split
            assert independent._pool_of(value) == split  # the verifier's own MD5 agrees


def test_templates_cover_every_label_in_both_languages_and_the_three_hard_negative_types():
    families = TPL.families()
    for language in ("ko", "en"):
        held = set().union(*(f.labels for f in families if f.language == language))
        assert held == set(finance_labels()), language
    assert {f.hard_negative for f in families} >= set(TPL.HARD_NEGATIVE_TYPES)
    assert {f.domain for f in families} == {"card", "bank", "insurance", "securities", "service"}


def test_a_template_slot_outside_the_taxonomy_is_refused():
    with pytest.raises(TPL.TemplateError, match="family f"):
        TPL._compile("x {NOT_A_LABEL} y", "f", finance_labels())


def test_reused_slots_repeat_one_value_and_fresh_slots_draw_new_ones():
    pieces = TPL._compile("{PERSON_1} {PERSON} {PERSON_1} {PERSON}", "f", finance_labels())
    family = TPL.Family("f", "bank", "ko", None, 1.0, (pieces,))
    rendered = TPL.render(family, random.Random(3), "train")
    names = [rendered.text[s:e] for s, e, _ in rendered.spans]
    assert names[0] == names[2] and len({names[0], names[1], names[3]}) == 3


# --- one pool partition, one home for safe ranges and decoys ------------------------------


def test_one_partition_serves_the_md5_pools_and_the_sha256_augmentation_pool():
    import hashlib

    from piilab.augment import pool_key, value_split
    from piilab.pools import PartitionError, partition

    rng = random.Random(7)
    for _ in range(300):
        value = f"{rng.randrange(10**6)}-{rng.choice(['Kim', 'park', '김가상'])}"
        # The card's rule, computed here by hand: MD5 of the normalized form, 4 bytes, 0.2.
        point = int.from_bytes(hashlib.md5(V.normalize_value(value).encode()).digest()[:4],
                               "big") / 2**32
        assert V.pool_split(value) == ("validation" if point < 0.2 else "train")
        assert value_split(value) == partition(pool_key(value), {"train": 0.8,
                                               "validation": 0.1, "test": 0.1},
                                               digest="sha256", salt="piilab-pool:")
    with pytest.raises(PartitionError):
        partition("x", {"a": 1.0}, digest="crc32")
    with pytest.raises(PartitionError):
        partition("x", {"a": 0.0})


def test_the_three_generators_draw_switchboards_from_the_one_set_of_company_prefixes():
    from piilab import generator, safe_values
    from piilab import templates as course_vocabulary
    from piilab.wide import values as wide_values

    for drawn in (TPL.KO_SWITCHBOARD_DRAW, course_vocabulary.KO_SWITCHBOARD_PREFIXES,
                  wide_values.KO_SWITCHBOARD_DRAW):
        assert set(drawn) <= set(safe_values.KO_SWITCHBOARD_PREFIXES)
    rng = random.Random(3)
    for make in (lambda: TPL._decoy("SWITCHBOARD", rng, "ko"),
                 lambda: generator._decoy("SWITCHBOARD", rng, "ko")):
        for _ in range(200):
            prefix, _, rest = make().partition("-")
            assert prefix in safe_values.KO_SWITCHBOARD_PREFIXES and re.fullmatch(r"\d{4}", rest)
    # The wide corpus writes a Seoul office line (02-...) beside the company lines.
    wide = [wide_values.decoy("SWITCHBOARD", rng, "ko") for _ in range(400)]
    company = [w for w in wide if not w.startswith("02-")]
    assert len(company) > 100
    for number in company:
        prefix, _, rest = number.partition("-")
        assert prefix in safe_values.KO_SWITCHBOARD_PREFIXES and re.fullmatch(r"\d{4}", rest)


def test_both_generators_write_phones_in_the_unassigned_ranges():
    from piilab import generator

    rng = random.Random(5)
    for make in (lambda lang: V.GENERATORS["PHONE"](rng, lang, {}),
                 lambda lang: generator.VALUE_GENERATORS["PHONE"](rng, lang, {})):
        for _ in range(200):
            ko = re.split(r"[-. ]", make("ko"))
            assert (len(ko) == 3 and ko[1][0] in "01") or (len(ko) == 1 and ko[0][3] in "01")
            assert re.search(r"555[-. ]01\d\d$", make("en"))
