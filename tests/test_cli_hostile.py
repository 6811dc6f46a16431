"""The command line under hostile input: nothing lost, nothing echoed, no traceback.

Every case runs one `piilab` command in-process on files in a fresh folder and
checks the same four things:

1. the exit status (2 for an error, 1 for a failed `verify`, 130 for an
   interruption, 0 where the command should succeed);
2. stderr of an error is one line that starts with ``piilab: error:``, never
   a traceback;
3. no value planted in the inputs (`SECRET`, `SECRET_PHONE`) appears in stdout
   or stderr;
4. every file that existed before is byte-identical (and keeps its mode)
   afterwards, no temporary file is left behind, and a failed command creates
   nothing at all.

Full and read-only disks and interruptions are simulated by making an `os`
call raise (tests run as root, where ``chmod`` does not stop a write, and a
``tmpfs`` cannot be mounted). The regression tests of issue 15 follow the table.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import json
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from piilab import cli
from piilab.cli import data as data_cli
from piilab.dataset import build_manifest, manifest_bytes, split_bytes
from piilab.files import check_outputs, write_all, write_atomic
from piilab.generator import SPLITS

SECRET = "SECRET-VALUE-4821"  # a planted value: it must never be printed
SECRET_PHONE = "555-0199"
PLANTED = (SECRET, "4821", SECRET_PHONE)

DOC = f"Dear {SECRET}, please call {SECRET_PHONE} today.\n"
CANDS = f"PERSON\t{SECRET}\nPHONE\t{SECRET_PHONE}\n"
MASKED = "Dear [PERSON_1], please call [PHONE_1] today.\n"
MAPPING = {"[PERSON_1]": SECRET, "[PHONE_1]": SECRET_PHONE}


# --- building inputs ------------------------------------------------------------


def _record(split: str, i: int) -> dict:
    phone = f"555-01{i:02d}"
    return {"id": f"{split}-en-{i:03d}", "split": split, "language": "en",
            "source_text": f"Dear {SECRET}, call {phone} about case {i} of family {i % 6}.",
            "entities": [{"type": "PERSON", "value": SECRET}, {"type": "PHONE", "value": phone}],
            "target_tsv": f"PERSON\t{SECRET}\nPHONE\t{phone}", "template_id": f"family-{i % 6}"}


def make_dataset(root: Path, name: str = "data", seed: int = 42) -> Path:
    """A small valid dataset (16/4/4 records) whose records carry the planted values."""
    first = {"train": range(0, 16), "validation": range(16, 20), "test": range(20, 24)}
    records = {s: [_record(s, i) for i in first[s]] for s in SPLITS}
    blobs = {s: split_bytes(records[s]) for s in SPLITS}
    folder = root / name
    folder.mkdir(parents=True)
    for split in SPLITS:
        (folder / f"{split}.jsonl").write_bytes(blobs[split])
    (folder / "manifest.json").write_bytes(manifest_bytes(build_manifest(seed, blobs, records)))
    return folder


def write(root: Path, name: str, content: str | bytes) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def doc_files(root: Path) -> None:
    write(root, "doc.txt", DOC)
    write(root, "cands.tsv", CANDS)
    write(root, "masked.txt", MASKED)
    write(root, "map.json", json.dumps(MAPPING))


def predictions(root: Path, name: str = "preds.jsonl", rows: list[dict] | None = None) -> Path:
    rows = rows if rows is not None else [
        {"id": r["id"], "output": r["target_tsv"], "parse_success": True}
        for r in (_record("test", 20 + i) for i in range(4))]
    return write(root, name, "".join(json.dumps(r) + "\n" for r in rows))


def nested(depth: int = 100_000) -> str:
    return "[" * depth + "]" * depth


def replace_line(path: Path, index: int, line: bytes) -> None:
    lines = path.read_bytes().split(b"\n")
    lines[index] = line
    path.write_bytes(b"\n".join(lines))


def with_record(root: Path, split: str, index: int, **changes: object) -> None:
    path = root / "data" / f"{split}.jsonl"
    record = json.loads(path.read_bytes().split(b"\n")[index])
    for key, value in changes.items():
        if value is None:
            del record[key]
        else:
            record[key] = value
    replace_line(path, index, json.dumps(record).encode())  # ASCII: a lone surrogate escaped


# --- injected faults --------------------------------------------------------------


def fail_call(monkeypatch: pytest.MonkeyPatch, name: str, call: int, exc: BaseException) -> None:
    """Make ``os.<name>`` raise `exc` on its `call`-th call (1-based) only."""
    real, counter = getattr(os, name), itertools.count(1)

    def fake(*args, **kwargs):
        if next(counter) == call:
            raise exc
        return real(*args, **kwargs)

    monkeypatch.setattr(os, name, fake)


def full_disk(name: str = "fsync", call: int = 1) -> Callable[[pytest.MonkeyPatch], None]:
    return lambda mp: fail_call(mp, name, call, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))


def read_only(name: str = "replace", call: int = 1) -> Callable[[pytest.MonkeyPatch], None]:
    return lambda mp: fail_call(mp, name, call, OSError(errno.EROFS, os.strerror(errno.EROFS)))


def denied(name: str = "replace", call: int = 1) -> Callable[[pytest.MonkeyPatch], None]:
    return lambda mp: fail_call(mp, name, call, PermissionError(errno.EACCES, "Permission denied"))


def interrupt(name: str = "replace", call: int = 2) -> Callable[[pytest.MonkeyPatch], None]:
    return lambda mp: fail_call(mp, name, call, KeyboardInterrupt())


def no_train_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in ("torch", "transformers", "tokenizers", "trl", "peft", "datasets"):
        monkeypatch.setitem(sys.modules, module, None)  # `import torch` now fails


# --- the table ------------------------------------------------------------------------
# Every case starts from the same folder: doc.txt, cands.tsv, masked.txt, map.json (a
# masking round trip) and data/ (a small dataset); `prep` steps then change it.

Step = Callable[[Path], object]


@dataclass(frozen=True)
class Case:
    id: str
    argv: list[str]
    prep: tuple[Step, ...] = ()
    code: int = 2
    says: str = ""  # a fragment of the error message (of stdout, for a success)
    fault: Callable[[pytest.MonkeyPatch], None] | None = None
    changes: tuple[str, ...] = field(default=())  # files a successful run may write


def put(name: str, content: str | bytes) -> Step:
    return lambda root: write(root, name, content)


def put_line(name: str, index: int, line: bytes) -> Step:
    return lambda root: replace_line(root / name, index, line)


def edit(split: str, index: int, **changes: object) -> Step:
    return lambda root: with_record(root, split, index, **changes)


def hard_link(src: str, dst: str) -> Step:
    return lambda root: os.link(root / src, root / dst)


def symlink(src: str, dst: str) -> Step:
    return lambda root: os.symlink(src, root / dst)


def folder(name: str) -> Step:
    return lambda root: (root / name).mkdir(parents=True)


def remove(name: str) -> Step:
    return lambda root: (root / name).unlink()


def folder_instead(name: str) -> Step:
    return lambda root: ((root / name).unlink(), (root / name).mkdir())


def preds(rows: list[dict] | None = None) -> Step:
    return lambda root: predictions(root, rows=rows)


def other_dataset(name: str) -> Step:
    return lambda root: make_dataset(root, name, seed=7)


def mask_args(*extra: str) -> list[str]:
    return ["mask", "--candidates", "cands.tsv", "--in", "doc.txt", *extra]


def unmask_args(*extra: str) -> list[str]:
    return ["unmask", "--mapping", "map.json", "--in", "masked.txt", *extra]


EVALUATE = ["evaluate", "--records", "data/test.jsonl", "--predictions", "preds.jsonl"]
SPLIT_FILES = ("train.jsonl", "validation.jsonl", "test.jsonl", "manifest.json")
LONG = "n" * 245 + ".json"  # 250 characters: legal on every common file system
TOO_LONG = "n" * 251 + ".json"  # 256 characters: over the limit of 255
KOREAN_SECRET = "PERSON\t김비밀\n".encode("euc-kr")

CASES = [
    # --- bad encodings -------------------------------------------------------------
    Case("mask-candidates-not-utf8", mask_args("--out", "o.txt"),
         (put("cands.tsv", KOREAN_SECRET),), says="candidates file cands.tsv: not UTF-8"),
    Case("mask-input-not-utf8", mask_args("--out", "o.txt"),
         (put("doc.txt", b"Dear \xff\xfe " + SECRET.encode()),), says="doc.txt: not UTF-8"),
    Case("unmask-mapping-not-utf8", unmask_args("--out", "r.txt"),
         (put("map.json", b'{"[PERSON_1]": "\xc0"}'),), says="map.json: not UTF-8"),
    Case("unmask-input-not-utf8", unmask_args("--out", "r.txt"),
         (put("masked.txt", b"\x80[PERSON_1]"),), says="masked.txt: not UTF-8"),
    Case("unmask-mapping-lone-surrogate", unmask_args(),
         (put("map.json", '{"[PERSON_1]": "\\ud800' + SECRET + '"}'),),
         says="entry 1: value holds a lone surrogate"),
    Case("unmask-mapping-surrogate-pair-is-fine", unmask_args("--out", "r.txt"),
         (put("map.json", '{"[PERSON_1]": "\\ud83d\\ude00"}'),), code=0, changes=("r.txt",)),
    Case("stats-split-not-utf8", ["stats", "data"],
         (put_line("data/train.jsonl", 1, b'{"id": "\xff"}'),), says="train.jsonl:2: not UTF-8"),
    Case("verify-split-not-utf8", ["verify", "data"],
         (put_line("data/test.jsonl", 0, b"\xfe"),), code=1, says="test.jsonl:1: not UTF-8"),
    Case("oracle-split-not-utf8", ["oracle", "data"],
         (put_line("data/validation.jsonl", 3, b"\xc3\x28"),),
         says="validation.jsonl:4: not UTF-8"),
    Case("evaluate-predictions-not-utf8", EVALUATE,
         (put("preds.jsonl", b'{"id": "\xe9"}\n'),), says="preds.jsonl:1: not UTF-8"),
    Case("evaluate-records-lone-surrogate", EVALUATE,
         (preds(), edit("test", 2, source_text="\ud800")),
         says="test.jsonl:3: a string holds a lone surrogate"),
    Case("audit-split-lone-surrogate", ["audit", "data"],
         (edit("validation", 0, template_id="\udfff"),),
         says="validation.jsonl:1: a string holds a lone surrogate"),
    Case("resplit-manifest-not-utf8", ["resplit", "data", "--out", "new"],
         (put("data/manifest.json", b"\xff{}"),), says="malformed manifest"),
    Case("mask-candidates-with-a-bom", mask_args("--out", "o.txt"),
         (put("cands.tsv", "\ufeff" + CANDS),), says="candidates line 1: unknown type"),
    # --- missing paths ------------------------------------------------------------------
    Case("mask-candidates-missing",
         ["mask", "--candidates", "nope.tsv", "--in", "doc.txt", "--out", "o.txt"],
         says="cannot read candidates file nope.tsv"),
    Case("mask-input-missing",
         ["mask", "--candidates", "cands.tsv", "--in", "nope.txt", "--mapping", "m.json"],
         says="cannot read input nope.txt"),
    Case("unmask-mapping-missing", ["unmask", "--mapping", "nope.json", "--in", "masked.txt"],
         says="cannot read mapping file nope.json"),
    Case("stats-missing-directory", ["stats", "nodir"], says="file is missing"),
    Case("verify-missing-directory", ["verify", "nodir"], says="nodir: no such directory"),
    Case("verify-manifest-missing", ["verify", "data"], (remove("data/manifest.json"),), code=1,
         says="manifest.json: file is missing"),
    Case("evaluate-records-missing",
         ["evaluate", "--records", "nope.jsonl", "--predictions", "data/test.jsonl"],
         says="cannot read nope.jsonl"),
    Case("baseline-out-folder-missing", ["baseline", "data", "--out", "nodir/p.jsonl"],
         says="the folder nodir does not exist"),
    Case("evaluate-json-folder-missing", [*EVALUATE, "--json", "nodir/r.json"], (preds(),),
         says="cannot write nodir/r.json"),
    Case("audit-json-folder-missing", ["audit", "data", "--json", "nodir/a.json"],
         says="cannot write nodir/a.json"),
    Case("mask-out-folder-missing", mask_args("--out", "nodir/o.txt", "--mapping", "m.json"),
         says="cannot write nodir/o.txt"),
    Case("generate-out-is-a-file", ["generate", "--out", "doc.txt"],
         says="doc.txt: exists and is not a directory"),
    Case("verify-on-a-plain-file", ["verify", "data/train.jsonl"],
         says="data/train.jsonl: not a directory"),
    # --- aliased paths -----------------------------------------------------------------
    Case("mask-out-and-mapping-via-dotdot", mask_args("--out", "x", "--mapping", "sub/../x"),
         (folder("sub"),), says="are the same file"),
    Case("mask-mapping-is-the-input", mask_args("--mapping", "doc.txt", "--force"),
         says="doc.txt: is the same file as the input"),
    Case("mask-mapping-is-the-candidates", mask_args("--mapping", "cands.tsv", "--force"),
         says="is the same file as the input cands.tsv"),
    Case("mask-mapping-hard-link-to-the-input", mask_args("--mapping", "link.txt", "--force"),
         (hard_link("doc.txt", "link.txt"),), says="is the same file as the input"),
    Case("mask-out-symlink-to-the-input", mask_args("--out", "sym.txt", "--force"),
         (symlink("doc.txt", "sym.txt"),), says="is the same file as the input"),
    Case("mask-outputs-hard-linked",
         mask_args("--out", "m2.json", "--mapping", "map.json", "--force"),
         (hard_link("map.json", "m2.json"),), says="are the same file"),
    Case("unmask-out-is-the-mapping", unmask_args("--out", "map.json", "--force"),
         says="is the same file as the input map.json"),
    Case("unmask-out-is-the-input-via-dotdot",
         unmask_args("--out", "sub/../masked.txt", "--force"), (folder("sub"),),
         says="is the same file as the input"),
    Case("evaluate-json-over-the-records", [*EVALUATE, "--json", "data/test.jsonl", "--force"],
         (preds(),), says="is the same file as the input"),
    Case("evaluate-json-over-the-predictions-via-dotdot",
         [*EVALUATE, "--json", "sub/../preds.jsonl", "--force"], (preds(), folder("sub")),
         says="is the same file as the input"),
    Case("baseline-out-over-a-split", ["baseline", "data", "--out", "data/test.jsonl",
                                       "--force"], says="is the same file as the input"),
    Case("baseline-out-hard-link-to-a-split", ["baseline", "data", "--out", "p.jsonl",
                                               "--force"],
         (hard_link("data/train.jsonl", "p.jsonl"),), says="is the same file as the input"),
    Case("audit-json-over-the-manifest",
         ["audit", "data", "--json", "data/manifest.json", "--force"],
         says="is the same file as the input"),
    Case("resplit-out-is-the-input-via-dotdot",
         ["resplit", "data", "--out", "data/../data", "--force"],
         says="--out must be a different directory"),
    Case("resplit-out-files-hard-linked-to-the-input",
         ["resplit", "data", "--out", "copy", "--force"],
         (folder("copy"), *(hard_link(f"data/{n}", f"copy/{n}") for n in SPLIT_FILES)),
         says="is the same file as the input"),
    Case("predict-out-over-a-split",
         ["predict", "--model", "nomodel", "--data-dir", "data", "--out", "data/test.jsonl"],
         says="is the same file as the input"),
    # --- existing outputs without --force -------------------------------------------
    Case("mask-mapping-exists", mask_args("--mapping", "map.json"),
         says="map.json: exists; use --force"),
    Case("mask-out-exists", mask_args("--out", "masked.txt", "--mapping", "new.json"),
         says="masked.txt: exists; use --force"),
    Case("unmask-out-exists", unmask_args("--out", "r.txt"), (put("r.txt", "old"),),
         says="r.txt: exists; use --force"),
    Case("baseline-out-exists", ["baseline", "data", "--out", "preds.jsonl"], (preds(),),
         says="preds.jsonl: exists; use --force"),
    Case("evaluate-json-exists", [*EVALUATE, "--json", "r.json"], (preds(), put("r.json", "{}")),
         says="r.json: exists; use --force"),
    Case("audit-json-exists", ["audit", "data", "--json", "a.json"], (put("a.json", "{}"),),
         says="a.json: exists; use --force"),
    Case("predict-out-exists",
         ["predict", "--model", "nomodel", "--data-dir", "data", "--out", "preds.jsonl"],
         (preds(),), says="preds.jsonl: exists; use --force"),
    Case("resplit-out-holds-another-dataset", ["resplit", "data", "--out", "other"],
         (other_dataset("other"),), says="use --force"),
    Case("generate-out-holds-another-dataset", ["generate", "--out", "data"],
         says="holds a different dataset"),
    Case("mask-force-replaces-both-outputs",
         mask_args("--out", "o.txt", "--mapping", "map.json", "--force"), (put("o.txt", "old"),),
         code=0, changes=("o.txt", "map.json")),
    # --- directories where files are expected ------------------------------------------
    Case("mask-candidates-is-a-directory",
         ["mask", "--candidates", "cdir", "--in", "doc.txt", "--out", "o.txt"], (folder("cdir"),),
         says="cannot read candidates file cdir"),
    Case("mask-mapping-is-a-directory", mask_args("--mapping", "mdir"), (folder("mdir"),),
         says="mdir: is a directory"),
    Case("unmask-mapping-is-a-directory", ["unmask", "--mapping", "mdir", "--in", "masked.txt"],
         (folder("mdir"),), says="cannot read mapping file mdir"),
    Case("stats-split-is-a-directory", ["stats", "data"], (folder_instead("data/train.jsonl"),),
         says="train.jsonl: not a file"),
    Case("verify-split-is-a-directory", ["verify", "data"],
         (folder_instead("data/test.jsonl"),), code=1, says="test.jsonl: cannot read"),
    Case("evaluate-predictions-is-a-directory",
         ["evaluate", "--records", "data/test.jsonl", "--predictions", "pdir"], (folder("pdir"),),
         says="cannot read pdir"),
    Case("baseline-out-is-a-directory", ["baseline", "data", "--out", "pdir", "--force"],
         (folder("pdir"),), says="pdir: is a directory"),
    Case("generate-manifest-is-a-directory", ["generate", "--out", "data", "--force"],
         (folder_instead("data/manifest.json"),), says="manifest.json: is a directory"),
    # --- full and read-only disks (injected) ------------------------------------------------
    Case("mask-disk-full", mask_args("--out", "o.txt", "--mapping", "m.json"),
         fault=full_disk(), says="cannot write m.json: No space left on device"),
    Case("mask-force-read-only-on-the-second-rename",
         mask_args("--out", "o.txt", "--mapping", "map.json", "--force"), (put("o.txt", "old"),),
         fault=read_only("replace", 2), says="cannot write o.txt: Read-only file system"),
    Case("mask-force-symlinked-output-kept-as-a-link-on-failure",
         mask_args("--out", "o.txt", "--mapping", "map.json", "--force"),
         (put("elsewhere.txt", "kept"), symlink("elsewhere.txt", "o.txt")),
         fault=full_disk("replace", 2), says="cannot write o.txt: No space left on device"),
    Case("unmask-read-only-folder", unmask_args("--out", "r.txt"), fault=read_only("open", 1),
         says="cannot write r.txt: Read-only file system"),
    Case("baseline-permission-denied", ["baseline", "data", "--out", "p.jsonl"],
         fault=denied(), says="cannot write p.jsonl: Permission denied"),
    Case("evaluate-json-disk-full", [*EVALUATE, "--json", "r.json"], (preds(),),
         fault=full_disk(), says="cannot write r.json: No space left on device"),
    Case("audit-json-read-only", ["audit", "data", "--json", "a.json"], fault=read_only(),
         says="cannot write a.json: Read-only file system"),
    Case("generate-force-disk-full-on-the-third-rename", ["generate", "--out", "data", "--force"],
         fault=full_disk("replace", 3), says="No space left on device"),
    Case("resplit-force-read-only-on-the-manifest",
         ["resplit", "data", "--out", "other", "--force"], (other_dataset("other"),),
         fault=read_only("replace", 4), says="manifest.json: Read-only file system"),
    Case("generate-new-folder-disk-full", ["generate", "--out", "fresh"],
         fault=full_disk("fsync", 2), says="No space left on device"),
    # --- interruption ------------------------------------------------------------------
    Case("mask-interrupted-between-the-renames",
         mask_args("--out", "o.txt", "--mapping", "map.json", "--force"), (put("o.txt", "old"),),
         code=130, fault=interrupt("replace", 2), says="interrupted"),
    Case("generate-force-interrupted-between-the-renames",
         ["generate", "--out", "data", "--force"], code=130, fault=interrupt("replace", 2),
         says="interrupted"),
    Case("resplit-interrupted-while-staging", ["resplit", "data", "--out", "new"], code=130,
         fault=interrupt("fsync", 3), says="interrupted"),
    Case("mask-unexpected-error-quotes-nothing",
         mask_args("--out", "o.txt", "--mapping", "m.json"),
         fault=lambda mp: fail_call(mp, "replace", 2, RuntimeError(SECRET)),
         says="unexpected RuntimeError"),
    # --- huge inputs ------------------------------------------------------------------
    Case("mask-a-five-megabyte-line", mask_args("--out", "o.txt", "--mapping", "m.json"),
         (put("doc.txt", DOC.strip() + " " + "x" * 5_000_000 + "\n"),), code=0,
         changes=("o.txt", "m.json")),
    Case("evaluate-a-five-megabyte-output", EVALUATE,
         (preds([{"id": "test-en-020", "output": "y" * 5_000_000, "parse_success": False}]),),
         code=0, says="(4 documents)"),
    Case("stats-a-five-megabyte-malformed-line", ["stats", "data"],
         (put_line("data/train.jsonl", 0, b'{"source_text": "' + b"z" * 5_000_000),),
         says="train.jsonl:1: malformed JSON"),
    Case("unmask-deeply-nested-mapping", unmask_args(), (put("map.json", nested()),),
         says="map.json: JSON nested too deeply"),
    Case("evaluate-deeply-nested-prediction", EVALUATE, (put("preds.jsonl", nested()),),
         says="preds.jsonl:1: JSON nested too deeply"),
    Case("verify-deeply-nested-manifest", ["verify", "data"],
         (put("data/manifest.json", nested()),), code=1, says="malformed manifest"),
    Case("stats-deeply-nested-record", ["stats", "data"],
         (put_line("data/test.jsonl", 1, ('{"id": ' + nested() + "}").encode()),),
         says="test.jsonl:2: JSON nested too deeply"),
    Case("resplit-deeply-nested-manifest", ["resplit", "data", "--out", "new"],
         (put("data/manifest.json", nested()),), says="malformed manifest"),
    # --- hostile mappings ------------------------------------------------------------------
    *(Case(f"unmask-mapping-{name}", unmask_args("--out", "r.txt"), (put("map.json", text),),
           says=says)
      for name, text, says in [
          ("is-a-list", json.dumps([SECRET]), "expected a JSON object"),
          ("is-a-string", json.dumps(SECRET), "expected a JSON object"),
          ("value-is-a-number", '{"[PERSON_1]": 4821}', "entry 1: value must be a string"),
          ("value-is-null", '{"[PERSON_1]": null}', "entry 1: value must be a string"),
          ("value-is-an-object", json.dumps({"[PERSON_1]": {"v": SECRET}}),
           "entry 1: value must be a string"),
          ("value-is-nan", '{"[PHONE_1]": "x", "[PERSON_1]": NaN}',
           "entry 2: value must be a string"),
          ("key-is-a-value", json.dumps({SECRET: "[PERSON_1]"}), "entry 1: key is not a token"),
          ("truncated", '{"[PERSON_1]": "' + SECRET, "malformed JSON"),
      ]),
    # --- non-finite and negative resplit targets ----------------------------------------------
    *(Case(f"resplit-targets-{name}", ["resplit", "data", "--out", "new", f"--targets={targets}"],
           says="--targets takes three finite, non-negative numbers")
      for name, targets in [("nan", "nan,1,1"), ("inf", "inf,1,1"), ("minus-inf", "1,-inf,1"),
                            ("negative", "-1,1,1"), ("all-zero", "0,0,0"),
                            ("overflow", "1e309,1,1"), ("two-numbers", "1,1")]),
    # --- long file names ------------------------------------------------------------------
    Case("mask-mapping-250-characters", mask_args("--out", "o.txt", "--mapping", LONG), code=0,
         changes=("o.txt", LONG)),
    Case("baseline-out-250-characters", ["baseline", "data", "--out", LONG], code=0,
         changes=(LONG,)),
    Case("mask-mapping-256-characters", mask_args("--mapping", TOO_LONG),
         says="File name too long"),
    # --- hostile records: named by line, never by content ------------------------------------
    Case("verify-id-is-a-list", ["verify", "data"], (edit("test", 1, id=[SECRET]),), code=1,
         says="test.jsonl:2: field 'id' must be str"),
    Case("evaluate-unknown-prediction-id", EVALUATE,
         (preds([{"id": SECRET, "output": "", "parse_success": True}]),),
         says="preds.jsonl:1: no such record"),
    Case("evaluate-duplicate-prediction-id", EVALUATE,
         (preds([{"id": "test-en-020", "output": "", "parse_success": True}] * 2),),
         says="preds.jsonl:2: duplicate prediction id"),
    Case("evaluate-entity-type-is-a-value", EVALUATE,
         (preds(), edit("test", 0, entities=[{"type": SECRET, "value": "Dear"}])),
         says="test.jsonl:1: entities[0] has a type outside LABELS"),
    Case("evaluate-record-is-an-array",
         ["evaluate", "--records", "rec.jsonl", "--predictions", "rec.jsonl"],
         (put("rec.jsonl", json.dumps([SECRET]) + "\n"),),
         says="rec.jsonl:1: a record must be a JSON object"),
    Case("stats-record-without-language", ["stats", "data"], (edit("train", 0, language=None),),
         says="train.jsonl:1: missing field 'language'"),
    Case("oracle-record-without-target-tsv", ["oracle", "data"],
         (edit("test", 3, target_tsv=None),), says="test.jsonl:4: missing field 'target_tsv'"),
    Case("oracle-gold-value-not-in-the-source", ["oracle", "data"],
         (edit("validation", 1, source_text="no names here"),),
         says="validation.jsonl:2: a gold PERSON value does not occur in source_text"),
    Case("verify-manifest-lists-fewer-splits", ["verify", "data"],
         (put("data/manifest.json", json.dumps({"splits": {"train": {}}})),), code=1,
         says="lists no validation, test split"),
    Case("verify-manifest-file-outside-the-folder", ["verify", "data"],
         (put("data/manifest.json", json.dumps(
             {"splits": {s: {"file": f"../{SECRET}.jsonl"} for s in SPLITS}})),),
         code=1, says="must be stored in train.jsonl"),
    Case("verify-manifest-count-is-a-value", ["verify", "data"],
         (lambda root: write(root, "data/manifest.json", (root / "data/manifest.json").read_text()
                             .replace('"records": 4', f'"records": "{SECRET}"', 1)),),
         code=1, says="manifest says something else"),
    Case("audit-template-id-not-a-string", ["audit", "data"],
         (edit("train", 5, template_id=4821),),
         says="train.jsonl:6: field 'template_id' must be str"),
    Case("baseline-source-text-is-a-number", ["baseline", "data", "--out", "p.jsonl"],
         (edit("test", 0, source_text=4821),),
         says="test.jsonl:1: field 'source_text' must be str"),
    Case("resplit-manifest-seed-is-a-value", ["resplit", "data", "--out", "new"],
         (put("data/manifest.json", json.dumps({"seed": SECRET})),),
         says="field 'seed' must be an integer"),
    Case("mask-candidates-columns-swapped", mask_args("--out", "o.txt"),
         (put("cands.tsv", f"{SECRET}\tPERSON\n"),), says="candidates line 1: unknown type"),
    # --- commands without the train extra ------------------------------------------------
    Case("predict-without-the-train-extra",
         ["predict", "--model", "model", "--data-dir", "data", "--out", "p.jsonl"],
         (folder("model"), put("model/config.json", "{}")), fault=no_train_extra,
         says="this command needs the train extra: pip install 'piilab[train]'"),
    Case("tiny-model-without-the-train-extra",
         ["tiny-model", "--out", "tiny", "--data-dir", "data"], fault=no_train_extra,
         says="needs the train extra"),
    Case("export-ner-without-the-train-extra",
         ["export-ner", "data", "--tokenizer", "tok", "--out", "ner"], fault=no_train_extra,
         says="needs the train extra"),
    Case("train-without-the-train-extra", ["train", "--config", "cfg.json"],
         (put("cfg.json", json.dumps({"model": "model", "data_dir": "data",
                                      "output_dir": "run", "max_steps": 1})),),
         fault=no_train_extra, says="needs the train extra"),
]


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under `root`: files by content hash and mode, links by target."""
    entries = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            key = str(path.relative_to(root))
            if path.is_symlink():
                entries[key] = ("link", os.readlink(path))
            elif path.is_dir():
                entries[key] = ("dir",)
            else:
                entries[key] = ("file", hashlib.sha256(path.read_bytes()).hexdigest(),
                                stat.S_IMODE(path.stat().st_mode))
    return entries


