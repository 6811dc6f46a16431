"""The token classifier on a pretrained base (piilab.ner.pretrained, piilab.bioes Viterbi,
piilab.detectors): label projection, constrained decoding, the attention switches, and a
tiny offline base end to end (train, save, load, predict, mask a corpus).

The real bases (Gemma 3 270M, SmolLM2-135M) are exercised where they are in the cache
(`piilab fetch-model`); everything else runs on a 3-layer Llama built offline
(`piilab.tiny`) and a 2-layer Gemma 3 built from a config.
"""

from __future__ import annotations

import itertools
import json
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from piilab.bioes import (
    OPERATING_POINTS,
    TRANSITIONS,
    bioes_classes,
    bioes_to_spans,
    spans_to_bioes,
    viterbi_decode,
)
from piilab.detectors import DetectorError, describe_detector, merge_spans
from piilab.ner.pretrained import project_spans, token_anchors, tokens_to_spans


def test_doctests_pass():
    import doctest

    from piilab import baseline, bioes, detectors
    from piilab.ner import pretrained

    for module in (pretrained, detectors, baseline, bioes):
        assert doctest.testmod(module).failed == 0, module.__name__


# --- label projection: the first-non-space rule -------------------------------------------


def test_a_token_belongs_to_the_span_that_holds_its_first_non_space_character():
    text = "to 김가상님 at 010-1234-5678."
    assert len(text) == 25
    # "to", " 김가", "상님", " at", " ", "010-1234-5678", "."
    offsets = [(0, 2), (2, 5), (5, 7), (7, 10), (10, 11), (11, 24), (24, 25)]
    spans = [(3, 6, "PERSON"), (11, 24, "PHONE")]  # 김가상 ends inside the token "상님"
    p = project_spans(text, offsets, spans)
    assert p.tags == ("O", "B-PERSON", "E-PERSON", "O", "O", "S-PHONE", "O")
    assert (p.spans, p.start_inside, p.end_inside, p.lost) == (2, 0, 1, 0)
    decoded = tokens_to_spans(text, offsets, [(1, 2, "PERSON"), (5, 5, "PHONE")])
    # Decoded longer where the gold span ended inside a token (the particle is masked too).
    assert [tuple(s) for s in decoded] == [(3, 7, "PERSON"), (11, 24, "PHONE")]


def test_a_span_that_starts_inside_a_token_is_counted_and_a_tokenless_one_is_lost():
    text = "ab cd"
    p = project_spans(text, [(0, 5)], [(1, 2, "PERSON")])
    assert p.lost == 1 and p.tags == ("O",)
    p = project_spans(text, [(0, 2), (2, 5)], [(1, 5, "PERSON")])
    assert p.start_inside == 1 and p.tags == ("O", "S-PERSON")


def test_special_tokens_have_no_anchor():
    assert token_anchors("ab", [(0, 0), (0, 2)]) == [-1, 0]
    assert project_spans("ab", [(0, 0), (0, 2)], [(0, 2, "EMAIL")]).tags == ("O", "S-EMAIL")


@st.composite
def tokenized_with_spans(draw):
    """Text made of words and spaces, tokens that each start at a word or a space (as
    SentencePiece and byte-level BPE tokens do), and gold spans on whole tokens."""
    words = draw(st.lists(st.text("abc가나", min_size=1, max_size=4), min_size=1, max_size=8))
    text, offsets = "", []
    for word in words:
        start = len(text)
        text += " " + word
        offsets.append((start, len(text)))  # the token carries its leading space
    spans, i = [], 0
    while i < len(offsets):
        if draw(st.booleans()):
            j = draw(st.integers(i, min(i + 2, len(offsets) - 1)))
            spans.append((offsets[i][0] + 1, offsets[j][1], draw(st.sampled_from(["A", "B"]))))
            i = j + 1
        else:
            i += 1
    return text, offsets, spans


@given(tokenized_with_spans())
@settings(max_examples=200, deadline=None)
def test_projection_round_trips_spans_that_start_at_a_token_s_first_non_space(case):
    text, offsets, spans = case
    p = project_spans(text, offsets, spans)
    assert p.start_inside == p.end_inside == p.lost == 0
    groups = [(first, last, label) for first, last, label in _groups(p.tags)]
    assert [tuple(s) for s in tokens_to_spans(text, offsets, groups)] == sorted(spans)


def _groups(tags):
    spans = bioes_to_spans([(i, i + 1) for i in range(len(tags))], list(tags))
    return [(s.start, s.end - 1, s.label) for s in spans]


# --- constrained Viterbi -----------------------------------------------------------------

CLASSES = bioes_classes(["A", "B"])


