"""Benchmark: the finance dataset build, o200k tokenization, writing and verify.

Prints wall and CPU seconds and rows/s for `build_rows` (generation, o200k,
BIOES, every build check), for o200k tokenization alone (`tokenize`: ids,
byte-level spelling and offsets of every built row's text), for `write_build`
(JSONL, Parquet, card) and for `verify_build`, and the process's peak
resident memory after the build (``ru_maxrss``). ``--tracemalloc`` adds the
build's peak Python allocation, measured in a second, traced build (tracing
slows a build about twofold, so the timed build is not traced).

    .venv/bin/python benchmarks/bench_finance.py                 # the default size
    .venv/bin/python benchmarks/bench_finance.py --rows 71788    # the card's scale
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
import tracemalloc

from _timing import best_cpu

from piilab.finance import DEFAULT_ROWS, build_rows, verify_build, write_build
from piilab.finance.tokens import tokenize


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=DEFAULT_ROWS,
                    help=f"rows to build (default {DEFAULT_ROWS:,}; 71788 is the card's scale)")
    ap.add_argument("--tracemalloc", action="store_true",
                    help="also measure the build's peak Python allocation (a second build)")
    args = ap.parse_args()

    tokenize("warm up")  # load the o200k vocabulary outside the timings
    build_wall, build_cpu, build = timed(lambda: build_rows(args.rows))
    build_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux

    texts = [row["source_text"] for rows in build.rows.values() for row in rows]
    tok_cpu, _ = best_cpu(lambda: [tokenize(text) for text in texts])
    with tempfile.TemporaryDirectory() as tmp:
        write_wall, write_cpu, _ = timed(lambda: write_build(tmp, build))
        verify_wall, verify_cpu, report = timed(lambda: verify_build(tmp))
    assert report.ok

    n = len(texts)
    print(f"{'step':<12} {'rows':>8} {'wall s':>8} {'cpu s':>8} {'rows/s':>9}")
    for name, wall, cpu in (("build", build_wall, build_cpu), ("tokenize", tok_cpu, tok_cpu),
                            ("write", write_wall, write_cpu), ("verify", verify_wall, verify_cpu)):
        print(f"{name:<12} {n:>8,} {wall:>8.2f} {cpu:>8.2f} {n / max(wall, 1e-9):>9,.0f}")
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS after the build {build_rss:,.0f} MiB, at the end {peak_rss:,.0f} MiB; "
          f"build + write {build_wall + write_wall:.1f} s wall")
    if args.tracemalloc:
        del build
        tracemalloc.start()
        build_rows(args.rows)
        _, traced_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"build peak Python allocation (tracemalloc) {traced_peak / 2**20:,.0f} MiB")


if __name__ == "__main__":
    main()
