"""Recorded runs: read `results/runs.jsonl` and lay it out as a table (chapter 07).

Every row of the results file is appended by ``tools/record_run.py``, which trains,
predicts, evaluates and records how the row was produced (`results/README.md`
lists the fields). This module is the reading side:

- `read_runs(path)` parses the file and checks every row: the fields a table needs
  are present, and the row's ``run_id`` still equals the hash of its content
  (`run_id_of`), so a row edited by hand no longer passes;
- `summarize_run(row)` reduces a row to the columns of the chapter's results table:
  model, data version (generator version + manifest hash), a one-line training
  configuration, commit, hardware and the headline metrics;
- `metrics_summary(result)` cuts an `piilab.evaluation.evaluate` result (or its stored
  `to_dict` form) down to the ``metrics`` block of a row, a projection of that one schema
  (`SUMMARY_PATHS`), so that a system evaluated live (the rule-based
  baseline) sits in the same table as the recorded runs (`table_row`);
- `read_document_counts(path)` reads ``results/holdout_counts.json`` (written by
  ``tools/document_counts.py``): per-document counts of recorded systems on the holdout,
  the input of `piilab.evaluation.bootstrap_counts` and `paired_bootstrap_counts`;
- `format_table(rows)` prints the table as plain text, one column per run;
- `latest_systems(rows)` picks the last row of each named system (``system``: the
  name a row was recorded under, e.g. ``SmolLM2-135M + LoRA``) for the comparison of
  chapter 07, whose rows may also carry a ``holdout`` block (the same metrics on the
  hand-written holdout) and an ``adapter`` block (the committed adapter's SHA-256).

Deliberately not here: writing rows (only the tool does that, so that no row is ever
typed), timing of any kind beyond what a row recorded, and plotting. Standard
library only.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from piilab.errors import PiilabError
from piilab.evaluation import DocumentCounts, EvaluationResult

__all__ = [
    "REQUIRED_FIELDS",
    "SUMMARY_PATHS",
    "TABLE_FIELDS",
    "RunsFileError",
    "config_summary",
    "data_version",
    "format_table",
    "latest_systems",
    "metrics_summary",
    "read_document_counts",
    "read_runs",
    "run_id_of",
    "summarize_run",
    "table_row",
]

#: Top-level fields a row must have to be shown in the results table.
REQUIRED_FIELDS: tuple[str, ...] = (
    "run_id", "model", "method", "data", "config", "commit", "dirty", "hardware", "train",
    "eval", "metrics", "produced_by",
)

#: The lines of the results table, in order: (key of `table_row`, label).
TABLE_FIELDS: tuple[tuple[str, str], ...] = (
    ("run", "run"),
    ("model", "model"),
    ("data", "data version"),
    ("adapter", "adapter"),
    ("steps", "steps x batch"),
    ("learning_rate", "learning rate"),
    ("loss", "training loss"),
    ("commit", "commit"),
    ("hardware", "hardware"),
    ("documents", "test documents"),
    ("precision", "precision"),
    ("recall", "recall"),
    ("f1", "F1"),
    ("documents_leak_rate", "leak rate (docs)"),
    ("hallucination_rate", "hallucination"),
    ("parse_success_rate", "parse success"),
)

_RATES = ("precision", "recall", "f1", "documents_leak_rate", "hallucination_rate",
          "parse_success_rate")


class RunsFileError(PiilabError):
    """A results file cannot be read as recorded runs (names the file, the line and the
    reason, never a value of the row)."""


def run_id_of(row: Mapping[str, Any]) -> str:
    """The ``run_id`` that ``tools/record_run.py`` gives `row`: the first 12 hex digits of
    the SHA-256 of the row without its ``run_id``, as sorted-key JSON.

    >>> run_id_of({"metrics": {"entity": {"f1": 0.5}}})
    '5fe511a3081f'
    """
    content = {key: value for key, value in row.items() if key != "run_id"}
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:12]


def read_runs(path: str | os.PathLike, *, verify: bool = True) -> list[dict[str, Any]]:
    """The rows of a results file, in file order (blank lines are skipped).

    Raises `RunsFileError` for a line that is not a JSON object, a row without one of
    `REQUIRED_FIELDS`, and, with `verify`, a row whose ``run_id`` does not match its
    content.
    """
    path = Path(path)
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path.name}, line {number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise RunsFileError(f"{where}: not valid JSON") from None
        if not isinstance(row, dict):
            raise RunsFileError(f"{where}: a row must be a JSON object")
        missing = [key for key in REQUIRED_FIELDS if key not in row]
        if missing:
            raise RunsFileError(f"{where}: missing field(s) {', '.join(missing)}")
        if verify and row["run_id"] != run_id_of(row):
            raise RunsFileError(f"{where}: run_id does not match the row's content "
                                "(rows are written by tools/record_run.py, never edited)")
        rows.append(row)
    return rows


def read_document_counts(path: str | os.PathLike,
                         records: str | os.PathLike | None = None
                         ) -> dict[str, tuple[DocumentCounts, ...]]:
    """The per-document counts of each system in a counts file (``tools/document_counts.py``),
    by system name, in the file's order; each tuple is in the order of the records.

    With `records` (the records file the counts were made on), a file whose
    ``records_sha256`` is not that file's is refused: its counts belong to other documents.
    Raises `RunsFileError` naming the file and the field.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        raise RunsFileError(f"{path.name}: not valid JSON") from None
    fields = [f.name for f in DocumentCounts.__dataclass_fields__.values()]
    if not isinstance(data, dict) or data.get("fields") != fields:
        raise RunsFileError(f"{path.name}: field 'fields' must be {fields}")
    if records is not None:
        digest = hashlib.sha256(Path(records).read_bytes()).hexdigest()
        if data.get("records_sha256") != digest:
            raise RunsFileError(f"{path.name}: records_sha256 is not the SHA-256 of "
                                f"{Path(records).name}")
    out = {}
    for name, block in data.get("systems", {}).items():
        rows = block.get("counts") if isinstance(block, dict) else None
        if not isinstance(rows, list) or len(rows) != data.get("documents") or not all(
                isinstance(row, list) and len(row) == len(fields)
                and all(isinstance(x, int) for x in row) for row in rows):
            raise RunsFileError(f"{path.name}: the counts of a system are not "
                                f"{data.get('documents')} rows of {len(fields)} integers")
        out[name] = tuple(DocumentCounts(*row) for row in rows)
    return out


