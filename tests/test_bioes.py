"""BIOES projection, decoding and span scores (`piilab.bioes`, docs/contract.md, section 9)."""

from __future__ import annotations

import doctest
import itertools
import os
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from piilab import bioes
from piilab.bioes import (
    AlignmentError,
    EntitySpan,
    Repair,
    bioes_classes,
    bioes_to_spans,
    check_alignment,
    decoding_repairs,
    span_scores,
    spans_to_bioes,
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TEST_EXTRA = "needs the test extra: pip install -e '.[test]'"
TRAIN_EXTRA = "needs the train extra: pip install -e '.[train]'"

LABELS = ("PERSON", "PHONE", "CARD_NUMBER")

# "김가상님 010-1234-5678": [CLS] 김가상 님 010 - 1234 - 5678 [SEP]
OFFSETS = [(0, 0), (0, 3), (3, 4), (5, 8), (8, 9), (9, 13), (13, 14), (14, 18), (0, 0)]


def test_doctests_pass():
    assert doctest.testmod(bioes).failed == 0


# --- classes ---------------------------------------------------------------------


def test_classes_are_outside_then_four_per_label():
    classes = bioes_classes(LABELS)
    assert len(classes) == 4 * len(LABELS) + 1
    assert classes[:5] == ("O", "B-PERSON", "I-PERSON", "E-PERSON", "S-PERSON")
    assert len(set(classes)) == len(classes)


def test_classes_reject_duplicate_labels():
    with pytest.raises(ValueError):
        bioes_classes(["PERSON", "PERSON"])


# --- encoding --------------------------------------------------------------------


def test_one_token_span_is_single_and_longer_spans_are_begin_inside_end():
    tags = spans_to_bioes(OFFSETS, [(0, 3, "PERSON"), (5, 18, "PHONE")])
    assert tags == ["O", "S-PERSON", "O", "B-PHONE", "I-PHONE", "I-PHONE", "I-PHONE", "E-PHONE",
                    "O"]


def test_two_token_span_is_begin_end():
    assert spans_to_bioes([(0, 2), (2, 4)], [(0, 4, "PERSON")]) == ["B-PERSON", "E-PERSON"]


def test_uncovered_and_special_tokens_are_outside():
    assert spans_to_bioes(OFFSETS, []) == ["O"] * len(OFFSETS)


def test_duplicate_spans_merge_and_order_does_not_matter():
    spans = [(5, 18, "PHONE"), (0, 3, "PERSON"), (5, 18, "PHONE")]
    assert spans_to_bioes(OFFSETS, spans) == spans_to_bioes(OFFSETS, sorted(set(spans)))


def test_tokens_sharing_one_characters_offsets_are_tagged_together():
    # A byte-level tokenizer may cut one Hangul syllable into two byte pieces.
    offsets = [(0, 1), (1, 2), (1, 2), (2, 3), (3, 4)]
    tags = spans_to_bioes(offsets, [(0, 3, "PERSON")])
    assert tags == ["B-PERSON", "I-PERSON", "I-PERSON", "E-PERSON", "O"]
    assert bioes_to_spans(offsets, tags) == [(0, 3, "PERSON")]


def test_span_ending_inside_a_token_raises_alignment_error_naming_offsets_not_text():
    text = "김가상님 010-1234-5678"
    offsets = [(0, 2), (2, 4)]  # "김가" "상님": the name ends inside the second token
    with pytest.raises(AlignmentError) as info:
        spans_to_bioes(offsets, [(0, 3, "PERSON")])
    message = str(info.value)
    assert "(0, 3)" in message and "inside a token" in message
    assert text[:3] not in message and "상" not in message
    assert isinstance(info.value, ValueError)


def test_span_starting_inside_a_token_is_reported():
    problems = check_alignment([(0, 4), (4, 8)], [(2, 8, "PHONE")])
    assert [(p.start, p.end, p.reason, p.token) for p in problems] == [
        (2, 8, "starts inside a token", 0)]


def test_span_starting_in_characters_no_token_covers_is_reported():
    # Whitespace trimmed out of the offsets: the span would silently lose a character.
    problems = check_alignment([(0, 3), (4, 7)], [(3, 7, "PERSON")])
    assert [p.reason for p in problems] == ["starts where no token starts"]
    with pytest.raises(AlignmentError):
        spans_to_bioes([(0, 3), (4, 7)], [(3, 7, "PERSON")])


def test_span_without_any_token_is_reported():
    assert [p.reason for p in check_alignment([(0, 0), (0, 3)], [(5, 7, "PERSON")])] == [
        "starts where no token starts"]


def test_overlapping_spans_are_rejected():
    with pytest.raises(ValueError, match="overlap"):
        spans_to_bioes(OFFSETS, [(5, 18, "PHONE"), (9, 13, "CARD_NUMBER")])
    with pytest.raises(ValueError, match="overlap"):
        spans_to_bioes(OFFSETS, [(0, 3, "PERSON"), (0, 3, "PHONE")])


@pytest.mark.parametrize("span", [(3, 3, "PERSON"), (4, 2, "PERSON"), (-1, 2, "PERSON"),
                                  (0, 3, "")])
def test_malformed_spans_are_rejected(span):
    with pytest.raises(ValueError):
        spans_to_bioes(OFFSETS, [span])


# --- decoding --------------------------------------------------------------------

FIVE = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]


