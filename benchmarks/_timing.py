"""Shared timing helper of the benchmark scripts (run them as `python benchmarks/NAME.py`)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def best_cpu(fn: Callable[[], T], repeats: int = 3) -> tuple[float, T]:
    """The smallest CPU time of `repeats` calls of `fn`, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeats):
        t0 = time.process_time()
        result = fn()
        best = min(best, time.process_time() - t0)
    return best, result


def scaled_corpus(description: str) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """Parse ``--scale N`` and generate the default corpus at that scale.

    Returns the corpus by split and all its records in one list.
    """
    from piilab.generator import generate_dataset

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--scale", type=int, default=1, help="corpus scale (default 1)")
    args = parser.parse_args()
    corpus = generate_dataset(scale=args.scale)
    return corpus, [r for split in corpus.values() for r in split]