def assert_clean_outcome(code: int, out: str, err: str, expected: int, says: str) -> None:
    assert code == expected, err
    assert "Traceback" not in out + err
    for value in PLANTED:
        assert value not in out and value not in err, f"{value!r} was printed"
    if expected in (2, 130):
        assert err.startswith("piilab: error:") and err.count("\n") == 1, err
        assert out == ""
    if says:
        assert says in (err if expected else out + err)


def test_the_hostile_table_is_large_enough():
    assert len(CASES) >= 60 and len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_hostile_input(case, tmp_path, monkeypatch, capsys):
    root = tmp_path / "work"
    root.mkdir()
    doc_files(root)
    make_dataset(root)
    for step in case.prep:
        step(root)
    before = snapshot(root)
    monkeypatch.chdir(root)
    with monkeypatch.context() as faults:  # undone before the files are read back
        if case.fault:
            case.fault(faults)
        code = cli.main(case.argv)
    out, err = capsys.readouterr()

    assert_clean_outcome(code, out, err, case.code, case.says)
    after = snapshot(root)
    assert not [name for name in after if Path(name).name.startswith(".piilab-")]
    for name, entry in before.items():
        if name not in case.changes:
            assert after.get(name) == entry, f"{name} changed"
    if case.code != 0:
        assert after == before, "a failed command must create nothing"
    else:
        assert set(after) - set(before) <= set(case.changes)


