"""Token classification end to end: gold spans, the NER export, a tiny encoder (chapter 08).

Chapter 08 ("Token classification") teaches this module, next to
`piilab.bioes` (the tag scheme) and `piilab.taxonomy` (the label sets). It
builds the second design of a PII detector, an encoder that labels every
token, so that it can be compared with the course's ``TYPE<TAB>VALUE`` model
on the same data and the same leak metric. In the order of the chapter:

1. **Gold spans** (`gold_spans`). The records list values, not offsets. A
   value's gold spans are *every* occurrence of it or of a permitted variant
   in the NFC source (`piilab.matching.find_occurrences`), the same
   occurrences the leak metric checks. Identical spans are merged; when one
   span is an occurrence of values of two labels, the label first in `LABELS`
   wins (the masker's rule for one spelling with several types). Occurrences
   that overlap without being identical cannot be expressed in BIOES (one
   label per token): `NERDataError`. The generator guarantees there are none.
2. **Export** (`export_row`, `export_rows`, `write_export`,
   `export_ner_dataset`; `piilab export-ner` on the command line): one row per
   record in the token-classification layout widely used for PII data sets:
   ``source_text``, ``masked_text`` (``[LABEL_n]`` placeholders numbered by
   `piilab.masking.mask_text` from the gold candidates, so numbering is
   the course's), ``privacy_mask`` (``{label, start, end, value}`` over
   ``source_text``), ``language``, ``split``, ``uid``, ``source_dataset``,
   ``tokens`` (the tokenizer's own token strings, which ``convert_tokens_to_ids``
   takes back; a byte-level BPE writes them as byte symbols, so read a token's
   text through its offsets), ``token_offsets`` (their
   ``(start, end)`` in ``source_text``: what makes a row checkable on its own)
   and ``token_classes`` (BIOES tags). Tokens exclude special tokens. Every row
   is verified as it is made (`verify_row`): tags decode to exactly the gold
   spans, the placeholders of ``masked_text`` stand for exactly those spans
   and the text reassembles to the source. A record whose spans do not align
   with the tokenizer's tokens is an error, or, when asked, skipped and
   listed by id and offsets, never exported with moved boundaries. Files are
   JSONL and Parquet that ``datasets.load_dataset("json" | "parquet")`` reads,
   written with mode 0600: they hold (synthetic) PII.
3. **A tiny encoder** (`train_encoder_tokenizer`, `build_tiny_encoder`): a
   2-layer BERT for token classification with a byte-level BPE tokenizer
   trained on the documents, offline, in a second. Its pre-tokenizer isolates
   each Hangul syllable and keeps scripts apart, so a Korean particle never
   shares a token with the name before it (``김가상님``, ``...@example.com으로``):
   the course's chat tokenizer (`piilab.tiny`) cannot express most of the
   corpus's spans (its tokens carry their leading space, ``" 김가상"``), and
   with trimmed offsets still about 1.5% end inside a token; with this one
   none does (`alignment_report` measures any tokenizer). Korean NER is
   commonly annotated per syllable for the same reason.
4. **Training** (`train_token_classifier`): a plain PyTorch loop (AdamW,
   cross-entropy over the 4N + 1 classes, special tokens ignored) for any
   ``AutoModelForTokenClassification``: the tiny encoder on a CPU, a hub model
   (`load_token_classifier`) on a GPU.
5. **Prediction and the leak metric** (`predict_spans`,
   `spans_to_model_output`, `model_predictions`): predicted tags are decoded to
   spans (`piilab.bioes.bioes_to_spans`); their values become ``TYPE<TAB>VALUE``
   rows, so `piilab.evaluation.evaluate` masks and scores the encoder exactly
   like the generative model, and `piilab.bioes.span_scores` adds span-level
   F1. The masker masks every occurrence of a predicted value, as it does for
   the generative model; a predicted span that cuts a digit run (``34-5678``
   out of ``1234-5678``) fails the numeric boundary rule there, so that
   occurrence stays unmasked (and a value found nowhere else is an unmatched
   row): the leak metric sees the cut.

What it deliberately does not do: it does not resolve overlapping gold
annotations of other data sets (it rejects them), it does not window long
documents (a text longer than the model accepts is an error, not silently
truncated: its tail would stay unmasked), and the tiny encoder learns the
templates of this corpus, not PII detection. Nothing here prints; error
messages name record ids, offsets and counts, never text. Steps 3-5 need the
``train`` extra (torch, transformers, tokenizers); writing Parquet needs
pyarrow (installed with ``datasets``).

**Layout: one module per job**, in the order above (each re-exported here, so
``from piilab import ner; ner.gold_spans`` and ``from piilab.ner import
export_row`` work as they always have):

- `piilab.ner.spans`: gold spans (step 1) and the two error types;
- `piilab.ner.export`: export, verification, writing and reading (step 2);
- `piilab.ner.encoder`: the encoder tokenizer, the tiny encoder, loading (step 3);
- `piilab.ner.training`: the training loop (step 4);
- `piilab.ner.predict`: prediction, model-style output, the alignment report (step 5);
- `piilab.ner.pretrained`: the same design on a pretrained decoder (Gemma 3 270M, SmolLM2),
  as the finance card's reference system builds it: bidirectional attention, a BIOES head on
  the body, labels projected by the first-non-space rule, LoRA, and constrained Viterbi
  decoding (`piilab.bioes.viterbi_decode`) at an operating point. Imported from its own
  module (``from piilab.ner.pretrained import classify``); `piilab.detectors` loads a saved
  one like any other detector.

The finance dataset of chapter 09 (`piilab.finance`) sits beside this package
and shares `piilab.bioes` and `piilab.taxonomy` with it.
"""

