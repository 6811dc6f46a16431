"""One way to load and run any PII detector: rules, a generative adapter, a token classifier.

Every detector of the course takes texts and gives, per text, the rows the course's
generative model writes: ``TYPE<TAB>VALUE`` lines (`Detector.outputs`), or the same as
``(type, value)`` pairs (`Detector.candidates`). The evaluator and the masker take them as
they are, so every detector is scored and masks a corpus the same way.

`load_detector(name)` is the one place that turns a name into a detector; ``piilab
predict``, ``piilab mask-corpus``, ``tools/record_run.py`` and the benchmarks call it:

- ``"rules"``: the rule baseline (`piilab.baseline`);
- a folder written by `piilab.ner.pretrained.save_classifier` (it holds
  ``piilab_classifier.json``): a token classifier on a pretrained base, decoded with the
  constrained Viterbi pass at an operating point (chapter 08);
- any other folder or a `piilab.models` alias: a generative model or LoRA adapter
  (`piilab.inference`), whose output is parsed by `piilab.parsing`;
- a classifier folder followed by ``+rules`` (``results/classifiers/x+rules``): the
  classifier and the rules together (`merge_spans`).

**The merge rule** (rules and model together, as Presidio combines recognizers). The
rules' fixed-format recognizers (`FIXED_FORMAT`: e-mail, card, RRN, phone, account) find
their formats by shape and keep exact boundaries; the classifier reads context. Spans of
both are pooled: a fixed-format rule span is always kept, and a classifier span is kept
unless it overlaps a kept rule span. The rules' other recognizers (names, addresses,
dates, relations: cue words and dictionaries) are not used; the classifier does better
there.

Nothing here prints or logs text; errors name the detector by its kind and the problem.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from piilab.errors import PiilabError
from piilab.labels import nfc

__all__ = [
    "FIXED_FORMAT",
    "RULES",
    "Detector",
    "DetectorError",
    "describe_detector",
    "load_detector",
    "merge_spans",
    "row_value",
    "spans_to_rows",
]

#: The name of the rule detector.
RULES = "rules"

#: The labels whose rule recognizers the merge keeps (formats a pattern can pin down).
FIXED_FORMAT: tuple[str, ...] = ("EMAIL", "CARD", "RRN", "PHONE", "ACCOUNT")

MERGE_SUFFIX = "+rules"


class DetectorError(PiilabError):
    """A detector name that names nothing usable (the message names no value)."""


def row_value(label: str, value: str) -> str:
    """The value a row lists for a span's text: a PERSON name written letter by letter
    (``김 가 상``, one letter between each space, tab or line break) is listed unspaced, as
    the course's gold rows list it; the masker then finds every spacing variant of it
    (`piilab.matching.person_variants`). Any other value is listed as written.

    >>> row_value("PERSON", "김 가 상"), row_value("PERSON", "Kim Lee"), row_value("PHONE", "0 1")
    ('김가상', 'Kim Lee', '0 1')
    """
    from piilab.matching import PERSON_VARIANT_SIZES

    parts = value.split()
    if label == "PERSON" and len(parts) > 1 and all(len(p) == 1 for p in parts) \
            and len(parts) in PERSON_VARIANT_SIZES:
        return "".join(parts)
    return value


def spans_to_rows(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    """``TYPE<TAB>VALUE`` rows for character spans of `text` (one per distinct pair, in
    text order; `piilab.ner.spans_to_model_output`), with `row_value`'s spelling."""
    from piilab.ner.predict import spans_to_model_output

    rows = []
    for line in spans_to_model_output(text, spans).splitlines():
        label, value = line.split("\t", 1)
        rows.append(f"{label}\t{row_value(label, value)}")
    return "\n".join(dict.fromkeys(rows))


