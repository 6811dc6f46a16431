"""Prediction, model-style output for the leak metric, and the alignment report (step 5).

Part of `piilab.ner`. `predict_spans` decodes the argmax tag of every token
to spans (`piilab.bioes.bioes_to_spans`); `spans_to_model_output` and
`model_predictions` turn them into the ``TYPE<TAB>VALUE`` rows the generative
model writes, so `piilab.evaluation.evaluate` scores the encoder exactly like
it; `alignment_report` measures how well any tokenizer's tokens fit the gold
spans of a corpus (offsets only).

What it does not do: window long texts (a text longer than the model accepts
is an error: its tail would stay unmasked). `predict_spans` needs the
``train`` extra (torch), imported inside the function.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from piilab.bioes import EntitySpan, bioes_to_spans, check_alignment
from piilab.labels import nfc
from piilab.ner.encoder import _encode
from piilab.ner.spans import NERDataError, _record_id, gold_spans
from piilab.ner.training import _max_length

__all__ = [
    "alignment_report",
    "model_predictions",
    "predict_spans",
    "spans_to_model_output",
]


def predict_spans(model: Any, tokenizer: Any, texts: Sequence[str], *, batch_size: int = 32,
                  device: str | None = None) -> list[list[EntitySpan]]:
    """Predicted spans per text: argmax tag per token, decoded by `bioes_to_spans`.

    Offsets index the NFC-normalized text (as every span in the course does).
    Ill-formed tag sequences are decoded by the repair rule of
    `piilab.bioes`; tags on special tokens are ignored. A text longer than the
    model accepts raises ValueError naming its index: truncating it would
    leave its tail unmasked.
    """
    import torch

    texts = [nfc(text) for text in texts]
    limit = _max_length(model, tokenizer, None)
    id2label = {int(i): tag for i, tag in model.config.id2label.items()}
    device = device or next(model.parameters()).device
    was_training = model.training
    model.eval()
    out: list[list[EntitySpan]] = []
    try:
        for first in range(0, len(texts), batch_size):
            chunk = texts[first:first + batch_size]
            encoding = tokenizer(chunk, return_offsets_mapping=True, padding=True,
                                 truncation=False, return_tensors="pt")
            lengths = encoding["attention_mask"].sum(dim=1).tolist()
            for i, length in enumerate(lengths):
                if length > limit:
                    raise NERDataError(f"text {first + i} has {length} tokens; the model accepts "
                                     f"{limit}: split it before prediction")
            offsets = encoding.pop("offset_mapping").tolist()
            inputs = {key: value.to(device) for key, value in encoding.items()}
            with torch.no_grad():
                predicted = model(**inputs).logits.argmax(dim=-1).tolist()
            masks = encoding["attention_mask"].tolist()
            for row_offsets, row_ids, row_mask in zip(offsets, predicted, masks, strict=True):
                # Only the real tokens (padding may sit on either side).
                keep = [i for i, attended in enumerate(row_mask) if attended]
                pairs = [(int(row_offsets[i][0]), int(row_offsets[i][1])) for i in keep]
                tags = [id2label[row_ids[i]] for i in keep]
                out.append(bioes_to_spans(pairs, tags))
    finally:
        model.train(was_training)
    return out


_TSV_BREAKS = re.compile(r"[\t\r\n]+")


def spans_to_model_output(text: str, spans: Iterable[tuple[int, int, str]]) -> str:
    """The ``TYPE<TAB>VALUE`` rows the generative model would have written for these spans.

    One row per distinct (label, value), in source order; the value is the
    span's text. A tab or line break inside a value (a name written
    ``김\\n가\\n상``) cannot sit in a TSV row, so each run of them becomes one
    space: the masker still finds the original through the permitted PERSON
    and numeric variants; for other values such a row stays unmatched.

    >>> spans_to_model_output("김가상님 010-1234-5678", [(0, 3, "PERSON"), (5, 18, "PHONE")])
    'PERSON\\t김가상\\nPHONE\\t010-1234-5678'
    """
    text = nfc(text)
    rows: dict[str, None] = {}
    for start, end, label in sorted(spans):
        value = _TSV_BREAKS.sub(" ", text[start:end]).strip()
        if value:
            rows[f"{label}\t{value}"] = None
    return "\n".join(rows)


def model_predictions(records: Sequence[Mapping],
                      spans: Sequence[Iterable[tuple[int, int, str]]]) -> list[dict[str, Any]]:
    """Prediction lines (``{"id", "output", "parse_success"}``) for `piilab.evaluation.evaluate`.

    `spans` holds the predicted spans of each record, in record order (as
    `predict_spans` returns them). The parse flag is computed as for the
    generative model (`piilab.predictions.make_prediction`).
    """
    from piilab.predictions import make_prediction

    if len(records) != len(spans):
        raise NERDataError(f"{len(spans)} span lists for {len(records)} records")
    return [make_prediction(record["id"], spans_to_model_output(record["source_text"], found),
                            nfc(record["source_text"]))
            for record, found in zip(records, spans, strict=True)]


def alignment_report(records: Iterable[Mapping], tokenizer: Any) -> dict[str, Any]:
    """How well a tokenizer's tokens fit the gold spans of `records` (offsets only).

    Returns ``{"records", "spans", "misaligned_spans", "misaligned_records",
    "reasons": {reason: count}, "examples": [{"uid", "start", "end", "label",
    "reason"}, ...]}`` (at most 20 examples): what to look at before exporting
    or training with a hub tokenizer.
    """
    report: dict[str, Any] = {"records": 0, "spans": 0, "misaligned_spans": 0,
                              "misaligned_records": 0, "reasons": {}, "examples": []}
    for record in records:
        spans = gold_spans(record)
        _, offsets = _encode(tokenizer, nfc(record["source_text"]), special_tokens=False)
        problems = check_alignment(offsets, spans)
        report["records"] += 1
        report["spans"] += len(spans)
        report["misaligned_spans"] += len(problems)
        report["misaligned_records"] += bool(problems)
        for problem in problems:
            report["reasons"][problem.reason] = report["reasons"].get(problem.reason, 0) + 1
            if len(report["examples"]) < 20:
                report["examples"].append({"uid": _record_id(record), "start": problem.start,
                                           "end": problem.end, "label": problem.label,
                                           "reason": problem.reason})
    return report