def _legal(tags):
    inside = None
    for tag in tags:
        prefix, label = (tag[0], tag[2:]) if tag != "O" else ("O", "")
        if inside is None and prefix in ("I", "E"):
            return False
        if inside is not None and (prefix not in ("I", "E") or label != inside):
            return False
        inside = label if prefix in ("B", "I") else None
    return inside is None


def _path_score(tags, scores, bias):
    total, prev = 0.0, "O"
    for t, tag in enumerate(tags):
        total += scores[t][CLASSES.index(tag)]
        kind = _kind(prev, tag) if t else ("outside_to_start" if tag[0] in "BS" else None)
        if kind:
            total += bias.get(kind, 0.0)
        prev = tag
    return total


def _kind(prev, tag):
    if prev == "O":
        return "stay_outside" if tag == "O" else "outside_to_start"
    if prev[0] in "BI":
        return "continue" if tag[0] == "I" else "end"
    return "end_to_outside" if tag == "O" else "end_to_start"


@given(st.integers(1, 4), st.integers(0, 10_000),
       st.fixed_dictionaries({k: st.sampled_from([-1.0, 0.0, 1.5]) for k in TRANSITIONS}))
@settings(max_examples=60, deadline=None)
def test_viterbi_finds_the_best_legal_sequence_found_by_brute_force(n, seed, bias):
    rng = random.Random(seed)
    scores = [[math.log(rng.random() + 1e-3) for _ in CLASSES] for _ in range(n)]
    best = max((seq for seq in itertools.product(CLASSES, repeat=n) if _legal(seq)),
               key=lambda seq: _path_score(seq, scores, bias))
    got = viterbi_decode(scores, CLASSES, bias)
    assert _legal(got)
    assert _path_score(got, scores, bias) == pytest.approx(_path_score(best, scores, bias))


def test_viterbi_repairs_what_argmax_breaks_and_biases_move_it():
    # argmax: B-A then O (a span never closed)
    scores = [[-2.0, -0.2, -3.0, -1.0, -1.9, -9, -9, -9, -9],
              [-0.3, -3.0, -2.0, -2.5, -3.0, -9, -9, -9, -9]]
    assert viterbi_decode(scores, CLASSES) == ["S-A", "O"]
    assert viterbi_decode(scores, CLASSES, {"end": 1.0}) == ["B-A", "E-A"]
    assert viterbi_decode(scores, CLASSES, {"outside_to_start": -5.0}) == ["O", "O"]


def test_viterbi_skips_special_tokens_and_falls_back_to_argmax_without_a_legal_path():
    neg = float("-inf")
    scores = [[0.0] + [-1.0] * 8, [neg, 0.0, neg, neg, neg, neg, neg, neg, neg]]
    # the only finite tag of the last token is B-A: no legal sequence ends there
    assert viterbi_decode(scores, CLASSES) == ["O", "B-A"]
    assert viterbi_decode([[-1.0] * 9, [0.0] + [-1.0] * 8], CLASSES,
                          skip=[True, False]) == ["O", "O"]


def test_operating_points_are_checked():
    assert set(OPERATING_POINTS["neutral"]) == set(TRANSITIONS)
    with pytest.raises(ValueError, match="unknown operating point"):
        viterbi_decode([[0.0] * 9], CLASSES, "nope")
    with pytest.raises(ValueError, match="unknown transition biases"):
        viterbi_decode([[0.0] * 9], CLASSES, {"sideways": 1.0})
    assert viterbi_decode([[0.0] * 9], CLASSES, "mine",
                          points={"mine": {"outside_to_start": 5.0}})[0][0] in "BS"


def test_viterbi_agrees_with_the_gold_tags_when_they_score_best():
    offsets = [(0, 2), (2, 4), (5, 8), (9, 12)]
    tags = spans_to_bioes(offsets, [(0, 4, "A"), (9, 12, "B")])
    scores = [[0.0 if c == tag else -5.0 for c in CLASSES] for tag in tags]
    assert viterbi_decode(scores, CLASSES) == tags


# --- the merge with the rules ---------------------------------------------------------------


def test_the_merge_keeps_fixed_format_rule_spans_and_model_spans_elsewhere():
    model = [(0, 3, "PERSON"), (10, 20, "ACCOUNT"), (30, 35, "ADDRESS")]
    rules = [(12, 20, "PHONE"), (0, 3, "PERSON"), (40, 50, "EMAIL")]
    assert merge_spans(model, rules) == [(0, 3, "PERSON"), (12, 20, "PHONE"),
                                         (30, 35, "ADDRESS"), (40, 50, "EMAIL")]