@pytest.mark.parametrize(("tags", "spans", "reasons"), [
    # well formed
    (["B-PERSON", "I-PERSON", "E-PERSON", "O", "S-PHONE"],
     [(0, 3, "PERSON"), (4, 5, "PHONE")], []),
    # an I- without a B- starts a span
    (["O", "I-PERSON", "E-PERSON", "O", "O"], [(1, 3, "PERSON")],
     [(1, "I- without an open span")]),
    # an E- alone is a one-token span
    (["O", "E-PERSON", "O", "O", "O"], [(1, 2, "PERSON")], [(1, "E- without an open span")]),
    # a label change inside a span closes it and starts another
    (["B-PERSON", "I-PHONE", "E-PHONE", "O", "O"], [(0, 1, "PERSON"), (1, 3, "PHONE")],
     [(0, "span not closed by E-"), (1, "label change inside a span")]),
    # a B- followed by O ends at its last token
    (["B-PERSON", "I-PERSON", "O", "B-PHONE", "B-PHONE"],
     [(0, 2, "PERSON"), (3, 4, "PHONE"), (4, 5, "PHONE")],
     [(1, "span not closed by E-"), (3, "span not closed by E-"), (4, "span not closed by E-")]),
    # S- inside an open span closes it
    (["B-PERSON", "S-PERSON", "E-PERSON", "O", "O"],
     [(0, 1, "PERSON"), (1, 2, "PERSON"), (2, 3, "PERSON")],
     [(0, "span not closed by E-"), (2, "E- without an open span")]),
])
def test_ill_formed_sequences_follow_the_documented_rule(tags, spans, reasons):
    assert bioes_to_spans(FIVE, tags) == spans
    assert [(r.index, r.reason) for r in decoding_repairs(FIVE, tags)] == reasons


def test_tags_on_tokens_without_characters_are_ignored_and_reported():
    offsets = [(0, 0), (0, 3), (3, 3), (3, 5), (0, 0)]
    tags = ["S-PERSON", "B-PERSON", "I-PERSON", "E-PERSON", "O"]
    assert bioes_to_spans(offsets, tags) == [(0, 5, "PERSON")]
    assert decoding_repairs(offsets, tags) == [
        Repair(0, "tag on a token with no characters"),
        Repair(2, "tag on a token with no characters")]


@pytest.mark.parametrize("tag", ["PERSON", "X-PERSON", "B-", "B_PERSON", "", "o"])
def test_unknown_tags_are_rejected(tag):
    with pytest.raises(ValueError, match="tag 1"):
        bioes_to_spans([(0, 1), (1, 2)], ["O", tag])


def test_one_tag_per_token_is_required():
    with pytest.raises(ValueError, match="one tag per token"):
        bioes_to_spans([(0, 1), (1, 2)], ["O"])


# --- properties over generated tokenizations --------------------------------------


@st.composite
def tokenizations(draw):
    """Offsets of a random tokenization of a text of length n, as fast tokenizers give
    them: consecutive pieces, with gaps (trimmed whitespace), empty tokens, special
    tokens at (0, 0), and byte pieces that repeat one character's offsets."""
    n = draw(st.integers(1, 40))
    cuts = sorted(draw(st.sets(st.integers(1, n - 1), max_size=n - 1))) if n > 1 else []
    bounds = [0, *cuts, n]
    offsets = [(0, 0)] if draw(st.booleans()) else []
    for start, end in itertools.pairwise(bounds):
        kind = draw(st.sampled_from(["token", "token", "token", "gap", "empty", "bytes"]))
        if kind == "gap":
            continue
        if kind == "empty":
            offsets.append((end, end))
            continue
        offsets.append((start, end))
        if kind == "bytes" and end - start == 1:
            offsets.append((start, end))
    if draw(st.booleans()):
        offsets.append((0, 0))
    return n, offsets


