"""Benchmark: LoRA training and batched generation on CPU, tiny model and SmolLM2 side by side.

For each model (the tiny offline model of `piilab.tiny`, built in a temporary folder, and the
pretrained base `smollm2-135m` of `piilab.models`, fetched once), trains a LoRA adapter for a
few steps with `piilab.train` (TRL SFTTrainer, fp32, tracking off, each model's own
system-prompt setting) and generates answers for test documents with
`piilab.inference.generate`. Prints training tokens/s (non-padding tokens the trainer
processed, per second of the training loop) and generation tokens/s (new tokens per second,
greedy, batched with left padding), and the ratio of SmolLM2 to the tiny model.

    .venv/bin/python benchmarks/bench_train.py
    .venv/bin/python benchmarks/bench_train.py --models smollm2 --steps 6 --threads 2 --docs 32

Needs the train extra. Numbers depend on the CPU and its load; compare runs on one machine.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

#: Per model: learning rate, and steps when --steps is not given (SmolLM2 steps are slow).
SETTINGS = {"tiny": (3e-3, 20), "smollm2": (1e-3, 4)}


def run_one(name: str, tmp: Path, splits, args) -> dict:
    from piilab.inference import generate
    from piilab.train import TrainConfig, train

    if name == "tiny":
        from piilab.tiny import build_tiny_model

        model = str(build_tiny_model(tmp / "tiny", splits["train"], seed=0))
    else:
        from piilab.models import fetch_model

        fetch_model("smollm2-135m")
        model = "smollm2-135m"
    lr, default_steps = SETTINGS[name]
    config = TrainConfig(model=model, output_dir=str(tmp / f"run-{name}"), system_prompt="auto"
                         if name == "tiny" else "none", max_steps=args.steps or default_steps,
                         per_device_train_batch_size=args.batch_size, learning_rate=lr,
                         lora_dropout=0.0, track=False, progress=False)
    result = train(config, records=splits["train"][: args.records])
    texts = [r["source_text"] for r in splits["test"][: args.docs]]
    setting = result.prompt_setting
    generate(result.model, result.tokenizer, texts[:2], max_new_tokens=4,
             system_prompt=setting)  # warm-up
    gen = generate(result.model, result.tokenizer, texts, batch_size=args.gen_batch_size,
                   max_new_tokens=args.max_new_tokens, system_prompt=setting)
    m = result.metrics
    return {"model": name, "steps": int(m["global_step"]), "train_tokens": int(m["train_tokens"]),
            "train_s": m["train_wall_s"], "train_rate": m["train_tokens_per_s"],
            "tokens_per_example": m["tokens_total_mean"], "docs": len(texts),
            "gen_tokens": gen.new_tokens, "gen_s": gen.seconds,
            "gen_rate": gen.tokens_per_second}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="tiny,smollm2", help="comma-separated: tiny, smollm2")
    parser.add_argument("--steps", type=int, default=None,
                        help="training steps (default: 20 tiny, 4 SmolLM2)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--records", type=int, default=400, help="training records used")
    parser.add_argument("--docs", type=int, default=16, help="test documents to generate for")
    parser.add_argument("--gen-batch-size", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads")
    args = parser.parse_args()

    import torch

    from piilab.generator import generate_dataset
    from piilab.train import package_versions

    if args.threads:
        torch.set_num_threads(args.threads)
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = sorted(set(names) - set(SETTINGS))
    if unknown:
        parser.error(f"unknown model(s): {', '.join(unknown)}")
    splits = generate_dataset()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [run_one(name, Path(tmp), splits, args) for name in names]
    print(f"torch {package_versions().get('torch')}, {torch.get_num_threads()} thread(s), "
          f"training batch {args.batch_size}, generation batch {args.gen_batch_size}, greedy")
    print(f"{'model':<8} {'stage':<11} {'work':<24} {'tokens':>8} {'seconds':>8} {'tokens/s':>9}")
    for r in rows:
        print(f"{r['model']:<8} {'training':<11} "
              f"{r['steps']} steps, {r['tokens_per_example']:.0f} tok/example"[:45].ljust(45)
              + f" {r['train_tokens']:>8} {r['train_s']:>8.2f} {r['train_rate']:>9,.0f}")
        print(f"{r['model']:<8} {'generation':<11} "
              f"{r['docs']} docs, <= {args.max_new_tokens} new"[:45].ljust(45)
              + f" {r['gen_tokens']:>8} {r['gen_s']:>8.2f} {r['gen_rate']:>9,.0f}")
    if len(rows) == 2:
        tiny, smol = rows
        print(f"SmolLM2 / tiny: training tokens/s {smol['train_rate'] / tiny['train_rate']:.3f}x, "
              f"generation tokens/s {smol['gen_rate'] / tiny['gen_rate']:.3f}x")


if __name__ == "__main__":
    main()
