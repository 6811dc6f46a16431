"""`piilab generate`, `piilab verify`, `piilab stats`: the corpus on disk (chapter 02).

``generate --out DIR`` writes the three split files and the manifest together:
all four are written completely under temporary names, then renamed into
place, and if any step fails (a full or read-only disk, Ctrl-C) the files
already replaced get their old content back. ``--force`` is needed to replace
a directory that holds a different dataset; the directory then holds the old
dataset or the new one, never a mix of two seeds. Other entries of DIR (such
as ``data/holdout/``) are left alone.

File modes: the dataset files get the mode the umask gives any new file (0644
under the usual umask 022, 0600 under umask 077). The corpus is synthetic,
invalid by construction and meant to be shared with a class, and the umask is
how a user says how private new files should be; files that hold values from
real documents (mappings, restored text, predictions) are always 0600.
"""

from __future__ import annotations

import argparse
import os
import sys

from piilab.cli import CLIError, check_size, doing
from piilab.dataset import dataset_stats, load_dataset_dir, verify_dataset, write_dataset
from piilab.generator import DEFAULT_SEED
from piilab.labels import LABELS

#: The largest --scale (220,000 records) and wide --records: beyond them a typo would run
#: for hours and fill the disk, and every record is held in memory before it is written.
MAX_SCALE = 100
MAX_WIDE_RECORDS = 1_000_000
#: Bytes per record on disk, rounded up (the default corpus has 569, the wide one about 610).
RECORD_BYTES = 700


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "generate", help="write the synthetic corpus and its manifest",
        description="Write train/validation/test.jsonl and manifest.json into --out, all four "
                    "files or none. The files get the mode the umask gives a new file (0644 "
                    "under umask 022, 0600 under umask 077): the corpus is synthetic and meant "
                    "to be shared, so the umask decides; mappings, restored text and "
                    "predictions are always written 0600.")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="generator seed (default 42)")
    p.add_argument("--scale", type=int, default=1,
                   help=f"multiply every split size (benchmarks; at most {MAX_SCALE})")
    p.add_argument("--profile", choices=("default", "wide"), default="default",
                   help="default: the course corpus (2,200 records, generator 1.0.0); wide: the "
                        "compositional training corpus of 18 genres (piilab.wide)")
    p.add_argument("--records", type=int, default=None,
                   help="wide profile: records in all (80/10/10 split; default 20000, at most "
                        f"{MAX_WIDE_RECORDS:,})")
    p.add_argument("--force", action="store_true",
                   help="replace a different dataset in --out (all four files or none)")
    p.set_defaults(func=cmd_generate)

    p = subparsers.add_parser("verify", help="check a dataset directory against its manifest")
    p.add_argument("dir")
    p.set_defaults(func=cmd_verify)

    p = subparsers.add_parser("stats", help="records, languages and labels per split")
    p.add_argument("dir")
    p.set_defaults(func=cmd_stats)


class ProgressBar:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal."""

    def __init__(self, label: str, stream=None, width: int = 30) -> None:
        self.label, self.stream, self.width = label, stream or sys.stderr, width
        self.enabled = hasattr(self.stream, "isatty") and self.stream.isatty()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        filled = int(self.width * done / total)
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {done}/{total}")
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()


def cmd_generate(args: argparse.Namespace) -> int:
    if args.scale < 1:
        raise CLIError("--scale must be at least 1")
    # Each profile checks the size that its own option sets: --scale for the default
    # corpus, --records for the wide one.
    if args.profile == "wide":
        from piilab.wide import DEFAULT_RECORDS, write_wide

        if args.scale != 1:
            raise CLIError("--scale is for the default profile; the wide one takes --records")
        records = DEFAULT_RECORDS if args.records is None else args.records
        if records < 10:
            raise CLIError("--records must be at least 10")
        check_size("--records", records, MAX_WIDE_RECORDS, "records", RECORD_BYTES, args.out)
        with doing("cannot write"):
            manifest = write_wide(args.out, records, seed=args.seed, force=args.force,
                                  progress=ProgressBar("generating"))
    elif args.records is not None:
        raise CLIError("--records is for the wide profile (--profile wide)")
    else:
        check_size("--scale", args.scale, MAX_SCALE, "2,200 records per unit",
                   2200 * RECORD_BYTES, args.out)
        with doing("cannot write"):
            manifest = write_dataset(args.out, seed=args.seed, scale=args.scale,
                                     force=args.force, progress=ProgressBar("generating"))
    for split, meta in manifest["splits"].items():
        print(f"{split:<11} {meta['records']:>6} records (ko {meta['ko']}, en {meta['en']})  "
              f"sha256 {meta['sha256'][:12]}…")
    print(f"wrote {args.out}/manifest.json (generator {manifest['generator_version']}, "
          f"seed {manifest['seed']})")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    if not os.path.isdir(args.dir):  # a wrong argument, not a dataset that fails (exit 1)
        what = "not a directory" if os.path.exists(args.dir) else "no such directory"
        raise CLIError(f"{args.dir}: {what}")
    report = verify_dataset(args.dir)
    if report.ok:
        total = sum(report.counts.values())
        print(f"OK: {args.dir} matches its manifest ({total} records)")
        return 0
    for problem in report.problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    print(f"{args.dir}: {len(report.problems)} problem(s)", file=sys.stderr)
    return 1


def cmd_stats(args: argparse.Namespace) -> int:
    with doing("cannot read"):
        stats = dataset_stats(load_dataset_dir(args.dir, validate=True))
    splits = list(stats)
    rows = [("records", [stats[s]["records"] for s in splits]),
            ("  ko", [stats[s]["ko"] for s in splits]),
            ("  en", [stats[s]["en"] for s in splits]),
            ("negative docs", [stats[s]["negative"] for s in splits])]
    rows += [(f"  {label}", [stats[s]["labels"][label] for s in splits]) for label in LABELS]
    print(f"{'':<15}" + "".join(f"{s:>12}" for s in splits))
    for name, values in rows:
        if name == f"  {LABELS[0]}":
            print("entities")
        print(f"{name:<15}" + "".join(f"{v:>12}" for v in values))
    return 0