def test_detector_names_are_checked_before_loading(tmp_path):
    assert describe_detector("rules")["kind"] == "rules"
    with pytest.raises(DetectorError, match="empty"):
        describe_detector("")
    with pytest.raises(DetectorError, match="neither"):
        describe_detector(str(tmp_path / "missing"))
    with pytest.raises(DetectorError, match="no model in this folder"):
        describe_detector(str(tmp_path))
    with pytest.raises(DetectorError, match="classifier folder only"):
        describe_detector("rules+rules")


# --- a tiny offline base, end to end ----------------------------------------------------------

torch = pytest.importorskip("torch")
pytest.importorskip("peft")


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory, corpus):
    from piilab.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny"), corpus["train"][:300], seed=0)


@pytest.mark.parametrize("bidirectional", [True, False])
def test_the_llama_switch_makes_attention_bidirectional(tiny_base, bidirectional,
                                                        one_torch_thread):
    from piilab.ner.pretrained import attends_to_future, build_classifier

    model, tokenizer = build_classifier(str(tiny_base), bidirectional=bidirectional)
    assert model.config.is_causal is (not bidirectional)
    assert attends_to_future(model, tokenizer) is bidirectional
    assert model.config.num_labels == 37


def _tiny_gemma(folder):
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig, PreTrainedTokenizerFast

    config = Gemma3TextConfig(vocab_size=300, hidden_size=32, intermediate_size=64,
                              num_hidden_layers=2, num_attention_heads=2,
                              num_key_value_heads=1, head_dim=16, sliding_window=8,
                              layer_types=["sliding_attention", "full_attention"])
    torch.manual_seed(0)
    Gemma3ForCausalLM(config).save_pretrained(folder)
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({"[PAD]": 0, "[UNK]": 1, "one": 2, "two": 3, "three": 4,
                                      "four": 5, "five": 6}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]",
                            unk_token="[UNK]").save_pretrained(folder)
    return folder


@pytest.mark.parametrize("bidirectional", [True, False])
def test_the_gemma_switch_makes_attention_bidirectional_and_halves_the_window(
        tmp_path, bidirectional, one_torch_thread):
    from piilab.ner.pretrained import attends_to_future, build_classifier

    model, tokenizer = build_classifier(str(_tiny_gemma(tmp_path / "g")),
                                        bidirectional=bidirectional)
    assert type(model).__name__ == "Gemma3ForTokenClassification"
    assert model.config.use_bidirectional_attention is bidirectional
    assert model.config.sliding_window == (5 if bidirectional else 8)  # 8 // 2 + 1
    assert attends_to_future(model, tokenizer) is bidirectional
    assert not hasattr(model, "lm_head")  # the body only: no output layer over the vocabulary


@pytest.fixture(scope="module")
def trained(tiny_base, tmp_path_factory, dataset_dir):
    from piilab.ner.pretrained import ClassifierConfig, train_classifier

    before = torch.get_num_threads()
    out = tmp_path_factory.mktemp("clf") / "tiny-ner"
    config = ClassifierConfig(base=str(tiny_base), train_files=[str(dataset_dir / "train.jsonl")],
                              train_records=[48], output_dir=str(out), batch_size=8,
                              max_steps=4, warmup_steps=1, save_every=2, threads=1,
                              learning_rate=1e-3, head_learning_rate=1e-2)
    log = []
    summary = train_classifier(config, log=log.append)
    torch.set_num_threads(before)
    return out, summary, log


def test_training_saves_an_fp16_adapter_and_head_with_counts_only(trained, tiny_base, corpus):
    from safetensors.torch import load_file

    out, summary, log = trained
    assert summary["steps"] == 4 and summary["examples"] == 48
    assert summary["projection"]["spans"] > 48 and summary["tokens"] > 0
    meta = json.loads((out / "piilab_classifier.json").read_text())
    assert meta["base"] == str(tiny_base) and meta["bidirectional"] is True
    assert meta["train"]["steps"] == 4
    adapter = json.loads((out / "adapter_config.json").read_text())
    assert adapter["base_model_name_or_path"] == str(tiny_base)
    tensors = load_file(out / "adapter_model.safetensors")
    assert {t.dtype for t in tensors.values()} == {torch.float16}
    assert any("score" in name for name in tensors)  # the head travels with the adapter
    assert any("lora_A" in name for name in tensors)
    # counts and rates only: no document of the training split reaches the metadata or log
    written = json.dumps(meta) + json.dumps(log)
    assert all(isinstance(row["loss"], float) for row in log)
    for record in corpus["train"][:48]:
        for entity in record["entities"]:
            assert entity["value"] not in written


