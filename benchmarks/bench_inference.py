"""Inference speed on the holdout: today's `generate` path and the fast path, side by side.

    python benchmarks/bench_inference.py [--model ADAPTER_OR_ALIAS] [--limit N]
                                         [--batch-sizes 1,8,16,32] [--threads T]

For each batch size the same documents are decoded greedily twice in one run: with
`piilab.inference.generate` (one ``model.generate`` call per length-sorted batch, the
default path, on the adapter as loaded) and with the opt-in
`piilab.fast_generate.generate_fast` (its own loop over the KV cache, finished documents
dropped from the batch) on the adapter merged into its base (``load_for_inference(...,
merge=True)``, as `piilab.corpus_mask` runs it; ``--no-merge`` keeps the adapter apart on
both sides). It prints new
tokens/s and documents/s of each, their ratio, and whether every output is identical
(greedy decoding must not change a single prediction). The goal of issue 24 is >= 4x the
documents/s of today's `generate` with identical outputs. It also times two floors (see
`floor_seconds`): reading every prompt once with no token generated, which no decoder that
reads its prompts one at a time can undercut, and one pass per document over its prompt and
its final answer, what a decoder that guessed every token right would still compute.

The default model is the committed wide adapter (``results/adapters/smollm2-135m-lora-wide``,
on SmolLM2-135M: run ``piilab fetch-model smollm2-135m`` once). ``--limit N`` takes N
documents spread evenly over the holdout (Korean and English), so that a run fits in minutes
on 2 cores. Only counts, timings and hashes are printed, never text or outputs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = REPO / "results" / "adapters" / "smollm2-135m-lora-wide"
HOLDOUT = REPO / "data" / "holdout" / "holdout.jsonl"


def spread(records: list, limit: int | None) -> list:
    """`limit` records spread evenly over `records` (all of them when None)."""
    if not limit or limit >= len(records):
        return records
    step = len(records) / limit
    return [records[int(k * step)] for k in range(limit)]


def floor_seconds(model, tokenizer, texts, setting, outputs) -> tuple[float, float]:
    """Two floors of the time to decode `texts`, in seconds:

    - prefill: every prompt read once (one forward pass each, no token generated), which
      a decoder that reads its prompts one at a time (as the fast path does) must spend
      before its first token. The prefix all prompts share is
      left out (a decoder reads it once), and each prompt's rest is read without it, which
      is slightly cheaper than after it, so this floor is, if anything, too low;
    - oracle: one forward pass per document over its prompt's rest and its final answer
      (`outputs`, with the end-of-turn token), what a speculative decoder that guessed every
      token right would still compute, one document at a time.
    """
    import torch

    from piilab.fast_generate import _common_prefix
    from piilab.inference import _stop_ids, prompt_ids

    ids = [prompt_ids(tokenizer, text, setting) for text in texts]
    shared = _common_prefix(ids)
    end = _stop_ids(model, tokenizer)[-1]
    answers = [[*tokenizer.encode(o, add_special_tokens=False), end] for o in outputs]
    seconds = []
    with torch.inference_mode():
        for extra in ([[] for _ in ids], answers):
            t0 = time.perf_counter()
            for row, more in zip(ids, extra, strict=True):
                model(input_ids=torch.tensor([row[shared:] + more]), logits_to_keep=1)
            seconds.append(time.perf_counter() - t0)
    return seconds[0], seconds[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT_MODEL))
    parser.add_argument("--holdout", default=str(HOLDOUT))
    parser.add_argument("--limit", type=int, default=None, help="documents (default: all 100)")
    parser.add_argument("--batch-sizes", default="1,8,16,32")
    parser.add_argument("--max-new-tokens", type=int, default=128,
                        help="as in the recorded runs (default 128)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch intra-op threads (default: torch's setting)")
    parser.add_argument("--no-merge", action="store_true",
                        help="run the fast path on the unmerged adapter too")
    args = parser.parse_args(argv)

    import torch

    from piilab.fast_generate import generate_fast
    from piilab.inference import generate, load_for_inference

    if args.threads:
        torch.set_num_threads(args.threads)
    records = [json.loads(line) for line in Path(args.holdout).read_text("utf-8").splitlines()
               if line.strip()]
    texts = [r["source_text"] for r in spread(records, args.limit)]
    loaded = load_for_inference(args.model, device="cpu")
    model, tokenizer = loaded
    fast_model = model if args.no_merge else load_for_inference(
        args.model, device="cpu", merge=True).model
    sizes = [int(b) for b in args.batch_sizes.split(",")]
    print(f"model {Path(args.model).name} (after: "
          f"{'adapter apart' if args.no_merge else 'adapter merged'}), "
          f"{len(texts)} holdout documents, "
          f"max_new_tokens {args.max_new_tokens}, torch threads {torch.get_num_threads()}, "
          f"load average {os.getloadavg()[0]:.2f}")
    header = (f"{'batch':>5} | {'before docs/s':>13} {'tok/s':>7} | {'after docs/s':>12} "
              f"{'tok/s':>7} | {'ratio':>5} | identical")
    print(header)
    print("-" * len(header))
    rows = []
    all_identical = True
    for size in sizes:
        timed = {}
        for fast in (False, True):
            t0 = time.perf_counter()
            decode = generate_fast if fast else generate
            result = decode(fast_model if fast else model, tokenizer, texts, batch_size=size,
                            max_new_tokens=args.max_new_tokens,
                            system_prompt=loaded.prompt_setting)
            timed[fast] = (time.perf_counter() - t0, result)
        (before_s, before), (after_s, after) = timed[False], timed[True]
        identical = before.outputs == after.outputs
        all_identical &= identical
        differing = sum(a != b for a, b in zip(before.outputs, after.outputs, strict=True))
        rows.append((size, len(texts) / before_s, len(texts) / after_s))
        print(f"{size:>5} | {len(texts) / before_s:>13.3f} {before.new_tokens / before_s:>7.1f} | "
              f"{len(texts) / after_s:>12.3f} {after.new_tokens / after_s:>7.1f} | "
              f"{before_s / after_s:>5.2f} | "
              f"{'yes' if identical else f'NO ({differing} documents differ)'}", flush=True)
    prefill_s, oracle_s = floor_seconds(fast_model, tokenizer, texts, loaded.prompt_setting,
                                        after.outputs)
    digest = hashlib.sha256("\0".join(after.outputs).encode()).hexdigest()[:16]
    best_before = max(rows, key=lambda r: r[1])
    best_after = max(rows, key=lambda r: r[2])
    at16 = next((r for r in rows if r[0] == 16), None)
    print(f"best before: batch {best_before[0]}, {best_before[1]:.3f} docs/s; "
          f"best after: batch {best_after[0]}, {best_after[2]:.3f} docs/s; "
          f"ratio {best_after[2] / best_before[1]:.2f}x")
    if at16:
        print(f"after (best) vs today's recorded setting (batch 16, before): "
              f"{best_after[2] / at16[1]:.2f}x (goal >= 4x)")
        before16 = len(texts) / at16[1]
        print(f"floors (merged model): prefill alone, one prompt at a time, {prefill_s:.1f} s, "
              f"so a decoder that reads its prompts so cannot beat "
              f"{before16 / prefill_s:.2f}x here; prompt and final answer in one "
              f"pass per document (every token guessed right) {oracle_s:.1f} s, "
              f"{before16 / oracle_s:.2f}x (batch 16, before: {before16:.1f} s)")
    print(f"outputs identical at every batch size: {'yes' if all_identical else 'NO'} "
          f"(sha256 of the outputs, first 16 hex digits: {digest}); load average now "
          f"{os.getloadavg()[0]:.2f}")
    return 0 if all_identical else 1


if __name__ == "__main__":
    sys.exit(main())