def data_version(data: Mapping[str, Any]) -> str:
    """Generator version and the first 8 hex digits of the manifest hash:
    ``"1.0.0+5d339c27"``; without a manifest hash, the version alone."""
    version = str(data.get("generator_version", "?"))
    manifest = data.get("manifest_sha256")
    return f"{version}+{manifest[:8]}" if manifest else version


def config_summary(config: Mapping[str, Any]) -> dict[str, str]:
    """The training configuration in three short cells: the adapter (LoRA rank and alpha),
    steps x batch (x gradient accumulation), and the learning rate with its schedule.

    >>> config_summary({"lora_r": 16, "lora_alpha": 32, "max_steps": 200,
    ...                 "per_device_train_batch_size": 8, "gradient_accumulation_steps": 1,
    ...                 "learning_rate": 0.003, "lr_scheduler_type": "linear"})
    {'adapter': 'LoRA r16/a32', 'steps': '200 x 8', 'learning_rate': '0.003 linear'}
    """
    if "max_steps" not in config and "num_train_epochs" not in config:  # no training (zero-shot)
        return {"adapter": "-", "steps": "-", "learning_rate": "-"}
    steps = config.get("max_steps", -1)
    steps = steps if steps and steps > 0 else f"{config.get('num_train_epochs', '?')} epochs"
    batch = f"{steps} x {config.get('per_device_train_batch_size', '?')}"
    accumulation = config.get("gradient_accumulation_steps", 1)
    if accumulation and accumulation != 1:
        batch += f" x {accumulation}"
    adapter = (f"LoRA r{config.get('lora_r', '?')}/a{config.get('lora_alpha', '?')}"
               if config.get("method", "lora") == "lora" else "full (all weights)")
    return {
        "adapter": adapter,
        "steps": batch,
        "learning_rate": f"{config.get('learning_rate', '?')} "
                         f"{config.get('lr_scheduler_type', '')}".strip(),
    }


#: The ``metrics`` block of a recorded row: each key and its path in
#: `EvaluationResult.to_dict` (the one schema; the block is a projection of it).
SUMMARY_PATHS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("entity", ("entity",)),
    ("documents_leak_rate", ("documents", "leak_rate")),
    ("entities_leak_rate", ("entities", "leak_rate")),
    ("over_redaction_rate", ("entities", "over_redaction_rate")),
    ("hallucination_rate", ("entities", "hallucination_rate")),
    ("parse_success_rate", ("parse", "success_rate")),
)