def test_a_loaded_classifier_predicts_the_same_spans_merged_or_not(trained, corpus,
                                                                   one_torch_thread):
    from piilab.ner.pretrained import classify, load_classifier

    out, _, _ = trained
    texts = [r["source_text"] for r in corpus["test"][:6]]
    merged, tokenizer, _ = load_classifier(out)
    unmerged, _, _ = load_classifier(out, merge=False)
    for decoding in ("argmax", "viterbi"):
        a = classify(merged, tokenizer, texts, decoding=decoding)
        b = classify(unmerged, tokenizer, texts, decoding=decoding)
        assert a == b
        for text, spans in zip(texts, a, strict=True):
            for s in spans:
                assert 0 <= s.start < s.end <= len(text)


def test_long_documents_are_read_in_windows_with_the_same_logits_inside(trained,
                                                                        one_torch_thread):
    import numpy as np

    from piilab.ner.pretrained import classifier_logits, load_classifier

    out, _, _ = trained
    model, tokenizer, _ = load_classifier(out)
    text = " ".join(["김가상 010-1234-5678"] * 40)
    (offsets, whole), = classifier_logits(model, tokenizer, [text], window=4096)
    (offsets2, windowed), = classifier_logits(model, tokenizer, [text], window=64, stride=32)
    assert offsets == offsets2 and whole.shape == windowed.shape and len(offsets) > 64
    assert np.isfinite(windowed).all()


def test_the_detector_interface_runs_the_classifier_and_the_merge(trained, corpus, tmp_path,
                                                                  one_torch_thread):
    from piilab.detectors import load_detector
    from piilab.evaluation import evaluate
    from piilab.predictions import make_prediction

    out, _, _ = trained
    records = corpus["test"][:8]
    texts = [r["source_text"] for r in records]
    for name in (str(out), str(out) + "+rules"):
        detector = load_detector(name, threads=1)
        outputs = detector.outputs(texts)
        assert len(outputs) == len(texts) and detector.documents == len(texts)
        assert detector.identity["weights_sha256"]
        result = evaluate(records, [make_prediction(r["id"], o, r["source_text"])
                                    for r, o in zip(records, outputs, strict=True)])
        assert result.parse.success_rate == 1.0
    merged = load_detector(str(out) + "+rules", threads=1)
    rules = load_detector("rules")
    # every fixed-format value the rules find is in the merge's output
    for text, rows in zip(texts, merged.candidates(texts), strict=True):
        for label, value in rules.candidates([text])[0]:
            if label in ("EMAIL", "CARD", "RRN", "PHONE", "ACCOUNT"):
                assert (label, value) in rows


def test_predict_and_evaluate_on_any_records_file_with_the_classifier(trained, tmp_path,
                                                                      dataset_dir):
    from piilab.cli import main

    out, _, _ = trained
    records = tmp_path / "some.jsonl"
    records.write_text("".join((dataset_dir / "test.jsonl").read_text().splitlines(True)[:5]))
    preds = tmp_path / "p.jsonl"
    assert main(["predict", "--model", str(out), "--records", str(records),
                 "--out", str(preds), "--batch-size", "4"]) == 0
    assert len(preds.read_text().splitlines()) == 5
    assert preds.stat().st_mode & 0o777 == 0o600
    assert main(["evaluate", "--records", str(records), "--predictions", str(preds)]) == 0


def test_mask_corpus_with_the_classifier_is_byte_identical_across_batches(trained, corpus,
                                                                          tmp_path):
    from piilab.corpus_mask import mask_corpus, verify_corpus
    from piilab.dataset import split_bytes

    out, _, _ = trained
    source = tmp_path / "c.jsonl"
    source.write_bytes(split_bytes(corpus["test"][:12]))
    files = []
    for batch in (12, 5):
        dest = tmp_path / f"out{batch}"
        result = mask_corpus(source, dest, detector=str(out), batch_size=batch, threads=1)
        assert result.detector["kind"] == "token classifier"
        assert verify_corpus(dest).ok
        files.append({p.relative_to(dest): p.read_bytes() for p in sorted(dest.rglob("*"))
                      if p.is_file()})
    assert files[0] == files[1]


def test_a_quantized_classifier_loads_through_the_same_interface(trained, corpus,
                                                                 one_torch_thread):
    from piilab.detectors import load_detector

    out, _, _ = trained
    texts = [r["source_text"] for r in corpus["test"][:4]]
    detector = load_detector(str(out), quantize=True, threads=1)
    assert detector.identity["quantized"] == "int8 dynamic"
    assert "quantized" not in load_detector(str(out), threads=1).identity
    assert len(detector.outputs(texts)) == len(texts)