def _aligned_spans(draw, offsets):
    tokens = list(dict.fromkeys(o for o in offsets if o[0] < o[1]))
    spans, i = [], 0
    while i < len(tokens):
        if draw(st.booleans()):
            length = draw(st.integers(1, len(tokens) - i))
            spans.append((tokens[i][0], tokens[i + length - 1][1], draw(st.sampled_from(LABELS))))
            i += length
        else:
            i += 1
    return spans


@given(st.data())
@settings(max_examples=200, deadline=None)
def test_aligned_spans_round_trip_exactly(data):
    _, offsets = data.draw(tokenizations())
    spans = _aligned_spans(data.draw, offsets)
    assert check_alignment(offsets, spans) == []
    tags = spans_to_bioes(offsets, spans)
    assert len(tags) == len(offsets)
    assert all(tag == "O" for tag, (s, e) in zip(tags, offsets, strict=True) if s >= e)
    assert bioes_to_spans(offsets, tags) == sorted(spans)
    assert decoding_repairs(offsets, tags) == []


@given(st.data())
@settings(max_examples=200, deadline=None)
def test_any_span_either_round_trips_or_is_reported_never_moved(data):
    n, offsets = data.draw(tokenizations())
    points = sorted(data.draw(st.sets(st.integers(0, n), max_size=6)))
    spans = [(a, b, "PERSON") for a, b in zip(points[::2], points[1::2], strict=False) if a < b]
    problems = check_alignment(offsets, spans)
    reported = {(p.start, p.end) for p in problems}
    if problems:
        with pytest.raises(AlignmentError):
            spans_to_bioes(offsets, spans)
        # Each reported span really cannot be expressed on its own either.
        for start, end in reported:
            with pytest.raises(AlignmentError):
                spans_to_bioes(offsets, [(start, end, "PERSON")])
    else:
        assert bioes_to_spans(offsets, spans_to_bioes(offsets, spans)) == spans
    # The aligned ones, alone, round trip exactly.
    aligned = [span for span in spans if span[:2] not in reported]
    assert bioes_to_spans(offsets, spans_to_bioes(offsets, aligned)) == aligned


@given(st.data())
@settings(max_examples=200, deadline=None)
def test_decoding_keeps_every_tagged_token_with_its_own_label(data):
    _, offsets = data.draw(tokenizations())
    tag = st.sampled_from(["O", *bioes_classes(LABELS)])
    tags = data.draw(st.lists(tag, min_size=len(offsets), max_size=len(offsets)))
    spans = bioes_to_spans(offsets, tags)
    for (start, end), t in zip(offsets, tags, strict=True):
        if start >= end or t == "O":
            continue
        holders = [s for s in spans if s.start <= start and end <= s.end and s.label == t[2:]]
        assert holders, "a tagged token was dropped"
    # No span covers an untagged token.
    for span in spans:
        inside = [t for (s, e), t in zip(offsets, tags, strict=True)
                  if s < e and span.start <= s and e <= span.end]
        assert inside and any(t != "O" for t in inside)


# --- span scores ----------------------------------------------------------------


def test_span_scores_count_exact_span_and_label_matches_over_documents():
    gold = [[(0, 3, "PERSON"), (5, 18, "PHONE")], [(0, 4, "PERSON")], []]
    pred = [[(0, 3, "PERSON"), (5, 17, "PHONE")], [(0, 4, "PHONE")], [(1, 2, "PERSON")]]
    s = span_scores(gold, pred)
    assert (s["tp"], s["fp"], s["fn"]) == (1, 3, 2)
    assert s["precision"] == pytest.approx(1 / 4)
    assert s["recall"] == pytest.approx(1 / 3)
    assert s["f1"] == pytest.approx(2 / 7)
    assert s["per_label"]["PERSON"] == {"precision": pytest.approx(1 / 2), "recall": 0.5,
                                        "f1": pytest.approx(0.5), "tp": 1, "fp": 1, "fn": 1}
    assert list(s["per_label"]) == ["PERSON", "PHONE"]


def test_span_scores_zero_denominators_give_zero_and_labels_are_listed():
    s = span_scores([[]], [[]], labels=["PHONE", "PERSON"])
    assert (s["precision"], s["recall"], s["f1"]) == (0.0, 0.0, 0.0)
    assert list(s["per_label"]) == ["PHONE", "PERSON"]
    assert s["per_label"]["PHONE"]["f1"] == 0.0


