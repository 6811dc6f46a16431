"""`piilab export-ner`: the corpus as BIOES token-classification rows (chapter 08).

    piilab export-ner DIR --tokenizer PATH --out DIR [--split NAME ...]
                      [--format jsonl|parquet ...] [--skip-misaligned]

A thin layer over `piilab.ner.export_ner_dataset`. Reads the split files of a
dataset directory, tokenizes every document with the fast tokenizer at PATH
(a directory such as one written by `piilab.ner.build_tiny_encoder`, or a hub
id when the hub is reachable), and writes ``SPLIT.jsonl`` and
``SPLIT.parquet`` (mode 0600: they hold the PII values) plus
``export_manifest.json`` into the output directory. Every row is built and
verified before the first file is written.

A record whose gold spans do not align with the tokenizer's tokens stops the
export (the message names the record's file and line and the span's offsets)
unless ``--skip-misaligned`` is given; skipped records are listed in the
manifest. The records are validated first (`piilab.dataset.validate_record`,
and ids unique across the splits). Files already in the output directory are
refused unless ``--force``, a file of the dataset always; the export is
written all files or none. Messages name files, line numbers, offsets and
counts, never text or an id.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from piilab.cli import CLIError
from piilab.dataset import dataset_files, load_dataset_lines
from piilab.files import check_outputs
from piilab.generator import SPLITS


def register(subparsers: argparse._SubParsersAction) -> None:
    from piilab.ner import EXPORT_FORMATS

    p = subparsers.add_parser(
        "export-ner", help="export a dataset as BIOES token-classification rows (JSONL, Parquet)")
    p.add_argument("data_dir", metavar="DIR", help="dataset directory (train/validation/test)")
    p.add_argument("--tokenizer", required=True, metavar="PATH",
                   help="fast tokenizer: a local directory or a hub id")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument("--split", action="append", choices=SPLITS, dest="splits",
                   help="export only this split (repeatable; default: all)")
    p.add_argument("--format", action="append", choices=EXPORT_FORMATS, dest="formats",
                   help="file format (repeatable; default: jsonl and parquet)")
    p.add_argument("--skip-misaligned", action="store_true",
                   help="leave out records whose spans end inside a token (listed in the manifest)")
    p.add_argument("--force", action="store_true",
                   help="replace the files of an export already in --out")
    p.set_defaults(func=cmd_export_ner, extra="train")  # names the extra if an import fails


def _load_tokenizer(name: str):
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(name)
    except (OSError, ValueError) as exc:
        raise CLIError(f"{name}: cannot load a tokenizer ({type(exc).__name__})") from None
    if not getattr(tokenizer, "is_fast", False):
        raise CLIError(f"{name}: not a fast tokenizer (token offsets are needed)")
    return tokenizer


def cmd_export_ner(args: argparse.Namespace) -> int:
    from piilab.ner import EXPORT_FORMATS, EXPORT_MANIFEST, export_ner_dataset

    data_dir = Path(args.data_dir)
    if not data_dir.is_dir():
        raise CLIError(f"{data_dir}: not a directory")
    chosen = list(dict.fromkeys(args.splits or SPLITS))
    formats = args.formats or EXPORT_FORMATS
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CLIError(f"{out}: exists and is not a directory")
    # Before any work: never a dataset file, nor an earlier export without --force.
    if out.is_dir():
        check_outputs([out / f"{split}.{suffix}" for split in chosen for suffix in formats]
                      + [out / EXPORT_MANIFEST], inputs=dataset_files(data_dir),
                      force=args.force)
    lines = load_dataset_lines(data_dir, validate=True)
    tokenizer = _load_tokenizer(args.tokenizer)
    manifest = export_ner_dataset(
        {split: [record for _, record in lines[split]] for split in chosen}, tokenizer, out,
        formats=formats, skip_misaligned=args.skip_misaligned,
        tokenizer_name=os.fspath(args.tokenizer), force=args.force,
        inputs=dataset_files(data_dir),
        where={split: [f"{data_dir / f'{split}.jsonl'}:{n}" for n, _ in lines[split]]
               for split in chosen})
    rows = {split: info["rows"] for split, info in manifest["splits"].items()}
    skipped = sum(len(entries) for entries in manifest["skipped"].values())
    print(f"piilab export-ner: {sum(rows.values())} rows "
          f"({', '.join(f'{split} {n}' for split, n in rows.items())}), "
          f"{skipped} misaligned records skipped, {len(manifest['files'])} files in {args.out}")
    return 0