from __future__ import annotations

from piilab.ner.encoder import (
    CLS,
    HANGUL_SYLLABLE,
    PAD,
    SEP,
    TINY_ENCODER_CONFIG,
    build_tiny_encoder,
    load_token_classifier,
    train_encoder_tokenizer,
)
from piilab.ner.export import (
    EXPORT_COLUMNS,
    EXPORT_FORMATS,
    EXPORT_MANIFEST,
    PRIVATE_MODE,
    SOURCE_DATASET,
    ExportResult,
    export_ner_dataset,
    export_row,
    export_rows,
    read_export,
    row_mapping,
    verify_row,
    write_export,
)
from piilab.ner.predict import (
    alignment_report,
    model_predictions,
    predict_spans,
    spans_to_model_output,
)
from piilab.ner.spans import MisalignedRecordError, NERDataError, gold_spans
from piilab.ner.training import (
    IGNORE_INDEX,
    TrainingRun,
    token_classification_example,
    train_token_classifier,
)

__all__ = [
    "CLS",
    "EXPORT_COLUMNS",
    "EXPORT_FORMATS",
    "EXPORT_MANIFEST",
    "HANGUL_SYLLABLE",
    "IGNORE_INDEX",
    "PAD",
    "PRIVATE_MODE",
    "SEP",
    "SOURCE_DATASET",
    "TINY_ENCODER_CONFIG",
    "ExportResult",
    "MisalignedRecordError",
    "NERDataError",
    "TrainingRun",
    "alignment_report",
    "build_tiny_encoder",
    "export_ner_dataset",
    "export_row",
    "export_rows",
    "gold_spans",
    "load_token_classifier",
    "model_predictions",
    "predict_spans",
    "read_export",
    "row_mapping",
    "spans_to_model_output",
    "token_classification_example",
    "train_encoder_tokenizer",
    "train_token_classifier",
    "verify_row",
    "write_export",
]

#: ``doctest.testmod(piilab.ner)`` runs the examples of the re-exported functions too
#: (doctest only looks at objects defined in the module it is given).
__test__ = {name: obj for name, obj in globals().items() if name in __all__ and callable(obj)}