def metrics_summary(result: EvaluationResult | Mapping[str, Any]) -> dict[str, Any]:
    """The ``metrics`` block of a recorded row: `SUMMARY_PATHS` read from
    ``result.to_dict()``. `result` is an `evaluate` result or its stored `to_dict` form
    (``piilab evaluate --json``), which is read back with `EvaluationResult.from_dict`.

    >>> from piilab.evaluation import evaluate
    >>> summary = metrics_summary(evaluate([], []))
    >>> list(summary) == [key for key, _ in SUMMARY_PATHS]
    True
    """
    if not isinstance(result, EvaluationResult):
        result = EvaluationResult.from_dict(result)
    tree = result.to_dict()
    summary = {}
    for key, path in SUMMARY_PATHS:
        value: Any = tree
        for part in path:
            value = value[part]
        summary[key] = value
    return summary


def table_row(*, run: str, model: str, data: str, commit: str, hardware: str, documents: int,
              metrics: Mapping[str, Any], adapter: str = "-", steps: str = "-",
              learning_rate: str = "-", loss: str = "-") -> dict[str, Any]:
    """One column of the results table, from its parts (`metrics` as `metrics_summary`
    returns it). Use it for a system evaluated live (the training cells default to
    ``-``); `summarize_run` uses it for recorded rows."""
    entity = metrics["entity"]
    return {
        "run": run, "model": model, "data": data, "adapter": adapter, "steps": steps,
        "learning_rate": learning_rate, "loss": loss, "commit": commit,
        "hardware": hardware, "documents": documents,
        "precision": entity["precision"], "recall": entity["recall"], "f1": entity["f1"],
        "documents_leak_rate": metrics["documents_leak_rate"],
        "hallucination_rate": metrics["hallucination_rate"],
        "parse_success_rate": metrics["parse_success_rate"],
    }


def summarize_run(row: Mapping[str, Any]) -> dict[str, Any]:
    """The results-table column of a recorded row (see `TABLE_FIELDS`).

    The commit is shortened to 7 digits and marked ``*`` when the tree had uncommitted
    changes (``"none"`` before the first commit); the hardware reads like ``cpu fp32 1t``
    (device, precision, torch threads); the training loss is the first and the last
    logged value.
    """
    commit = (row["commit"] or "none")[:7] + ("*" if row["dirty"] else "")
    hw = row["hardware"]
    hardware = f"{hw.get('device', '?')} {hw.get('precision', '?')}"
    if hw.get("torch_threads"):
        hardware += f" {hw['torch_threads']}t"
    train = row["train"]
    loss = f"{train['loss_first']:.2f} -> {train['loss_last']:.2f}" \
        if "loss_first" in train and "loss_last" in train else "-"
    return table_row(
        run=row["run_id"], model=str(row.get("system") or row["model"].get("id", "?")),
        data=data_version(row["data"]),
        commit=commit, hardware=hardware, documents=row["eval"]["documents"],
        metrics=row["metrics"], loss=loss, **config_summary(row["config"]),
    )


def latest_systems(rows: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """The last recorded row of each named system (rows with a ``system`` field), in the
    order the systems first appear in the file. Older rows without a name are history."""
    latest: dict[str, Mapping[str, Any]] = {}
    for row in rows:
        if row.get("system"):
            latest.pop(row["system"], None)
            latest[row["system"]] = row
    return latest


def _cell(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def format_table(columns: Sequence[Mapping[str, Any]] | Iterable[Mapping[str, Any]],
                 fields: Sequence[tuple[str, str]] = TABLE_FIELDS) -> str:
    """A plain-text table with one column per run (`table_row` dicts) and one line per
    field; rates with three decimals. Numbers and identifiers only."""
    columns = list(columns)
    label_width = max(len(label) for _, label in fields)
    cells = [[_cell(column[key]) for key, _ in fields] for column in columns]
    widths = [max(len(cell) for cell in column) for column in cells]
    lines = []
    for index, (_, label) in enumerate(fields):
        parts = [f"{label:<{label_width}}"]
        parts += [f"{column[index]:>{width}}" for column, width in zip(cells, widths, strict=True)]
        lines.append("  ".join(parts).rstrip())
        if index == 0:
            lines.append("-" * len(lines[0]))
    return "\n".join(lines)
