"""Experiment tracking without PII (chapter 06, "Fine-tuning").

Training runs are recorded in MLflow, by default in a local SQLite store inside
the run directory (``<output_dir>/mlflow.db``): no server, nothing leaves the
machine. Another tracking URI (a server, a shared database) can be given.

What may be tracked is narrow on purpose, and this module enforces it:

- parameters: hyperparameters and counts, as numbers, booleans or short
  identifiers (a model id, a scheduler name) - `Tracker.log_params` refuses any
  other string;
- metrics: finite numbers only;
- tags: the piilab version and the data version (generator version, manifest
  hash) given by the caller.

There is deliberately no way to log an artifact, a dataset, an input example or
a free-text note: source texts, completions and masking mappings are PII, and a
tracking store is copied, shared and kept far longer than a training run. The
Hugging Face MLflow callback is not used for the same reason (it logs the whole
training configuration); `piilab.train` sets ``report_to="none"`` and logs
through a `Tracker`.

Needs ``mlflow-skinny`` (and, for the SQLite store, ``sqlalchemy`` and
``alembic``) from the ``train`` extra, imported only when a run is opened.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from piilab.errors import PiilabError

__all__ = ["NullTracker", "Tracker", "TrackingError", "default_tracking_uri", "open_tracker"]

#: A string parameter must look like an identifier, a number, a path or a model id:
#: letters, digits and ``._-/:+,=`` with no spaces, at most 200 characters.
_SAFE_STRING = re.compile(r"^[A-Za-z0-9._\-/:+,=@]{0,200}$")


class TrackingError(PiilabError):
    """A value that may not be tracked (the message names the key, never the value)."""


def default_tracking_uri(output_dir: str | os.PathLike) -> str:
    """The local store of a run: ``sqlite:///<absolute output_dir>/mlflow.db``."""
    return "sqlite:///" + str((Path(output_dir) / "mlflow.db").absolute())


def _param_value(key: str, value: Any) -> str:
    if value is None or isinstance(value, bool | int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise TrackingError(f"parameter {key!r}: not a finite number")
        return repr(value)
    if isinstance(value, list | tuple):
        return ",".join(_param_value(key, v) for v in value)
    if isinstance(value, str | os.PathLike):
        text = os.fspath(value)
        if not _SAFE_STRING.match(text):
            raise TrackingError(f"parameter {key!r}: only identifiers, numbers and paths "
                                "may be tracked")
        return text
    raise TrackingError(f"parameter {key!r}: type {type(value).__name__} may not be tracked")


class NullTracker:
    """The tracker used when tracking is switched off: accepts and drops everything."""

    uri: str | None = None
    run_id: str | None = None

    def log_params(self, params: Mapping[str, Any]) -> None:
        for key, value in params.items():
            _param_value(key, value)  # same checks, so a disabled run fails the same way

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        pass

    def close(self, status: str = "FINISHED") -> None:
        pass


class Tracker(NullTracker):
    """One MLflow run, written through an `MlflowClient` (no global MLflow state).

    >>> # tracker = Tracker("sqlite:////tmp/run/mlflow.db", "piilab", tags={...})
    >>> # tracker.log_params({"lora_r": 16}); tracker.log_metrics({"loss": 2.1}, step=1)
    >>> # tracker.close()
    """

    def __init__(self, uri: str, experiment: str = "piilab", run_name: str | None = None,
                 tags: Mapping[str, Any] | None = None):
        from mlflow.tracking import MlflowClient

        self.uri = uri
        self._client = MlflowClient(tracking_uri=uri)
        found = self._client.get_experiment_by_name(experiment)
        experiment_id = (found.experiment_id if found is not None
                         else self._client.create_experiment(experiment))
        safe_tags = {k: _param_value(k, v) for k, v in (tags or {}).items()}
        run = self._client.create_run(experiment_id, tags=safe_tags, run_name=run_name)
        self.run_id = run.info.run_id

    def log_params(self, params: Mapping[str, Any]) -> None:
        from mlflow.entities import Param

        checked = [Param(key, _param_value(key, value)) for key, value in params.items()]
        if checked:
            self._client.log_batch(self.run_id, params=checked)

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        batch = []
        for key, value in metrics.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TrackingError(f"metric {key!r}: only numbers may be tracked")
            if math.isfinite(value):
                batch.append(Metric(key, float(value), now, step or 0))
        if batch:
            self._client.log_batch(self.run_id, metrics=batch)

    def close(self, status: str = "FINISHED") -> None:
        self._client.set_terminated(self.run_id, status=status)


def open_tracker(uri: str | None, output_dir: str | os.PathLike, *, experiment: str = "piilab",
                 run_name: str | None = None, tags: Mapping[str, Any] | None = None,
                 enabled: bool = True) -> NullTracker:
    """A `Tracker` on `uri` (default: the local store in `output_dir`), or a
    `NullTracker` when `enabled` is False or `uri` is ``"none"``."""
    if not enabled or (uri or "").lower() == "none":
        return NullTracker()
    return Tracker(uri or default_tracking_uri(output_dir), experiment, run_name, tags)
