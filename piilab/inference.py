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
  decodes greedily by default with one ``model.generate`` call per batch, stops
  at the end-of-turn token and returns the new text of each document, special
  tokens removed. `piilab.fast_generate` is an opt-in decoder for batch jobs
  that gives the same outputs with less work;
- `predict_records` turns records into ``{"id", "output", "parse_success"}``
  rows (with the `Generation`); `piilab.predictions.write_predictions` writes them
  as JSONL, ready for ``piilab evaluate``.

Think blocks: templates that read ``enable_thinking`` are asked not to think
(`piilab.sft.CHAT_TEMPLATE_KWARGS`, the same as in training); a model that
thinks anyway keeps its ``<think>...</think>`` text in ``output``, which is the
raw model output, and the parser removes complete blocks (docs/contract.md, section 3). An
unclosed ``<think>`` (the model ran out of ``max_new_tokens`` while thinking) is
left as text: its prose lines are ignored, but a ``TYPE<TAB>VALUE`` line inside it
is still a row, as for any other line.

The generation functions import torch and transformers when called, so
``import piilab.inference`` stays standard-library only. Nothing here prints
text; progress bars (``progress=True``) show counts only.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from piilab.errors import PiilabError
from piilab.predictions import Prediction, make_prediction

__all__ = ["Generation", "InferenceError", "LoadedModel", "generate", "load_for_inference",
           "predict_records", "prompt_ids"]


class InferenceError(PiilabError):
    """A model directory or a generation argument that cannot be used (names the file or
    the argument, never a document)."""


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

    from piilab.inputs import loads_json
    from piilab.models import resolve_model
    from piilab.sft import read_prompt_setting

    path = Path(resolve_model(model_dir))
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = dtype or _default_dtype(device)
    adapter_config = path / "adapter_config.json"
    if adapter_config.exists():
        from peft import PeftModel

        adapter = loads_json(adapter_config.read_bytes(), where=str(adapter_config))
        base_id = adapter.get("base_model_name_or_path") if isinstance(adapter, dict) else None
        if not isinstance(base_id, str) or not base_id:
            raise InferenceError(f"{adapter_config}: field 'base_model_name_or_path' is "
                                 "missing or not a string")
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


def _finished(outputs, encoded, new_tokens: int, t0: float, bar) -> Generation:
    """Close the progress bar and return what a `generate` loop produced."""
    seconds = time.perf_counter() - t0
    if bar is not None:
        bar.close()
    return Generation(tuple(outputs), sum(len(e) for e in encoded), new_tokens, seconds)


@contextlib.contextmanager
def _torch_threads(threads: int | None):
    """Torch's intra-op threads set to `threads` for the block (None: left as they are)."""
    import torch

    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def generate(model, tokenizer, texts: Sequence[str], *, batch_size: int = 8,
             max_new_tokens: int = 256, do_sample: bool = False, progress: bool = False,
             system_prompt: str | None = None, threads: int | None = None,
             **generate_kwargs: Any) -> Generation:
    """Generate the model's answer for each document in `texts` (greedy by default).

    Greedy means plain argmax decoding: no sampling and no repetition penalty, whatever
    the model's ``generation_config.json`` suggests. Documents are sorted by prompt length
    (longest first) into batches and left-padded, and each batch is one
    ``model.generate`` call; the outputs come back in input order. A document stops at
    its end-of-turn token or after ``max_new_tokens`` new tokens. `system_prompt` is the
    setting the model was trained with (see `prompt_ids`). Extra keyword arguments go to
    ``model.generate`` (e.g. ``temperature`` with ``do_sample=True``). `threads` sets
    torch's intra-op threads for the call (default: torch's own setting, one per core).

    A batch job that wants speed can opt in to `piilab.fast_generate.generate_fast`: the
    same arguments (greedy only), the same outputs token for token, less work per token.
    """
    if "fast" in generate_kwargs:
        raise TypeError("generate() takes no 'fast' argument: the fast greedy loop is "
                        "piilab.fast_generate.generate_fast (same arguments, same outputs)")
    if batch_size < 1:
        raise InferenceError("batch_size must be at least 1")
    with _torch_threads(threads):
        return _generate_hf(model, tokenizer, texts, batch_size=batch_size,
                            max_new_tokens=max_new_tokens, do_sample=do_sample,
                            progress=progress, system_prompt=system_prompt, **generate_kwargs)


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
    """One ``model.generate`` call per length-sorted batch."""
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
