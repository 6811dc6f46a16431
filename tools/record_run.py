"""Train, predict, evaluate, and append one row to the committed results file.

    .venv/bin/python tools/record_run.py --config configs/train_tiny_cpu.json --tiny
    .venv/bin/python tools/record_run.py --config configs/train_colab_gpu.json --n-eval 400

Every row of `results/runs.jsonl` is written by this script, never by hand (chapter 07 reads
the file; `results/README.md` describes its fields). The steps:

1. verify the dataset directory of the configuration against its manifest (the data version
   of the row is the generator version plus the manifest's SHA-256);
2. with `--tiny`, build the tiny offline model (`piilab.tiny`) from the training split into
   the configuration's `model` path (deterministic, so the row can be reproduced);
3. train with `piilab.train`, predict the first `--n-eval` test documents with
   `piilab.inference` (predictions stay in the run directory, never in the results file),
   evaluate with `piilab.evaluation`;
4. append the row: model, data version, configuration, commit, hardware, package versions,
   training and evaluation metrics. Only numbers and identifiers, no text of the data.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "results" / "runs.jsonl"


def git_state() -> dict:
    """The commit the code came from (None before the first commit) and whether the tree
    had uncommitted changes."""
    def run(*cmd: str) -> str | None:
        try:
            done = subprocess.run(["git", *cmd], cwd=REPO, capture_output=True, text=True,
                                  check=True)
        except (OSError, subprocess.CalledProcessError):
            return None
        return done.stdout.strip()

    status = run("status", "--porcelain")
    return {"commit": run("rev-parse", "HEAD"), "dirty": bool(status) if status is not None
            else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--tiny", action="store_true",
                        help="build the tiny offline model at the configuration's model path")
    parser.add_argument("--n-eval", type=int, default=400, help="test documents (default 400)")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=16, help="generation batch size")
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args(argv)
    # The code state is read before training: the run reflects the tree it started from,
    # whatever is committed while it trains.
    code_state = git_state()

    import torch

    from piilab.dataset import load_dataset_dir, verify_dataset
    from piilab.evaluation import evaluate
    from piilab.inference import generate, make_prediction, write_predictions
    from piilab.train import data_version, load_config, package_versions, train

    if args.threads:
        torch.set_num_threads(args.threads)
    config = load_config(args.config, progress=False)
    check = verify_dataset(config.data_dir)
    if not check.ok:
        print(f"{config.data_dir}: dataset does not match its manifest; run `make data`",
              file=sys.stderr)
        return 1
    splits = load_dataset_dir(config.data_dir)
    model_info: dict = {"id": config.model, "kind": "hub or local"}
    if args.tiny:
        from piilab.tiny import build_tiny_model

        build_tiny_model(config.model, splits[config.train_split], seed=0)
        info = json.loads((Path(config.model) / "piilab_tiny.json").read_text())
        model_info = {"id": "piilab.tiny", "kind": "tiny offline model (random weights)",
                      "seed": info["seed"], "parameters": info["parameters"],
                      "vocab_size": info["vocab_size"]}

    result = train(config)
    test = splits["test"][: args.n_eval]
    gen = generate(result.model, result.tokenizer, [r["source_text"] for r in test],
                   batch_size=args.batch_size, max_new_tokens=args.max_new_tokens)
    predictions = [make_prediction(r["id"], out, r["source_text"])
                   for r, out in zip(test, gen.outputs, strict=True)]
    write_predictions(result.output_dir / "predictions_test.jsonl", predictions)
    scores = evaluate(test, predictions)

    manifest = json.loads((Path(config.data_dir) / "manifest.json").read_text())
    data = data_version(config, splits[config.train_split])
    data.update(seed=manifest["seed"], test_sha256=manifest["splits"]["test"]["sha256"])
    m = result.metrics
    config_dict = config.to_dict()
    recorded_at = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    row = {
        "recorded_at": recorded_at,
        "model": model_info,
        "method": f"LoRA r={config.lora_r} alpha={config.lora_alpha}",
        "data": data,
        "config": config_dict,
        **code_state,
        "hardware": {**result.hardware.__dict__, "torch_threads": torch.get_num_threads()},
        "packages": package_versions(),
        "train": {k: m[k] for k in ("global_step", "loss_first", "loss_last", "train_loss",
                                    "train_wall_s", "train_tokens", "train_tokens_per_s",
                                    "n_train_examples")},
        "eval": {"split": "test", "documents": len(test), "max_new_tokens": args.max_new_tokens,
                 "decoding": "greedy", "new_tokens": gen.new_tokens,
                 "generation_tokens_per_s": round(gen.tokens_per_second, 1)},
        "metrics": {
            "entity": {k: scores["entity"][k] for k in ("precision", "recall", "f1", "tp",
                                                         "fp", "fn")},
            "documents_leak_rate": scores["documents"]["leak_rate"],
            "entities_leak_rate": scores["entities"]["leak_rate"],
            "over_redaction_rate": scores["entities"]["over_redaction_rate"],
            "hallucination_rate": scores["entities"]["hallucination_rate"],
            "parse_success_rate": scores["parse"]["success_rate"],
        },
        "produced_by": "tools/record_run.py " + " ".join(argv if argv is not None
                                                          else sys.argv[1:]),
    }
    row["run_id"] = hashlib.sha256(json.dumps(row, sort_keys=True).encode()).hexdigest()[:12]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    print(f"appended run {row['run_id']} to {out}: loss {m['loss_first']:.3f} -> "
          f"{m['loss_last']:.3f}, entity F1 {scores['entity']['f1']:.3f}, parse success "
          f"{scores['parse']['success_rate']:.3f} on {len(test)} test documents")
    return 0


if __name__ == "__main__":
    sys.exit(main())
