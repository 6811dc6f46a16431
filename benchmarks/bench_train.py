"""Benchmark: LoRA training and batched generation on CPU with the tiny offline model.

Builds the tiny model (`piilab.tiny`) in a temporary folder, trains a LoRA adapter for a few
steps with `piilab.train` (TRL SFTTrainer, fp32, tracking off) and generates answers for test
documents with `piilab.inference.generate`. Prints training tokens/s (non-padding tokens the
trainer processed, per second of the training loop) and generation tokens/s (new tokens per
second, greedy, batched with left padding).

    .venv/bin/python benchmarks/bench_train.py
    .venv/bin/python benchmarks/bench_train.py --steps 40 --threads 1 --docs 64

Needs the train extra. Numbers depend on the CPU and its load; compare runs on one machine.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="training steps (default 20)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--records", type=int, default=400, help="training records used")
    parser.add_argument("--docs", type=int, default=32, help="test documents to generate for")
    parser.add_argument("--gen-batch-size", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads")
    args = parser.parse_args()

    import torch

    from piilab.generator import generate_dataset
    from piilab.inference import generate
    from piilab.tiny import build_tiny_model
    from piilab.train import TrainConfig, package_versions, train

    if args.threads:
        torch.set_num_threads(args.threads)
    splits = generate_dataset()
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = build_tiny_model(Path(tmp) / "tiny", splits["train"], seed=0)
        config = TrainConfig(model=str(model_dir), output_dir=str(Path(tmp) / "run"),
                             max_steps=args.steps, per_device_train_batch_size=args.batch_size,
                             learning_rate=3e-3, lora_dropout=0.0, track=False, progress=False)
        result = train(config, records=splits["train"][: args.records])
        texts = [r["source_text"] for r in splits["test"][: args.docs]]
        generate(result.model, result.tokenizer, texts[:2], max_new_tokens=4)  # warm-up
        gen = generate(result.model, result.tokenizer, texts, batch_size=args.gen_batch_size,
                       max_new_tokens=args.max_new_tokens)
    m = result.metrics
    print(f"torch {package_versions().get('torch')}, {torch.get_num_threads()} thread(s), "
          f"tiny model {int(m['tokens_total_mean'])} tokens per example on average")
    rows = [
        ("training", f"{int(m['global_step'])} steps x {args.batch_size}",
         int(m["train_tokens"]), m["train_wall_s"], m["train_tokens_per_s"]),
        ("generation", f"{len(texts)} docs, <= {args.max_new_tokens} new",
         gen.new_tokens, gen.seconds, gen.tokens_per_second),
    ]
    print(f"{'stage':<11} {'work':<22} {'tokens':>8} {'seconds':>8} {'tokens/s':>9}")
    for stage, work, tokens, seconds, rate in rows:
        print(f"{stage:<11} {work:<22} {tokens:>8} {seconds:>8.2f} {rate:>9,.0f}")
    print(f"(loss {m['loss_first']:.3f} -> {m['loss_last']:.3f}; generation batch "
          f"{args.gen_batch_size}, greedy)")


if __name__ == "__main__":
    main()