# --- one regression test per defect of issue 15 ---------------------------------------------


@pytest.fixture()
def run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)

    def invoke(*argv: str) -> tuple[int, str, str]:
        code = cli.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return invoke


def test_1_mask_never_replaces_an_existing_mapping_without_force(run, tmp_path):
    write(tmp_path, "a.txt", f"A: {SECRET}\n")
    write(tmp_path, "b.txt", "B: Other Person\n")
    write(tmp_path, "ca.tsv", f"PERSON\t{SECRET}\n")
    write(tmp_path, "cb.tsv", "PERSON\tOther Person\n")
    assert run("mask", "--candidates", "ca.tsv", "--in", "a.txt", "--out", "a.masked",
               "--mapping", "map.json")[0] == 0
    code, _, err = run("mask", "--candidates", "cb.tsv", "--in", "b.txt", "--out", "b.masked",
                       "--mapping", "map.json")
    assert code == 2 and "use --force" in err and not (tmp_path / "b.masked").exists()
    assert run("unmask", "--mapping", "map.json", "--in", "a.masked", "--out", "a.back")[0] == 0
    assert (tmp_path / "a.back").read_text() == f"A: {SECRET}\n"  # A is still restorable


def test_2_a_failed_mask_changes_no_output(run, tmp_path):
    doc_files(tmp_path)
    (tmp_path / "outdir").mkdir()
    before = (tmp_path / "map.json").read_bytes()
    code, _, err = run(*mask_args("--out", "outdir", "--mapping", "map.json", "--force"))
    assert code == 2 and "outdir: is a directory" in err
    assert (tmp_path / "map.json").read_bytes() == before


