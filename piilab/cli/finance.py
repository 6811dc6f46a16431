"""`piilab finance build` and `piilab finance verify`: the finance dataset on disk (chapter 09).

    piilab finance build --out DIR [--rows N] [--seed 42] [--force]
    piilab finance verify DIR

A thin layer over `piilab.finance`. ``build`` makes every row, checks the
whole build (round trip, disjoint pools, en share, CVC rule) and only then
writes ``train``/``validation`` as JSONL and Parquet (mode 0600: they hold
synthetic PII values), ``build_report.json`` and the generated ``README.md``
card, all or none (`piilab.files`); files already in DIR are refused unless
``--force``; ``--rows`` is limited (`MAX_ROWS`) and checked against the free
disk space first. ``verify`` proves every rule again with separate code and
exits 0 when all checks pass, 2 when one fails; a file it cannot read fails a
check, it never stops the command. Both print counts and the file and line of
the first failing rows only: never a value, never a row's text.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from piilab.cli import CLIError, check_size, doing, one_line

#: The largest --rows: about 7 times the card's scale (roughly an hour on one core).
MAX_ROWS = 500_000
#: Bytes per row on disk (JSONL and Parquet together, measured: about 1,840).
ROW_BYTES = 2_000


def register(subparsers: argparse._SubParsersAction) -> None:
    from piilab.finance.build import DEFAULT_ROWS, DEFAULT_SEED

    group = subparsers.add_parser(
        "finance", help="build or verify the finance token-classification dataset (chapter 09)")
    commands = group.add_subparsers(dest="finance_command", metavar="COMMAND")
    group.set_defaults(func=lambda args: _help(group))

    p = commands.add_parser(
        "build", help="build the 18-label finance dataset (o200k tokens, 73 BIOES classes)",
        description="Build the rows, check them, then write train/validation .jsonl and "
                    ".parquet (mode 0600), build_report.json and README.md into --out, all "
                    "or none.")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument("--rows", type=int, default=DEFAULT_ROWS,
                   help=f"rows in train + validation (default {DEFAULT_ROWS:,}; "
                        f"71788 is the card's scale; at most {MAX_ROWS:,})")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed (default 42)")
    p.add_argument("--force", action="store_true", help="replace the files of an earlier build")
    p.set_defaults(func=cmd_build, extra="finance")

    p = commands.add_parser("verify", help="prove every rule of a finance build again")
    p.add_argument("dir", metavar="DIR")
    p.set_defaults(func=cmd_verify, extra="finance")


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def cmd_build(args: argparse.Namespace) -> int:
    from piilab.files import check_outputs, output_folder
    from piilab.finance.build import build_rows, output_names, write_build

    if args.rows < 20:
        raise CLIError("--rows must be at least 20")
    check_size("--rows", args.rows, MAX_ROWS, "rows", ROW_BYTES, args.out)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CLIError(f"{out}: not a directory")
    if out.is_dir():  # refuse before the rows are built, not after
        check_outputs([out / name for name in output_names()], force=args.force)
    build = build_rows(args.rows, seed=args.seed)  # a BuildError says which check failed
    with doing("writing"), output_folder(out, mode=0o700):  # no empty folder left on failure
        write_build(out, build, force=args.force)
    sizes = ", ".join(f"{split} {len(rows)}" for split, rows in build.rows.items())
    print(f"piilab finance build: {sum(len(r) for r in build.rows.values())} rows ({sizes}), "
          f"{build.report['redrawn_misaligned_rows']} rows redrawn for alignment, "
          f"files in {out}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from piilab.finance.verify import CHECKS, verify_build

    folder = Path(args.dir)
    if not folder.is_dir():
        raise CLIError(f"{folder}: not a directory")
    with doing("reading"):
        report = verify_build(folder)
    width = max(map(len, CHECKS))
    for check in CHECKS:
        status = "ok" if not report.failed[check] else "FAILED"
        where = report.examples.get(check) if report.failed[check] else None
        shown = f"  (first at {', '.join(one_line(w) for w in where)})" if where else ""
        print(f"{check:<{width}}  {report.checked[check]:>8} checked  "
              f"{report.failed[check]:>6} failed  {status}{shown}")
    print(f"piilab finance verify: {'all checks passed' if report.ok else 'some checks failed'}")
    return 0 if report.ok else 2
