"""The `piilab` command line (thin orchestration over the library).

Each command group lives in its own module under `piilab.cli` and exposes
`register(subparsers)`, which adds its subcommands; every subcommand stores its
handler in `func` and the handler returns the process exit code. Handlers print
counts, paths and metrics only: never source text, completions or mappings.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from piilab import __version__

#: Modules that contribute subcommands, in the order `piilab --help` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "piilab.cli.data",
    "piilab.cli.masking",
    "piilab.cli.evaluation",
    "piilab.cli.splits",
    "piilab.cli.training",
    "piilab.cli.ner",
)


class CLIError(Exception):
    """A user-facing error: printed as `piilab: error: ...` with exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="piilab",
        description="PII Lab: synthetic PII data, reversible masking and evaluation.",
    )
    parser.add_argument("--version", action="version", version=f"piilab {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except CLIError as exc:
        print(f"piilab: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
