"""The tiny token-classification encoder: build, train, predict, evaluate (`piilab.ner`)."""

from __future__ import annotations

import hashlib
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch", reason="needs the train extra: pip install -e '.[train]'")
pytest.importorskip("transformers", reason="needs the train extra: pip install -e '.[train]'")

from piilab import ner  # noqa: E402
from piilab.bioes import bioes_classes, span_scores  # noqa: E402
from piilab.evaluation import evaluate  # noqa: E402
from piilab.labels import LABELS  # noqa: E402
from piilab.taxonomy import finance_labels  # noqa: E402

pytestmark = pytest.mark.train


@pytest.fixture(scope="module")
def encoder_dir(tmp_path_factory, corpus):
    return ner.build_tiny_encoder(tmp_path_factory.mktemp("encoder"), corpus["train"], seed=0)


@pytest.fixture()
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _load(path):
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    model = AutoModelForTokenClassification.from_pretrained(path)
    return model, AutoTokenizer.from_pretrained(path)


def _hash(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_auto_classes_load_a_token_classifier_with_4n_plus_1_classes(encoder_dir):
    model, tokenizer = _load(encoder_dir)
    assert model.config.model_type == "bert"
    assert model.config.num_hidden_layers == 2
    classes = bioes_classes(LABELS)
    assert model.config.num_labels == len(classes) == 4 * len(LABELS) + 1
    assert [model.config.id2label[i] for i in range(len(classes))] == list(classes)
    assert tokenizer.is_fast and model.config.vocab_size == len(tokenizer)
    encoding = tokenizer("김가상님", return_offsets_mapping=True)
    assert encoding["offset_mapping"][0] == encoding["offset_mapping"][-1] == (0, 0)


def test_same_records_and_seed_give_the_same_files(encoder_dir, tmp_path, corpus):
    before = torch.random.get_rng_state()
    again = ner.build_tiny_encoder(tmp_path / "again", corpus["train"], seed=0)
    assert torch.equal(before, torch.random.get_rng_state())  # the caller's RNG is untouched
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        assert _hash(again / name) == _hash(encoder_dir / name), name


def test_a_hub_style_load_resizes_the_head_for_another_label_set(encoder_dir):
    model, tokenizer = ner.load_token_classifier(encoder_dir, labels=finance_labels())
    assert model.config.num_labels == 4 * 18 + 1
    assert model.config.id2label[1] == "B-PERSON"
    assert tokenizer.is_fast


@pytest.mark.slow
def test_a_short_cpu_run_lowers_the_loss_and_feeds_the_leak_metric(encoder_dir, corpus,
                                                                   one_thread):
    model, tokenizer = _load(encoder_dir)
    run = ner.train_token_classifier(model, tokenizer, corpus["train"], max_steps=60,
                                     batch_size=16, seed=0)
    assert run.steps == len(run.losses) == 60
    assert run.examples == 1600 and run.too_long == () and run.misaligned == ()
    first, last = sum(run.losses[:5]) / 5, sum(run.losses[-5:]) / 5
    assert last < 0.5 * first, (first, last)
    assert run.wall_s < 60

    records = corpus["test"][:24]
    predicted = ner.predict_spans(model, tokenizer, [r["source_text"] for r in records])
    assert len(predicted) == len(records)
    for record, spans in zip(records, predicted, strict=True):
        assert all(0 <= s.start < s.end <= len(record["source_text"]) for s in spans)
        assert all(s.label in LABELS for s in spans)
    scores = span_scores([ner.gold_spans(r) for r in records], predicted, labels=LABELS)
    assert 0.0 <= scores["f1"] <= 1.0 and list(scores["per_label"]) == list(LABELS)
    result = evaluate(records, ner.model_predictions(records, predicted))
    assert 0.0 <= result.documents.leak_rate <= 1.0
    assert result.tokenization.round_trip_rate == 1.0
    assert result.tokenization.deterministic_rate == 1.0
    assert result.parse.success_rate == 1.0


def test_training_is_reproducible_from_the_seed(encoder_dir, corpus, one_thread):
    losses = []
    for _ in range(2):
        model, tokenizer = _load(encoder_dir)
        run = ner.train_token_classifier(model, tokenizer, corpus["train"][:64], max_steps=3,
                                         batch_size=8, seed=1)
        losses.append(run.losses)
    assert losses[0] == losses[1]


def test_records_too_long_are_reported_not_trained(encoder_dir, corpus):
    model, tokenizer = _load(encoder_dir)
    records = corpus["train"][:20]
    lengths = [len(tokenizer(r["source_text"])["input_ids"]) for r in records]
    limit = sorted(lengths)[len(lengths) // 2]
    run = ner.train_token_classifier(model, tokenizer, records, max_steps=1, max_length=limit)
    expected = [r["id"] for r, n in zip(records, lengths, strict=True) if n > limit]
    assert list(run.too_long) == expected and run.examples == len(records) - len(expected)
    with pytest.raises(ValueError, match="no trainable records"):
        ner.train_token_classifier(model, tokenizer, records, max_steps=1, max_length=2)


def test_prediction_refuses_a_text_longer_than_the_model_accepts(encoder_dir):
    model, tokenizer = _load(encoder_dir)
    with pytest.raises(ValueError, match="text 1 has"):
        ner.predict_spans(model, tokenizer, ["짧은 문서", "가 " * 600])


def test_predicted_spans_index_the_nfc_text(encoder_dir):
    import unicodedata

    model, tokenizer = _load(encoder_dir)
    decomposed = unicodedata.normalize("NFD", "김가상 고객님")
    (spans,) = ner.predict_spans(model, tokenizer, [decomposed])
    nfc = unicodedata.normalize("NFC", decomposed)
    assert all(s.end <= len(nfc) for s in spans)
