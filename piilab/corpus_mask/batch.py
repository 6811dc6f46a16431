"""Detecting and masking one batch of documents (chapter 10): `MaskBatch`.

`MaskBatch` is the per-batch function both engines run (`piilab.corpus_mask.engines`);
`detector_identity` is what the manifest and the tracker record about the detector.
"""

from __future__ import annotations

from typing import Any

from piilab.corpus_mask.layout import CorpusError, to_json
from piilab.masking import mask_text

__all__ = ["MaskBatch", "detector_identity"]


def detector_identity(detector: str) -> dict[str, Any]:
    """What the manifest and the tracker record about a detector
    (`piilab.detectors.describe_detector`): kind, name and weights' SHA-256, never a
    path's parent folders. A name that is no detector is a `CorpusError`."""
    from piilab.detectors import DetectorError, describe_detector

    try:
        return describe_detector(detector)
    except DetectorError as exc:
        raise CorpusError(f"--detector: {exc}") from None


class MaskBatch:
    """Detect and mask one batch of documents: the callable class of ``map_batches``.

    Built once per worker (a Ray actor, or the local process): a model detector loads its
    model here, once. Called with a ``pyarrow.Table`` (or a mapping of columns) holding
    ``_row`` and ``source_text``, it returns a ``pyarrow.Table`` with ``_row``,
    ``masked_text``, ``mapping`` (the mapping as sorted JSON text) and ``spans`` (how many
    spans were masked). Arrow in and out: Ray moves the batches between processes without
    turning every string into a Python object on the way.
    """

    def __init__(self, detector: str = "rules", *, model_batch_size: int = 16,
                 max_new_tokens: int = 128, threads: int | None = None):
        from piilab.detectors import load_detector

        self.detector = detector
        self._detect = load_detector(detector, batch_size=model_batch_size,
                                     max_new_tokens=max_new_tokens, threads=threads).candidates

    def __call__(self, batch) -> Any:
        import pyarrow as pa

        texts = _column(batch, "source_text")
        masked, mappings, spans = [], [], []
        for text, candidates in zip(texts, self._detect(texts), strict=True):
            result = mask_text(text, candidates)
            masked.append(result.masked_text)
            mappings.append(to_json(result.mapping))
            spans.append(len(result.spans))
        return pa.table({"_row": pa.array(_column(batch, "_row"), pa.int64()),
                         "masked_text": pa.array(masked, pa.string()),
                         "mapping": pa.array(mappings, pa.string()),
                         "spans": pa.array(spans, pa.int64())})


def _column(batch, name: str) -> list:
    """A column of a ``pyarrow.Table`` or of a mapping of columns, as a Python list."""
    column = batch[name]
    return column.to_pylist() if hasattr(column, "to_pylist") else list(column)
