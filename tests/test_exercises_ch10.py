"""Chapter 10's checker: the batch function of a corpus job (`piilab.course.exercises.ch10`)."""

from __future__ import annotations

from piilab.baseline import extract
from piilab.course.exercises.ch10 import BATCH_TEXTS, check_mask_batch
from piilab.tokenization import mask_text


def right(batch):
    results = [mask_text(text, extract(text)) for text in batch["source_text"]]
    return {"id": list(batch["id"]),
            "masked_text": [r.masked_text for r in results],
            "mapping": [r.mapping for r in results]}


def _both(fn):
    return check_mask_batch(fn, lang="en"), check_mask_batch(fn, lang="ja")


def test_the_right_function_passes_in_both_languages():
    en, ja = _both(right)
    assert en.ok and ja.ok
    assert "4 documents" in en.message and "4 件" in ja.message


def test_the_corpus_has_values_in_most_documents_and_a_negative_one():
    found = [extract(text) for text in BATCH_TEXTS]
    assert sum(bool(f) for f in found) == 3 and not found[-1]


def test_numbering_across_the_batch_is_caught():
    def per_batch(batch):
        # one mask_text call for the whole batch: numbers run on from document to document
        joined = "\n\0\n".join(batch["source_text"])
        candidates = [c for text in batch["source_text"] for c in extract(text)]
        result = mask_text(joined, candidates)
        masked = result.masked_text.split("\n\0\n")
        return {"id": list(batch["id"]), "masked_text": masked,
                "mapping": [result.mapping] * len(masked)}

    en, ja = _both(per_batch)
    assert not en.ok and "per document" in en.message and "文書ごと" in ja.message


def test_passing_the_source_through_is_caught():
    def leaky(batch):
        return dict(right(batch), source_text=list(batch["source_text"]))

    en, _ = _both(leaky)
    assert not en.ok and "source_text" in en.message


def test_a_value_left_in_the_text_is_named_by_document_never_by_value():
    def only_people(batch):
        results = [mask_text(t, [c for c in extract(t) if c[0] == "PERSON"])
                   for t in batch["source_text"]]
        return {"id": list(batch["id"]), "masked_text": [r.masked_text for r in results],
                "mapping": [r.mapping for r in results]}

    en, ja = _both(only_people)
    assert not en.ok and "document 0 (t-001)" in en.message and "文書 0" in ja.message
    assert "010-0123-4567" not in en.message + ja.message


def test_a_dropped_mapping_and_shapes_are_caught():
    def no_mapping(batch):
        out = right(batch)
        out["mapping"] = [{} for _ in out["mapping"]]
        return out

    assert "does not give the document back" in check_mask_batch(no_mapping, lang="en").message
    assert "'mapping'" in check_mask_batch(lambda b: {"id": b["id"], "masked_text": []},
                                           lang="en").message
    assert "raised ZeroDivisionError" in check_mask_batch(lambda b: 1 / 0, lang="en").message
    assert not check_mask_batch("not a function", lang="ja").ok
