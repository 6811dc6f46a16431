"""Benchmark: `write_dataset` for the default corpus and for 10x / 100x the records.

A second table times the wide profile (`piilab.wide.write_wide`, 20,000 records by default)
next to the default corpus at a similar size, with its time per record as a ratio of the
default generator's; the goal for the wide corpus is 20,000 records in under 30 s of CPU.

Prints wall time, CPU time and records/s side by side, with each size's time per
record as a ratio of the default corpus's (1.00 everywhere means linear growth).

    .venv/bin/python benchmarks/bench_generate.py            # 1x, 10x, 100x
    .venv/bin/python benchmarks/bench_generate.py --quick    # 1x, 10x
"""

from __future__ import annotations

import argparse
import tempfile
import time

from piilab.dataset import write_dataset
from piilab.wide import write_wide


def run(scale: int, repeats: int) -> tuple[float, float, int]:
    best_wall = best_cpu = float("inf")
    n = 0
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            w0, c0 = time.perf_counter(), time.process_time()
            manifest = write_dataset(tmp, scale=scale)
            best_wall = min(best_wall, time.perf_counter() - w0)
            best_cpu = min(best_cpu, time.process_time() - c0)
            n = sum(m["records"] for m in manifest["splits"].values())
    return best_wall, best_cpu, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the 100x size")
    args = ap.parse_args()
    scales = (1, 10) if args.quick else (1, 10, 100)
    print(f"{'scale':>6} {'records':>9} {'wall s':>9} {'cpu s':>9} {'records/s':>11} "
          f"{'µs/record':>10} {'vs 1x':>7}")
    base = None
    for scale in scales:
        wall, cpu, n = run(scale, repeats=3 if scale == 1 else 1)
        per = cpu / n * 1e6
        base = base or per
        print(f"{scale:>5}x {n:>9,} {wall:>9.3f} {cpu:>9.3f} {n / wall:>11,.0f} "
              f"{per:>10.1f} {per / base:>7.2f}")


    print()
    print(f"{'generator':>10} {'records':>9} {'wall s':>9} {'cpu s':>9} {'records/s':>11} "
          f"{'µs/record':>10} {'vs default':>11}")
    wall, cpu, n = run(9, repeats=1)  # 19,800 records of the default corpus
    default_per = cpu / n * 1e6
    print(f"{'default':>10} {n:>9,} {wall:>9.3f} {cpu:>9.3f} {n / wall:>11,.0f} "
          f"{default_per:>10.1f} {1.0:>11.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        w0, c0 = time.perf_counter(), time.process_time()
        write_wide(tmp, 20_000)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    per = cpu / 20_000 * 1e6
    print(f"{'wide':>10} {20_000:>9,} {wall:>9.3f} {cpu:>9.3f} {20_000 / wall:>11,.0f} "
          f"{per:>10.1f} {per / default_per:>11.2f}   goal: under 30 s of CPU "
          f"({'met' if cpu < 30 else 'not met'})")


if __name__ == "__main__":
    main()