@pytest.mark.parametrize("argv", [
    ["mask", "--candidates", "cands.tsv", "--in", "doc.txt", "--out", "x", "--mapping",
     "sub/../x"],
    ["mask", "--candidates", "cands.tsv", "--in", "doc.txt", "--mapping", "doc.txt", "--force"],
    ["mask", "--candidates", "cands.tsv", "--in", "doc.txt", "--mapping", "cands.tsv",
     "--force"],
    ["evaluate", "--records", "data/test.jsonl", "--predictions", "data/test.jsonl", "--json",
     "data/test.jsonl", "--force"],
    ["baseline", "data", "--out", "data/test.jsonl", "--force"],
    ["mask", "--candidates", "cands.tsv", "--in", "doc.txt", "--mapping", "hard-link-of-doc.txt",
     "--force"],
], ids=["dotdot", "input", "candidates", "evaluate-records", "baseline-split", "hard-link"])
def test_3_outputs_that_resolve_to_an_input_or_each_other_are_refused(run, tmp_path, argv):
    doc_files(tmp_path)
    (tmp_path / "sub").mkdir()
    make_dataset(tmp_path)
    os.link(tmp_path / "doc.txt", tmp_path / "hard-link-of-doc.txt")
    before = snapshot(tmp_path)
    code, _, err = run(*argv)
    assert code == 2 and "same file" in err
    assert snapshot(tmp_path) == before


def test_4_baseline_and_predict_keep_existing_predictions_without_force(run, tmp_path):
    make_dataset(tmp_path)
    preds = predictions(tmp_path)
    before = preds.read_bytes()
    assert run("baseline", "data", "--out", "preds.jsonl")[0] == 2
    assert run("predict", "--model", "smollm2-135m", "--data-dir", "data",
               "--out", "preds.jsonl")[0] == 2
    assert preds.read_bytes() == before
    assert run("baseline", "data", "--out", "preds.jsonl", "--force")[0] == 0
    assert preds.read_bytes() != before and stat.S_IMODE(preds.stat().st_mode) == 0o600


