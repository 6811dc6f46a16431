"""Per-label scores and the commonest error kinds on the holdout (chapter 07's error analysis).

    .venv/bin/python tools/error_analysis.py \\
        --system "rule baseline=rules" \\
        --system "SmolLM2-135M + LoRA=results/adapters/smollm2-135m-lora-stage2" \\
        --system "SmolLM2-135M + LoRA (wide)=results/adapters/smollm2-135m-lora-wide" \\
        --out results/error_analysis.json

For each system (the rule baseline, or an adapter directory that `load_for_inference` reads;
``NAME=PATH:PREDICTIONS`` reuses a predictions file instead of generating), predicts the 100
hand-written holdout documents, scores them with `piilab.evaluation.evaluate` and sorts every
error into one kind:

* ``missed``: a gold value that no row names, not even in part;
* ``wrong label``: a gold value named with another label;
* ``span boundary``: a row whose value overlaps a gold value of the same document without
  being it (a name without its surname, an address without its unit);
* ``not PII``: a row whose value occurs in the document and is no gold value (a date, an order
  number, a company name);
* ``hallucinated``: a row whose value does not occur in the document.

The file holds numbers only (counts and rates, the command, package versions), never text.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
HOLDOUT = REPO / "data" / "holdout" / "holdout.jsonl"
KINDS = ("missed", "wrong label", "span boundary", "not PII", "hallucinated")


def error_kinds(records, predictions) -> Counter:
    """Count the error kinds (see the module docstring) over the documents."""
    from piilab.parsing import parse_model_output

    by_id = {p["id"]: p for p in predictions}
    kinds: Counter = Counter()
    for r in records:
        p = by_id.get(r["id"])
        parsed = parse_model_output(p["output"], r["source_text"]) if p and p["parse_success"] \
            else None
        rows = {(row.type, row.value) for row in parsed.rows} if parsed else set()
        matched = {(c.type, c.value) for c in parsed.candidates} if parsed else set()
        gold = {(e["type"], e["value"]) for e in r["entities"]}
        gold_values = {v for _, v in gold}
        predicted_values = {v for _, v in rows}
        for _t, v in gold - rows:
            if v in predicted_values:
                kinds["wrong label"] += 1
            elif any(v in pv or pv in v for pv in predicted_values):
                kinds["span boundary"] += 1
            else:
                kinds["missed"] += 1
        for t, v in rows - gold:
            if v in gold_values:
                continue  # counted as a wrong label above
            if (t, v) not in matched:
                kinds["hallucinated"] += 1
            elif any(v in gv or gv in v for gv in gold_values):
                kinds["span boundary"] += 1
            else:
                kinds["not PII"] += 1
    return kinds


def predictions_for(spec: str, records, args):
    from piilab.predictions import make_prediction

    if spec == "rules":
        from piilab.baseline import baseline_output

        return [make_prediction(r["id"], baseline_output(r["source_text"]), r["source_text"])
                for r in records]
    path, _, saved = spec.partition(":")
    if saved:
        from piilab.dataset import read_jsonl

        return read_jsonl(saved)
    import torch

    from piilab.inference import load_for_inference, predict_records

    if args.threads:
        torch.set_num_threads(args.threads)
    loaded = load_for_inference(path, device="cpu")
    predictions, _ = predict_records(loaded.model, loaded.tokenizer, records,
                                     batch_size=args.batch_size,
                                     max_new_tokens=args.max_new_tokens,
                                     system_prompt=loaded.prompt_setting)
    return predictions


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--system", action="append", required=True, metavar="NAME=rules|ADAPTER",
                   help="a system to analyse (repeatable)")
    p.add_argument("--out", default=str(REPO / "results" / "error_analysis.json"))
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--threads", type=int, default=None)
    args = p.parse_args(argv)

    from piilab.course.results import metrics_summary
    from piilab.dataset import read_jsonl
    from piilab.evaluation import evaluate

    holdout = read_jsonl(HOLDOUT)
    systems = {}
    for item in args.system:
        name, sep, spec = item.partition("=")
        if not sep or not name or not spec:
            p.error("--system takes NAME=rules or NAME=ADAPTER_DIR")
        predictions = predictions_for(spec, holdout, args)
        result = evaluate(holdout, predictions)
        kinds = error_kinds(holdout, predictions)
        systems[name] = {
            "source": spec.partition(":")[0],
            "metrics": metrics_summary(result),
            "per_type": {label: {k: round(v, 4) if isinstance(v, float) else v
                                 for k, v in m.items()}
                         for label, m in result.to_dict()["per_type"].items()},
            "error_kinds": {k: kinds.get(k, 0) for k in KINDS},
        }
        print(f"{name}: F1 {result.entity.f1:.3f}; " +
              ", ".join(f"{k} {kinds.get(k, 0)}" for k in KINDS))
    out = {"split": "holdout", "documents": len(holdout), "systems": systems,
           "recorded_at": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
           "produced_by": "tools/error_analysis.py " + " ".join(
               argv if argv is not None else sys.argv[1:])}
    Path(args.out).write_text(json.dumps(out, ensure_ascii=False, indent=1, sort_keys=True)
                              + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
