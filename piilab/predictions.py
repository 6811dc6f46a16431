"""The predictions file: one row per document, ``{"id", "output", "parse_success"}`` (ch. 04, 07).

Every producer of prediction rows (a model through `piilab.inference`, the rule baseline,
the oracle of `piilab.evaluation`, the token classifier of `piilab.ner`) builds them with
`make_prediction`, and every writer and reader goes through `write_predictions` and
`read_predictions`; the evaluator checks them with `validate_predictions`.

- ``output`` is the raw model output, think blocks and all: the evaluator parses it again.
- ``parse_success`` is `parse_flag`, the single definition of "this output parsed"
  (`piilab.parsing`): after complete ``<think>`` blocks are removed, the output is empty (the
  model says "no PII") or holds at least one allowed ``TYPE<TAB>VALUE`` row whose value
  matches the source. Computing it anywhere else would let two reports disagree.
- The file is JSONL, one row per line with sorted keys, written atomically and owner-only
  (0600): outputs repeat the values of the documents.

Standard library only. Errors name the file and line or the row's index and id, never an
output.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import TypedDict

from piilab.dataset import read_jsonl
from piilab.errors import PiilabError
from piilab.files import PRIVATE_MODE, write_atomic
from piilab.labels import LABELS
from piilab.parsing import parse_model_output


class Prediction(TypedDict):
    """One row of a predictions file."""

    id: str
    output: str
    parse_success: bool


class PredictionError(PiilabError):
    """A prediction row that cannot be used: `index` (0-based), the row's id if it has one,
    and the reason. The message never quotes an output."""

    def __init__(self, index: int, record_id: str | None, reason: str):
        where = f"predictions[{index}]" if record_id is None else \
            f"prediction for record {record_id}"
        super().__init__(f"{where}: {reason}")
        self.index, self.record_id, self.reason = index, record_id, reason


def parse_flag(output: str, source_text: str, allowed_types: tuple[str, ...] = LABELS) -> bool:
    """The parse-success flag to store with a prediction.

    >>> parse_flag("PERSON\\t김가상", "고객 김가상 님")
    True
    >>> parse_flag("", "PII가 없는 문서")
    True
    >>> parse_flag("Sorry, I cannot help with that.", "고객 김가상 님")
    False
    """
    return parse_model_output(output, source_text, allowed_types).parse_success


def make_prediction(record_id: str, output: str, source_text: str) -> Prediction:
    """One row of a predictions file: ``{"id", "output", "parse_success"}``."""
    return {"id": record_id, "output": output, "parse_success": parse_flag(output, source_text)}


def validate_predictions(predictions: Iterable[Mapping],
                         record_ids: Iterable[str] | None = None) -> dict[str, Mapping]:
    """The rows by id, after checking each: a string id, seen once (and, when `record_ids`
    is given, one of them), a string ``output``, a boolean ``parse_success``.

    Raises `PredictionError` for the first row that fails.
    """
    known = None if record_ids is None else set(record_ids)
    by_id: dict[str, Mapping] = {}
    for i, row in enumerate(predictions):
        if not isinstance(row, Mapping) or not isinstance(row.get("id"), str):
            raise PredictionError(i, None, "missing string field 'id'")
        pid = row["id"]
        if pid in by_id:
            raise PredictionError(i, pid, "duplicate prediction id")
        if known is not None and pid not in known:
            raise PredictionError(i, pid, "no such record")
        if not isinstance(row.get("output"), str):
            raise PredictionError(i, pid, "field 'output' must be a string")
        if not isinstance(row.get("parse_success"), bool):
            raise PredictionError(i, pid, "field 'parse_success' must be true or false")
        by_id[pid] = row
    return by_id


def prediction_bytes(predictions: Iterable[Mapping]) -> bytes:
    """The JSONL bytes of `predictions`: the three fields only, sorted keys, one per line."""
    return "".join(
        json.dumps({"id": p["id"], "output": p["output"],
                    "parse_success": bool(p["parse_success"])},
                   ensure_ascii=False, sort_keys=True) + "\n"
        for p in predictions).encode("utf-8")


def write_predictions(path: str | os.PathLike, predictions: Iterable[Mapping]) -> int:
    """Write prediction rows as JSONL, atomically and owner-only (0600: outputs hold PII);
    return the number of rows."""
    rows = list(predictions)
    write_atomic(path, prediction_bytes(rows), PRIVATE_MODE)
    return len(rows)


def read_predictions(path: str | os.PathLike) -> list[dict]:
    """Read a predictions file and check every row (`validate_predictions`).

    A malformed line raises `piilab.dataset.DatasetError` naming the file and the line; a
    row with a missing or mistyped field raises `PredictionError`.
    """
    rows = read_jsonl(path)
    validate_predictions(rows)
    return rows
