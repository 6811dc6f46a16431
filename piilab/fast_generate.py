"""An opt-in greedy decoder for batch jobs: `generate_fast` (chapter 07, "Inference and results").

`piilab.inference.generate` is the decoder the course teaches and the one that runs by
default: one ``model.generate`` call per length-sorted batch. This module decodes the same
batches greedily with a loop of its own over the model's KV cache, which does less work
for the same answer:

* the prompt prefix every document shares (the system prompt and the chat template's
  header) is read once, and each prompt's rest on its own (no padding, so the attention
  takes its causal fast path); the per-document caches are then left-padded into one
  batch;
* every step computes logits for the last position only;
* a document leaves the batch as soon as it emits its end-of-turn token, and the others
  go on without it.

It stops a document where ``model.generate`` stops it (its end-of-turn token, or
``max_new_tokens``) and applies no other limit, so its outputs equal those of
`piilab.inference.generate` called with the same arguments, token for token:
tests/test_inference.py holds it to that, and benchmarks/bench_inference.py prints both
(speed and whether every output is identical). Sampling is not offered: use
`piilab.inference.generate` with ``do_sample=True``.

The cache is a ``DynamicCache`` (on a CPU a static cache only pays off with
``torch.compile``, whose compile time a batch job does not win back). The loop reads
transformers internals (the cache's per-layer ``keys``/``values``, its
``batch_select_indices``, the forward keyword of the cache, `piilab._compat`), which is
why it is opt-in: a transformers release that changes them breaks this module, never the
taught path. torch and transformers are imported when it runs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from piilab._compat import cache_keyword
from piilab.inference import (
    Generation,
    InferenceError,
    _finished,
    _progress_bar,
    _stop_ids,
    _torch_threads,
    prompt_ids,
)

__all__ = ["generate_fast"]


def generate_fast(model, tokenizer, texts: Sequence[str], *, batch_size: int = 8,
                  max_new_tokens: int = 256, progress: bool = False,
                  system_prompt: str | None = None, threads: int | None = None) -> Generation:
    """Greedy answers for `texts`, equal to ``piilab.inference.generate`` with the same
    arguments (see the module docstring for what it does differently, and why it is
    faster). Documents are sorted by prompt length (longest first) into batches; the
    outputs come back in input order. `threads` sets torch's intra-op threads for the
    call."""
    if batch_size < 1:
        raise InferenceError("batch_size must be at least 1")
    with _torch_threads(threads):
        return _decode(model, tokenizer, texts, batch_size=batch_size,
                       max_new_tokens=max_new_tokens, progress=progress,
                       system_prompt=system_prompt)


def _common_prefix(encoded: Sequence[Sequence[int]]) -> int:
    """The number of leading prompt tokens every document shares (the system prompt and
    the chat template's header), leaving at least one token of each prompt to prefill."""
    if not encoded:
        return 0
    shortest = min(len(e) for e in encoded)
    first = encoded[0]
    n = 0
    while n < shortest - 1 and all(e[n] == first[n] for e in encoded):
        n += 1
    return n


def _layer_tensors(cache) -> list[tuple[Any, Any]] | None:
    """``(keys, values)`` of every layer of a `DynamicCache`, or None when a layer is not a
    plain growing layer (a sliding window, a linear-attention state): those cannot be
    padded and stacked, and the caller then prefills the batch as one padded tensor."""
    layers = getattr(cache, "layers", None)
    if not layers or any(type(layer).__name__ != "DynamicLayer" for layer in layers):
        return None
    return [(layer.keys, layer.values) for layer in layers]


def _decode(model, tokenizer, texts: Sequence[str], *, batch_size: int,
            max_new_tokens: int, progress: bool, system_prompt: str | None) -> Generation:
    """Greedy decoding: the shared prompt prefix prefilled once, each prompt's rest prefilled
    on its own, the caches left-padded into one batch, and finished documents dropped from
    it (see the module docstring)."""
    import torch
    from transformers import DynamicCache

    stop = _stop_ids(model, tokenizer)
    stop_set = set(stop)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else stop[0]
    device = next(model.parameters()).device
    config = getattr(model, "config", None)
    cache_key = cache_keyword(model)
    encoded = [prompt_ids(tokenizer, text, system_prompt) for text in texts]
    order = sorted(range(len(texts)), key=lambda i: (-len(encoded[i]), i))
    outputs: list[str] = [""] * len(texts)
    new_tokens = 0
    bar = _progress_bar(progress, len(texts))

    def forward(ids, cache, mask=None, position=None):
        return model(input_ids=ids, attention_mask=mask, position_ids=position,
                     use_cache=True, logits_to_keep=1, **{cache_key: cache})

    def first_token(logits):
        return logits[:, -1, :].float().argmax(dim=-1).tolist()

    t0 = time.perf_counter()
    with torch.inference_mode():
        shared = _common_prefix(encoded)
        prefix = None
        if shared:
            prefix_cache = DynamicCache(config=config)
            forward(torch.tensor([encoded[order[0]][:shared]], device=device), prefix_cache)
            prefix = _layer_tensors(prefix_cache)
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            lengths = [len(encoded[i]) for i in batch]
            width = max(lengths)
            padded = any(n < width for n in lengths)
            if prefix is not None or not shared:
                # Each prompt on its own: [shared prefix cache] + the rest of its prompt.
                chosen, per_doc = [], []
                for i in batch:
                    cache = DynamicCache(
                        ddp_cache_data=[(k.clone(), v.clone()) for k, v in prefix] if prefix
                        else None, config=config)
                    rest = encoded[i][shared:]
                    position = torch.arange(shared, len(encoded[i]), device=device)[None]
                    chosen += first_token(forward(torch.tensor([rest], device=device), cache,
                                                  position=position).logits)
                    per_doc.append(_layer_tensors(cache))
            else:
                per_doc = None
            if per_doc is None or any(t is None for t in per_doc):
                # A cache that cannot be stacked: prefill the batch as one padded tensor.
                ids = torch.tensor([[pad_id] * (width - n) + encoded[i]
                                    for i, n in zip(batch, lengths, strict=True)], device=device)
                mask = torch.tensor([[0] * (width - n) + [1] * n for n in lengths],
                                    device=device)
                cache = DynamicCache(config=config)
                chosen = first_token(forward(ids, cache, mask if padded else None,
                                             (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
                                             ).logits)
            else:
                layers = []
                for layer in range(len(per_doc[0])):
                    keys, values = [], []
                    for doc, n in zip(per_doc, lengths, strict=True):
                        k, v = doc[layer]
                        pad = width - n
                        keys.append(torch.nn.functional.pad(k, (0, 0, pad, 0)) if pad else k)
                        values.append(torch.nn.functional.pad(v, (0, 0, pad, 0)) if pad else v)
                    layers.append((torch.cat(keys), torch.cat(values)))
                cache = DynamicCache(ddp_cache_data=layers, config=config)
                del per_doc, layers
                mask = torch.tensor([[0] * (width - n) + [1] * n for n in lengths],
                                    device=device)
            step_pos = torch.tensor([[n] for n in lengths], device=device)
            alive = list(range(len(batch)))  # rows of the batch still generating
            tokens: list[list[int]] = [[] for _ in batch]
            while True:
                keep = []
                for slot, (row, token) in enumerate(zip(alive, chosen, strict=True)):
                    tokens[row].append(token)
                    if token not in stop_set and len(tokens[row]) < max_new_tokens:
                        keep.append(slot)
                if not keep:
                    break
                next_tokens = torch.tensor([[chosen[s]] for s in keep], device=device)
                if len(keep) < len(alive):
                    index = torch.tensor(keep, device=device)
                    cache.batch_select_indices(index)
                    mask = mask.index_select(0, index)
                    step_pos = step_pos.index_select(0, index)
                    alive = [alive[s] for s in keep]
                mask = torch.cat([mask, mask.new_ones((len(alive), 1))], dim=-1)
                chosen = first_token(forward(next_tokens, cache, mask if padded else None,
                                             step_pos).logits)
                step_pos = step_pos + 1
            for row, i in enumerate(batch):
                new_tokens += len(tokens[row])
                outputs[i] = tokenizer.decode(tokens[row], skip_special_tokens=True)
            if bar is not None:
                bar.update(len(batch))
    return _finished(outputs, encoded, new_tokens, t0, bar)