def merge_spans(model: Sequence[tuple[int, int, str]], rules: Sequence[tuple[int, int, str]],
                fixed: Sequence[str] = FIXED_FORMAT) -> list[tuple[int, int, str]]:
    """The merge rule of the module docstring: every rule span of a `fixed` label, and
    every model span that overlaps none of them, sorted.

    >>> merge_spans([(0, 3, "PERSON"), (10, 20, "ACCOUNT")], [(12, 20, "PHONE"), (0, 3, "PERSON")])
    [(0, 3, 'PERSON'), (12, 20, 'PHONE')]
    """
    kept = [tuple(s) for s in rules if s[2] in fixed]
    out = list(kept)
    for span in model:
        if not any(span[0] < r[1] and r[0] < span[1] for r in kept):
            out.append(tuple(span))
    return sorted(set(out))


def _weights_sha256(folder: Path) -> str | None:
    from piilab.models import file_sha256

    for name in ("adapter_model.safetensors", "model.safetensors"):
        if (folder / name).is_file():
            return file_sha256(folder / name)
    return None


def _split(name: str) -> tuple[str, bool]:
    """``(name without +rules, whether +rules was asked for)``."""
    if name.endswith(MERGE_SUFFIX):
        return name[: -len(MERGE_SUFFIX)], True
    return name, False


def describe_detector(name: str | os.PathLike) -> dict[str, Any]:
    """What a manifest or a results row records about the detector `name`, without
    loading it: ``kind`` (``rules``, ``token classifier``, ``token classifier + rules`` or
    ``model``), ``name`` (an alias or the folder's own name, never its parents) and the
    SHA-256 of its weights file. Raises `DetectorError` for a name that names nothing."""
    from piilab import __version__
    from piilab.models import is_alias, resolve_model
    from piilab.ner.pretrained import is_classifier_dir

    name = os.fspath(name)
    if not name:
        raise DetectorError("the detector name is empty: 'rules', a model alias, or a model, "
                            "adapter or classifier folder")
    if name == RULES:
        return {"kind": "rules", "name": "piilab.baseline", "version": __version__}
    base, with_rules = _split(name)
    if is_classifier_dir(base):
        path = Path(base)
        return {"kind": "token classifier" + (" + rules" if with_rules else ""),
                "name": path.name + (MERGE_SUFFIX if with_rules else ""),
                "weights_sha256": _weights_sha256(path)}
    if with_rules:
        raise DetectorError("'+rules' follows a token-classifier folder only")
    if is_alias(base):
        return {"kind": "model", "name": base,
                "weights_sha256": _weights_sha256(Path(resolve_model(base)))}
    path = Path(base)
    if not path.is_dir():
        raise DetectorError("neither 'rules', a model alias nor a model, adapter or "
                            "classifier folder")
    if not any((path / f).is_file() for f in ("adapter_config.json", "config.json")):
        raise DetectorError(f"{path}: no model in this folder (no adapter_config.json, "
                            "config.json or piilab_classifier.json)")
    return {"kind": "model", "name": path.name, "weights_sha256": _weights_sha256(path)}


@dataclass
class Detector:
    """A loaded detector. `outputs(texts)` gives ``TYPE<TAB>VALUE`` rows per text;
    `candidates(texts)` the same as ``(type, value)`` pairs; `identity` what a manifest
    or a results row records about it (kind, name, weights' SHA-256; no path)."""

    kind: str
    name: str
    identity: dict[str, Any]
    _outputs: Any = field(repr=False)
    _pairs: Any = field(default=None, repr=False)  # a faster candidates() where there is one
    seconds: float = 0.0  # time spent in outputs() and candidates() so far
    documents: int = 0

    def outputs(self, texts: Sequence[str]) -> list[str]:
        texts = list(texts)
        t0 = time.perf_counter()
        result = self._outputs(texts)
        self.seconds += time.perf_counter() - t0
        self.documents += len(texts)
        return result

    def candidates(self, texts: Sequence[str]) -> list[list[tuple[str, str]]]:
        from piilab.parsing import parse_model_output

        texts = list(texts)
        if self._pairs is not None:
            t0 = time.perf_counter()
            pairs = self._pairs(texts)
            self.seconds += time.perf_counter() - t0
            self.documents += len(texts)
            return pairs
        return [[(c.type, c.value) for c in parse_model_output(out, text).candidates]
                for out, text in zip(self.outputs(texts), texts, strict=True)]

    @property
    def documents_per_second(self) -> float:
        return self.documents / self.seconds if self.seconds else 0.0


