"""The opt-in indexed masker gives exactly what the default masker gives.

`piilab.masking_index.mask_text_indexed` finds the occurrences from an index of the
document instead of searching each candidate through it; everything after that is the
default masker's own code. These tests hold it to `mask_text` on generated documents (the
property tests' strategy, plus many decoy candidates), on every record of the course corpus,
and on long documents made of many records, where it is meant to be used.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from test_tokenization_properties import documents

from piilab.labels import LABELS
from piilab.masking import mask_text
from piilab.masking_index import mask_text_indexed


def _pairs(record: dict) -> list[tuple[str, str]]:
    return [(e["type"], e["value"]) for e in record["entities"]]


@settings(max_examples=300, deadline=None)
@given(documents())
def test_indexed_masker_equals_the_default_on_generated_documents(document):
    source, candidates = document
    assert mask_text_indexed(source, candidates) == mask_text(source, candidates)


@settings(max_examples=150, deadline=None)
@given(documents())
def test_indexed_masker_equals_the_default_with_many_candidates(document):
    source, candidates = document
    decoys = [(LABELS[i % len(LABELS)], f"없는값{i}") for i in range(30)]
    decoys += [("ACCOUNT", f"{900000 + i}") for i in range(10)]
    decoys += [("PHONE", "0"), ("PERSON", "가"), ("RRN", "1-2"), ("DOB", "12.3")]
    everything = candidates + decoys
    assert mask_text_indexed(source, everything) == mask_text(source, everything)


def test_indexed_masker_equals_the_default_on_the_course_corpus(all_records):
    differ = [r["id"] for r in all_records
              if mask_text_indexed(r["source_text"], _pairs(r))
              != mask_text(r["source_text"], _pairs(r))]
    assert differ == [], differ[:5]
    # and it masks something: the comparison is not between two empty results
    with_entities = [r for r in all_records if r["entities"]]
    assert all(mask_text_indexed(r["source_text"], _pairs(r)).mapping for r in with_entities)
    assert len(with_entities) > 0.8 * len(all_records)


@pytest.mark.parametrize("records", [50, 400])
def test_indexed_masker_equals_the_default_on_long_documents(all_records, records):
    # One long document holding many distinct values: the workload the module is for.
    chosen = all_records[:records]
    source = "\n\n".join(r["source_text"] for r in chosen)
    candidates = [pair for r in chosen for pair in _pairs(r)]
    indexed = mask_text_indexed(source, candidates)
    assert indexed == mask_text(source, candidates)
    assert len(indexed.spans) >= len(chosen)


def test_indexed_masker_rejects_what_the_default_rejects():
    for bad in ([("NAME", "김가상")], [("PERSON",)], [(1, "x")]):
        with pytest.raises((ValueError, TypeError)) as default:
            mask_text("김가상", bad)
        with pytest.raises(type(default.value)) as indexed:
            mask_text_indexed("김가상", bad)
        assert str(indexed.value) == str(default.value)
        assert "김가상" not in str(indexed.value)
