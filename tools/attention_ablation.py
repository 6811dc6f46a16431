"""Causal against bidirectional attention for the token classifier, on the wide validation split.

    .venv/bin/python tools/attention_ablation.py \\
        --causal runs/ner-gemma3-causal --bidirectional runs/ner-gemma3-step100 \\
        --validation runs/wide --n 300 --out results/ner_attention_ablation.json
    .venv/bin/python tools/attention_ablation.py \\
        --causal runs/ner-gemma3-causal-full --bidirectional runs/ner-gemma3 \\
        --validation runs/wide --n 1000 --out results/ner_attention_ablation_full.json

The two classifiers must come from the same configuration, seed and batches, stopped after
the same number of steps: `configs/ner_gemma3_causal_ablation_cpu.json` stops the causal
run after 100 of the bidirectional run's 480 steps, on the same schedule, and
``runs/ner-gemma3-step100`` is the bidirectional run's checkpoint at step 100;
`configs/ner_gemma3_causal_wide_cpu.json` is the causal run of full length. Each decodes
the first `--n` validation documents with the neutral Viterbi pass and is scored by
`piilab.evaluation.evaluate`; a paired bootstrap over the same documents
(`piilab.evaluation.paired_bootstrap`, 1000 resamples, seed 0) gives the difference causal
minus bidirectional with its 95% interval and verdict. The JSON file holds the metrics, the
difference, the steps, the split's manifest SHA-256 and the command; numbers only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--causal", required=True)
    p.add_argument("--bidirectional", required=True)
    p.add_argument("--validation", default="runs/wide")
    p.add_argument("--n", type=int, default=300)
    p.add_argument("--threads", type=int)
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)

    import torch

    from piilab.course.results import metrics_summary
    from piilab.dataset import load_dataset_dir
    from piilab.detectors import spans_to_rows
    from piilab.evaluation import evaluate, paired_bootstrap
    from piilab.labels import nfc
    from piilab.ner.pretrained import classify, load_classifier
    from piilab.predictions import make_prediction

    if args.threads:
        torch.set_num_threads(args.threads)
    records = load_dataset_dir(args.validation)["validation"][: args.n]
    texts = [nfc(r["source_text"]) for r in records]
    runs, steps, predicted = {}, {}, {}
    for name, folder in (("causal", args.causal), ("bidirectional", args.bidirectional)):
        model, tokenizer, meta = load_classifier(folder)
        if meta["bidirectional"] != (name == "bidirectional"):
            print(f"{folder}: not a {name} classifier", file=sys.stderr)
            return 2
        spans = classify(model, tokenizer, texts, operating_point="neutral")
        predictions = [make_prediction(r["id"], spans_to_rows(t, s), t)
                       for r, t, s in zip(records, texts, spans, strict=True)]
        predicted[name] = predictions
        runs[name] = metrics_summary(evaluate(records, predictions))
        steps[name] = meta.get("steps") or meta.get("train", {}).get("steps")
        print(f"{name:13} F1 {runs[name]['entity']['f1']:.3f}  documents leaking "
              f"{runs[name]['documents_leak_rate']:.3f}  (step {steps[name]})")
    if len(set(steps.values())) != 1:
        print(f"the two runs stopped at different steps: {steps}", file=sys.stderr)
        return 2
    paired = paired_bootstrap(records, predicted["causal"], predicted["bidirectional"],
                              n=1000, seed=0)
    print(paired.format(names=("causal", "bidirectional")))
    manifest = Path(args.validation) / "manifest.json"
    Path(args.out).write_text(json.dumps({
        "split": "wide validation", "documents": len(records), "steps": steps["causal"],
        "decoding": "viterbi, neutral operating point",
        "manifest_sha256": hashlib.sha256(manifest.read_bytes()).hexdigest(),
        "runs": runs,
        "causal_minus_bidirectional": paired.to_dict(),
        "produced_by": "tools/attention_ablation.py " + " ".join(
            argv if argv is not None else sys.argv[1:]),
    }, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
