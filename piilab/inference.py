"""Running a model over documents: loading and generation (chapter 07, "Inference and results").

Prediction rows and their file (``parse_flag``, ``make_prediction``, ``write_predictions``)
live in `piilab.predictions`, which needs no model.

- `load_for_inference(model_dir)` loads a merged model directory, a LoRA
  adapter directory (its base model is read from ``adapter_config.json``) or a
  base model alias of `piilab.models` (``smollm2-135m``), and returns a
  `LoadedModel`: the model, its tokenizer and the system-prompt setting the
  model was trained with (``piilab_prompt.json``, see `piilab.sft`);
- `generate(model, tokenizer, texts, system_prompt=setting)` renders each
  document with the training prompt (`piilab.sft.build_messages`, with that
  setting: pass ``loaded.prompt_setting``) and the chat template,
  left-pads the
  batch (a decoder-only model continues from the right end of its input),
  decodes greedily by default, stops at the end-of-turn token and returns the
  new text of each document, special tokens removed;
- `predict_records` turns records into ``{"id", "output", "parse_success"}``
  rows (with the `Generation`); `piilab.predictions.write_predictions` writes them
  as JSONL, ready for ``piilab evaluate``.

Think blocks: templates that read ``enable_thinking`` are asked not to think
(`piilab.sft.CHAT_TEMPLATE_KWARGS`, the same as in training); a model that
thinks anyway keeps its ``<think>...</think>`` text in ``output``, which is the
raw model output, and the parser removes complete blocks (SPEC section 3). An
unclosed ``<think>`` (the model ran out of ``max_new_tokens`` while thinking) is
left as text: its prose lines are ignored, but a ``TYPE<TAB>VALUE`` line inside it
is still a row, as for any other line.

The generation functions import torch and transformers when called, so
``import piilab.inference`` stays standard-library only. Nothing here prints
text; progress bars (``progress=True``) show counts only.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from piilab.predictions import Prediction, make_prediction

# ---------------------------------------------------------------------------
# Loading a trained model
# ---------------------------------------------------------------------------


def _default_dtype(device: str):
    import torch

    if device == "cuda":
        return (torch.bfloat16 if torch.cuda.is_bf16_supported(including_emulation=False)
                else torch.float16)
    return torch.float32


@dataclass(frozen=True)
class LoadedModel:
    """A model ready for `generate`, its tokenizer, and the system-prompt setting it was
    trained with (``full`` when none was saved), which `generate` needs as ``system_prompt``.

    It unpacks as ``model, tokenizer = loaded`` (the setting then has to be passed on by
    hand: ``generate(model, tokenizer, texts, system_prompt=loaded.prompt_setting)``).
    """

    model: Any = field(repr=False)
    tokenizer: Any = field(repr=False)
    prompt_setting: str = "full"

    def __iter__(self):
        return iter((self.model, self.tokenizer))

    def astuple(self) -> tuple[Any, Any, str]:
        """``(model, tokenizer, prompt_setting)``."""
        return self.model, self.tokenizer, self.prompt_setting


def load_for_inference(model_dir: str | os.PathLike, *, device: str | None = None,
                       dtype: Any = None, merge: bool = False) -> LoadedModel:
    """Load a `LoadedModel` from a merged model or a LoRA adapter directory.

    An adapter directory (it holds ``adapter_config.json``) is applied to the base
    model it names (a path, a hub id or a `piilab.models` alias); the tokenizer
    comes from the adapter directory when it has one, else from the base model.
    `model_dir` may also be an alias (the base model alone, e.g. for zero-shot).
    `device` defaults to CUDA when available, and `dtype` to fp32 on a CPU, bf16 or
    fp16 on a GPU. The model is put in eval mode. ``prompt_setting`` is the
    system-prompt setting saved with the model (``full`` when none was saved).

    ``merge=True`` folds a LoRA adapter into the base weights (peft's
    ``merge_and_unload``): one matrix product per projection instead of three, the
    cheapest way to run an adapter (`piilab.corpus_mask` and
    benchmarks/bench_inference.py use it). The merged weights are rounded once, so a
    greedy prediction could in principle differ from the unmerged model's; with the
    committed wide adapter none did on 32 holdout documents (``bench_inference.py
    --limit 32``, which compares every output). It is off by default so that recorded
    runs and the book keep the model exactly as trained.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from piilab.models import resolve_model
    from piilab.sft import read_prompt_setting

    path = Path(resolve_model(model_dir))
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = dtype or _default_dtype(device)
    adapter_config = path / "adapter_config.json"
    if adapter_config.exists():
        from peft import PeftModel

        base_id = json.loads(adapter_config.read_text(encoding="utf-8"))["base_model_name_or_path"]
        base_id = resolve_model(base_id)
        has_tokenizer = (path / "tokenizer_config.json").exists()
        tokenizer = AutoTokenizer.from_pretrained(path if has_tokenizer else base_id)
        base = AutoModelForCausalLM.from_pretrained(base_id, dtype=dtype)
        model = PeftModel.from_pretrained(base, path)
        if merge:
            model = model.merge_and_unload()
    else:
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    model.to(device)
    model.eval()
    return LoadedModel(model, tokenizer, read_prompt_setting(path) or "full")


