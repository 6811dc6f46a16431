"""Benchmark: `evaluate` on all 2,200 records, oracle and rule-based baseline side by side.

Prints CPU seconds and records/s for each prediction set, with the baseline's time
as a ratio of the oracle's (same records, same machinery).

    .venv/bin/python benchmarks/bench_evaluate.py
"""

from __future__ import annotations

import time

from piilab.baseline import baseline_output
from piilab.evaluation import evaluate, oracle_predictions
from piilab.generator import generate_dataset
from piilab.predictions import make_prediction


def best_cpu(fn, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def main() -> None:
    records = [r for split in generate_dataset().values() for r in split]
    t0 = time.process_time()
    baseline = [make_prediction(r["id"], baseline_output(r["source_text"]), r["source_text"])
                for r in records]
    extract_s = time.process_time() - t0
    oracle = oracle_predictions(records)
    n = len(records)
    rows = [("oracle", best_cpu(lambda: evaluate(records, oracle))),
            ("baseline", best_cpu(lambda: evaluate(records, baseline)))]
    print(f"{'predictions':<12} {'records':>8} {'cpu s':>8} {'records/s':>10} {'vs oracle':>10}")
    for name, secs in rows:
        print(f"{name:<12} {n:>8} {secs:>8.3f} {n / secs:>10,.0f} {secs / rows[0][1]:>10.2f}")
    print(f"(baseline extraction itself: {extract_s:.3f} s CPU for {n} records)")


if __name__ == "__main__":
    main()
