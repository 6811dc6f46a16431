"""The two engines of a corpus job (chapter 10): one process, or Ray Data.

Both run `MaskBatch` over batches of ``(_row, id, source_text)`` and yield its result
tables; `Results` keeps one copy of each row and gives them back in row order.

- ``local``: one process, batch after batch.
- ``ray``: the corpus becomes a dataset of ``blocks`` blocks; ``map_batches`` runs
  `MaskBatch` in an actor pool of ``workers`` actors (a model is loaded once per actor),
  and the results stream back to the driver. Actors that die are restarted and their
  batches retried by Ray; `Results` checks that every row came back exactly once.

`start_ray` starts Ray on this machine (usage statistics off, no dashboard, nothing
reached over the network) unless an address names a cluster; an address that does not
answer is refused within seconds. Ray's own log lines stay off the console, and the
command line's handling of Ctrl-C and SIGTERM stays in place after Ray starts.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import re
import signal
import socket
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from piilab.corpus_mask.batch import MaskBatch
from piilab.corpus_mask.layout import CorpusError

__all__ = ["Results", "local_batches", "ray_batches", "start_ray"]

#: Seconds to wait for a Ray cluster named by an address to accept a connection.
CONNECT_TIMEOUT = 10.0
#: Ray's environment while it starts: no usage statistics, and the C++ core's log lines
#: (written straight to the driver's stderr, e.g. an error line about actor arguments
#: that every run prints) only when fatal.
_RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_BACKEND_LOG_LEVEL": "fatal"}
#: The signals whose handlers `start_ray` puts back after ``ray.init`` replaced them.
_KEPT_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                      if hasattr(signal, name))
_HOST_PORT = re.compile(r"(?:ray://)?\[?(?P<host>[^\[\]/]+?)\]?:(?P<port>[0-9]{1,5})/?")


def _light_table(table):
    """The columns the workers need: the row number, the id and the text."""
    import pyarrow as pa

    return pa.table({"_row": pa.array(range(table.num_rows), pa.int64()),
                     "id": table.column("id"), "source_text": table.column("source_text")})


def local_batches(table, detector: str, batch_size: int, options: Mapping[str, Any],
                  ) -> Iterator[Any]:
    """The local engine: `MaskBatch` over consecutive batches, in this process."""
    fn = MaskBatch(detector, **options)
    light = _light_table(table)
    for start in range(0, table.num_rows, batch_size):
        yield fn(light.slice(start, batch_size))


def check_address(address: str, option: str = "--address",
                  timeout: float = CONNECT_TIMEOUT) -> None:
    """Refuse, within `timeout` seconds, a ``host:port`` (or ``ray://host:port``) address
    where nothing accepts a connection; `option` names where the address came from.
    Other forms (``auto``, ``local``) are left to Ray."""
    match = _HOST_PORT.fullmatch(address.strip())
    if match is None:
        return
    host, port = match["host"], int(match["port"])
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        reason = exc.strerror or ("no answer" if isinstance(exc, TimeoutError)
                                  else type(exc).__name__)
        raise CorpusError(f"{option} {address}: no Ray cluster answers there within "
                          f"{timeout:g} s ({reason})") from None


@contextlib.contextmanager
def environment_defaults(values: Mapping[str, str]) -> Iterator[None]:
    """Set environment variables the user has not set, for the block only (the CLI opens
    its tracking store in one too)."""
    added = [name for name in values if name not in os.environ]
    for name in added:
        os.environ[name] = values[name]
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Send what is written to file descriptor 2 to the null device for the block (Ray's
    C++ core writes there directly, below Python's ``sys.stderr``)."""
    try:
        saved = os.dup(2)
    except OSError:  # no stderr to quiet
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def start_ray(address: str | None = None, *, num_cpus: int | None = None) -> None:
    """Connect to the cluster at `address` (or ``RAY_ADDRESS``), or start Ray on this
    machine: usage statistics off, no dashboard, workers' logs and Ray's own log lines
    kept out of the console (they could quote a failing record). The handlers of Ctrl-C,
    SIGTERM and SIGHUP that were set before are put back after ``ray.init`` (Ray replaces
    them), so the command line still ends on them with one line. Does nothing when Ray is
    already running in this process."""
    if address:
        check_address(address, "--address")
    elif os.environ.get("RAY_ADDRESS"):
        address = os.environ["RAY_ADDRESS"]
        check_address(address, "RAY_ADDRESS")
    with environment_defaults(_RAY_ENV):
        import ray

        if ray.is_initialized():
            return
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                  "configure_logging": True, "logging_level": "error"}
        if not address:
            kwargs["num_cpus"] = num_cpus
        handlers = {}
        with contextlib.suppress(ValueError):  # not the main thread: nothing to keep
            handlers = {signum: signal.getsignal(signum) for signum in _KEPT_SIGNALS}
        try:
            with _quiet_stderr():  # the core worker announces its log level there
                ray.init(address=address or None, **kwargs)
        finally:
            for signum, handler in handlers.items():
                if handler is not None:
                    with contextlib.suppress(ValueError, OSError):
                        signal.signal(signum, handler)
    import ray.data

    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False  # the job shows its own bar, with counts only
    context.print_on_execution_start = False
    logging.getLogger("ray").setLevel(logging.ERROR)
    logging.getLogger("ray.data").setLevel(logging.ERROR)