# ---------------------------------------------------------------------------
# Batched generation
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Generation:
    """The outputs of `generate`, in input order, with token counts and timing."""

    outputs: tuple[str, ...]
    prompt_tokens: int
    new_tokens: int
    seconds: float

    @property
    def tokens_per_second(self) -> float:
        """Generated (new) tokens per second of wall time."""
        return self.new_tokens / self.seconds if self.seconds > 0 else 0.0


def _stop_ids(model, tokenizer) -> list[int]:
    """Every id that ends a turn: the model's EOS ids, the tokenizer's, the template's."""
    from piilab.sft import LossMaskError, end_of_turn_token

    ids: list[int] = []
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ids += configured if isinstance(configured, list) else [configured]
    ids.append(tokenizer.eos_token_id)
    with contextlib.suppress(LossMaskError):  # a template without one: the EOS ids still stop
        ids.append(tokenizer.convert_tokens_to_ids(end_of_turn_token(tokenizer)))
    return sorted({i for i in ids if isinstance(i, int)})


def prompt_ids(tokenizer, source_text: str, system_prompt: str | None = None) -> list[int]:
    """The token ids a model reads for one document (system prompt, document,
    assistant header), exactly as in training. `system_prompt` is a setting of
    `piilab.sft.SYSTEM_PROMPTS`, the one the model was trained with
    (`LoadedModel.prompt_setting`); None means ``full``."""
    from piilab.sft import CHAT_TEMPLATE_KWARGS, build_messages

    setting = system_prompt or "full"
    messages = build_messages({"source_text": source_text, "target_tsv": ""}, setting)["prompt"]
    out = tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True,
                                        return_dict=True, **CHAT_TEMPLATE_KWARGS)
    return list(out["input_ids"])


#: Tokens a row of the answer adds besides its value: the type name, the TAB, the newline.
ROW_OVERHEAD_TOKENS = 8


def answer_token_cap(document_tokens: int) -> int:
    """The most new tokens a valid answer to a document of `document_tokens` tokens can need.

    Every row of a valid answer copies a piece of the document (``TYPE<TAB>VALUE``, SPEC
    section 3) and a value is at least one token, so an answer lists at most one row per
    document token and holds at most the document's tokens plus a type, a TAB and a
    newline per row, and the end-of-turn token. `generate` stops there: an output that
    would run past it repeats itself and is not an answer. The bound is deliberately
    loose (a valid answer is far shorter); it only stops a model that loops on a short
    document from running to ``max_new_tokens``.
    """
    return document_tokens * (1 + ROW_OVERHEAD_TOKENS) + 1


def _finished(outputs, encoded, new_tokens: int, t0: float, bar) -> Generation:
    """Close the progress bar and return what a `generate` loop produced."""
    seconds = time.perf_counter() - t0
    if bar is not None:
        bar.close()
    return Generation(tuple(outputs), sum(len(e) for e in encoded), new_tokens, seconds)


def generate(model, tokenizer, texts: Sequence[str], *, batch_size: int = 8,
             max_new_tokens: int = 256, do_sample: bool = False, progress: bool = False,
             system_prompt: str | None = None, fast: bool = True, threads: int | None = None,
             **generate_kwargs: Any) -> Generation:
    """Generate the model's answer for each document in `texts` (greedy by default).

    Greedy means plain argmax decoding: no sampling and no repetition penalty, whatever
    the model's ``generation_config.json`` suggests. Documents are sorted by prompt length
    (longest first) into batches and left-padded; the outputs come back in input order.
    `system_prompt` is the setting the model was trained with (see `prompt_ids`). Extra
    keyword arguments go to ``model.generate`` (e.g. ``temperature`` with
    ``do_sample=True``).

    Greedy decoding takes the fast path (``fast=True``, the default): a decoding loop
    of its own over the model's KV cache (a ``DynamicCache``: on a CPU a static cache
    only pays off with ``torch.compile``, whose compile time a batch job does not win
    back) that computes logits for the last position only, drops each document from the
    batch as soon as it emits its end-of-turn token (the others go on without it), and
    stops each document at ``min(max_new_tokens, answer_token_cap(its tokens))``. It
    computes what ``model.generate`` computes for the rows still running, so its
    outputs equal the ``fast=False`` path (one ``model.generate`` call per batch, kept as
    the reference and for sampling) token for token; tests/test_inference.py and
    benchmarks/bench_inference.py compare them. `threads` sets torch's intra-op
    threads for the call (default: torch's own setting, one per core).
    """
    import torch

    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        if fast and not do_sample and not generate_kwargs:
            return _generate_fast(model, tokenizer, texts, batch_size=batch_size,
                                  max_new_tokens=max_new_tokens, progress=progress,
                                  system_prompt=system_prompt)
        return _generate_hf(model, tokenizer, texts, batch_size=batch_size,
                            max_new_tokens=max_new_tokens, do_sample=do_sample,
                            progress=progress, system_prompt=system_prompt, **generate_kwargs)
    finally:
        torch.set_num_threads(before)


