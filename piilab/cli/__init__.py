"""The `piilab` command line (thin orchestration over the library).

Each command group lives in its own module under `piilab.cli` and exposes
`register(subparsers)`, which adds its subcommands; every subcommand stores its
handler in `func` and the handler returns the process exit code. Handlers print
counts, paths and metrics only: never source text, completions or mappings.

Errors: `main` is the one place where a command's error becomes a message. Every
error, whatever its class, ends the command with exit status 2 and one line on
stderr, ``piilab: error: ...``, never a traceback (a traceback can quote the
data: a ``KeyError`` holds the key, a ``ValueError`` the bad text). The line
names the operation, the path the user gave, a line number and a field name;
it never quotes a value read from an input file (`error_message`). A command
whose subparser sets ``extra`` (``train``) names the extra to install when one
of its imports is missing.

Writing: every command checks all its outputs before it writes any and then
writes them all or none (`piilab.files`): an output that is an input, or
another output, is refused; one that exists is refused unless ``--force``
is given.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import sys
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path

from piilab import __version__
from piilab.dataset import DatasetError
from piilab.files import OutputError

#: Modules that contribute subcommands, in the order `piilab --help` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "piilab.cli.data",
    "piilab.cli.masking",
    "piilab.cli.evaluation",
    "piilab.cli.splits",
    "piilab.cli.training",
    "piilab.cli.ner",
    "piilab.cli.finance",
)


#: Top-level modules of the ``train`` extra: a command that cannot import one needs it.
TRAIN_EXTRA_MODULES = frozenset({
    "torch", "transformers", "trl", "peft", "datasets", "accelerate", "gguf", "mlflow",
    "alembic", "pyarrow", "tokenizers", "safetensors", "huggingface_hub",
})

#: Field names of records, predictions and manifests that a message may name.
KNOWN_FIELDS = frozenset({
    "id", "split", "language", "source_text", "entities", "target_tsv", "template_id",
    "type", "value", "output", "parse_success", "splits", "file", "records", "seed",
    "sha256", "ko", "en",
})


class CLIError(Exception):
    """A user-facing error: printed as `piilab: error: ...` with exit code 2."""


@contextlib.contextmanager
def doing(operation: str) -> Iterator[None]:
    """Turn an `OSError` in the block into ``CLIError("<operation> <path>: <reason>")``."""
    try:
        yield
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename is not None else ""
        raise CLIError(f"{operation}{where}: {exc.strerror or type(exc).__name__}") from None


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
    except KeyboardInterrupt:
        print("piilab: error: interrupted (no output is left half-written)", file=sys.stderr)
        return 130
    except Exception as exc:  # one handler for every command: see the module docstring
        print(f"piilab: error: {error_message(exc, getattr(args, 'extra', None))}",
              file=sys.stderr)
        return 2


def error_message(exc: BaseException, extra: str | None = None) -> str:
    """The one-line message for an error that ends a command (never a value from the data).

    Our own errors (`CLIError`, `piilab.files.OutputError`, `DatasetError`) are
    written not to quote values, so their text is used. Any other error is
    described by its class and where it happened in the code; only an
    `OSError`'s path (given by the user) and reason, a JSON error's position and
    a known field name are shown, because other exception texts can quote input.
    """
    if isinstance(exc, CLIError | OutputError | DatasetError):
        return str(exc)
    if isinstance(exc, ImportError):
        module = (getattr(exc, "name", None) or "").partition(".")[0]
        if extra or module in TRAIN_EXTRA_MODULES:
            extra = extra or "train"
            missing = f" ({module} is not installed)" if module else ""
            return f"this command needs the {extra} extra: pip install 'piilab[{extra}]'{missing}"
        return f"a module this command needs cannot be imported ({module or 'unknown'})"
    if isinstance(exc, OSError):
        reason = exc.strerror or type(exc).__name__
        return f"{exc.filename}: {reason}" if exc.filename is not None else reason
    if isinstance(exc, UnicodeDecodeError):
        return "an input is not UTF-8 text"
    if isinstance(exc, UnicodeEncodeError):
        return "a value holds a lone surrogate and cannot be written as UTF-8"
    if isinstance(exc, json.JSONDecodeError):
        return f"an input is not valid JSON (line {exc.lineno}, column {exc.colno})"
    if isinstance(exc, RecursionError):
        return "an input is nested too deeply"
    where = _code_location(exc)
    if isinstance(exc, KeyError):
        key = exc.args[0] if exc.args else None
        field = f" '{key}'" if isinstance(key, str) and key in KNOWN_FIELDS else ""
        return f"an input record lacks the field{field} this command needs (KeyError{where})"
    if isinstance(exc, ValueError | TypeError | IndexError | AttributeError):
        return (f"an input has a field of the wrong type or form "
                f"({type(exc).__name__}{where})")
    return f"unexpected {type(exc).__name__}{where}: details are not shown, as they may quote data"


def _code_location(exc: BaseException) -> str:
    """`` at module.py:LINE``: where in the code the error was raised (no data)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    return f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
