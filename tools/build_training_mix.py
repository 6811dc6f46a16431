"""Build the training mix of the wide SmolLM2 run (configs/train_smollm2_wide_cpu.json).

    .venv/bin/piilab generate --out data
    .venv/bin/piilab generate --profile wide --records 20000 --out runs/wide
    .venv/bin/python tools/build_training_mix.py --out runs/wide-mix

The mix is `piilab.wide.write_training_mix`: the first 3,000 wide training records and the
first 840 course training records, shuffled with seed 0 (validation: wide; test: course).
"""

from __future__ import annotations

import argparse
import sys

from piilab.wide import write_training_mix


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="runs/wide-mix")
    p.add_argument("--wide", default="runs/wide")
    p.add_argument("--course", default="data")
    p.add_argument("--wide-records", type=int, default=3000)
    p.add_argument("--course-records", type=int, default=840)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--force", action="store_true")
    args = p.parse_args(argv)
    m = write_training_mix(args.out, args.wide, args.course, wide_records=args.wide_records,
                           course_records=args.course_records, seed=args.seed, force=args.force)
    print(f"wrote {args.out}: train {m['splits']['train']['records']} records "
          f"(wide {args.wide_records}, course {args.course_records})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