def ray_batches(table, detector: str, batch_size: int, options: Mapping[str, Any], *,
                workers: int, blocks: int, address: str | None) -> Iterator[Any]:
    """The Ray engine: `MaskBatch` in an actor pool of `workers` over `blocks` blocks."""
    start_ray(address)
    import ray

    light = _light_table(table)
    blocks = max(1, min(blocks, table.num_rows))
    edges = [round(k * table.num_rows / blocks) for k in range(blocks + 1)]
    ds = ray.data.from_arrow([light.slice(a, b - a) for a, b in itertools.pairwise(edges)
                              if b > a])
    ds = ds.map_batches(
        MaskBatch, fn_constructor_args=(detector,), fn_constructor_kwargs=dict(options),
        batch_size=batch_size, batch_format="pyarrow", concurrency=workers, num_cpus=1)
    # Ray Data's actor pools restart a dead actor and retry its batches (max_restarts and
    # max_task_retries default to -1 there); the caller keeps one result per row.
    yield from ds.iter_batches(batch_size=None, batch_format="pyarrow")


class Results:
    """The workers' result batches, one copy of each row (a retried batch can deliver rows
    twice), put back in row order at the end."""

    def __init__(self, total: int):
        import numpy as np

        self.total = total
        self.received = np.zeros(total, dtype=bool)
        self.done = 0
        self.spans = 0
        self.parts: list[Any] = []

    def add(self, batch) -> None:
        import numpy as np
        import pyarrow as pa

        rows = batch.column("_row").to_numpy()
        if len(rows) and (rows.min() < 0 or rows.max() >= self.total):
            raise CorpusError("a worker returned a row number outside the corpus")
        new = ~self.received[rows]
        if not new.all():  # a retried batch delivered twice: keep one copy
            batch = batch.filter(pa.array(new))
            rows = rows[new]
        self.received[rows] = True
        self.done += len(rows)
        self.spans += int(np.asarray(batch.column("spans")).sum())
        self.parts.append(batch)

    def in_order(self) -> Callable[[int, int], tuple[Any, Any]]:
        """A function of ``(start, stop)`` giving the ``masked_text`` and ``mapping`` of rows
        ``start:stop`` (Arrow arrays, in row order); every row must have come back. Each
        call gathers only its own rows, so no column ever holds the whole corpus in one
        array."""
        import pyarrow as pa

        if self.done != self.total:  # `done` counts distinct rows only
            raise CorpusError(f"{self.done} of {self.total} records came back from the "
                              "workers; nothing was published")
        results = pa.concat_tables(self.parts)
        self.parts = []
        order = pa.array(results.column("_row").to_numpy().argsort(kind="stable"))

        def rows(start: int, stop: int) -> tuple[Any, Any]:
            part = results.take(order.slice(start, stop - start)).combine_chunks()
            return part.column("masked_text"), part.column("mapping")

        return rows