def test_span_scores_count_a_repeated_span_once():
    s = span_scores([[(0, 3, "PERSON")]], [[(0, 3, "PERSON"), (0, 3, "PERSON")]])
    assert (s["tp"], s["fp"], s["fn"]) == (1, 0, 0)


def test_span_scores_need_one_list_per_document():
    with pytest.raises(ValueError, match="one list per document"):
        span_scores([[]], [[], []])


def _random_document(rng: random.Random):
    """A random tokenization with random aligned gold and predicted spans."""
    n = rng.randint(1, 60)
    bounds = sorted({0, n, *(rng.randint(1, max(1, n - 1)) for _ in range(rng.randint(0, n)))})
    offsets = list(itertools.pairwise(bounds))

    def partition(keep_from=()):
        spans, i = [], 0
        keep = set(keep_from)
        while i < len(offsets):
            hit = [s for s in keep if s[0] == offsets[i][0]]
            if hit and rng.random() < 0.6:
                span = hit[0]
                label = span[2] if rng.random() < 0.85 else rng.choice(LABELS)
                j = next(k for k in range(i, len(offsets)) if offsets[k][1] == span[1])
                if rng.random() < 0.15 and j + 1 < len(offsets):
                    j += 1  # one token too long
                spans.append((offsets[i][0], offsets[j][1], label))
                i = j + 1
            elif rng.random() < 0.3:
                j = min(len(offsets) - 1, i + rng.randint(0, 3))
                spans.append((offsets[i][0], offsets[j][1], rng.choice(LABELS)))
                i = j + 1
            else:
                i += 1
        return spans

    gold = partition()
    return offsets, gold, partition(gold)


def test_span_scores_equal_seqeval_strict_iobes_on_generated_documents():
    metrics = pytest.importorskip("seqeval.metrics", reason=TEST_EXTRA)
    from seqeval.scheme import IOBES

    rng = random.Random(20240508)
    documents = [_random_document(rng) for _ in range(400)]
    gold = [g for _, g, _ in documents]
    pred = [p for _, _, p in documents]
    y_true = [spans_to_bioes(o, g) for o, g, _ in documents]
    y_pred = [spans_to_bioes(o, p) for o, _, p in documents]
    ours = span_scores(gold, pred)
    assert ours["tp"] > 50 and ours["fp"] > 50 and ours["fn"] > 50  # a real comparison

    kwargs = {"mode": "strict", "scheme": IOBES, "zero_division": 0}
    assert ours["precision"] == pytest.approx(metrics.precision_score(y_true, y_pred, **kwargs))
    assert ours["recall"] == pytest.approx(metrics.recall_score(y_true, y_pred, **kwargs))
    assert ours["f1"] == pytest.approx(metrics.f1_score(y_true, y_pred, **kwargs))
    report = metrics.classification_report(y_true, y_pred, output_dict=True, **kwargs)
    for label, row in ours["per_label"].items():
        assert row["precision"] == pytest.approx(report[label]["precision"]), label
        assert row["recall"] == pytest.approx(report[label]["recall"]), label
        assert row["f1"] == pytest.approx(report[label]["f1-score"]), label
        assert row["tp"] + row["fn"] == report[label]["support"], label
    # And our decoder reads seqeval's chunks from the same tags.
    for (offsets, g, p), t, q in zip(documents, y_true, y_pred, strict=True):
        assert bioes_to_spans(offsets, t) == sorted(g)
        assert bioes_to_spans(offsets, q) == sorted(p)


def test_seqeval_strict_drops_ill_formed_chunks_that_the_decoder_keeps():
    metrics = pytest.importorskip("seqeval.metrics", reason=TEST_EXTRA)
    from seqeval.scheme import IOBES

    offsets = [(0, 1), (1, 2), (2, 3)]
    gold_tags = [["B-PERSON", "I-PERSON", "E-PERSON"]]
    pred_tags = [["I-PERSON", "I-PERSON", "E-PERSON"]]  # no B-
    seqeval_recall = metrics.recall_score(gold_tags, pred_tags, mode="strict", scheme=IOBES,
                                          zero_division=0)
    ours = span_scores([bioes_to_spans(offsets, gold_tags[0])],
                       [bioes_to_spans(offsets, pred_tags[0])])
    assert seqeval_recall == 0.0  # strict mode discards the chunk
    assert ours["recall"] == 1.0  # the repair rule keeps it: every tagged token is masked