def _rules() -> Detector:
    from piilab.baseline import baseline_output, extract

    return Detector("rules", "piilab.baseline", describe_detector(RULES),
                    lambda texts: [baseline_output(t) for t in texts],
                    lambda texts: [extract(t) for t in texts])


def _classifier(path: Path, *, with_rules: bool, batch_size: int, decoding: str,
                operating_point: str | None, threads: int | None,
                quantize: bool) -> Detector:
    import torch

    from piilab.baseline import rule_spans
    from piilab.ner.pretrained import classify, load_classifier

    if threads:
        torch.set_num_threads(threads)
    model, tokenizer, meta = load_classifier(path, quantize=quantize)
    points = meta.get("operating_points", {})
    operating_point = operating_point or meta.get("default_operating_point") or "neutral"

    def outputs(texts: list[str]) -> list[str]:
        texts = [nfc(t) for t in texts]
        found = classify(model, tokenizer, texts, decoding=decoding,
                         operating_point=operating_point, points=points,
                         batch_size=batch_size)
        rows = []
        for text, spans in zip(texts, found, strict=True):
            spans = [tuple(s) for s in spans]
            if with_rules:
                spans = merge_spans(spans, rule_spans(text))
            rows.append(spans_to_rows(text, spans))
        return rows

    identity = {**describe_detector(str(path) + (MERGE_SUFFIX if with_rules else "")),
                "base": meta.get("base"), "decoding": decoding,
                "operating_point": operating_point if decoding == "viterbi" else None,
                **({"quantized": "int8 dynamic"} if quantize else {})}
    return Detector(identity["kind"], identity["name"], identity, outputs)


def _generative(name: str, *, batch_size: int, max_new_tokens: int,
                threads: int | None) -> Detector:
    import torch

    from piilab.fast_generate import generate_fast
    from piilab.inference import load_for_inference

    if threads:
        torch.set_num_threads(threads)
    loaded = load_for_inference(name, merge=True)  # an adapter folded in: one product per layer

    # A corpus job opts in to the fast greedy loop, held equal to `generate` by the tests.
    def outputs(texts: list[str]) -> list[str]:
        return list(generate_fast(loaded.model, loaded.tokenizer, texts,
                                  batch_size=batch_size, max_new_tokens=max_new_tokens,
                                  system_prompt=loaded.prompt_setting).outputs)

    identity = describe_detector(name)
    return Detector("generative", identity["name"], identity, outputs)


def load_detector(name: str | os.PathLike, *, batch_size: int = 16, max_new_tokens: int = 128,
                  decoding: str = "viterbi", operating_point: str | None = None,
                  threads: int | None = None, quantize: bool = False) -> Detector:
    """The detector called `name` (see the module docstring). `batch_size` is the model
    batch; `max_new_tokens` bounds a generative model's answer; `decoding` and
    `operating_point` choose how a classifier reads its tags (default: the operating point
    its folder names as ``default_operating_point``, else ``neutral``); `threads` sets
    torch's intra-op threads for a model; `quantize` loads a classifier with int8 dynamic
    quantization (`piilab.ner.pretrained.load_classifier`)."""
    from piilab.ner.pretrained import is_classifier_dir

    name = os.fspath(name)
    describe_detector(name)  # a name that names nothing fails here, before any loading
    if name == RULES:
        return _rules()
    base, with_rules = _split(name)
    with warnings.catch_warnings():
        # PEFT calls a transformers method that transformers 5 deprecates: a notice for the
        # two libraries, nothing a user of the detector can act on.
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.* deprecated",
                                category=FutureWarning)
        if is_classifier_dir(base):
            return _classifier(Path(base), with_rules=with_rules, batch_size=batch_size,
                               decoding=decoding, operating_point=operating_point,
                               threads=threads, quantize=quantize)
        return _generative(base, batch_size=batch_size, max_new_tokens=max_new_tokens,
                           threads=threads)