def _progress_bar(progress: bool, total: int):
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="generating", unit="doc")


def _kept(row: Sequence[int], stop: Sequence[int]) -> list[int]:
    """The tokens of `row` up to and including the first stop token."""
    kept = []
    for token in row:
        kept.append(token)
        if token in stop:
            break
    return kept


def _generate_hf(model, tokenizer, texts: Sequence[str], *, batch_size: int,
                 max_new_tokens: int, do_sample: bool, progress: bool,
                 system_prompt: str | None, **generate_kwargs: Any) -> Generation:
    """One ``model.generate`` call per length-sorted batch (the reference path)."""
    import torch
    from transformers import GenerationConfig

    stop = _stop_ids(model, tokenizer)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else stop[0]
    # Unset fields would be filled from the model's own generation config (a hub model's
    # sampling settings and repetition penalty): greedy decoding pins them to neutral values.
    neutral = {} if do_sample else {"temperature": 1.0, "top_p": 1.0, "top_k": 50,
                                    "repetition_penalty": 1.0, "no_repeat_ngram_size": 0}
    config = GenerationConfig(max_new_tokens=max_new_tokens, do_sample=do_sample,
                              eos_token_id=stop, pad_token_id=pad_id, **neutral)
    device = next(model.parameters()).device
    encoded = [prompt_ids(tokenizer, text, system_prompt) for text in texts]
    order = sorted(range(len(texts)), key=lambda i: (-len(encoded[i]), i))
    outputs: list[str] = [""] * len(texts)
    new_tokens = 0
    bar = _progress_bar(progress, len(texts))
    t0 = time.perf_counter()
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            width = max(len(encoded[i]) for i in batch)
            # Left padding: every prompt ends at the last column, where generation starts.
            ids = [[pad_id] * (width - len(encoded[i])) + encoded[i] for i in batch]
            mask = [[0] * (width - len(encoded[i])) + [1] * len(encoded[i]) for i in batch]
            result = model.generate(input_ids=torch.tensor(ids, device=device),
                                    attention_mask=torch.tensor(mask, device=device),
                                    generation_config=config, **generate_kwargs)
            for row, i in zip(result[:, width:].tolist(), batch, strict=True):
                kept = _kept(row, stop)
                new_tokens += len(kept)
                outputs[i] = tokenizer.decode(kept, skip_special_tokens=True)
            if bar is not None:
                bar.update(len(batch))
    return _finished(outputs, encoded, new_tokens, t0, bar)


def _cache_keyword(model) -> str:
    """The forward keyword of the KV cache: ``cache`` (transformers >= 5.x) or the older
    ``past_key_values``."""
    import inspect

    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    params = inspect.signature(base.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


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


def _generate_fast(model, tokenizer, texts: Sequence[str], *, batch_size: int,
                   max_new_tokens: int, progress: bool,
                   system_prompt: str | None) -> Generation:
    """Greedy decoding: the shared prompt prefix prefilled once, each prompt's rest prefilled
    on its own (no padding, so the attention takes its causal fast path), the caches
    left-padded into one batch, and finished documents dropped from it (see `generate`)."""
    import torch
    from transformers import DynamicCache

    stop = _stop_ids(model, tokenizer)
    stop_set = set(stop)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else stop[0]
    device = next(model.parameters()).device
    config = getattr(model, "config", None)
    cache_key = _cache_keyword(model)
    encoded = [prompt_ids(tokenizer, text, system_prompt) for text in texts]
    caps = [min(max_new_tokens,
                answer_token_cap(len(tokenizer(text, add_special_tokens=False)["input_ids"])))
            for text in texts]
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
                    if token not in stop_set and len(tokens[row]) < caps[batch[row]]:
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


def predict_records(model, tokenizer, records: Iterable[Mapping[str, Any]], **kwargs: Any,
                    ) -> tuple[list[Prediction], Generation]:
    """Prediction rows ``{"id", "output", "parse_success"}`` for `records`, in order, and the
    `Generation` they came from (its token counts and timing).

    Keyword arguments go to `generate` (``batch_size``, ``max_new_tokens``, ...). Write the
    rows with `piilab.predictions.write_predictions`.
    """
    records = list(records)
    generation = generate(model, tokenizer, [r["source_text"] for r in records], **kwargs)
    rows = [make_prediction(r["id"], output, r["source_text"])
            for r, output in zip(records, generation.outputs, strict=True)]
    return rows, generation