@pytest.mark.parametrize("failing_rename", [1, 2, 3, 4])
def test_5_generate_force_leaves_the_old_dataset_or_the_new_one(run, tmp_path, monkeypatch,
                                                               failing_rename):
    old = make_dataset(tmp_path)
    (old / "holdout").mkdir()
    write(old, "holdout/notes.md", "kept")
    before = snapshot(old)
    with monkeypatch.context() as faults:
        fail_call(faults, "replace", failing_rename, OSError(errno.ENOSPC, "No space left"))
        code, _, err = run("generate", "--out", "data", "--force")
    assert code == 2 and "No space left" in err
    assert snapshot(old) == before  # the old dataset, whole
    assert run("generate", "--out", "data", "--force")[0] == 0
    assert run("verify", "data")[0] == 0  # the new one, whole
    assert (old / "holdout/notes.md").read_text() == "kept"  # other entries are left alone
    assert not [p for p in old.iterdir() if p.name.startswith(".piilab-")]


@pytest.mark.parametrize(("command", "raised"), [
    (lambda: OSError(errno.EACCES, "Permission denied", "some/file"),
     "some/file: Permission denied"),
    (lambda: b"\xff".decode("utf-8"), "not UTF-8"),
    (lambda: "\ud800".encode("utf-8"), "lone surrogate"),
    (lambda: json.loads('{"a": ' + SECRET), "not valid JSON (line 1, column 7)"),
    (lambda: json.loads(nested()), "nested too deeply"),
    (lambda: {}["language"], "lacks the field 'language'"),
    (lambda: {}[SECRET], "lacks the field this command needs (KeyError at"),
    (lambda: int(SECRET), "wrong type or form (ValueError at"),
    (lambda: len(4821), "wrong type or form (TypeError at"),
    (lambda: __import__("piilab_no_such_module"), "cannot be imported (piilab_no_such_module)"),
    (lambda: (_ for _ in ()).throw(ModuleNotFoundError(SECRET, name="torch")),
     "needs the train extra: pip install 'piilab[train]' (torch is not installed)"),
    (lambda: (_ for _ in ()).throw(RuntimeError(SECRET)), "unexpected RuntimeError at"),
    (lambda: (_ for _ in ()).throw(KeyboardInterrupt()), "interrupted"),
], ids=["OSError", "UnicodeDecodeError", "UnicodeEncodeError", "JSONDecodeError",
        "RecursionError", "KeyError-field", "KeyError-value", "ValueError", "TypeError",
        "ImportError", "ModuleNotFoundError-train", "other", "KeyboardInterrupt"])
def test_6_every_error_class_is_one_line_without_a_traceback(run, tmp_path, monkeypatch,
                                                             command, raised):
    def failing(args):
        result = command()
        raise result if isinstance(result, BaseException) else AssertionError("did not raise")

    monkeypatch.setattr(data_cli, "cmd_stats", failing)
    code, out, err = run("stats", "data")
    assert code == (130 if raised == "interrupted" else 2)
    assert err.startswith("piilab: error:") and err.count("\n") == 1 and raised in err
    assert SECRET not in err and "4821" not in err and out == ""


@pytest.mark.parametrize("targets", ["nan,1,1", "1,inf,1", "1,1,-inf", "-1,1,1"])
def test_7_resplit_rejects_non_finite_and_negative_targets(run, tmp_path, targets):
    from piilab.splits import SplitError, family_split

    make_dataset(tmp_path)
    code, _, err = run("resplit", "data", "--out", "new", f"--targets={targets}")
    assert code == 2 and "finite, non-negative" in err and not (tmp_path / "new").exists()
    weights = dict(zip(SPLITS, (float(t) for t in targets.split(",")), strict=True))
    with pytest.raises(SplitError, match="finite"):
        family_split([_record("train", 0)], weights)


def test_8_a_250_character_output_name_is_written(run, tmp_path):
    doc_files(tmp_path)
    code, _, err = run(*mask_args("--out", LONG[:-5] + ".txt", "--mapping", LONG))
    assert code == 0, err
    assert json.loads((tmp_path / LONG).read_text()) == MAPPING
    assert stat.S_IMODE((tmp_path / LONG).stat().st_mode) == 0o600
    write_atomic(tmp_path / ("z" * 255), b"max")  # the longest legal name still works
    assert (tmp_path / ("z" * 255)).read_bytes() == b"max"


def test_9_messages_name_records_by_line_not_by_content(run, tmp_path):
    make_dataset(tmp_path)
    with_record(tmp_path, "test", 2, id=[SECRET, "x"])
    code, out, err = run("verify", "data")
    assert code == 1 and "test.jsonl:3: field 'id' must be str" in err
    predictions(tmp_path, rows=[{"id": SECRET, "output": "", "parse_success": False}])
    code, out2, err2 = run("evaluate", "--records", "data/validation.jsonl",
                           "--predictions", "preds.jsonl")
    assert code == 2 and "preds.jsonl:1: no such record" in err2
    assert SECRET not in out + err + out2 + err2


@pytest.mark.parametrize(("umask", "expected"), [(0o077, 0o600), (0o022, 0o644)])
def test_10_dataset_files_follow_the_umask_and_mappings_stay_private(run, tmp_path, umask,
                                                                     expected):
    make_dataset(tmp_path, "src")
    doc_files(tmp_path)
    previous = os.umask(umask)
    try:
        assert run("generate", "--out", "gen")[0] == 0
        assert run("resplit", "src", "--out", "re")[0] in (0, 1)  # 1: tiny data, not leak-free
        assert run(*mask_args("--out", "o.txt", "--mapping", "m.json"))[0] == 0
    finally:
        os.umask(previous)
    for folder in ("gen", "re"):
        for name in ("train.jsonl", "validation.jsonl", "test.jsonl", "manifest.json"):
            assert stat.S_IMODE((tmp_path / folder / name).stat().st_mode) == expected
    assert stat.S_IMODE((tmp_path / "o.txt").stat().st_mode) == expected
    assert stat.S_IMODE((tmp_path / "m.json").stat().st_mode) == 0o600


# --- piilab.files on its own ------------------------------------------------------------------


def test_write_all_restores_every_replaced_file_when_a_later_rename_fails(tmp_path, monkeypatch):
    a, b, c = (write(tmp_path, name, f"old {name}") for name in ("a", "b", "c"))
    with monkeypatch.context() as faults, pytest.raises(OSError) as info:
        fail_call(faults, "replace", 3, OSError(errno.EIO, "I/O error"))
        write_all([(a, b"new a", None), (b, b"new b", None), (c, b"new c", None)])
    assert info.value.filename == str(c) and info.value.errno == errno.EIO
    assert [p.read_text() for p in (a, b, c)] == ["old a", "old b", "old c"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "c"]


def test_write_all_removes_new_files_when_a_later_rename_fails(tmp_path, monkeypatch):
    with monkeypatch.context() as faults, pytest.raises(KeyboardInterrupt):
        fail_call(faults, "replace", 2, KeyboardInterrupt())
        write_all([(tmp_path / "new1", b"1", 0o600), (tmp_path / "new2", b"2", 0o600)])
    assert list(tmp_path.iterdir()) == []


def test_check_outputs_returns_the_outputs_and_skips_standard_streams(tmp_path):
    assert check_outputs([None, tmp_path / "x"], inputs=[None]) == [tmp_path / "x"]


def test_files_doctests_pass(tmp_path, monkeypatch):
    import doctest

    from piilab import files

    monkeypatch.chdir(tmp_path)
    assert doctest.testmod(files).failed == 0


# --- one regression test per defect of issue 26 ----------------------------------------------


def _three(tmp_path: Path) -> list[Path]:
    return [write(tmp_path, name, f"old {name}") for name in ("a", "b", "c")]


def _replace_then(exc: BaseException, call: int, monkeypatch: pytest.MonkeyPatch,
                  after: bool) -> None:
    """``os.replace`` raises `exc` on its `call`-th call, before renaming or just after."""
    real, counter = os.replace, itertools.count(1)

    def fake(src, dst, *args, **kwargs):
        if next(counter) == call:
            if after:
                real(src, dst, *args, **kwargs)
            raise exc
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", fake)


@pytest.mark.parametrize("after", [False, True], ids=["before-rename", "after-rename"])
@pytest.mark.parametrize("call", [1, 2, 3])
def test_26_d1_an_interruption_inside_any_rename_leaves_the_old_files(tmp_path, monkeypatch,
                                                                      call, after):
    files = _three(tmp_path)
    with monkeypatch.context() as faults, pytest.raises(KeyboardInterrupt):
        _replace_then(KeyboardInterrupt(), call, faults, after)
        write_all([(path, f"new {path.name}".encode(), None) for path in files])
    assert [p.read_text() for p in files] == ["old a", "old b", "old c"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "c"]


@pytest.mark.parametrize("call", [1, 2, 3, 4])
def test_26_d1_generate_force_interrupted_after_a_rename_keeps_the_old_dataset(
        run, tmp_path, monkeypatch, call):
    old = make_dataset(tmp_path)
    before = snapshot(old)
    with monkeypatch.context() as faults:
        _replace_then(KeyboardInterrupt(), call, faults, after=True)
        code, out, err = run("generate", "--out", "data", "--force")
    assert code == 130 and err.startswith("piilab: error: interrupted") and out == ""
    assert snapshot(old) == before
    assert run("verify", "data")[0] == 0


