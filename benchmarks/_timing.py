"""Shared timing helper of the benchmark scripts (run them as `python benchmarks/NAME.py`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def best_cpu(fn: Callable[[], T], repeats: int = 3) -> tuple[float, T]:
    """The smallest CPU time of `repeats` calls of `fn`, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeats):
        t0 = time.process_time()
        result = fn()
        best = min(best, time.process_time() - t0)
    return best, result
