"""`piilab audit` and `piilab resplit`: leakage audit, family split, augmentation (chapter 05).

``piilab audit DIR [--json OUT]`` prints what every pair of splits shares
(`piilab.splits.audit_splits`). ``piilab resplit DIR --out DIR2 [--augment N]
[--seed S]`` writes a family split of DIR, with N augmented copies per
training record (`piilab.augment`), as a dataset directory with a manifest
that ``piilab verify DIR2`` accepts. Both print counts, ids of families and
paths only: never source text or values; errors name files and line numbers.

Writing: ``--json`` never replaces an input and replaces an existing file only
with ``--force``. ``resplit`` writes its four files as ``piilab generate`` does:
all or none, ``--force`` to replace a different dataset, files with the umask's
mode (the corpus is synthetic; see ``piilab generate --help``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
from pathlib import Path

from piilab.augment import augment_records
from piilab.cli import CLIError, doing
from piilab.dataset import (
    MANIFEST,
    build_manifest,
    dataset_files,
    load_dataset_dir,
    load_dataset_lines,
    manifest_bytes,
    save_dataset,
    split_bytes,
)
from piilab.files import check_outputs, write_atomic
from piilab.generator import DEFAULT_SEED, SPLITS
from piilab.inputs import loads_json
from piilab.records import gold_problems
from piilab.splits import (
    DEFAULT_TARGETS,
    SplitAudit,
    audit_splits,
    family_split,
    leak_free,
    split_deviation,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("audit", help="count what the splits of a dataset share (leakage)")
    p.add_argument("dir", help="dataset directory (train/validation/test.jsonl)")
    p.add_argument("--json", dest="json_out", help="also write the full audit as JSON here")
    p.add_argument("--force", action="store_true", help="replace the --json file if it exists")
    p.set_defaults(func=cmd_audit)

    p = subparsers.add_parser(
        "resplit", help="write a family-level split, with training-only augmentation")
    p.add_argument("dir", help="dataset directory to read")
    p.add_argument("--out", required=True, help="output directory (a new dataset directory)")
    p.add_argument("--augment", type=int, default=0, metavar="N",
                   help="augmented copies per training record (default 0)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the split's tie-breaks and of augmentation (default 0)")
    p.add_argument("--targets", default=None, metavar="T,V,T",
                   help="target weights of train,validation,test: finite, non-negative "
                        "(default 80,10,10)")
    p.add_argument("--force", action="store_true",
                   help="replace a different dataset in --out (all four files or none)")
    p.set_defaults(func=cmd_resplit)


def _load(directory: str) -> dict[str, list[dict]]:
    with doing("cannot read"):
        return load_dataset_dir(directory, validate=True)


def _load_checked(directory: str, copies: int) -> tuple[list[dict], list[str]]:
    """Every record of the dataset, in split order, and its ``file:line``.

    Checked here, before any work, so that every message names the line of
    the record at fault and never its id: the fields (`validate_record`), ids
    unique across the splits, the gold annotation (`piilab.records.gold_problems`,
    which augmentation needs) and the ids the augmented copies will take.
    """
    with doing("cannot read"):
        lines = load_dataset_lines(directory, validate=True)
    records, where = [], []
    for name in SPLITS:
        for lineno, record in lines[name]:
            records.append(record)
            where.append(f"{Path(directory) / f'{name}.jsonl'}:{lineno}")
    first: dict[str, str] = {}
    for record, place in zip(records, where, strict=True):
        if record["id"] in first:
            raise CLIError(f"{place}: duplicate id (first at {first[record['id']]})")
        first[record["id"]] = place
    for record, place in zip(records, where, strict=True):
        problems = gold_problems(record)
        if problems:
            reason = problems[0].removeprefix(f"record {record['id']}: ")
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise CLIError(f"{place}: invalid gold annotation: {reason}{more}")
        for k in range(1, copies + 1):
            other = first.get(f"{record['id']}-aug{k}")
            if other is not None:
                raise CLIError(f"{place}: its augmented copy {k} would take the id of the "
                               f"record at {other}")
    return records, where


def format_audit(audit: SplitAudit) -> str:
    """The audit as a plain-text table (counts only)."""
    lines = [f"{'split':<12}{'records':>9}{'unique sources':>16}{'families':>10}"
             f"{'skeletons':>11}"]
    for name, s in audit.splits.items():
        lines.append(f"{name:<12}{s.records:>9}{s.unique_sources:>16}{s.families:>10}"
                     f"{s.skeletons:>11}")
    lines.append("")
    lines.append(f"{'pair':<18}{'exact duplicates':>18}{'shared families':>17}"
                 f"{'shared skeletons':>18}")
    for pair, p in audit.pairs.items():
        lines.append(f"{pair:<18}{p.exact_duplicates:>18}{p.shared_families:>17}"
                     f"{p.shared_skeletons:>18}")
    lines.append("")
    lines.append("records of the second split of a pair that share a source, a family or a "
                 "skeleton with the first:")
    for pair, p in audit.pairs.items():
        second = pair.split("/")[1]
        total = audit.splits[second].records
        lines.append(f"  {pair:<18} source {p.exact_duplicate_records[second]:>5}/{total}"
                     f"   family {p.shared_family_records[second]:>5}/{total}"
                     f"   skeleton {p.shared_skeleton_records[second]:>5}/{total}")
    lines.append("")
    lines.append(f"unique sources in two or more splits (groups spanning splits): "
                 f"{audit.groups_spanning_splits}")
    lines.append(f"families in two or more splits: {audit.families_spanning_splits}")
    lines.append(f"skeletons in two or more splits: {audit.skeletons_spanning_splits}")
    lines.append("verdict: " + ("no shared source, family or skeleton across splits"
                                if audit.leak_free else "the splits share the counts above"))
    return "\n".join(lines)


def _json_bytes(data: dict) -> bytes:
    return (json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2) + "\n").encode()


def cmd_audit(args: argparse.Namespace) -> int:
    check_outputs([args.json_out], inputs=dataset_files(args.dir), force=args.force)
    splits = _load(args.dir)
    audit = audit_splits(splits)  # validated records: every field it reads is there
    if args.json_out:  # written before anything is printed: an error prints one line only
        with doing("cannot write"):
            write_atomic(args.json_out, _json_bytes(audit.to_dict()))
    print(f"leakage audit of {args.dir}")
    print(format_audit(audit))
    if args.json_out:
        print(f"wrote {args.json_out}")
    return 0


def _targets(text: str | None) -> dict[str, float]:
    if text is None:
        return dict(DEFAULT_TARGETS)
    try:
        weights = [float(part) for part in text.split(",")]
    except ValueError:
        raise CLIError("--targets takes three numbers, e.g. 80,10,10") from None
    if (len(weights) != len(SPLITS) or any(not math.isfinite(w) or w < 0 for w in weights)
            or sum(weights) <= 0):
        raise CLIError("--targets takes three finite, non-negative numbers, not all zero, "
                       "e.g. 80,10,10")
    return dict(zip(SPLITS, weights, strict=True))


def _source_manifest(path: Path) -> tuple[int, str]:
    """The generator seed and the SHA-256 of the input's manifest."""
    try:
        blob = path.read_bytes()
    except OSError:
        raise CLIError(f"{path}: missing or unreadable manifest") from None
    # An InputError names the file and the reason, never the text.
    manifest = loads_json(blob, f"{path}: malformed manifest")
    if not isinstance(manifest, dict):
        raise CLIError(f"{path}: malformed manifest (not a JSON object)")
    seed = manifest.get("seed", DEFAULT_SEED)
    if type(seed) is not int:
        raise CLIError(f"{path}: field 'seed' must be an integer")
    return seed, hashlib.sha256(blob).hexdigest()