# --- the whole corpus, with real tokenizers ---------------------------------------


def _corpus_offsets(tokenizer, records, **kwargs):
    """The token offsets (character spans) of every record's document under `tokenizer`."""
    texts = [r["source_text"] for r in records]
    return tokenizer(texts, return_offsets_mapping=True, **kwargs)["offset_mapping"]


@pytest.mark.slow
@pytest.mark.train
def test_every_corpus_span_round_trips_with_the_tiny_encoder_tokenizer(corpus, all_records):
    pytest.importorskip("transformers", reason=TRAIN_EXTRA)
    from piilab.ner import gold_spans, train_encoder_tokenizer

    encodings = _corpus_offsets(train_encoder_tokenizer(corpus["train"]), all_records)
    assert len(all_records) == 2200
    n_spans = 0
    for record, offsets in zip(all_records, encodings, strict=True):
        spans = gold_spans(record)
        n_spans += len(spans)
        tags = spans_to_bioes(offsets, spans)  # raises on any misalignment
        assert tags[0] == tags[-1] == "O"  # [CLS] and [SEP]
        assert bioes_to_spans(offsets, tags) == spans, record["id"]
        assert decoding_repairs(offsets, tags) == []
    assert n_spans > 5000


@pytest.mark.slow
@pytest.mark.train
def test_chat_tokenizer_misalignments_are_reported_never_moved(corpus, all_records):
    pytest.importorskip("transformers", reason=TRAIN_EXTRA)
    from piilab.ner import gold_spans
    from piilab.tiny import train_tokenizer

    # A plain byte-level BPE, as the tiny causal LM had before its copy-friendly pre-tokenizer
    # (chapter 06): its leading-space tokens (" 김가상") start before the names.
    tokenizer = train_tokenizer(corpus["train"], copy_friendly=False)
    encodings = _corpus_offsets(tokenizer, all_records, add_special_tokens=False)
    misaligned_records = 0
    for record, offsets in zip(all_records, encodings, strict=True):
        spans = gold_spans(record)
        problems = check_alignment(offsets, spans)
        if not problems:
            assert bioes_to_spans(offsets, spans_to_bioes(offsets, spans)) == spans
            continue
        misaligned_records += 1
        with pytest.raises(AlignmentError) as info:
            spans_to_bioes(offsets, spans)
        message = str(info.value)
        first = problems[0]
        assert f"({first.start}, {first.end})" in message
        assert record["source_text"][first.start:first.end] not in message
        # The spans it can express still round trip; the others are not moved.
        bad = {(p.start, p.end) for p in problems}
        good = [s for s in spans if (s.start, s.end) not in bad]
        assert bioes_to_spans(offsets, spans_to_bioes(offsets, good)) == good
    assert misaligned_records > 100  # many records misalign


@pytest.mark.slow
@pytest.mark.train
def test_the_copy_friendly_tokenizer_aligns_every_gold_span(corpus, all_records):
    """No BPE merge crosses a value's edge, so every span is a whole number of tokens."""
    pytest.importorskip("transformers", reason=TRAIN_EXTRA)
    from piilab.ner import gold_spans
    from piilab.tiny import train_tokenizer

    encodings = _corpus_offsets(train_tokenizer(corpus["train"]), all_records,
                                add_special_tokens=False)
    for record, offsets in zip(all_records, encodings, strict=True):
        assert check_alignment(offsets, gold_spans(record)) == [], record["id"]


def test_entity_span_compares_equal_to_plain_tuples():
    assert EntitySpan(0, 3, "PERSON") == (0, 3, "PERSON")
    assert sorted([EntitySpan(5, 6, "A"), EntitySpan(0, 9, "B")])[0].label == "B"


def test_bad_input_is_a_bioes_error_naming_no_value():
    from piilab.errors import PiilabError

    calls = [lambda: bioes.bioes_classes(["A", "A"]),
             lambda: bioes.spans_to_bioes([(0, 1), (1, 2)], [(0, 2, "A"), (1, 2, "B")]),
             lambda: bioes.bioes_to_spans([(0, 1)], ["X-secret"]),
             lambda: bioes.viterbi_decode([[0.0] * 5], bioes.bioes_classes(["A"]),
                                          {"secret_bias": 1.0})]
    for call in calls:
        with pytest.raises(bioes.BIOESError) as info:
            call()
        assert isinstance(info.value, PiilabError) and "secret" not in str(info.value)
