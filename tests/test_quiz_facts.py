"""Quiz answers that state a fact about `piilab` agree with `piilab` (book/quizzes/).

Each test below computes, with `piilab`, the behaviour a quiz question asks about, and checks
that the keyed (correct) answer of the English quiz says it. `tests/test_book_parity.py`
checks that the Japanese quiz keys the same answer, so both languages are covered. A test fails
when `piilab` changes behaviour or when a quiz keys an answer that says something else.

Covered question ids, by chapter:

- 00_welcome: label-count, label-order, rel-label
- 01_architecture: unmatched-row, mapping-sensitive, spelling-tokens, leak-vs-f1
- 02_synthetic_data: negative-document, spaced-name, luhn-purpose, plus-five, pythonhashseed,
  forged-manifest
- 03_tokenization: think-blocks, hallucination-only, numeric-boundary, longest-match,
  worked-example, same-spelling-two-types, unknown-token, token-identity
- 04_evaluation: partial-mask, token-not-leak, separator, variant-counts-fp, flag-false,
  hallucination-vs-fp, oracle
- 05_augmentation: skeleton, augment-after-split, value-pool, clean-audit
- 06_finetuning: precision
- 07_inference: raw-output, hallucinated-row, unclosed-think
- 08_token_classification: class-count, single-token, misaligned-span, chat-tokenizer,
  repair-rule, span-vs-entity
- 09_finance_dataset: card-check-digit, cvc-alone, policy-number, card-account-shape, same-pool,
  partial-character, redraw
- 10_corpus: per-document-numbering

The other questions are conceptual (why a design choice is made, how to read a result, which
workflow or file to use, what the book's conventions are), or rest on facts other tests own:
the book's twin rule (tests/test_book_parity.py), the Makefile targets, the loss mask, chat
templates and truncation (tests/test_sft.py, which needs the tiny model's tokenizer), the
tracking scan (tests/test_tracking_privacy.py), and recorded training runs (results/). Every
question id of every quiz must appear in this docstring's list or in `CONCEPTUAL`, so a new
question is sorted on purpose.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jsonschema", reason="needs the book extra: pip install -e '.[book]'")

from piilab.checksums import INVALID_OFFSET, invalid_digit, luhn_valid
from piilab.course.quiz import answer_key, load_quiz
from piilab.evaluation import evaluate, oracle_predictions, score_document
from piilab.generator import make_record
from piilab.labels import LABEL_PRIORITY, LABELS
from piilab.parsing import parse_model_output, remove_think_blocks
from piilab.predictions import make_prediction, parse_flag
from piilab.tokenization import mask_text, reassemble_text

REPO = Path(__file__).resolve().parent.parent
QUIZZES = REPO / "book" / "quizzes" / "en"

#: Questions with no piilab fact to compute (see the module docstring).
CONCEPTUAL = {
    "00_welcome": {"twin-difference", "setup-command", "edit-source", "synthetic-data"},
    "01_architecture": {"model-output", "why-list-not-rewrite", "leaves-trusted-zone"},
    "02_synthetic_data": {"why-synthetic", "generalization"},
    "03_tokenization": set(),
    "04_evaluation": {"tune-on-validation"},
    "05_augmentation": {"no-exact-duplicates", "record-level-split", "deviation",
                        "holdout-gap"},
    "06_finetuning": {"completion-only", "negative-one-token", "eot-outside", "truncated",
                      "tiny-loss", "tracking"},
    "07_inference": {"left-padding", "greedy", "format-not-content", "data-version"},
    "08_token_classification": {"design-difference", "viterbi-legal"},
    "09_finance_dataset": {"baseline-meaning"},
    "10_corpus": {"mappings-apart", "actor-pool", "staging-manifest", "worker-dies",
                  "mapping-retention", "spark-same-pattern"},
}


def keyed(chapter: str, qid: str) -> str:
    """The text of the correct answer of question `qid` (English quiz), lowercased."""
    quiz = load_quiz(QUIZZES / f"{chapter}.json")
    _, position = answer_key(quiz)[qid]
    question = next(q for q in quiz if q["id"] == qid)
    return question["answers"][position]["answer"].lower()


def record(rid, source, *pairs):
    return {"id": rid, "source_text": source,
            "entities": [{"type": t, "value": v} for t, v in pairs]}


def pred(rid, output, source):
    return make_prediction(rid, output, source)


@pytest.fixture(scope="module")
def sample():
    """A few hundred generated records (the default seed), both languages, all splits."""
    return [make_record(42, split, lang, i)
            for split in ("train", "validation", "test") for lang in ("ko", "en")
            for i in range(60)]


def test_every_question_is_covered_or_conceptual():
    doc = __doc__ or ""
    for path in sorted(QUIZZES.glob("*.json")):
        for question in load_quiz(path):
            qid = question["id"]
            listed = f" {qid}," in doc or f" {qid}\n" in doc
            assert listed or qid in CONCEPTUAL.get(path.stem, set()), (
                f"{path.stem}: question {qid!r} is neither checked here nor marked conceptual")
            assert not (listed and qid in CONCEPTUAL.get(path.stem, set())), qid


# ---------------------------------------------------------------------------- 00 welcome


def test_label_count():
    assert len(LABELS) == 9
    assert keyed("00_welcome", "label-count").startswith("nine")
    quiz = load_quiz(QUIZZES / "00_welcome.json")
    right = next(a for q in quiz if q["id"] == "label-count" for a in q["answers"] if a["correct"])
    named = [w.strip(" .") for w in right["feedback"].split(":", 1)[1].replace(" and ", ", ")
             .split(",")]
    assert named == list(LABELS)


def test_label_order():
    # One value predicted with two labels: the masked text uses the earlier label of LABELS.
    for first, second in [("PHONE", "ACCOUNT"), ("PERSON", "REL"), ("ACCOUNT", "DOB")]:
        result = mask_text("값 1958-11-03 끝", [(first, "1958-11-03"), (second, "1958-11-03")])
        winner = min(first, second, key=LABEL_PRIORITY.__getitem__)
        assert result.masked_text == f"값 [{winner}_1] 끝"
        assert LABELS.index(winner) < LABELS.index({first, second}.difference({winner}).pop())
    assert "earlier label wins" in keyed("00_welcome", "label-order")


def test_rel_label(sample):
    korean = [r for r in sample if r["language"] == "ko"]
    rels = {e["value"] for r in korean for e in r["entities"] if e["type"] == "REL"}
    assert "어머니" in rels
    assert "labelled <code>rel</code>" in keyed("00_welcome", "rel-label")


# ---------------------------------------------------------------------------- 01 architecture


def test_unmatched_row():
    source = "고객 김가상 님"
    parsed = parse_model_output("PERSON\t이없음", source)
    assert parsed.candidates == () and len(parsed.unmatched) == 1
    assert mask_text(source, parsed.candidates).masked_text == source
    assert "unmatched" in keyed("01_architecture", "unmatched-row")


def test_mapping_sensitive():
    source = "김가상 님, 010-0123-4567"
    result = mask_text(source, [("PERSON", "김가상"), ("PHONE", "010-0123-4567")])
    assert set(result.mapping.values()) == {"김가상", "010-0123-4567"}
    assert reassemble_text(result.masked_text, result.mapping) == source
    assert "every masked value next to its token" in keyed("01_architecture", "mapping-sensitive")


def test_spelling_tokens():
    result = mask_text("김가상 님 ... 김 가 상", [("PERSON", "김가상")])
    assert result.masked_text == "[PERSON_1] 님 ... [PERSON_2]"
    assert "[person_1]" in keyed("01_architecture", "spelling-tokens")
    assert "[person_2]" in keyed("01_architecture", "spelling-tokens")


def test_leak_vs_f1():
    source = "Alpha Beta, alpha@example.com, 555-0142, 1958-11-03, my mother"
    gold = [("PERSON", "Alpha Beta"), ("EMAIL", "alpha@example.com"), ("PHONE", "555-0142"),
            ("DOB", "1958-11-03"), ("REL", "my mother")]
    rows = "\n".join(f"{t}\t{v}" for t, v in gold[:4])
    result = evaluate([record("d", source, *gold)], [pred("d", rows, source)])
    assert (result.entity.precision, result.entity.recall) == (1.0, 0.8)
    assert result.documents.leak_rate == 1.0
    assert "the document leaks" in keyed("01_architecture", "leak-vs-f1")


# ---------------------------------------------------------------------------- 02 synthetic data


def test_negative_document(sample):
    negatives = [r for r in sample if not r["entities"]]
    assert negatives, "the sample holds negative documents"
    assert all(r["target_tsv"] == "" for r in negatives)
    assert "empty string" in keyed("02_synthetic_data", "negative-document")


def test_spaced_name(sample):
    from piilab.matching import find_occurrences

    spaced = 0
    for r in sample:
        persons = [e["value"] for e in r["entities"] if e["type"] == "PERSON"]
        pairs = [(e["type"], e["value"]) for e in r["entities"]]
        assert len(pairs) == len(set(pairs)), "entities are unique pairs"
        for name in persons:
            if any(not o.literal for o in find_occurrences(r["source_text"], "PERSON", name)):
                spaced += 1
                assert " " not in name or r["language"] == "en"
    assert spaced, "the sample holds a spaced spelling of a listed name"
    assert keyed("02_synthetic_data", "spaced-name").startswith("one entry, <code>person 김가상")


def test_luhn_purpose(sample):
    cards = [e["value"] for r in sample for e in r["entities"] if e["type"] == "CARD"]
    assert cards and not any(luhn_valid(c) for c in cards)
    assert "no generated card number is a valid" in keyed("02_synthetic_data", "luhn-purpose")


def test_plus_five():
    assert INVALID_OFFSET == 5
    assert all(invalid_digit(d) != d for d in range(10))
    assert all((d + k) % 10 != d for d in range(10) for k in range(1, 10))
    assert "every digit to a different digit" in keyed("02_synthetic_data", "plus-five")


def _split_sha(seed_env: str | None) -> str:
    code = ("import hashlib; from piilab.generator import make_record; "
            "from piilab.dataset import split_bytes; "
            "rs = [make_record(42, 'validation', l, i) for l in ('ko', 'en') for i in range(20)]; "
            "print(hashlib.sha256(split_bytes(rs)).hexdigest())")
    env = {**os.environ, "PYTHONHASHSEED": seed_env} if seed_env else dict(os.environ)
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


def test_pythonhashseed():
    assert _split_sha("123") == _split_sha("7")
    assert "they stay the same" in keyed("02_synthetic_data", "pythonhashseed")


def test_forged_manifest(tmp_path, sample):
    from piilab.dataset import (
        build_manifest,
        manifest_bytes,
        save_dataset,
        split_bytes,
        verify_dataset,
    )

    records = {s: [r for r in sample if r["split"] == s][:6]
               for s in ("train", "validation", "test")}
    blobs = {s: split_bytes(rs) for s, rs in records.items()}
    save_dataset(tmp_path / "d", blobs, manifest_bytes(build_manifest(42, blobs, records)))
    assert verify_dataset(tmp_path / "d").ok
    edited = dict(records, test=[{**records["test"][0], "source_text": "edited"},
                                 *records["test"][1:]])
    test_file = tmp_path / "d" / "test.jsonl"
    test_file.write_bytes(split_bytes(edited["test"]))
    assert not verify_dataset(tmp_path / "d").ok  # an edit alone is noticed
    forged = {s: split_bytes(rs) for s, rs in edited.items()}
    (tmp_path / "d" / "manifest.json").write_bytes(manifest_bytes(build_manifest(42, forged,
                                                                                 edited)))
    assert verify_dataset(tmp_path / "d").ok  # an edit with a rewritten manifest is not
    assert "committed manifest" in keyed("02_synthetic_data", "forged-manifest")


# ---------------------------------------------------------------------------- 03 tokenization


def test_think_blocks():
    assert remove_think_blocks("<think>a<think>b</think>c</think>") == "c</think>"
    assert keyed("03_tokenization", "think-blocks") == "<code>c&lt;/think&gt;</code>"


def test_hallucination_only():
    parsed = parse_model_output("PERSON\t박가짜", "고객 김가상 님")
    assert (len(parsed.rows), len(parsed.candidates), len(parsed.unmatched),
            parsed.parse_success) == (1, 0, 1, False)
    assert keyed("03_tokenization", "hallucination-only").startswith(
        "one row, no candidates, one unmatched row, <code>parse_success</code> false")


def test_numeric_boundary():
    result = mask_text("주문 12345, 전화 010-1234-5678", [("ACCOUNT", "1234")])
    assert result.masked_text == "주문 12345, 전화 010-[ACCOUNT_1]-5678"
    assert "only in the phone number" in keyed("03_tokenization", "numeric-boundary")


def test_longest_match():
    result = mask_text("주소: 서울시 가상구 테스트로 12 입니다",
                       [("ADDRESS", "서울시 가상구 테스트로 12"), ("ACCOUNT", "12")])
    assert result.masked_text == "주소: [ADDRESS_1] 입니다"
    assert keyed("03_tokenization", "longest-match") == "<code>[address_1]</code>"


def test_worked_example():
    result = mask_text("김가상 / 김 가 상 / [PERSON_1]", [("PERSON", "김가상")])
    assert result.masked_text == "[PERSON_2] / [PERSON_3] / [PERSON_1]"
    assert keyed("03_tokenization", "worked-example") == \
        "<code>[person_2] / [person_3] / [person_1]</code>"


def test_same_spelling_two_types():
    result = mask_text("어제 어머니께 전화했다", [("REL", "어머니"), ("PERSON", "어머니")])
    assert result.masked_text == "어제 [PERSON_1]께 전화했다"
    assert keyed("03_tokenization", "same-spelling-two-types").startswith("a person token")


def test_unknown_token():
    assert reassemble_text("[PERSON_1] and [PERSON_9]", {"[PERSON_1]": "김가상"}) == \
        "김가상 and [PERSON_9]"
    assert keyed("03_tokenization", "unknown-token") == "leaves it as it is"


def test_token_identity():
    result = mask_text("영업팀 김가상, 개발팀 김가상", [("PERSON", "김가상")])
    assert result.masked_text == "영업팀 [PERSON_1], 개발팀 [PERSON_1]"
    assert keyed("03_tokenization", "token-identity").startswith("both mentions get the same")


# ---------------------------------------------------------------------------- 04 evaluation


def test_partial_mask():
    source = "Alpha Beta called."
    score = score_document(record("d", source, ("PERSON", "Alpha Beta")),
                           pred("d", "PERSON\tAlpha", source))
    assert score.mask.masked_text == "[PERSON_1] Beta called."
    assert score.leaked == {("PERSON", "Alpha Beta")}
    assert "it is a leak" in keyed("04_evaluation", "partial-mask")


def test_token_not_leak():
    source = "PERSON signed the consent form."
    score = score_document(record("d", source, ("PERSON", "PERSON")),
                           pred("d", "PERSON\tPERSON", source))
    assert score.mask.masked_text == "[PERSON_1] signed the consent form."
    assert not score.leaked
    assert keyed("04_evaluation", "token-not-leak").startswith("no:")


def test_separator():
    source = "전화 010-1234-5678 주세요"
    score = score_document(record("d", source, ("PHONE", "010-1234-5678")),
                           pred("d", "PHONE\t010\nPHONE\t1234-5678", source))
    assert score.mask.masked_text == "전화 [PHONE_1]-[PHONE_2] 주세요"
    assert score.leaked and score.leak_spans == ((3, 16),)  # the whole occurrence
    assert "hyphen between the two spans is not covered" in keyed("04_evaluation", "separator")


def test_variant_counts_fp():
    source = "전화 010-1234-5678 주세요"
    result = evaluate([record("d", source, ("PHONE", "010-1234-5678"))],
                      [pred("d", "PHONE\t01012345678", source)])
    assert (result.entity.tp, result.entity.fp, result.entity.fn) == (0, 1, 1)
    assert result.documents.leak_rate == 0.0
    assert keyed("04_evaluation", "variant-counts-fp") == \
        "one false positive and one false negative, and no leak"


def test_flag_false():
    source = "고객 김가상 님"
    output = "PERSON\t김가상"
    assert parse_flag(output, source)
    result = evaluate([record("d", source, ("PERSON", "김가상"))],
                      [{"id": "d", "output": output, "parse_success": False}])
    assert (result.entity.tp, result.entity.fp, result.entity.fn) == (0, 0, 1)
    assert result.documents.leak_rate == 1.0
    assert keyed("04_evaluation", "flag-false").startswith("no predicted pairs and no masking")


def test_hallucination_vs_fp():
    source = "고객 김가상 님이 전화했습니다."
    prediction = pred("h", "PERSON\t홍길동\nPERSON\t홍길동", source)
    assert prediction["parse_success"] is False
    result = evaluate([record("h", source, ("PERSON", "김가상"))], [prediction])
    assert (result.entity.fp, result.entity.fn) == (0, 1)
    assert result.entities.hallucination_rate == 1.0
    assert result.entities.over_redaction_rate == 0.0
    assert result.parse.success_rate == 0.0
    answer = keyed("04_evaluation", "hallucination-vs-fp")
    assert "parse success rate" in answer and "not as a false positive" in answer


def test_oracle(sample):
    result = evaluate(sample, oracle_predictions(sample))
    assert result.entity.f1 == 1.0 and result.documents.leak_rate == 0.0
    assert "check of the machinery" in keyed("04_evaluation", "oracle")


# ---------------------------------------------------------------------------- 05 augmentation


def test_skeleton():
    from piilab.splits import skeleton

    a = skeleton("김가상 님, 주문 2024-001 확인", [{"type": "PERSON", "value": "김가상"}])
    b = skeleton("이가명 님, 주문 7731-954 확인", [{"type": "PERSON", "value": "이가명"}])
    assert a == b == "{PERSON} 님, 주문 {DIGITS}-{DIGITS} 확인"
    answer = keyed("05_augmentation", "skeleton")
    assert "{digits}" in answer and "near-duplicates" in answer


def test_augment_after_split(sample):
    from piilab.augment import augment_records
    from piilab.splits import skeleton

    train = [r for r in sample if r["split"] == "train"][:40]
    copies = augment_records(train, copies=1, seed=0)
    assert copies
    by_id = {r["id"]: r for r in train}
    for copy in copies:
        original = by_id[copy["id"].rsplit("-aug", 1)[0]]
        assert copy["template_id"] == original["template_id"]
        assert skeleton(copy["source_text"], copy["entities"]) == \
            skeleton(original["source_text"], original["entities"])
    assert "keeps its family and its skeleton" in keyed("05_augmentation", "augment-after-split")


def test_value_pool():
    from piilab.augment import pool_key, value_split

    for value in ("김가상", "010-0123-4567", "Alpha Beta"):
        assert value_split(value) in {"train", "validation", "test"}
        # A SHA-256 of the value's pool key, no seed and no process state: the same everywhere.
        digest = hashlib.sha256(("piilab-pool:" + pool_key(value)).encode()).digest()
        point = int.from_bytes(digest[:8], "big") / 2**64
        assert value_split(value) == ("train" if point < 0.8 else
                                      "validation" if point < 0.9 else "test")
    assert value_split("010-0123-4567") == value_split("010 0123 4567")
    assert value_split("김가상") == value_split("김 가 상")
    assert "exactly one split's pool" in keyed("05_augmentation", "value-pool")


def test_clean_audit(sample):
    from piilab.splits import audit_splits

    splits = {s: [r for r in sample if r["split"] == s] for s in ("train", "test")}
    pair = audit_splits(splits)["pairs"]["train/test"]
    measured = {k for k in pair if not k.endswith(("_records", "_ids"))}
    assert measured == {"exact_duplicates", "shared_families", "shared_skeletons"}
    answer = keyed("05_augmentation", "clean-audit")
    assert all(word in answer for word in ("source", "template family", "skeleton"))
    assert "nothing more" in answer


# ---------------------------------------------------------------------------- 06 fine-tuning


def test_precision(monkeypatch):
    torch = pytest.importorskip("torch")
    from piilab.train import resolve_hardware

    # A Colab T4: CUDA, no native bf16.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda **kwargs: False)
    hardware = resolve_hardware()
    assert (hardware.precision, hardware.gradient_checkpointing) == ("fp16", True)
    assert keyed("06_finetuning", "precision").startswith("fp16 mixed precision")


# ---------------------------------------------------------------------------- 07 inference


def test_raw_output():
    output = "<think>one name</think>\nPERSON\t김가상\nPERSON\t이없음"
    prediction = make_prediction("d", output, "고객 김가상 님")
    assert prediction["output"] == output and prediction["parse_success"] is True
    assert keyed("07_inference", "raw-output").startswith("the raw output, unchanged")


def test_hallucinated_row():
    source = "김가상 님의 메모"
    prediction = pred("d", "PERSON\t이없음", source)
    parsed = parse_model_output(prediction["output"], source)
    assert parsed.candidates == () and len(parsed.unmatched) == 1
    result = evaluate([record("d", source, ("PERSON", "김가상"))], [prediction])
    assert result.documents.leak_rate == 1.0 and result.entities.hallucination_rate == 1.0
    assert keyed("07_inference", "hallucinated-row").startswith("nothing:")


def test_unclosed_think():
    output = "<think>The document names a customer and"
    assert remove_think_blocks(output) == output
    assert parse_flag(output, "고객 김가상 님") is False
    assert keyed("07_inference", "unclosed-think").startswith("false:")


# ---------------------------------------------------------------------------- 08 token classes


def test_class_count():
    from piilab.bioes import bioes_classes
    from piilab.taxonomy import load_taxonomy

    finance = load_taxonomy().labels("finance")
    assert len(finance) == 18 and len(bioes_classes(finance)) == 73
    assert keyed("08_token_classification", "class-count") == "73"


def test_single_token():
    from piilab.bioes import spans_to_bioes

    assert spans_to_bioes([(0, 3), (3, 4)], [(0, 3, "PERSON")]) == ["S-PERSON", "O"]
    assert keyed("08_token_classification", "single-token") == "<code>s-person</code>"


def test_misaligned_span():
    from piilab.bioes import AlignmentError, spans_to_bioes

    with pytest.raises(AlignmentError, match=r"\(0, 3\)"):
        spans_to_bioes([(0, 4)], [(0, 3, "PERSON")])  # "김가상님" is one token
    assert "alignmenterror" in keyed("08_token_classification", "misaligned-span")


def test_chat_tokenizer(sample):
    pytest.importorskip("tokenizers", reason="needs the train extra")
    from piilab.ner.predict import alignment_report
    from piilab.tiny import train_tokenizer

    train = [r for r in sample if r["split"] == "train"]
    test = [r for r in sample if r["split"] == "test"]
    copy_friendly = alignment_report(test, train_tokenizer(train))
    plain = alignment_report(test, train_tokenizer(train, copy_friendly=False))
    assert copy_friendly["spans"] > 0 and copy_friendly["misaligned_spans"] == 0
    assert plain["misaligned_spans"] > plain["spans"] / 2  # "most spans" (the feedback)
    assert keyed("08_token_classification", "chat-tokenizer").startswith(
        "it cuts the text at every space, digit, symbol and hangul syllable")


def test_repair_rule():
    from piilab.bioes import bioes_to_spans, decoding_repairs

    offsets = [(0, 2), (3, 6), (7, 10), (11, 13)]
    tags = ["O", "I-PHONE", "E-PHONE", "O"]
    assert [tuple(s) for s in bioes_to_spans(offsets, tags)] == [(3, 10, "PHONE")]
    assert decoding_repairs(offsets, tags)
    assert keyed("08_token_classification", "repair-rule").startswith("one phone span")


def test_span_vs_entity():
    from piilab.bioes import span_scores

    source = "010-0123-4567 또는 010-0123-4567"
    spans = [(0, 13, "PHONE"), (17, 30, "PHONE")]
    assert span_scores([spans], [spans])["tp"] == 2
    result = evaluate([record("d", source, ("PHONE", "010-0123-4567"))],
                      [pred("d", "PHONE\t010-0123-4567", source)])
    assert result.entity.tp == 1
    assert keyed("08_token_classification", "span-vs-entity").startswith(
        "two true positives for span f1, one for entity f1")


# ---------------------------------------------------------------------------- 09 finance dataset


def _finance_renders(hard_negative=None, decoy=None, per_family=30):
    """(family, rendered) for the finance template families of one kind, a few seeds each."""
    import random

    from piilab.finance import templates as TPL

    for family in TPL.families():
        kinds = {p.label for t in family.templates for p in t if p.kind == "decoy"}
        if hard_negative and family.hard_negative != hard_negative:
            continue
        if decoy and decoy not in kinds:
            continue
        for seed in range(per_family):
            yield family, TPL.render(family, random.Random(seed), "train")


def test_card_check_digit():
    import random

    from piilab.checksums import luhn_check_digit
    from piilab.finance import values as V

    rng = random.Random(0)
    for _ in range(50):
        digits = "".join(ch for ch in V.draw("CARD_NUMBER", rng, "en", "train")
                         if ch.isdigit())
        assert len(digits) >= 13 and not luhn_valid(digits)
        assert int(digits[-1]) == invalid_digit(luhn_check_digit(digits[:-1]))
    assert INVALID_OFFSET == 5
    assert keyed("09_finance_dataset", "card-check-digit").startswith(
        "the correct luhn digit plus 5")


def test_cvc_alone():
    from piilab.finance import templates as TPL

    for family in TPL.families():
        for template in family.templates:
            held = {p.label for p in template if p.kind == "slot"}
            assert "CVC" not in held or "CARD_NUMBER" in held, family.id
    assert "CVC" in {label for f in TPL.families() for label in f.labels}
    assert keyed("09_finance_dataset", "cvc-alone").startswith(
        "a cvc only ever appears in a row that also holds an invalid card number")


def test_policy_number():
    import re

    from piilab.taxonomy import load_taxonomy

    policy = re.compile(r"\b(?:POL|PL|LN)-[0-9]{4}-[0-9]{6}\b")
    seen = 0
    for _, rendered in _finance_renders(decoy="POLICY"):
        for match in policy.finditer(rendered.text):
            seen += 1
            assert not any(s < match.end() and match.start() < e for s, e, _ in rendered.spans)
    assert seen
    description = load_taxonomy().descriptions["finance"]["GENERIC_ID"]
    assert "policy" in description and "not GENERIC_ID" in description
    assert keyed("09_finance_dataset", "policy-number").startswith(
        "the policy number is <code>o</code>")


def test_card_account_shape():
    from piilab.finance import values as V

    seen = 0
    for _, rendered in _finance_renders(hard_negative="type2-card-account"):
        shapes = {label: {V.shape_of(rendered.text[s:e]) for s, e, lab in rendered.spans
                          if lab == label} for label in ("CARD_NUMBER", "ACCOUNT_NUMBER")}
        assert len(shapes["CARD_NUMBER"] | shapes["ACCOUNT_NUMBER"]) == 1
        seen += 1
    assert seen
    assert keyed("09_finance_dataset", "card-account-shape") == "only the words around them"


def test_same_pool():
    import random

    from piilab.finance import values as V

    assert V.pool_split("010-1234-5678") == V.pool_split("01012345678")
    rng = random.Random(0)
    for split in ("train", "validation"):
        assert V.pool_split(V.draw("PHONE", rng, "ko", split)) == split
    assert keyed("09_finance_dataset", "same-pool").startswith(
        "no: both spellings normalize to the same key")


def test_partial_character():
    pytest.importorskip("bpe_openai", reason="needs the finance extra")
    from piilab.finance.tokens import spelling_bytes, tokenize

    text = "계좌 110-234-567890 으로 이체"
    tokens, offsets = tokenize(text)
    syllable = text.index("으")
    pieces = [i for i, span in enumerate(offsets) if span == (syllable, syllable + 1)]
    assert len(pieces) == 2
    for i in pieces:
        try:
            spelling_bytes(tokens[i]).decode("utf-8")
            whole = True
        except UnicodeDecodeError:
            whole = False
        assert not whole  # each piece holds part of the character
    assert b"".join(spelling_bytes(t) for t in tokens) == text.encode("utf-8")
    assert keyed("09_finance_dataset", "partial-character").startswith(
        "each piece is written in byte-level spelling")


def test_redraw():
    pytest.importorskip("bpe_openai", reason="needs the finance extra")
    from piilab.bioes import check_alignment
    from piilab.finance import build_rows
    from piilab.finance.tokens import tokenize

    _, offsets = tokenize("예금주 김가상의 계좌")
    assert check_alignment(offsets, [(4, 7, "PERSON")])
    report = build_rows(200, seed=42).report
    assert report["redrawn_misaligned_rows"] == sum(
        report["redrawn_misaligned_by_cluster"].values()) > 0
    assert keyed("09_finance_dataset", "redraw").startswith("redraws the row")


def test_per_document_numbering(sample):
    texts = [r["source_text"] for r in sample[:40] if r["entities"]][:10]
    alone = [mask_text(t, [(e["type"], e["value"]) for e in r["entities"]]).masked_text
             for t, r in zip(texts, [r for r in sample[:40] if r["entities"]], strict=False)]
    batch = mask_text("\n".join(texts), [(e["type"], e["value"]) for r in sample[:40]
                                         if r["entities"] for e in r["entities"]][:200])
    assert "\n".join(alone) != batch.masked_text  # numbering across the batch differs
    assert all("_1]" in m for m in alone)  # each document starts its own numbering
    assert keyed("10_corpus", "per-document-numbering").startswith(
        "it stays the same, because mask_text numbers the tokens of each document on its own")
