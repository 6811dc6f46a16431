"""`piilab audit` and `piilab resplit`: leakage audit, family split, augmentation (chapter 05).

``piilab audit DIR [--json OUT]`` prints what every pair of splits shares
(`piilab.splits.audit_splits`). ``piilab resplit DIR --out DIR2 [--augment N]
[--seed S]`` writes a family split of DIR, with N augmented copies per
training record (`piilab.augment`), as a dataset directory with a manifest
that ``piilab verify DIR2`` accepts. Both print counts, ids of families and
paths only: never source text or values.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from piilab.augment import AugmentError, augment_records
from piilab.cli import CLIError
from piilab.dataset import (
    MANIFEST,
    DatasetError,
    atomic_write,
    build_manifest,
    load_dataset_dir,
    manifest_bytes,
    split_bytes,
)
from piilab.generator import DEFAULT_SEED, SPLITS
from piilab.splits import (
    DEFAULT_TARGETS,
    SplitError,
    audit_splits,
    family_split,
    leak_free,
    split_deviation,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("audit", help="count what the splits of a dataset share (leakage)")
    p.add_argument("dir", help="dataset directory (train/validation/test.jsonl)")
    p.add_argument("--json", dest="json_out", help="also write the full audit as JSON here")
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
                   help="target weights of train,validation,test (default 80,10,10)")
    p.add_argument("--force", action="store_true",
                   help="overwrite an output directory that holds a different dataset")
    p.set_defaults(func=cmd_resplit)


def _load(directory: str) -> dict[str, list[dict]]:
    try:
        return load_dataset_dir(directory)
    except DatasetError as exc:
        raise CLIError(str(exc)) from None


def format_audit(audit: dict) -> str:
    """The audit as a plain-text table (counts only)."""
    lines = [f"{'split':<12}{'records':>9}{'unique sources':>16}{'families':>10}"
             f"{'skeletons':>11}"]
    for name, s in audit["splits"].items():
        lines.append(f"{name:<12}{s['records']:>9}{s['unique_sources']:>16}{s['families']:>10}"
                     f"{s['skeletons']:>11}")
    lines.append("")
    lines.append(f"{'pair':<18}{'exact duplicates':>18}{'shared families':>17}"
                 f"{'shared skeletons':>18}")
    for pair, p in audit["pairs"].items():
        lines.append(f"{pair:<18}{p['exact_duplicates']:>18}{p['shared_families']:>17}"
                     f"{p['shared_skeletons']:>18}")
    lines.append("")
    lines.append("records of the second split of a pair that share a source, a family or a "
                 "skeleton with the first:")
    for pair, p in audit["pairs"].items():
        second = pair.split("/")[1]
        total = audit["splits"][second]["records"]
        lines.append(f"  {pair:<18} source {p['exact_duplicate_records'][second]:>5}/{total}"
                     f"   family {p['shared_family_records'][second]:>5}/{total}"
                     f"   skeleton {p['shared_skeleton_records'][second]:>5}/{total}")
    lines.append("")
    lines.append(f"unique sources in two or more splits (groups spanning splits): "
                 f"{audit['groups_spanning_splits']}")
    lines.append(f"families in two or more splits: {audit['families_spanning_splits']}")
    lines.append(f"skeletons in two or more splits: {audit['skeletons_spanning_splits']}")
    lines.append("verdict: " + ("no shared source, family or skeleton across splits"
                                if leak_free(audit) else "the splits share the counts above"))
    return "\n".join(lines)


def _json_bytes(data: dict) -> bytes:
    return (json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2) + "\n").encode()


def cmd_audit(args: argparse.Namespace) -> int:
    splits = _load(args.dir)
    try:
        audit = audit_splits(splits)
    except SplitError as exc:
        raise CLIError(str(exc)) from None
    print(f"leakage audit of {args.dir}")
    print(format_audit(audit))
    if args.json_out:
        atomic_write(Path(args.json_out), _json_bytes(audit))
        print(f"wrote {args.json_out}")
    return 0


def _targets(text: str | None) -> dict[str, float]:
    if text is None:
        return dict(DEFAULT_TARGETS)
    try:
        weights = [float(part) for part in text.split(",")]
    except ValueError:
        raise CLIError("--targets takes three numbers, e.g. 80,10,10") from None
    if len(weights) != len(SPLITS) or any(w < 0 for w in weights) or sum(weights) <= 0:
        raise CLIError("--targets takes three non-negative numbers, e.g. 80,10,10")
    return dict(zip(SPLITS, weights, strict=True))


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
    if out.resolve() == src.resolve():
        raise CLIError("--out must be a different directory from the input")
    targets = _targets(args.targets)
    splits = _load(args.dir)
    records = [r for name in SPLITS for r in splits[name]]
    try:
        resplit = family_split(records, targets, seed=args.seed)
    except SplitError as exc:
        raise CLIError(str(exc)) from None
    deviation = split_deviation(resplit, targets)
    # Augment the training split only, after the split, with no held-out value.
    held_out = [e["value"] for name in SPLITS if name != "train"
                for r in resplit[name] for e in r["entities"]]
    try:
        augmented = augment_records(resplit["train"], args.augment, seed=args.seed,
                                    exclude_values=held_out)
    except AugmentError as exc:
        raise CLIError(str(exc)) from None
    resplit["train"] = resplit["train"] + augmented
    audit = audit_splits(resplit)

    blobs = {name: split_bytes(resplit[name]) for name in SPLITS}
    source_manifest = src / MANIFEST
    try:
        generator_seed = json.loads(source_manifest.read_text(encoding="utf-8")).get(
            "seed", DEFAULT_SEED)
        source_sha = hashlib.sha256(source_manifest.read_bytes()).hexdigest()
    except (OSError, ValueError, AttributeError):
        raise CLIError(f"{source_manifest}: missing or malformed manifest") from None
    manifest = build_manifest(generator_seed, blobs, resplit)
    manifest["derived_from"] = {"manifest_sha256": source_sha, "method": "family_split",
                                "seed": args.seed, "targets": deviation["targets"],
                                "max_fraction_deviation": deviation["max_fraction_deviation"]}
    manifest["augment"] = {"copies_per_record": args.augment, "seed": args.seed,
                           "records": len(augmented)}
    new_manifest = manifest_bytes(manifest)

    out.mkdir(parents=True, exist_ok=True)
    old = out / MANIFEST
    differs = old.read_bytes() != new_manifest if old.exists() else any(out.glob("*.jsonl"))
    if differs and not args.force:
        raise CLIError(f"{out} holds a different dataset; use --force to overwrite")
    for name in SPLITS:
        atomic_write(out / f"{name}.jsonl", blobs[name])
    atomic_write(out / MANIFEST, new_manifest)

    print(f"family split of {args.dir} (seed {args.seed}, targets "
          + "/".join(f"{w:g}" for w in targets.values()) + ")")
    print(format_deviation(deviation))
    print(f"augmented training records: {len(augmented)} ({args.augment} per record "
          f"requested); training records in all: {len(resplit['train'])}")
    print("re-audit: " + ("zero shared sources, families and skeletons"
                          if leak_free(audit) else "NOT leak-free (see piilab audit)"))
    print(f"wrote {out}/manifest.json; check it with: piilab verify {out}")
    return 0 if leak_free(audit) else 1
