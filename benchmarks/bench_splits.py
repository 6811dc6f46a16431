"""Benchmark: leakage audit, family split and augmentation on the default corpus.

Prints CPU seconds and records/s for `audit_splits` (all 2,200 records),
`family_split` (union-find grouping plus assignment) and `augment_records`
(one copy per training record of the family split).

    .venv/bin/python benchmarks/bench_splits.py [--scale N]
"""

from __future__ import annotations

from _timing import best_cpu, scaled_corpus

from piilab.augment import augment_records
from piilab.splits import audit_splits, family_split


def main() -> None:
    corpus, records = scaled_corpus(__doc__.splitlines()[0])
    audit_s, _ = best_cpu(lambda: audit_splits(corpus))
    split_s, resplit = best_cpu(lambda: family_split(records))
    train = resplit["train"]
    augment_s, augmented = best_cpu(lambda: augment_records(train, 1), repeats=1)
    print(f"{'step':<16} {'records':>8} {'cpu s':>8} {'records/s':>10}")
    for name, n, secs in (("audit_splits", len(records), audit_s),
                          ("family_split", len(records), split_s),
                          ("augment x1", len(train), augment_s)):
        print(f"{name:<16} {n:>8} {secs:>8.3f} {n / secs:>10,.0f}")
    print(f"(augmentation wrote {len(augmented)} new training records)")


if __name__ == "__main__":
    main()
