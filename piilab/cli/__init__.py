"""The `piilab` command line (thin orchestration over the library).

Each command group lives in its own module under `piilab.cli` and exposes
`register(subparsers)`, which adds its subcommands; every subcommand stores its
handler in `func` and the handler returns the process exit code. Handlers print
counts, paths and metrics only: never source text, completions or mappings.

Errors: `main` is the one place where a command's error becomes a message. Every
error, whatever its class, ends the command with exit status 2 and one line on
stderr, ``piilab: error: ...``, never a traceback (a traceback can quote the
data: a ``KeyError`` holds the key, a ``ValueError`` the bad text). A
`piilab.errors.PiilabError` (every error the library raises on purpose) is
printed as it is: its message is written to be safe to show. Any other error is
described by its class and code location (`error_message`). A command whose
subparser sets ``extra`` (``train``) names the extra to install when one of its
imports is missing. A usage error (a missing or malformed argument) takes the
same one-line form, and so does every message: a control character in it (a
path holding a newline) is escaped, never printed.

Interruptions: Ctrl-C (SIGINT), SIGTERM and SIGHUP end a command the same way,
from the moment `main` starts (building the parser, importing a command's
modules included): ``piilab: error: interrupted ...`` and exit status 128 +
the signal number (130 for Ctrl-C, 143 for SIGTERM). The outputs are then all
as before or all new, never a mix (`piilab.files.write_all`). This module
imports little (standard library and `piilab.errors`), so the moments before
`main` runs, when Python itself would report a Ctrl-C, last milliseconds.

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
import signal
import sys
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path

from piilab import __version__
from piilab.errors import PiilabError

#: Modules that contribute subcommands, in the order `piilab --help` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "piilab.cli.data",
    "piilab.cli.masking",
    "piilab.cli.evaluation",
    "piilab.cli.splits",
    "piilab.cli.training",
    "piilab.cli.ner",
    "piilab.cli.finance",
    "piilab.cli.corpus",
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


class CLIError(PiilabError):
    """A user-facing error of a command: printed as `piilab: error: ...` with exit code 2."""


#: The signals that end a command like Ctrl-C (raised as `KeyboardInterrupt`).
INTERRUPTING = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                     if hasattr(signal, name))


class _ArgumentParser(argparse.ArgumentParser):
    """argparse with its errors as one line (``piilab: error: ...``) instead of usage + text."""

    def error(self, message: str):  # type: ignore[override]
        raise CLIError(f"{message} (see: {self.prog} --help)")


@contextlib.contextmanager
def doing(operation: str) -> Iterator[None]:
    """Turn an `OSError` in the block into ``CLIError("<operation> <path>: <reason>")``."""
    try:
        yield
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename is not None else ""
        raise CLIError(f"{operation}{where}: {exc.strerror or type(exc).__name__}") from None


def size_text(n: float) -> str:
    """``12.3 MB``: a byte count for a message (decimal units)."""
    for unit in ("bytes", "kB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")  # pragma: no cover


def check_size(option: str, value: int, limit: int, what: str, per_unit_bytes: float,
               folder: str | Path) -> None:
    """Refuse `value` of `option` above `limit`, or when its estimated size exceeds free space.

    The message gives the estimate (`per_unit_bytes` per unit of `value`) and
    the limit, so that a typo (``--scale 1000000000``) is refused at once instead
    of running until it is killed or the disk is full.
    """
    estimate = value * per_unit_bytes
    if value > limit:
        raise CLIError(f"{option} {value:,} would write {what} of about {size_text(estimate)}; "
                       f"the limit is {option} {limit:,} (about "
                       f"{size_text(limit * per_unit_bytes)})")
    existing = Path(folder)
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    import shutil

    try:
        free = shutil.disk_usage(existing if existing.exists() else ".").free
    except OSError:
        return
    if estimate > free:
        raise CLIError(f"{option} {value:,} needs about {size_text(estimate)} in {folder}; "
                       f"only {size_text(free)} is free there")


def build_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog="piilab",
        description="PII Lab: synthetic PII data, reversible masking and evaluation.",
    )
    parser.add_argument("--version", action="version", version=f"piilab {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    received: list[int] = []
    args = None
    with _interruptible(received):
        try:
            parser = build_parser()
            args = parser.parse_args(argv)
            if not getattr(args, "func", None):
                parser.print_help()
                return 2
            return int(args.func(args) or 0)
        except KeyboardInterrupt:
            signum = received[-1] if received else signal.SIGINT
            name = signal.Signals(signum).name
            what = "interrupted" if signum == signal.SIGINT else f"interrupted by {name}"
            _error_line(f"{what} (every output is as before or complete: none half-written)")
            return 128 + int(signum)
        except SystemExit:  # --help, --version
            raise
        except Exception as exc:  # one handler for every command: see the module docstring
            _error_line(error_message(exc, getattr(args, "extra", None)))
            return 2


@contextlib.contextmanager
def _interruptible(received: list[int]) -> Iterator[None]:
    """SIGTERM and SIGHUP raise `KeyboardInterrupt` like Ctrl-C while the block runs.

    The signal's number is appended to `received`. The previous handlers come
    back afterwards (`main` also runs inside other programs, such as the tests).
    Outside the main thread, where handlers cannot be set, nothing changes.
    """
    def interrupt(signum, frame):
        received.append(signum)
        raise KeyboardInterrupt

    previous = {}
    try:
        for signum in INTERRUPTING:
            if signum == signal.SIGINT and signal.getsignal(signum) is not \
                    signal.default_int_handler:
                continue  # Ctrl-C already raises KeyboardInterrupt, or is ignored on purpose
            previous[signum] = signal.signal(signum, interrupt)
    except ValueError:  # not the main thread
        pass
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def one_line(message: str) -> str:
    """`message` with every control or format character escaped (``\\n``, ``\\x1b``, ``\\u202e``).

    A path may hold a newline, an escape sequence or a lone surrogate (a name
    that is not UTF-8): printed raw, it would split the one line of an error,
    rewrite the terminal, or fail to print at all.
    """
    import unicodedata

    out = []
    for ch in message:
        if unicodedata.category(ch)[0] == "C":
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    return "".join(out)


def _error_line(message: str) -> None:
    print(f"piilab: error: {one_line(message)}", file=sys.stderr)


def error_message(exc: BaseException, extra: str | None = None) -> str:
    """The one-line message for an error that ends a command (never a value from the data).

    A `PiilabError` (ours, `CLIError` included) is written not to quote values,
    so its text is used. Any other error is
    described by its class and where it happened in the code; only an
    `OSError`'s path (given by the user) and reason, a JSON error's position and
    a known field name are shown, because other exception texts can quote input.
    """
    if isinstance(exc, PiilabError):
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
    if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
        return ("an input holds a number with more digits than Python reads "
                f"(limit {sys.get_int_max_str_digits()}){_code_location(exc)}")
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
