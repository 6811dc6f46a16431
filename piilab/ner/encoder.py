"""The tokenizer and the tiny encoder of chapter 08 (step 3), and loading a hub encoder.

Part of `piilab.ner`. `train_encoder_tokenizer` trains a byte-level BPE whose
pre-tokenizer isolates each Hangul syllable and keeps scripts apart, so a
Korean particle never shares a token with the name before it;
`build_tiny_encoder` writes that tokenizer and a randomly initialized 2-layer
BERT for token classification (4N + 1 classes), offline and deterministically;
`load_token_classifier` loads either it or a hub encoder with a head sized for
the BIOES classes. `_encode` is the one place that asks a fast tokenizer for
token ids and offsets.

What it does not do: train (`piilab.ner.training`) or predict
(`piilab.ner.predict`). Everything here needs the ``train`` extra, imported
inside the functions so that importing `piilab.ner` stays standard library.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from piilab.bioes import bioes_classes
from piilab.labels import LABELS, nfc
from piilab.ner.spans import NERDataError

__all__ = [
    "CLS",
    "HANGUL_SYLLABLE",
    "PAD",
    "SEP",
    "TINY_ENCODER_CONFIG",
    "build_tiny_encoder",
    "load_token_classifier",
    "train_encoder_tokenizer",
]


def _encode(tokenizer: Any, text: str, *, special_tokens: bool) -> tuple[list[int], list]:
    """Token ids and ``(start, end)`` offsets of `text` (a fast tokenizer is required)."""
    if not getattr(tokenizer, "is_fast", False):
        raise TypeError("token classification needs a fast tokenizer (offset mappings)")
    encoding = tokenizer(text, add_special_tokens=special_tokens, return_offsets_mapping=True,
                         truncation=False)
    offsets = [(int(start), int(end)) for start, end in encoding["offset_mapping"]]
    return list(encoding["input_ids"]), offsets


#: Special tokens of the tiny encoder's tokenizer.
PAD, CLS, SEP = "[PAD]", "[CLS]", "[SEP]"

#: Architecture of the tiny encoder: a 2-layer BERT (about 0.2 M parameters with
#: the default vocabulary). Trained from scratch, BERT's usual initialization
#: (std 0.02) and dropout leave it on the "everything is O" plateau for hundreds
#: of steps; a larger initial scale and no dropout let a CPU run of a few hundred
#: steps learn the corpus's templates.
TINY_ENCODER_CONFIG: Mapping[str, Any] = {
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 128,
    "max_position_embeddings": 512,
    "type_vocab_size": 1,
    "hidden_dropout_prob": 0.0,
    "attention_probs_dropout_prob": 0.0,
    "initializer_range": 0.1,
}

#: Pre-tokenization of the tiny encoder: each Hangul syllable (with the space
#: before it) is a piece of its own, so no token spans a syllable boundary.
HANGUL_SYLLABLE = r" ?\p{Hangul}"


def train_encoder_tokenizer(records: Iterable[Mapping[str, Any]], vocab_size: int = 2048):
    """Train the tiny encoder's byte-level BPE tokenizer on the records' documents.

    Differences from the chat tokenizer of `piilab.tiny`, all for alignment:
    Hangul syllables are isolated before the byte-level split (so ``상님`` or
    ``com으로`` never become one token), token offsets leave out the leading
    space (``" 김"`` covers ``김`` only), and ``[CLS] ... [SEP]`` are added with
    empty offsets. Returns a `transformers.PreTrainedTokenizerFast`.
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(HANGUL_SYLLABLE), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False),
    ])
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=[PAD, CLS, SEP],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator([nfc(r["source_text"]) for r in records], trainer=trainer)
    bpe.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=True),
        processors.TemplateProcessing(
            single=f"{CLS} $A {SEP}", pair=f"{CLS} $A {SEP} $B {SEP}",
            special_tokens=[(CLS, bpe.token_to_id(CLS)), (SEP, bpe.token_to_id(SEP))]),
    ])
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        pad_token=PAD,
        cls_token=CLS,
        sep_token=SEP,
        model_input_names=["input_ids", "attention_mask"],
        model_max_length=TINY_ENCODER_CONFIG["max_position_embeddings"],
        clean_up_tokenization_spaces=False,
    )


def _label_maps(labels: Sequence[str]) -> tuple[dict[int, str], dict[str, int]]:
    classes = bioes_classes(labels)
    return dict(enumerate(classes)), {tag: i for i, tag in enumerate(classes)}


def build_tiny_encoder(out_dir: str | os.PathLike, records: Iterable[Mapping[str, Any]],
                       labels: Sequence[str] = LABELS, seed: int = 0, *,
                       vocab_size: int = 2048) -> Path:
    """Write a tokenizer and a randomly initialized tiny token classifier; return the path.

    `records` are the training records (their documents train the tokenizer);
    the model has 4N + 1 output classes for `labels` (`piilab.bioes.bioes_classes`,
    in ``config.id2label``). The directory loads with ``AutoTokenizer`` and
    ``AutoModelForTokenClassification.from_pretrained``, offline. The same
    records and seed give the same files; the caller's torch RNG is left as it was.
    """
    import torch
    from transformers import BertConfig, BertForTokenClassification

    records = list(records)
    if not records:
        raise NERDataError("build_tiny_encoder needs at least one training record")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = train_encoder_tokenizer(records, vocab_size=vocab_size)
    id2label, label2id = _label_maps(labels)
    config = BertConfig(
        vocab_size=len(tokenizer),
        pad_token_id=tokenizer.pad_token_id,
        num_labels=len(id2label),
        id2label=id2label,
        label2id=label2id,
        **TINY_ENCODER_CONFIG,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = BertForTokenClassification(config)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    provenance = {
        "builder": "piilab.ner.build_tiny_encoder",
        "seed": seed,
        "training_records": len(records),
        "vocab_size": len(tokenizer),
        "labels": list(labels),
        "parameters": sum(p.numel() for p in model.parameters()),
    }
    (out / "piilab_tiny_encoder.json").write_text(
        json.dumps(provenance, indent=2, sort_keys=True) + "\n")
    return out


def load_token_classifier(model_id: str | os.PathLike, labels: Sequence[str] = LABELS, **kwargs):
    """Load ``(model, tokenizer)`` for token classification over `labels`.

    For a hub encoder (say ``klue/roberta-base`` on Colab) the classification
    head is new: it is sized for the 4N + 1 BIOES classes of `labels`. For a
    directory from `build_tiny_encoder` nothing changes. `kwargs` go to
    ``AutoModelForTokenClassification.from_pretrained``.
    """
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    id2label, label2id = _label_maps(labels)
    tokenizer = AutoTokenizer.from_pretrained(model_id)
    if not tokenizer.is_fast:
        raise TypeError("token classification needs a fast tokenizer (offset mappings)")
    model = AutoModelForTokenClassification.from_pretrained(
        model_id, num_labels=len(id2label), id2label=id2label, label2id=label2id,
        ignore_mismatched_sizes=True, **kwargs)
    return model, tokenizer

