"""`piilab mask` and `piilab unmask`: reversible masking on files (chapter 03).

    piilab mask --candidates CANDS.tsv [--in FILE] [--out FILE] [--mapping MAP.json]
    piilab unmask --mapping MAP.json [--in FILE] [--out FILE]

A thin layer over `piilab.tokenization`. The candidates file has one
``TYPE<TAB>VALUE`` row per line (blank lines are skipped); the mapping file is
a JSON object ``{token: original spelling}``. Texts are read and written as
UTF-8 and default to stdin/stdout; line endings are kept as they are.

Safety rules: the mapping holds every masked value, so it is written with
mode 0600 (to a temporary file in the same directory, then renamed into
place). Everything is read and checked before anything is written, so a
failing command leaves no output file behind. Messages name files, line
numbers and counts, never a text or a value. Without ``--mapping`` the
mapping is discarded and the masking cannot be undone.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
from collections.abc import Mapping
from pathlib import Path

from piilab.cli import CLIError
from piilab.labels import LABEL_PRIORITY, LABELS
from piilab.tokenization import TOKEN_PATTERN, Candidate, mask_text, reassemble_text

#: File mode of the mapping file and of restored (unmasked) text: owner only.
PRIVATE_MODE = 0o600


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("mask", help="replace candidate values with [TYPE_n] tokens")
    p.add_argument("--candidates", required=True, metavar="CANDS.tsv",
                   help="TYPE<TAB>VALUE rows, one per line")
    p.add_argument("--in", dest="input", metavar="FILE", help="text to mask (default: stdin)")
    p.add_argument("--out", metavar="FILE", help="masked text (default: stdout)")
    p.add_argument("--mapping", metavar="MAP.json",
                   help="write the token -> value mapping here (mode 0600); without it the "
                        "masking cannot be undone")
    p.set_defaults(func=cmd_mask)

    p = subparsers.add_parser("unmask", help="restore masked text with its mapping")
    p.add_argument("--mapping", required=True, metavar="MAP.json", help="mapping from `mask`")
    p.add_argument("--in", dest="input", metavar="FILE", help="masked text (default: stdin)")
    p.add_argument("--out", metavar="FILE",
                   help="restored text (default: stdout; a file gets mode 0600)")
    p.set_defaults(func=cmd_unmask)


def cmd_mask(args: argparse.Namespace) -> int:
    if args.out and args.mapping and Path(args.out).absolute() == Path(args.mapping).absolute():
        raise CLIError("--out and --mapping must be different files")
    candidates = parse_candidates(_read_text(args.candidates, "candidates file"))
    source = _read_text(args.input, "input")
    result = mask_text(source, candidates)  # candidates are validated: no error expected
    outputs: list[tuple[str, str, int]] = []
    if args.mapping:
        outputs.append((args.mapping, _mapping_json(result.mapping), PRIVATE_MODE))
    if args.out:
        outputs.append((args.out, result.masked_text, _default_mode()))
    _write_all(outputs)
    if not args.out:
        sys.stdout.write(result.masked_text)
    print(f"piilab mask: {len(result.spans)} spans replaced with {len(result.mapping)} tokens "
          f"from {len(candidates)} candidates", file=sys.stderr)
    return 0


def cmd_unmask(args: argparse.Namespace) -> int:
    mapping = parse_mapping(_read_text(args.mapping, "mapping file"), args.mapping)
    masked = _read_text(args.input, "input")
    restored = reassemble_text(masked, mapping)
    if args.out:
        _write_all([(args.out, restored, PRIVATE_MODE)])
    else:
        sys.stdout.write(restored)
    found = sum(1 for m in TOKEN_PATTERN.finditer(masked) if m.group() in mapping)
    print(f"piilab unmask: {found} tokens restored", file=sys.stderr)
    return 0


def parse_candidates(text: str) -> list[Candidate]:
    """Read ``TYPE<TAB>VALUE`` rows; raise CLIError naming the line and the reason."""
    candidates = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        label, tab, value = line.partition("\t")
        label = label.strip().upper()
        if not tab:
            raise CLIError(f"candidates line {number}: expected TYPE<TAB>VALUE (no TAB found)")
        if label not in LABEL_PRIORITY:
            # The type is not echoed: with swapped columns it would be a value.
            raise CLIError(f"candidates line {number}: unknown type "
                           f"(expected one of {', '.join(LABELS)})")
        if not value.strip():
            raise CLIError(f"candidates line {number}: empty value")
        candidates.append(Candidate(label, value.strip()))
    return candidates


def parse_mapping(text: str, name: str = "mapping file") -> dict[str, str]:
    """Read a ``{token: value}`` JSON object; raise CLIError on any other shape."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        # The decoder's message quotes no input, only the position.
        raise CLIError(f"{name}: not valid JSON (line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(data, dict):
        raise CLIError(f"{name}: expected a JSON object mapping tokens to values")
    for index, (token, value) in enumerate(data.items(), start=1):
        if not TOKEN_PATTERN.fullmatch(token):
            raise CLIError(f"{name}: entry {index}: key is not a token like [PERSON_1]")
        if not isinstance(value, str):
            raise CLIError(f"{name}: entry {index} ({token}): value must be a string")
    return data


def _mapping_json(mapping: Mapping[str, str]) -> str:
    return json.dumps(dict(mapping), ensure_ascii=False, indent=2) + "\n"


def _read_text(path: str | None, what: str) -> str:
    """The UTF-8 text of `path` (stdin when None), line endings untouched."""
    try:
        if path is None:
            stream = getattr(sys.stdin, "buffer", None)
            return stream.read().decode("utf-8") if stream is not None else sys.stdin.read()
        return Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CLIError(f"{what} {path or '<stdin>'}: not UTF-8 (byte {exc.start})") from None
    except OSError as exc:
        raise CLIError(f"cannot read {what} {path}: {exc.strerror}") from None


def _default_mode() -> int:
    """The mode a new ordinary file gets under the current umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _write_all(outputs: list[tuple[str, str, int]]) -> None:
    """Write every ``(path, text, mode)`` or none: temporary files first, then renames."""
    staged: list[tuple[str, str]] = []
    path = ""
    try:
        for path, text, mode in outputs:
            staged.append((_stage(path, text, mode), path))
        for temporary, path in staged:
            os.replace(temporary, path)
    except OSError as exc:
        for temporary, _ in staged:
            if os.path.exists(temporary):
                os.unlink(temporary)
        raise CLIError(f"cannot write {path}: {exc.strerror}") from None


def _stage(path: str, text: str, mode: int) -> str:
    """Write `text` to a new temporary file next to `path`; return its name.

    The file is created owner-only (0600) from the start, so the value-bearing
    text is never readable by others, not even briefly; it gets `mode` just
    before it is renamed into place.
    """
    target = Path(path).absolute()
    name = str(target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp"))
    descriptor = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_MODE)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.chmod(name, mode)
    except BaseException:
        os.unlink(name)
        raise
    return name
