"""Every detector on the same holdout documents, side by side: documents/s and F1.

    python benchmarks/bench_detectors.py [--limit N] [--threads T] [--batch-size B]
                                         [--detectors NAME,NAME,...] [--json FILE]
                                         [--quantize]

One run, one process, the same documents (``--limit N`` of the 100 hand-written holdout
documents, spread evenly over Korean and English; all by default) and the same torch
threads for each detector, loaded through `piilab.detectors.load_detector` exactly as
``piilab mask-corpus`` loads it. For each: documents/s of the detection alone (loading not
counted, one warm-up document first), entity F1 and the document leak rate of
`piilab.evaluation.evaluate` on those documents, and the ratio of its documents/s to the
generative fast path of the same base (merged adapter, `piilab.fast_generate.generate_fast`)
and to the rules. The goal of the classifier issue is >= 10x the documents/s of the same
base's generative path, and 100,000 holdout-length documents in under 6 hours (>= 4.63
documents/s); both are printed.

``--quantize`` adds each classifier again with int8 dynamic quantization of its linear
layers (``torch.ao.quantization.quantize_dynamic``), to show what it buys and what it
costs in F1.

Defaults: the rules, the committed classifiers and the committed generative adapters
whose bases are in the cache (``piilab fetch-model gemma-3-270m``, ``smollm2-135m``); a
detector whose base is missing is skipped with a line that says so. Only counts, rates and
timings are printed, never text. ``--json FILE`` writes the same figures as JSON.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
HOLDOUT = REPO / "data" / "holdout" / "holdout.jsonl"
DEFAULTS = (
    "rules",
    "results/classifiers/gemma-3-270m-ner",
    "results/classifiers/gemma-3-270m-ner+rules",
    "results/adapters/gemma-3-270m-lora-wide",
    "results/classifiers/smollm2-135m-ner",
    "results/adapters/smollm2-135m-lora-wide",
)
#: documents/s that masks 100,000 documents in 6 hours
CORPUS_GOAL = 100_000 / (6 * 3600)


def spread(records: list, limit: int | None) -> list:
    """`limit` records spread evenly over `records` (all of them when None)."""
    if not limit or limit >= len(records):
        return records
    step = len(records) / limit
    return [records[int(k * step)] for k in range(limit)]


def _base_of(name: str) -> str | None:
    """The base alias a committed detector needs (None for the rules)."""
    if name == "rules":
        return None
    folder = Path(name.removesuffix("+rules"))
    for marker, key in (("piilab_classifier.json", "base"),
                        ("adapter_config.json", "base_model_name_or_path")):
        if (folder / marker).is_file():
            return json.loads((folder / marker).read_text())[key]
    return None


def _load(name: str, args, quantize: bool = False):
    from piilab.detectors import load_detector

    return load_detector(name, batch_size=args.batch_size, threads=args.threads,
                         max_new_tokens=args.max_new_tokens, quantize=quantize)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--detectors", help="comma-separated detector names (default: all committed)")
    p.add_argument("--quantize", action="store_true")
    p.add_argument("--json", help="also write the figures here")
    args = p.parse_args(argv)
    # other work on the machine slows every detector alike; the file records how busy it was
    load_at_start = round(os.getloadavg()[0], 2)

    import torch

    from piilab.dataset import read_jsonl
    from piilab.evaluation import evaluate
    from piilab.models import is_alias, model_dir
    from piilab.predictions import make_prediction

    torch.set_num_threads(args.threads)
    records = spread(read_jsonl(HOLDOUT), args.limit)
    texts = [r["source_text"] for r in records]
    names = args.detectors.split(",") if args.detectors else list(DEFAULTS)
    runs = [(n, False) for n in names]
    if args.quantize:
        runs += [(n, True) for n in names if (Path(n.removesuffix("+rules"))
                                              / "piilab_classifier.json").is_file()]
    print(f"{len(records)} holdout documents, {args.threads} torch threads, "
          f"batch {args.batch_size}")
    rows = []
    for name, quantize in runs:
        base = _base_of(name)
        if name != "rules" and not Path(name.removesuffix("+rules")).is_dir():
            print(f"{name}: skipped (not here)")
            continue
        if base and is_alias(base) and not (model_dir(base) / "piilab_model.json").is_file():
            print(f"{name}: skipped (run `piilab fetch-model {base}` first)")
            continue
        detector = _load(name, args, quantize)
        detector.outputs(texts[:1])  # warm-up, not counted
        detector.seconds, detector.documents = 0.0, 0
        t0 = time.perf_counter()
        outputs = detector.outputs(texts)
        seconds = time.perf_counter() - t0
        result = evaluate(records, [make_prediction(r["id"], o, r["source_text"])
                                    for r, o in zip(records, outputs, strict=True)])
        rows.append({"detector": name + (" (int8)" if quantize else ""),
                     "kind": detector.kind, "base": base, "documents": len(records),
                     "seconds": round(seconds, 3),
                     "documents_per_s": round(len(records) / seconds, 3),
                     "f1": round(result.entity.f1, 4),
                     "documents_leak_rate": round(result.documents.leak_rate, 4)})
        print(f"{rows[-1]['detector']:<48} {rows[-1]['documents_per_s']:>10.2f} docs/s  "
              f"F1 {rows[-1]['f1']:.3f}  documents leaking {rows[-1]['documents_leak_rate']:.3f}")
        del detector
    rules = next((r for r in rows if r["kind"] == "rules"), None)
    print()
    for row in rows:
        if row["kind"] == "rules":
            continue
        generative = next((g for g in rows if g["kind"] == "generative"
                           and g["base"] == row["base"]), None)
        parts = [f"{row['detector']}:"]
        if generative and row["kind"] != "generative":
            ratio = row["documents_per_s"] / generative["documents_per_s"]
            row["vs_generative"] = round(ratio, 2)
            parts.append(f"{ratio:.1f}x the generative path of its base "
                         f"({'goal 10x met' if ratio >= 10 else 'goal 10x NOT met'})")
        if rules:
            parts.append(f"{row['documents_per_s'] / rules['documents_per_s']:.4f}x the rules")
        hours = 100_000 / row["documents_per_s"] / 3600
        row["hours_per_100k"] = round(hours, 2)
        parts.append(f"100,000 documents in {hours:.1f} h "
                     f"({'under' if row['documents_per_s'] >= CORPUS_GOAL else 'over'} 6 h)")
        print(" ".join(parts))
    if args.json:
        command = "benchmarks/bench_detectors.py " + " ".join(
            argv if argv is not None else sys.argv[1:])
        Path(args.json).write_text(json.dumps({
            "threads": args.threads, "batch_size": args.batch_size,
            "documents": len(records), "rows": rows, "produced_by": command,
            "recorded_at": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
            "machine": {"cpus": os.cpu_count(), "processor": platform.machine()},
            "load_average_1min_at_start": load_at_start}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
