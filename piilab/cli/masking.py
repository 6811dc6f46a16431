"""`piilab mask` and `piilab unmask`: reversible masking on files (chapter 03).

    piilab mask --candidates CANDS.tsv [--in FILE] [--out FILE] [--mapping MAP.json] [--force]
    piilab unmask --mapping MAP.json [--in FILE] [--out FILE] [--force]

A thin layer over `piilab.masking`. The candidates file has one
``TYPE<TAB>VALUE`` row per line (blank lines are skipped); the mapping file is
a JSON object ``{token: original spelling}``. Texts are read and written as
UTF-8 and default to stdin/stdout; line endings are kept as they are.

Safety rules: the mapping holds every masked value, so it is written with
mode 0600, as is restored text; masked text gets the umask's mode. Outputs are
checked before anything is read or written: an output that is an input (the
same path once resolved, or a hard link to it; standard input redirected from
a file counts as that file) or the other output is refused,
and so is one that exists, unless ``--force`` is given (masking a second
document with the first one's mapping path would otherwise make the first
document unrestorable). Both outputs are then written together or not at all
(`piilab.files`). Messages name files, line numbers and counts, never a text
or a value. Without ``--mapping`` the mapping is discarded and the masking
cannot be undone.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path

from piilab.cli import CLIError, doing
from piilab.files import PRIVATE_MODE, STDIN, STDOUT, check_outputs, write_all
from piilab.inputs import loads_json
from piilab.labels import LABELS, PairError, normalize_pair
from piilab.masking import TOKEN_PATTERN, Candidate, mask_text, reassemble_text


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("mask", help="replace candidate values with [TYPE_n] tokens")
    p.add_argument("--candidates", required=True, metavar="CANDS.tsv",
                   help="TYPE<TAB>VALUE rows, one per line")
    p.add_argument("--in", dest="input", metavar="FILE", help="text to mask (default: stdin)")
    p.add_argument("--out", metavar="FILE", help="masked text (default: stdout)")
    p.add_argument("--mapping", metavar="MAP.json",
                   help="write the token -> value mapping here (mode 0600); without it the "
                        "masking cannot be undone")
    p.add_argument("--force", action="store_true",
                   help="replace --out and --mapping if they exist (never an input file)")
    p.set_defaults(func=cmd_mask)

    p = subparsers.add_parser("unmask", help="restore masked text with its mapping")
    p.add_argument("--mapping", required=True, metavar="MAP.json", help="mapping from `mask`")
    p.add_argument("--in", dest="input", metavar="FILE", help="masked text (default: stdin)")
    p.add_argument("--out", metavar="FILE",
                   help="restored text (default: stdout; a file gets mode 0600)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.set_defaults(func=cmd_unmask)


def _no_empty_paths(args: argparse.Namespace, *flags: str) -> None:
    """An empty path (an unset shell variable, ``--out "$OUT"``) is refused: it must never
    fall back to standard output, where restored text would land in clear."""
    for flag in flags:
        if getattr(args, "input" if flag == "in" else flag, None) == "":
            raise CLIError(f"--{flag}: the path is empty (omit the option to use "
                           f"{'stdin' if flag == 'in' else 'stdout'})")


def cmd_mask(args: argparse.Namespace) -> int:
    _no_empty_paths(args, "out", "in", "mapping", "candidates")
    check_outputs([args.mapping, args.out or STDOUT],
                  inputs=[args.candidates, args.input or STDIN], force=args.force)
    candidates = parse_candidates(_read_text(args.candidates, "candidates file"))
    source = _read_text(args.input, "input")
    result = mask_text(source, candidates)  # candidates are validated: no error expected
    outputs: list[tuple[str, bytes, int | None]] = []
    if args.mapping:
        outputs.append((args.mapping, _mapping_json(result.mapping).encode(), PRIVATE_MODE))
    if args.out:
        outputs.append((args.out, result.masked_text.encode(), None))  # the umask's mode
    with doing("cannot write"):
        write_all(outputs)
    if not args.out:
        sys.stdout.write(result.masked_text)
    print(f"piilab mask: {len(result.spans)} spans replaced with {len(result.mapping)} tokens "
          f"from {len(candidates)} candidates", file=sys.stderr)
    return 0


def cmd_unmask(args: argparse.Namespace) -> int:
    _no_empty_paths(args, "out", "in", "mapping")
    check_outputs([args.out or STDOUT], inputs=[args.mapping, args.input or STDIN],
                  force=args.force)
    mapping = parse_mapping(_read_text(args.mapping, "mapping file"), args.mapping)
    masked = _read_text(args.input, "input")
    restored = reassemble_text(masked, mapping)
    if args.out:
        with doing("cannot write"):
            write_all([(args.out, restored.encode(), PRIVATE_MODE)])
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
        if not tab:
            raise CLIError(f"candidates line {number}: expected TYPE<TAB>VALUE (no TAB found)")
        try:
            pair = normalize_pair(label, value)
        except PairError:
            # The type is not echoed: with swapped columns it would be a value.
            raise CLIError(f"candidates line {number}: unknown type "
                           f"(expected one of {', '.join(LABELS)})") from None
        if pair is None:
            raise CLIError(f"candidates line {number}: empty value")
        candidates.append(Candidate(*pair))
    return candidates


def parse_mapping(text: str, name: str = "mapping file") -> dict[str, str]:
    """Read a ``{token: value}`` JSON object; raise a `PiilabError` on any other shape.

    Entries are named by position, never by key or value; a value holding a
    lone surrogate (``"\\ud800"``: valid JSON, but not text) is refused, as it
    could not be written back as UTF-8.
    """
    data = loads_json(text, name)  # an InputError names the file and position, never text
    if not isinstance(data, dict):
        raise CLIError(f"{name}: expected a JSON object mapping tokens to values")
    for index, (token, value) in enumerate(data.items(), start=1):
        if not TOKEN_PATTERN.fullmatch(token):
            raise CLIError(f"{name}: entry {index}: key is not a token like [PERSON_1]")
        if not isinstance(value, str):
            raise CLIError(f"{name}: entry {index}: value must be a string")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise CLIError(f"{name}: entry {index}: value holds a lone surrogate "
                           "(not valid Unicode text)") from None
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
