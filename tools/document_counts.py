"""Per-document counts of recorded systems on the holdout, for bootstrap intervals.

    .venv/bin/python tools/document_counts.py \\
        --system "NAME=runs/record-.../predictions_holdout.jsonl" [--system ...] \\
        --out results/holdout_counts.json

(the file's ``produced_by`` gives the full command that wrote it).

A row of ``results/runs.jsonl`` keeps a system's totals; a paired bootstrap
(`piilab.evaluation.paired_bootstrap_counts`) needs what each document added. For each
``NAME=PREDICTIONS`` (the predictions file ``tools/record_run.py`` left in the run's
folder under ``runs/``, which is not committed), this scores the predictions on the 100
hand-written holdout documents and keeps, per document in holdout order, its
`piilab.evaluation.DocumentCounts` (tp, fp, fn, gold pairs, leaked pairs). It refuses a
system whose counts do not give the holdout metrics of its last recorded row (the row of
that ``system`` name), so that the file describes the recorded run and nothing else.

The file holds numbers only: the counts, the SHA-256 of the holdout and of each
predictions file, the run id of each row and the command. No document id, text or value.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from piilab.course.results import latest_systems, read_runs
from piilab.dataset import read_jsonl
from piilab.evaluation import document_counts, evaluate
from piilab.files import write_atomic

REPO = Path(__file__).resolve().parent.parent
HOLDOUT = REPO / "data" / "holdout" / "holdout.jsonl"
RUNS = REPO / "results" / "runs.jsonl"
FIELDS = ("tp", "fp", "fn", "gold", "leaked")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def system_block(name: str, predictions_path: Path, holdout: list[dict], row: dict) -> dict:
    """The counts of one system, checked against the holdout metrics of its recorded row."""
    predictions = read_jsonl(predictions_path)
    counts = document_counts(holdout, predictions)
    recorded = row["holdout"]["metrics"]
    result = evaluate(holdout, predictions)
    same = (result.entity.tp, result.entity.fp, result.entity.fn,
            result.documents.leak_rate) == (
        recorded["entity"]["tp"], recorded["entity"]["fp"], recorded["entity"]["fn"],
        recorded["documents_leak_rate"])
    if not same:
        raise SystemExit(f"{name}: {predictions_path} does not give the holdout metrics of "
                         f"run {row['run_id']}")
    return {"run_id": row["run_id"], "predictions_sha256": _sha256(predictions_path),
            "counts": [[getattr(c, field) for field in FIELDS] for c in counts]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system", action="append", required=True, metavar="NAME=PREDICTIONS")
    parser.add_argument("--out", default=str(REPO / "results" / "holdout_counts.json"))
    args = parser.parse_args(argv)
    holdout = read_jsonl(HOLDOUT)
    rows = latest_systems(read_runs(RUNS))
    systems = {}
    for spec in args.system:
        name, _, path = spec.partition("=")
        if name not in rows or "holdout" not in rows[name]:
            parser.error(f"no recorded row with a holdout block for system {name!r}")
        systems[name] = system_block(name, Path(path), holdout, rows[name])
    data = {
        "records": "data/holdout/holdout.jsonl",
        "records_sha256": _sha256(HOLDOUT),
        "documents": len(holdout),
        "fields": list(FIELDS),
        "systems": systems,
        "produced_by": "tools/document_counts.py " + " ".join(
            f"--system '{spec}'" for spec in args.system),
    }
    write_atomic(args.out, (json.dumps(data, ensure_ascii=False) + "\n").encode())
    print(f"wrote {args.out}: {len(systems)} systems x {len(holdout)} documents")
    return 0


if __name__ == "__main__":
    sys.exit(main())
