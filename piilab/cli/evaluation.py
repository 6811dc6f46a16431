"""`piilab evaluate`, `piilab oracle`, `piilab baseline` (chapter 04)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from piilab.baseline import baseline_output
from piilab.cli import CLIError
from piilab.dataset import DatasetError, atomic_write, load_dataset_dir, read_jsonl
from piilab.evaluation import EvaluationError, evaluate, format_report, oracle_predictions
from piilab.generator import SPLITS
from piilab.inference import make_prediction


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("evaluate", help="score a predictions file against its records")
    p.add_argument("--records", required=True, help="records JSONL (e.g. data/test.jsonl)")
    p.add_argument("--predictions", required=True, help='JSONL of {"id","output","parse_success"}')
    p.add_argument("--json", dest="json_out", help="also write the result as JSON here")
    p.set_defaults(func=cmd_evaluate)

    p = subparsers.add_parser("oracle", help="feed every target_tsv back: must score perfectly")
    p.add_argument("dir", help="dataset directory")
    p.set_defaults(func=cmd_oracle)

    p = subparsers.add_parser("baseline", help="write rule-based baseline predictions")
    p.add_argument("dir", help="dataset directory")
    p.add_argument("--split", default="test", choices=SPLITS)
    p.add_argument("--out", required=True, help="predictions JSONL to write")
    p.set_defaults(func=cmd_baseline)


def _read(path: str) -> list[dict]:
    try:
        return read_jsonl(path)
    except FileNotFoundError:
        raise CLIError(f"{path}: file not found") from None
    except DatasetError as exc:
        raise CLIError(str(exc)) from None


def cmd_evaluate(args: argparse.Namespace) -> int:
    records, predictions = _read(args.records), _read(args.predictions)
    try:
        result = evaluate(records, predictions)
    except EvaluationError as exc:
        raise CLIError(str(exc)) from None
    print(format_report(result, title=f"{Path(args.predictions).name} on "
                                      f"{Path(args.records).name} ({len(records)} documents)"))
    if args.json_out:
        atomic_write(Path(args.json_out),
                     (json.dumps(result, indent=2, sort_keys=True) + "\n").encode())
        print(f"wrote {args.json_out}")
    return 0


def cmd_oracle(args: argparse.Namespace) -> int:
    try:
        splits = load_dataset_dir(args.dir)
    except DatasetError as exc:
        raise CLIError(str(exc)) from None
    records = [r for split in SPLITS for r in splits[split]]
    result = evaluate(records, oracle_predictions(records))
    print(format_report(result, title=f"oracle on all splits ({len(records)} documents)"))
    perfect = (result["entity"]["f1"] == 1.0 and result["documents"]["leak_rate"] == 0.0
               and result["entities"]["leak_rate"] == 0.0
               and result["entities"]["hallucination_rate"] == 0.0
               and result["tokenization"]["deterministic_rate"] == 1.0
               and result["tokenization"]["round_trip_rate"] == 1.0)
    print("oracle check: " + ("PASS" if perfect else "FAIL (the machinery has a bug)"))
    return 0 if perfect else 1


def cmd_baseline(args: argparse.Namespace) -> int:
    try:
        records = load_dataset_dir(args.dir)[args.split]
    except DatasetError as exc:
        raise CLIError(str(exc)) from None
    lines = []
    for r in records:
        pred = make_prediction(r["id"], baseline_output(r["source_text"]), r["source_text"])
        lines.append(json.dumps(pred, ensure_ascii=False, sort_keys=True) + "\n")
    atomic_write(Path(args.out), "".join(lines).encode("utf-8"), mode=0o600)
    print(f"wrote {len(lines)} baseline predictions for split '{args.split}' to {args.out}")
    return 0
