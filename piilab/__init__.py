"""piilab: the reference implementation of the PII Lab course.

The public names below are the behaviour contract of the course (see the book,
chapter 01). They are imported lazily so that `import piilab` stays cheap and the
standard-library core never pulls the heavy training stack.

>>> from piilab import LABELS
>>> LABELS[0]
'EMAIL'
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # labels (chapter 02)
    "LABELS": "piilab.labels",
    "LABEL_DESCRIPTIONS": "piilab.labels",
    # synthetic data (chapter 02)
    "GENERATOR_VERSION": "piilab.generator",
    "DEFAULT_SEED": "piilab.generator",
    "generate_dataset": "piilab.generator",
    "write_dataset": "piilab.dataset",
    "read_jsonl": "piilab.dataset",
    "load_dataset_dir": "piilab.dataset",
    "verify_dataset": "piilab.dataset",
    # parsing, matching, masking (chapter 03)
    "ParsedOutput": "piilab.parsing",
    "parse_model_output": "piilab.parsing",
    "Candidate": "piilab.masking",
    "Span": "piilab.masking",
    "MaskResult": "piilab.masking",
    "mask_text": "piilab.masking",
    "reassemble_text": "piilab.masking",
    # evaluation (chapter 04)
    "EvaluationError": "piilab.evaluation",
    "evaluate": "piilab.evaluation",
    "bootstrap_intervals": "piilab.evaluation",
    "paired_bootstrap": "piilab.evaluation",
    "parse_flag": "piilab.predictions",
    "make_prediction": "piilab.predictions",
    "write_predictions": "piilab.predictions",
    # splits and augmentation (chapter 05)
    "audit_splits": "piilab.splits",
    "family_split": "piilab.splits",
    # fine-tuning (chapter 06)
    "build_messages": "piilab.sft",
    "check_loss_mask": "piilab.sft",
    # token classification (chapter 08)
    "spans_to_bioes": "piilab.bioes",
    "bioes_to_spans": "piilab.bioes",
    "span_scores": "piilab.bioes",
    "load_taxonomy": "piilab.taxonomy",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'piilab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value  # cache: the next access skips __getattr__
    return value


def __dir__() -> list[str]:
    return __all__
