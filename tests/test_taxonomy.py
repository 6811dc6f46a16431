"""The label taxonomy file and its loader (`piilab.taxonomy`, chapter 08)."""

from __future__ import annotations

import doctest
from importlib import resources

import pytest

import piilab.taxonomy as taxonomy_module
from piilab.errors import PiilabError
from piilab.labels import LABELS
from piilab.taxonomy import (
    EXPERIMENT,
    FINANCE,
    RELATIONS,
    TaxonomyError,
    experiment_labels,
    finance_labels,
    load_taxonomy,
    map_spans,
    read_yaml,
    to_experiment,
    to_finance,
)

FINANCE_LABELS = ("PERSON", "RRN", "FRN", "CARD_NUMBER", "ACCOUNT_NUMBER", "SECRET", "USER_ID",
                  "EMAIL", "PHONE", "PASSPORT", "DRIVER_LICENSE", "GENERIC_ID", "ADDRESS",
                  "ZIPCODE", "DATE", "CARD_EXPIRY", "CVC", "IPIN")


def _shipped_text() -> str:
    return resources.files("piilab.taxonomy").joinpath("label-taxonomy.yaml").read_text("utf-8")


def test_doctests_pass():
    assert doctest.testmod(taxonomy_module).failed == 0


def test_experiment_labels_equal_LABELS_in_order():
    assert experiment_labels() == LABELS
    assert load_taxonomy().labels(EXPERIMENT) == LABELS


def test_finance_taxonomy_has_the_18_labels():
    assert finance_labels() == FINANCE_LABELS


def test_every_label_has_a_description():
    taxonomy = load_taxonomy()
    for name, labels in taxonomy.label_sets.items():
        for label in labels:
            assert taxonomy.descriptions[name][label], (name, label)


@pytest.mark.parametrize(("source", "target"), [(EXPERIMENT, FINANCE), (FINANCE, EXPERIMENT)])
def test_each_mapping_lists_every_source_label_once(source, target):
    taxonomy = load_taxonomy()
    table = taxonomy.mapping(source, target)
    assert tuple(table) == taxonomy.labels(source)
    for label, entry in table.items():
        assert entry.source == label and entry.relation in RELATIONS
        if entry.target is None:
            assert entry.relation == "none" and entry.note, label
        else:
            assert entry.target in taxonomy.labels(target)
        if entry.relation in ("narrower", "broader") and source == EXPERIMENT:
            assert entry.note, label  # anything less than an equivalence is explained


def test_written_mappings():
    assert [to_finance(label) for label in LABELS] == [
        "EMAIL", "RRN", "CARD_NUMBER", "ACCOUNT_NUMBER", "PHONE", "DATE", "ADDRESS", "PERSON",
        None]
    assert {label: to_experiment(label) for label in FINANCE_LABELS} == {
        "PERSON": "PERSON", "RRN": "RRN", "FRN": "RRN", "CARD_NUMBER": "CARD",
        "ACCOUNT_NUMBER": "ACCOUNT", "SECRET": None, "USER_ID": None, "EMAIL": "EMAIL",
        "PHONE": "PHONE", "PASSPORT": None, "DRIVER_LICENSE": None, "GENERIC_ID": None,
        "ADDRESS": "ADDRESS", "ZIPCODE": None, "DATE": None, "CARD_EXPIRY": None, "CVC": None,
        "IPIN": None}


def test_equivalences_hold_in_both_directions():
    taxonomy = load_taxonomy()
    forward = taxonomy.mapping(EXPERIMENT, FINANCE)
    backward = taxonomy.mapping(FINANCE, EXPERIMENT)
    for label, entry in forward.items():
        if entry.relation == "equivalent":
            assert backward[entry.target].target == label
            assert backward[entry.target].relation == "equivalent"


def test_unknown_labels_raise_a_key_error_that_does_not_echo_them():
    from piilab.taxonomy import UnknownLabelError

    for call, rejected in ((lambda: to_finance("CARD_NUMBER"), "CARD_NUMBER"),
                           (lambda: load_taxonomy().labels("medical"), "medical"),
                           (lambda: load_taxonomy().mapping("x-secret", EXPERIMENT), "x-secret"),
                           (lambda: map_spans([(0, 3, "PERSON"), (4, 9, "010-1234")],
                                              EXPERIMENT, FINANCE), "010-1234")):
        with pytest.raises(UnknownLabelError) as info:
            call()
        assert isinstance(info.value, KeyError) and isinstance(info.value, PiilabError)
        assert rejected not in str(info.value)
        assert not str(info.value).startswith("'")  # not KeyError's quoted form


def test_map_spans_reports_spans_without_counterpart():
    spans = [(0, 3, "PERSON"), (5, 8, "REL"), (9, 12, "DOB")]
    mapped, unmapped = map_spans(spans, EXPERIMENT, FINANCE)
    assert mapped == [(0, 3, "PERSON"), (9, 12, "DATE")]
    assert unmapped == [(5, 8, "REL")]
    back, lost = map_spans(mapped, FINANCE, EXPERIMENT)
    assert back == [(0, 3, "PERSON")] and lost == [(9, 12, "DATE")]


def test_the_shipped_file_is_plain_yaml():
    import yaml

    assert read_yaml(_shipped_text()) == yaml.safe_load(_shipped_text())


@pytest.mark.parametrize(("text", "line"), [
    ("a: [1, 2\n", 2),           # an unclosed flow sequence: found at the end
    ("a:\n  b: 1\n\tc: 2\n", 3),  # a tab
    ("a: 1\na: 2\n", 2),          # a repeated key
    ("a:\n  - x\n  y: 1\n", 3),    # a mapping key inside a sequence
])
def test_a_broken_file_is_named_with_its_line(text, line):
    with pytest.raises(TaxonomyError, match=f"<string>:{line}:"):
        read_yaml(text)


def test_a_repeated_label_in_the_shipped_file_would_be_refused(tmp_path):
    text = _shipped_text()
    entry = "    CVC:\n      target: null\n"
    assert entry in text
    path = tmp_path / "twice.yaml"
    path.write_text(text.replace(entry, entry.replace("CVC", "IPIN"), 1), encoding="utf-8")
    with pytest.raises(TaxonomyError, match=r"twice\.yaml:[0-9]+: not valid YAML"):
        load_taxonomy(path)


def _edited(old: str, new: str) -> str:
    text = _shipped_text()
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize(("old", "new", "error"), [
    ("    CVC:\n      target: null\n      relation: none\n"
     "      note: \"No card verification codes in this experiment.\"\n", "",
     "must list every finance label"),
    ("      target: CARD_NUMBER\n", "      target: CARD_NO\n", "not a finance label"),
    ("    REL:\n      target: null\n      relation: none\n", "    REL:\n      target: null\n"
     "      relation: equivalent\n", "needs relation 'none'"),
    ("      - name: IPIN\n", "      - name: CVC\n", "appears twice"),
    ("      relation: broader\n", "      relation: similar\n", "relation 'similar'"),
])
def test_inconsistent_files_are_rejected(tmp_path, old, new, error):
    path = tmp_path / "taxonomy.yaml"
    path.write_text(_edited(old, new), encoding="utf-8")
    with pytest.raises(TaxonomyError, match=error):
        load_taxonomy(path)


def test_an_unchanged_copy_loads_like_the_shipped_file(tmp_path):
    path = tmp_path / "copy.yaml"
    path.write_text(_shipped_text(), encoding="utf-8")
    assert load_taxonomy(path) == load_taxonomy()
