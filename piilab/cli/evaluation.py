"""`piilab evaluate`, `piilab oracle`, `piilab baseline` (chapter 04).

Errors name the file and line of the offending record, never its id or a value
(an id is data too). ``evaluate --bootstrap N [--seed S]`` adds bootstrap intervals
over documents (one line per metric); ``--compare OTHER`` scores a second
predictions file on the same records and prints the paired differences with their
intervals and verdicts (1000 resamples unless ``--bootstrap`` says otherwise); with
``--json`` the file gains a ``bootstrap`` and a ``compare`` block beside the result
(``EvaluationResult.from_dict`` still reads it). ``baseline --out`` (predictions
repeat PII: mode 0600) and ``evaluate --json`` (metrics only: the umask's mode)
never replace an input file, and replace an existing file only with ``--force``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from piilab.baseline import baseline_output
from piilab.cli import CLIError, doing
from piilab.dataset import dataset_files, load_dataset_lines, read_jsonl_lines
from piilab.evaluation import (
    DocumentCounts,
    EvaluationError,
    EvaluationResult,
    bootstrap_counts,
    format_report,
    oracle_predictions,
    paired_bootstrap_counts,
    score_documents,
    summarize,
)
from piilab.files import check_outputs, write_atomic
from piilab.generator import SPLITS
from piilab.predictions import make_prediction, write_predictions


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("evaluate", help="score a predictions file against its records")
    p.add_argument("--records", required=True, help="records JSONL (e.g. data/test.jsonl)")
    p.add_argument("--predictions", required=True, help='JSONL of {"id","output","parse_success"}')
    p.add_argument("--json", dest="json_out", help="also write the result as JSON here")
    p.add_argument("--force", action="store_true", help="replace the --json file if it exists")
    p.add_argument("--bootstrap", type=_resample_count, default=None, metavar="N",
                   help="95%% bootstrap intervals over documents from N resamples")
    p.add_argument("--seed", type=int, default=0, help="seed of the resampling (default 0)")
    p.add_argument("--compare", metavar="OTHER",
                   help="a second predictions file on the same records: paired differences "
                        "(--predictions minus OTHER) with intervals and verdicts")
    p.set_defaults(func=cmd_evaluate)

    p = subparsers.add_parser("oracle", help="feed every target_tsv back: must score perfectly")
    p.add_argument("dir", help="dataset directory")
    p.set_defaults(func=cmd_oracle)

    p = subparsers.add_parser("baseline", help="write rule-based baseline predictions")
    p.add_argument("dir", help="dataset directory")
    p.add_argument("--split", default="test", choices=SPLITS)
    p.add_argument("--out", required=True, help="predictions JSONL to write (mode 0600)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.set_defaults(func=cmd_baseline)


Located = list[tuple[str, int]]  # (file, line) of each record, in order

#: Resamples when ``--compare`` is given without ``--bootstrap``.
DEFAULT_RESAMPLES = 1000


def _resample_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("N must be a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("N must be at least 1")
    return value


def _read(path: str) -> tuple[list[dict], Located]:
    with doing("cannot read"):
        lines = read_jsonl_lines(path)
    return [record for _, record in lines], [(path, lineno) for lineno, _ in lines]


def _load(directory: str) -> tuple[dict[str, list[dict]], dict[str, Located]]:
    with doing("cannot read"):
        splits = load_dataset_lines(directory, validate=True)
    return ({name: [record for _, record in lines] for name, lines in splits.items()},
            {name: [(str(Path(directory) / f"{name}.jsonl"), n) for n, _ in lines]
             for name, lines in splits.items()})


def _score(records: list[dict], predictions: list[dict],
           where: dict[str, Located]) -> tuple[EvaluationResult, list[DocumentCounts]]:
    """`evaluate` and the per-document counts, with an error pointing at the file and line
    of the record at fault."""
    try:
        scores = score_documents(records, predictions)
    except EvaluationError as exc:
        if exc.source in where and exc.index is not None:
            path, lineno = where[exc.source][exc.index]
            raise CLIError(f"{path}:{lineno}: {exc.reason}") from None
        raise CLIError("the records or predictions are invalid") from None
    return summarize(scores), [DocumentCounts.from_score(s) for s in scores]


def _evaluate(records: list[dict], predictions: list[dict],
              where: dict[str, Located]) -> EvaluationResult:
    return _score(records, predictions, where)[0]


def cmd_evaluate(args: argparse.Namespace) -> int:
    inputs = [args.records, args.predictions] + ([args.compare] if args.compare else [])
    check_outputs([args.json_out], inputs=inputs, force=args.force)
    records, record_lines = _read(args.records)
    predictions, prediction_lines = _read(args.predictions)
    result, counts = _score(records, predictions,
                            {"records": record_lines, "predictions": prediction_lines})
    payload = result.to_dict()
    lines = [format_report(result, title=f"{Path(args.predictions).name} on "
                                         f"{Path(args.records).name} ({len(records)} documents)")]
    if args.bootstrap:
        intervals = bootstrap_counts(counts, n=args.bootstrap, seed=args.seed)
        payload["bootstrap"] = intervals.to_dict()
        lines += ["", intervals.format()]
    if args.compare:
        other_predictions, other_lines = _read(args.compare)
        other, other_counts = _score(records, other_predictions,
                                     {"records": record_lines, "predictions": other_lines})
        n = args.bootstrap or DEFAULT_RESAMPLES
        paired = paired_bootstrap_counts(counts, other_counts, n=n, seed=args.seed)
        payload["compare"] = {"result": other.to_dict(), "paired": paired.to_dict()}
        lines += ["", format_report(other, title=f"{Path(args.compare).name} on "
                                                 f"{Path(args.records).name} "
                                                 f"({len(records)} documents)")]
        if args.bootstrap:
            other_intervals = bootstrap_counts(other_counts, n=n, seed=args.seed)
            payload["compare"]["bootstrap"] = other_intervals.to_dict()
            lines += ["", other_intervals.format()]
        lines += ["", f"paired bootstrap ({n} resamples, seed {args.seed}): "
                      f"A = {Path(args.predictions).name}, B = {Path(args.compare).name}",
                  paired.format(names=("A", "B"))]
    if args.json_out:  # written before anything is printed: an error prints one line only
        with doing("cannot write"):
            write_atomic(args.json_out,
                         (json.dumps(payload, indent=2, sort_keys=True) + "\n").encode())
    print("\n".join(lines))
    if args.json_out:
        print(f"wrote {args.json_out}")
    return 0


def cmd_oracle(args: argparse.Namespace) -> int:
    splits, lines = _load(args.dir)
    records = [r for split in SPLITS for r in splits[split]]
    result = _evaluate(records, oracle_predictions(records),
                       {"records": [where for split in SPLITS for where in lines[split]]})
    print(format_report(result, title=f"oracle on all splits ({len(records)} documents)"))
    perfect = (result.entity.f1 == 1.0 and result.documents.leak_rate == 0.0
               and result.entities.leak_rate == 0.0
               and result.entities.hallucination_rate == 0.0
               and result.tokenization.deterministic_rate == 1.0
               and result.tokenization.round_trip_rate == 1.0)
    print("oracle check: " + ("PASS" if perfect else "FAIL (the machinery has a bug)"))
    return 0 if perfect else 1


def cmd_baseline(args: argparse.Namespace) -> int:
    check_outputs([args.out], inputs=dataset_files(args.dir), force=args.force)
    records = _load(args.dir)[0][args.split]
    predictions = [make_prediction(r["id"], baseline_output(r["source_text"]), r["source_text"])
                   for r in records]
    with doing("cannot write"):
        n = write_predictions(args.out, predictions)
    print(f"wrote {n} baseline predictions for split '{args.split}' to {args.out}")
    return 0