def test_26_d2_stdin_is_an_input_of_mask_and_unmask(tmp_path):
    import subprocess

    doc_files(tmp_path)
    before = snapshot(tmp_path)
    for argv, source in ((["mask", "--candidates", "cands.tsv", "--out", "doc.txt", "--force"],
                          "doc.txt"),
                         (["unmask", "--mapping", "map.json", "--out", "masked.txt", "--force"],
                          "masked.txt")):
        with (tmp_path / source).open("rb") as stdin:
            done = subprocess.run([sys.executable, "-m", "piilab", *argv], cwd=tmp_path,
                                  stdin=stdin, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stderr
        assert done.stderr == (f"piilab: error: {source}: is the same file as the input "
                               "<stdin>\n")
    assert snapshot(tmp_path) == before


def test_26_d3_export_ner_and_tiny_model_keep_existing_outputs_without_force(run, tmp_path):
    make_dataset(tmp_path)
    write(tmp_path, "ner/export_manifest.json", "{}")
    write(tmp_path, "tiny/config.json", "{}")
    before = snapshot(tmp_path)
    code, _, err = run("export-ner", "data", "--tokenizer", "no-such-tokenizer", "--out", "ner")
    assert code == 2 and "export_manifest.json: exists; use --force" in err
    code, _, err = run("tiny-model", "--out", "tiny", "--data-dir", "data")
    assert code == 2 and "config.json: exists; use --force" in err
    assert snapshot(tmp_path) == before


def test_26_d3_tiny_model_is_staged_so_an_interruption_leaves_no_half_model(
        run, tmp_path, monkeypatch):
    pytest.importorskip("transformers", reason="needs the train extra")
    make_dataset(tmp_path)
    with monkeypatch.context() as faults:
        _replace_then(KeyboardInterrupt(), 3, faults, after=True)
        code, _, err = run("tiny-model", "--out", "tiny", "--data-dir", "data",
                           "--hidden-size", "16", "--layers", "1")
    assert code == 130, err
    assert not (tmp_path / "tiny").exists()  # created by the run, removed with it
    assert run("tiny-model", "--out", "tiny", "--data-dir", "data", "--hidden-size", "16",
               "--layers", "1")[0] == 0
    assert (tmp_path / "tiny" / "piilab_tiny.json").is_file()
    assert not [p for p in (tmp_path / "tiny").iterdir() if p.name.startswith(".piilab-")]


def test_26_d4_d17_resplit_names_bad_records_by_line_never_by_id(run, tmp_path):
    make_dataset(tmp_path)
    with_record(tmp_path, "train", 2, id=SECRET)
    with_record(tmp_path, "train", 5, id=SECRET)
    code, _, err = run("resplit", "data", "--out", "new")
    assert code == 2 and "train.jsonl:6: duplicate id (first at data/train.jsonl:3)" in err
    assert SECRET not in err
    make_dataset(tmp_path, "two")
    path = tmp_path / "two" / "train.jsonl"
    record = json.loads(path.read_bytes().split(b"\n")[3])
    record["id"], record["source_text"] = "ID-" + SECRET, "no value here"
    replace_line(path, 3, json.dumps(record).encode())
    code, _, err = run("resplit", "two", "--out", "new", "--augment", "1")
    assert code == 2 and "two/train.jsonl:4: invalid gold annotation" in err
    assert SECRET not in err and "ID-" not in err and not (tmp_path / "new").exists()


def test_26_d4_d17_export_ner_validates_records_and_ids_by_line(run, tmp_path):
    from piilab.ner import NERDataError, export_ner_dataset

    make_dataset(tmp_path)
    with_record(tmp_path, "train", 1, id=4821)
    code, _, err = run("export-ner", "data", "--tokenizer", "no-such", "--out", "ner")
    assert code == 2 and "data/train.jsonl:2: field 'id' must be str" in err
    assert not (tmp_path / "ner").exists()
    one = _record("train", 0)
    with pytest.raises(NERDataError, match=r"^b.jsonl:1: duplicate id \(first at a.jsonl:1\)$"):
        export_ner_dataset({"train": [one], "test": [dict(one)]}, None, tmp_path / "x",
                           where={"train": ["a.jsonl:1"], "test": ["b.jsonl:1"]})
    with pytest.raises(NERDataError, match="field 'id' is missing or not a string"):
        export_ner_dataset({"train": [{**one, "id": 7}]}, None, tmp_path / "x")
    assert not (tmp_path / "x").exists()


@dataclass
class Work:
    """What one call did, counted rather than timed, so that no load on the machine changes it.

    - `steps`: lines of Python run (the call's own and everything it calls);
    - `reads`: calls of a method of a string at least a quarter as long as the argument
      (``text.find``, ``text.split``...): each may read the whole text;
    - `regex`: calls of a method of a compiled regular expression.

    A linear function runs steps and regex calls in proportion to the length (a regex
    call per match), and reads the whole text a bounded number of times. One that reads
    the text again after each find (the quadratic pattern of D5 and D6) makes a read per
    find, so its reads grow with the length. What one regex call does inside the engine
    cannot be counted from Python: see `_leading_run_reads`.
    """

    steps: int = 0
    reads: int = 0
    regex: int = 0


def _work(function, argument: str) -> Work:
    import re as regex

    work, long_text = Work(), max(1, len(argument) // 4)

    def profile(frame, event, arg):
        if event == "c_call":
            owner = getattr(arg, "__self__", None)
            work.regex += isinstance(owner, regex.Pattern)
            work.reads += isinstance(owner, str) and len(owner) >= long_text

    def trace(frame, event, arg):
        if event == "line":
            work.steps += 1
        return trace

    previous_trace, previous_profile = sys.gettrace(), sys.getprofile()
    sys.setprofile(profile)
    sys.settrace(trace)
    try:
        function(argument)
    finally:
        sys.settrace(previous_trace)
        sys.setprofile(previous_profile)
    return work


def _grows_linearly(function, make, small: int) -> None:
    """At 4x the size: at most about 4x the steps and regex calls, no more whole-text reads."""
    one, four = _work(function, make(small)), _work(function, make(4 * small))
    assert four.steps <= 5 * one.steps + 100, (one, four)
    assert four.regex <= 5 * one.regex + 10, (one, four)
    assert four.reads <= one.reads + 2, (one, four)


def _leading_run_reads(pattern, text: str) -> int:
    """How many characters `pattern` reads from runs of `text`, by the regex engine's rule.

    A pattern that opens with an unbounded repetition of a character class (``[a-z]+@``)
    reads, at each position where it is tried in a run of that class, the rest of the run
    before it backtracks; it is tried at every position of the run unless a negative
    lookbehind on the same class lets only the run's first position through. Nothing
    inside the engine can be counted from Python, so this applies that rule to the text.
    0 for a pattern that opens otherwise.
    """
    from re import _compiler as compiler
    from re import _constants as sre
    from re import _parser as parser

    items = list(parser.parse(pattern.pattern, pattern.flags))
    behind = items.pop(0) if items and items[0][0] is sre.ASSERT_NOT else None
    if not items or items[0][0] is not sre.MAX_REPEAT or items[0][1][1] is not sre.MAXREPEAT:
        return 0
    repeated = items[0][1][2]
    in_class = compiler.compile(repeated, pattern.flags).fullmatch
    guarded = behind is not None and behind[1][0] == -1 and list(behind[1][1]) == list(repeated)
    reads = run = 0
    for ch in reversed(text):
        run = run + 1 if in_class(ch) else 0
        reads += 1 if run and guarded else run  # guarded: each character once
    return reads


@pytest.mark.parametrize("make", [
    lambda n: "a" * n,  # the EMAIL local part, tried at every position
    lambda n: "가" * n,  # the Korean ADDRESS prefix
    lambda n: " ".join(f"u{i}@example.com" for i in range(n // 16)),  # many matches
    lambda n: "010-0123-4567 " * (n // 14),
], ids=["letters", "hangul", "emails", "phones"])
def test_26_d5_the_baseline_is_linear_in_the_document(make):
    from piilab.baseline import RULES, baseline_output

    _grows_linearly(baseline_output, make, 5_000)
    reads = [sum(_leading_run_reads(rule.pattern, make(n)) for rule in RULES)
             for n in (5_000, 20_000)]
    assert reads[1] <= 5 * reads[0] + 100, reads


def test_26_d5_the_engine_rule_counts_a_quadratic_pattern():
    import re as regex

    from piilab.baseline import RULES

    # The count is not blind: without its lookbehind the EMAIL rule reads n(n+1)/2
    # characters of a run of n letters; with it, n. Two of the rules open with such a run.
    email = next(rule.pattern for rule in RULES if rule.label == "EMAIL")
    plain = regex.compile(email.pattern.split(")", 1)[1])
    assert _leading_run_reads(plain, "a" * 100) == 5050
    assert _leading_run_reads(email, "a" * 100) == 100
    assert sum(_leading_run_reads(rule.pattern, "a가") > 0 for rule in RULES) == 2


def test_26_d5_linear_rules_find_what_the_plain_patterns_find():
    import re as regex

    from piilab.baseline import RULES, _finditer

    texts = ["a@b.com.x@y.org", "x a@b.co-c@d.org and q@r.net", "mail: jo.hn+1@ex-ample.com.",
             "서울특별시 강남구 테헤란로 12호서울특별시 강남구 역삼로 3", "@@a@b.cc", ""]
    for rule in RULES:
        plain = regex.compile(rule.pattern.pattern.removeprefix(
            rule.pattern.pattern.split(")", 1)[0] + ")")
            if rule.pattern.pattern.startswith("(?<![") else rule.pattern.pattern)
        for text in texts:
            assert [m.span() for m in _finditer(rule, text)] == \
                [m.span() for m in plain.finditer(text)], (rule.label, text)


@pytest.mark.parametrize("make", [
    lambda n: "<think>" * (n // 7),
    lambda n: "<think></think>" * (n // 15),
    lambda n: "<think>x" * (n // 8) + "</think>",
], ids=["unclosed", "many-blocks", "nested"])
def test_26_d6_think_blocks_are_removed_in_linear_time(make):
    from piilab.parsing import remove_think_blocks

    _grows_linearly(remove_think_blocks, make, 20_000)
    # No regular expression either: inside one, `<think>.*?</think>` tried from each of
    # 20,000 unclosed tags reads the rest of the text each time, and nothing here could
    # count that.
    assert _work(remove_think_blocks, make(20_000)).regex == 0


def test_26_d6_think_removal_equals_the_repeated_leftmost_shortest_rule():
    import random
    import re as regex

    from piilab.parsing import remove_think_blocks

    block = regex.compile(r"<think>.*?</think>", regex.DOTALL)

    def reference(text: str) -> str:  # docs/contract.md, section 3, literally
        while (found := block.search(text)) is not None:
            text = text[:found.start()] + text[found.end():]
        return text

    rng = random.Random(26)
    atoms = ["<think>", "</think>", "<thi", "nk>", "</th", "ink>", "<", ">", "/", "a", "\n"]
    for _ in range(20_000):
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 12)))
        assert remove_think_blocks(text) == reference(text), text


HUGE = "9" * 5000


def test_26_d7_a_huge_number_is_an_error_naming_file_and_line(run, tmp_path):
    make_dataset(tmp_path)
    replace_line(tmp_path / "data" / "test.jsonl", 1, b'{"n": ' + HUGE.encode() + b"}")
    code, _, err = run("verify", "data")
    assert code == 1 and "test.jsonl:2: a number has more digits than Python reads" in err
    make_dataset(tmp_path, "clean")
    write(tmp_path, "preds.jsonl", '{"id": ' + HUGE + "}\n")
    code, _, err = run("evaluate", "--records", "clean/test.jsonl", "--predictions",
                       "preds.jsonl")
    assert code == 2 and "preds.jsonl:1: a number has more digits" in err
    doc_files(tmp_path)
    write(tmp_path, "map.json", '{"[PERSON_1]": ' + HUGE + "}")
    code, _, err = run(*unmask_args("--out", "back.txt"))
    assert code == 2 and "map.json: a number has more digits" in err
    assert err.count("\n") == 1


def test_26_d8_verify_reports_a_list_language_as_a_failure(run, tmp_path):
    make_dataset(tmp_path)
    with_record(tmp_path, "validation", 1, language=["en"])
    code, _, err = run("verify", "data")
    assert code == 1 and "validation.jsonl:2: field 'language' must be str" in err


def _forged_model(root: Path, marker: str | None = None) -> Path:
    from dataclasses import asdict

    from piilab.models import MODELS

    folder = root / "models" / "smollm2-135m"
    (folder / "gguf").mkdir(parents=True)
    source = MODELS["smollm2-135m"]
    (folder / "config.json").write_text("{}")
    (folder / "gguf" / Path(source.member).name).write_bytes(b"not the model")
    (folder / "piilab_model.json").write_text(
        marker if marker is not None else json.dumps({**asdict(source), "files": {}}))
    return folder


@pytest.mark.parametrize(("marker", "says"), [
    (None, "not the pinned GGUF file"),
    ("{broken", "piilab_model.json: malformed JSON"),
    ("[]", "piilab_model.json: not a model record"),
], ids=["forged", "corrupt-marker", "not-an-object"])
def test_26_d9_fetch_model_hashes_a_cached_folder(run, tmp_path, monkeypatch, marker, says):
    monkeypatch.setenv("PIILAB_CACHE", str(tmp_path / "cache"))
    folder = _forged_model(tmp_path / "cache", marker)
    code, out, err = run("fetch-model", "smollm2-135m")
    assert code == 2 and says in err and "--force" in err and "verified" not in out
    assert str(folder) in err
    assert err.count("\n") == 1


def test_26_d9_a_changed_converted_file_is_found(tmp_path):
    from piilab.models import MODELS, ModelError, _file_hashes, verify_model_dir
    from piilab.models import file_sha256 as _sha256

    folder = _forged_model(tmp_path)
    source = MODELS["smollm2-135m"]
    gguf = folder / "gguf" / Path(source.member).name
    marker = json.loads((folder / "piilab_model.json").read_text())
    marker["files"] = _file_hashes(folder)
    (folder / "piilab_model.json").write_text(json.dumps(marker))
    fake_pins = {"gguf_sha256": _sha256(gguf)}
    import dataclasses

    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(MODELS, "smollm2-135m", dataclasses.replace(source, **fake_pins))
        marker["gguf_sha256"] = fake_pins["gguf_sha256"]
        (folder / "piilab_model.json").write_text(json.dumps(marker))
        assert "2 files against" in verify_model_dir("smollm2-135m", folder)["verified"]
        (folder / "config.json").write_text('{"x": 1}')
        with pytest.raises(ModelError, match=r"config\.json: SHA-256 differs"):
            verify_model_dir("smollm2-135m", folder)
        (folder / "extra.safetensors").write_bytes(b"")
        with pytest.raises(ModelError, match="not in its record"):
            verify_model_dir("smollm2-135m", folder)


_KILLED_WRITER = """
import os, signal, sys
from pathlib import Path
from piilab.files import write_all
real, calls = os.replace, []
def replace(src, dst):
    real(src, dst)
    calls.append(dst)
    if len(calls) == int(sys.argv[2]):
        os.kill(os.getpid(), signal.SIGKILL)
os.replace = replace
folder = Path(sys.argv[1])
write_all([(folder / name, b"new " + name.encode(), 0o600) for name in ("a", "b", "c")])
"""


@pytest.mark.parametrize("killed_after", [1, 2, 3])
def test_26_d10_a_later_run_undoes_and_removes_what_a_killed_run_left(tmp_path, killed_after):
    import subprocess

    from piilab.files import recover

    files = _three(tmp_path)
    done = subprocess.run([sys.executable, "-c", _KILLED_WRITER, str(tmp_path),
                           str(killed_after)], capture_output=True, timeout=60)
    assert done.returncode == -9
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(".piilab-")]
    assert any(name.endswith(".jnl") for name in left) and any(
        name.endswith(".bak") for name in left)  # hard links to the old content
    assert recover(tmp_path) == len(left)
    assert [p.read_text() for p in files] == ["old a", "old b", "old c"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "c"]


def test_26_d10_a_write_into_the_folder_cleans_up_first(tmp_path):
    import subprocess

    files = _three(tmp_path)
    subprocess.run([sys.executable, "-c", _KILLED_WRITER, str(tmp_path), "2"], timeout=60)
    write_atomic(tmp_path / "d", b"d")  # any later write into the folder
    assert [p.read_text() for p in files] == ["old a", "old b", "old c"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "c", "d"]


@pytest.mark.parametrize(("name", "call", "renamed"), [
    ("fsync", 2, False),  # while staging: the old dataset stays
    ("replace", 2, True),  # between two renames: held back until all four are in place
])
def test_26_d10_sigterm_ends_a_command_like_ctrl_c(run, tmp_path, monkeypatch, name, call,
                                                   renamed):
    import signal

    old = make_dataset(tmp_path, seed=7)
    before = snapshot(old)
    real, counter = getattr(os, name), itertools.count(1)

    def fake(*args, **kwargs):
        result = real(*args, **kwargs)
        if next(counter) == call:
            signal.raise_signal(signal.SIGTERM)
        return result

    previous = signal.getsignal(signal.SIGTERM)
    with monkeypatch.context() as faults:
        faults.setattr(os, name, fake)
        code, out, err = run("generate", "--out", "data", "--force")
    assert signal.getsignal(signal.SIGTERM) is previous  # main put the handler back
    assert code == 143 and err == ("piilab: error: interrupted by SIGTERM (every output is as "
                                   "before or complete: none half-written)\n") and out == ""
    assert (snapshot(old) != before) == renamed
    assert run("verify", "data")[0] == 0
    assert not [p for p in old.iterdir() if p.name.startswith(".piilab-")]


def test_26_d11_an_interruption_at_start_up_is_one_line(run, monkeypatch):
    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    code, out, err = run("stats", "data")
    assert code == 130 and err.startswith("piilab: error: interrupted") and err.count("\n") == 1
    assert out == ""


def _finance_build_dir(root: Path) -> Path:
    folder = root / "fin"
    folder.mkdir()
    good = {"source_text": "x", "masked_text": "x", "privacy_mask": [], "language": "en",
            "split": "train", "uid": "domain/en/train/a/000001", "source_dataset": "domain",
            "tokens": ["x"], "token_classes": ["O"]}
    write(folder, "train.jsonl", "\n".join([json.dumps(good), "[1, 2]", "{broken",
                                            '{"n": ' + HUGE + "}"]) + "\n")
    write(folder, "validation.jsonl", json.dumps({**good, "split": "validation"}) + "\n")
    write(folder, "train.parquet", b"PAR1 not parquet")
    write(folder, "validation.parquet", b"")
    write(folder, "build_report.json", "{not json")
    write(folder, "README.md", b"\xff")
    return folder


def test_26_d12_finance_verify_fails_checks_instead_of_crashing(run, tmp_path):
    pytest.importorskip("bpe_openai", reason="needs the finance extra")
    pytest.importorskip("pyarrow", reason="needs the finance extra")
    from piilab.finance.verify import verify_build

    report = verify_build(_finance_build_dir(tmp_path))
    assert not report.ok
    assert {"train.jsonl:2", "train.jsonl:3", "train.jsonl:4"} <= set(report.examples["schema"])
    assert report.failed["parquet"] == 2 and report.failed["card"] >= 2
    code, out, err = run("finance", "verify", "fin")
    assert code == 2 and "Traceback" not in out + err
    assert "(first at train.jsonl:3, train.jsonl:4, train.jsonl:2, validation.jsonl:1)" in out


@pytest.mark.parametrize(("argv", "says"), [
    (["generate", "--out", "big", "--scale", "1000000000"], "the limit is --scale 100"),
    (["generate", "--out", "big", "--profile", "wide", "--records", "10000000000"],
     "the limit is --records 1,000,000"),
    (["finance", "build", "--out", "big", "--rows", "1000000000000"],
     "the limit is --rows 500,000"),
], ids=["scale", "wide-records", "finance-rows"])
def test_26_d13_sizes_have_a_limit_and_an_estimate(run, tmp_path, argv, says):
    code, _, err = run(*argv)
    assert code == 2 and says in err and "would write" in err and "about" in err
    assert not (tmp_path / "big").exists()


def test_26_d13_a_size_larger_than_the_free_space_is_refused(run, tmp_path, monkeypatch):
    import shutil

    monkeypatch.setattr(shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(1, 1, 1000))
    code, _, err = run("generate", "--out", "big", "--scale", "2")
    assert code == 2 and "only 1.0 kB is free" in err and not (tmp_path / "big").exists()


def test_26_d14_finance_build_on_a_full_disk_leaves_no_empty_folder(run, tmp_path, monkeypatch):
    pytest.importorskip("bpe_openai", reason="needs the finance extra")
    from piilab.finance import build

    def full(out, rows, *, force=False):
        Path(out).mkdir(mode=0o700, exist_ok=True)
        raise OSError(errno.ENOSPC, "No space left on device", str(Path(out) / "train.jsonl"))

    monkeypatch.setattr(build, "build_rows", lambda rows, seed: object())
    monkeypatch.setattr(build, "write_build", full)
    code, _, err = run("finance", "build", "--out", "fin", "--rows", "20")
    assert code == 2 and "No space left" in err and not (tmp_path / "fin").exists()


def test_26_d15_predict_and_tiny_model_say_what_is_wrong(run, tmp_path):
    make_dataset(tmp_path)
    (tmp_path / "empty").mkdir()
    code, _, err = run("predict", "--model", "empty", "--data-dir", "data", "--out", "p.jsonl")
    assert code == 2 and "empty: no model in this folder (no adapter_config.json" in err
    code, _, err = run("tiny-model", "--out", "tiny", "--data-dir", "data", "--hidden-size", "-5")
    assert code == 2 and "hidden_size must be an integer from 1 to 4096" in err
    code, _, err = run("tiny-model", "--out", "tiny", "--data-dir", "data", "--hidden-size", "10")
    assert code == 2 and "multiple of 2 x num_attention_heads (8)" in err
    assert not (tmp_path / "tiny").exists() and not (tmp_path / "p.jsonl").exists()


@pytest.mark.parametrize(("argv", "says"), [
    (["generate", "--out", "x", "--scale", "many"],
     "argument --scale: invalid int value: 'many' (see: piilab generate --help)"),
    (["mask", "--in", "doc.txt"], "the following arguments are required: --candidates"),
    (["no-such-command"], "invalid choice: 'no-such-command'"),
    (["stats", "a\nb\x1b[2J"], "a\\nb\\x1b[2J/train.jsonl: file is missing"),
], ids=["invalid-int", "missing", "unknown-command", "newline-in-path"])
def test_26_d16_usage_errors_and_paths_make_one_line(run, argv, says):
    code, out, err = run(*argv)
    assert code == 2 and err.startswith("piilab: error: ") and err.count("\n") == 1
    assert says in err and out == ""


def test_26_d18_library_arguments_are_checked():
    from piilab import parse_model_output, reassemble_text

    with pytest.raises(TypeError, match="string"):
        reassemble_text(None, {})
    with pytest.raises(TypeError, match="entry 1"):
        reassemble_text("[PERSON_1]", {"[PERSON_1]": None})
    with pytest.raises(TypeError, match="mapping"):
        reassemble_text("[PERSON_1]", [("[PERSON_1]", "x")])
    with pytest.raises(TypeError, match="not one string"):
        parse_model_output("PERSON\tKim", "Kim", allowed_types="PERSON")
    with pytest.raises(TypeError, match="only strings"):
        parse_model_output("PERSON\tKim", "Kim", allowed_types=[None])
    assert parse_model_output("PERSON\tKim", "Kim", allowed_types=("PERSON",)).candidates


# --- hostile run of 2026-12-06 (../shared/reviews/hostile-4.md) ----------------------------


def test_27_n19_an_empty_out_path_is_refused_not_sent_to_stdout(run, tmp_path):
    write(tmp_path, "a.txt", f"A: {SECRET}\n")
    write(tmp_path, "ca.tsv", f"PERSON\t{SECRET}\n")
    assert run("mask", "--candidates", "ca.tsv", "--in", "a.txt", "--out", "a.masked",
               "--mapping", "map.json")[0] == 0
    code, out, err = run("unmask", "--mapping", "map.json", "--in", "a.masked", "--out", "")
    assert code == 2 and SECRET not in out and SECRET not in err and "--out" in err
    code, out, err = run("mask", "--candidates", "ca.tsv", "--in", "a.txt", "--out", "",
                         "--mapping", "map2.json")
    assert code == 2 and out == "" and not (tmp_path / "map2.json").exists()


@pytest.mark.parametrize("option, value", [("--rows-per-file", "0"), ("--blocks", "-3"),
                                           ("--batch-size", "0")])
def test_27_n18_zero_and_negative_sizes_are_refused(run, tmp_path, option, value):
    write(tmp_path, "c.jsonl", json.dumps({"id": "a", "source_text": SECRET}) + "\n")
    code, _, err = run("mask-corpus", "--input", "c.jsonl", "--out", "o", "--detector", "rules",
                       option, value)
    assert code == 2 and "at least 1" in err and not (tmp_path / "o").exists()


@pytest.mark.parametrize("detector, message", [("", "empty"), ("empty-dir", "no model"),
                                               ("missing", "neither")])
def test_27_n16_a_detector_that_names_nothing_is_one_clear_line(run, tmp_path, detector,
                                                                 message):
    (tmp_path / "empty-dir").mkdir()
    write(tmp_path, "c.jsonl", json.dumps({"id": "a", "source_text": SECRET}) + "\n")
    code, _, err = run("mask-corpus", "--input", "c.jsonl", "--out", "o",
                         "--detector", detector)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert "Error at" not in err and not (tmp_path / "o").exists()