def format_deviation(report: dict) -> str:
    """Split sizes against their targets, per language."""
    lines = [f"{'split':<12}{'records':>9}{'target':>9}{'deviation':>11}{'ko':>7}{'en':>7}"
             f"{'negative':>10}"]
    for name, s in report["splits"].items():
        langs = s["languages"]
        negative = sum(v["records"] for k, v in s["strata"].items() if k.endswith("/negative"))
        lines.append(f"{name:<12}{s['records']:>9}{s['target_records']:>9.1f}"
                     f"{s['deviation']:>+11.1f}{langs.get('ko', {}).get('records', 0):>7}"
                     f"{langs.get('en', {}).get('records', 0):>7}{negative:>10}")
    lines.append(f"largest deviation of a split's fraction from its target: "
                 f"{report['max_fraction_deviation']:.2%}")
    missing = {name: [label for label, n in s["labels"].items() if n == 0]
               for name, s in report["splits"].items()}
    for name, labels in missing.items():
        if labels and report["splits"][name]["records"]:
            lines.append(f"labels absent from {name}: {', '.join(labels)}")
    return "\n".join(lines)


def cmd_resplit(args: argparse.Namespace) -> int:
    if args.augment < 0:
        raise CLIError("--augment must be zero or more")
    src, out = Path(args.dir), Path(args.out)
    if out.resolve() == src.resolve() or (out.is_dir() and src.is_dir()
                                          and out.samefile(src)):
        raise CLIError("--out must be a different directory from the input")
    targets = _targets(args.targets)
    records, _ = _load_checked(args.dir, args.augment)
    generator_seed, source_sha = _source_manifest(src / MANIFEST)
    resplit = family_split(records, targets, seed=args.seed)
    deviation = split_deviation(resplit, targets)
    # Augment the training split only, after the split, with no held-out value.
    held_out = [e["value"] for name in SPLITS if name != "train"
                for r in resplit[name] for e in r["entities"]]
    augmented = augment_records(resplit["train"], args.augment, seed=args.seed,
                                exclude_values=held_out)
    resplit["train"] = resplit["train"] + augmented
    audit = audit_splits(resplit)

    blobs = {name: split_bytes(resplit[name]) for name in SPLITS}
    manifest = build_manifest(generator_seed, blobs, resplit)
    manifest["derived_from"] = {"manifest_sha256": source_sha, "method": "family_split",
                                "seed": args.seed, "targets": deviation["targets"],
                                "max_fraction_deviation": deviation["max_fraction_deviation"]}
    manifest["augment"] = {"copies_per_record": args.augment, "seed": args.seed,
                           "records": len(augmented)}
    new_manifest = manifest_bytes(manifest)

    with doing("cannot write"):
        save_dataset(out, blobs, new_manifest, force=args.force, inputs=dataset_files(src))

    print(f"family split of {args.dir} (seed {args.seed}, targets "
          + "/".join(f"{w:g}" for w in targets.values()) + ")")
    print(format_deviation(deviation))
    print(f"augmented training records: {len(augmented)} ({args.augment} per record "
          f"requested); training records in all: {len(resplit['train'])}")
    print("re-audit: " + ("zero shared sources, families and skeletons"
                          if leak_free(audit) else "NOT leak-free (see piilab audit)"))
    print(f"wrote {out}/manifest.json; check it with: piilab verify {out}")
    return 0 if leak_free(audit) else 1
