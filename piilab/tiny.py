"""A tiny causal language model for CPU runs and CI (chapter 06, "Fine-tuning").

`build_tiny_model(out_dir, records, seed=0)` writes, fully offline, a model
directory that ``AutoTokenizer.from_pretrained(out_dir)`` and
``AutoModelForCausalLM.from_pretrained(out_dir)`` load like any hub model:

- a byte-level BPE tokenizer (Hugging Face ``tokenizers``) trained on the texts
  the model will see: the documents and target rows of the given records (pass
  the *training* split only). Its pre-tokenizer is *copy-friendly*: no merge
  crosses a whitespace character, a digit, a punctuation mark or a Hangul
  syllable (`COPY_SPLIT`), so a value is the same token sequence in the answer
  as in the document. With a plain byte-level BPE, ``010`` after a space in the
  document is not the ``010`` after the tab in the answer, and only about one
  value in eight tokenizes the same way in both places: a model must then learn
  to translate values instead of copying them;
- a ChatML-style chat template whose assistant turn ends with the end-of-turn
  token ``<|im_end|>`` *inside* the turn and inside ``{% generation %}`` markers,
  so both the prompt/completion boundary and the assistant mask put the stop
  token under the loss (see `piilab.sft`);
- a 3-layer Llama, 192 wide (``model_type: llama``, fp32, grouped-query
  attention, an untied output head drawn at a larger scale so that LoRA can move
  the output distribution at all), randomly initialized from `seed`; a
  generation config that stops at ``<|im_end|>`` and decodes greedily;
- ``piilab_prompt.json``: the model is trained and prompted with no system
  message (setting ``none`` of `piilab.sft.SYSTEM_PROMPTS`). A model that reads
  nothing but this task gains nothing from instructions, and the full system
  prompt would be more than half of every example's tokens.

Writing: the files are built in a staging folder and then moved into `out_dir`
all together or not at all (`piilab.files.write_all`, ``piilab_tiny.json``
last), so an interrupted or failed build leaves the folder as it was; the
files of a model already there are replaced only with ``force`` (the command
line's ``--force``). The architecture settings are checked before anything is
built (`check_tiny_config`).

The same records and seed give byte-identical files (a test checks it): the
BPE trainer is deterministic for a byte-level model without a continuing-subword
prefix (a test builds in a second process, under another hash seed), the
weights are drawn from `seed` (the global torch RNG is left as it was), and
transformers writes the files deterministically.

What it is not: a language model that knows anything. Its weights are random, so
what it learns on a CPU in minutes is the shape of the answer and how to copy
the values of the generator's templates; nothing it learns transfers to
documents written another way (the holdout). It exists so that the whole
training and inference pipeline runs in seconds on a CPU, with a real
tokenizer, a real chat template and a real model class. Its vocabulary is
learned from the training documents, so the tokenizer files contain fragments of
training text: treat them like model weights, never like logs.

Needs the ``train`` extra (torch, transformers, tokenizers).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from piilab.errors import PiilabError
from piilab.files import check_outputs, output_folder, staging_folder, write_all
from piilab.sft import system_prompt_text, write_prompt_setting

__all__ = [
    "CHAT_TEMPLATE", "COPY_SPLIT", "END_OF_TURN", "PROMPT_SETTING", "TINY_CONFIG", "TINY_FILES",
    "TinyModelError", "build_tiny_model", "check_tiny_config", "train_tokenizer",
]


class TinyModelError(PiilabError):
    """A tiny-model setting or input cannot be built (names the setting, never a value)."""


END_OF_TURN = "<|im_end|>"
START_OF_TURN = "<|im_start|>"
PAD = "<|endoftext|>"
SPECIAL_TOKENS = (PAD, START_OF_TURN, END_OF_TURN)

#: ChatML with the end-of-turn token inside the assistant turn. Turns are joined by
#: a newline written *before* the next turn, so nothing follows the assistant's
#: ``<|im_end|>``: the rendered prompt (with the generation prompt) is a prefix of
#: the rendered conversation, and the completion ends exactly at the stop token.
CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{%- if not loop.first -%}{{ '\\n' }}{%- endif -%}"
    "{%- if message['role'] == 'assistant' -%}"
    "{{ '<|im_start|>assistant\\n' }}"
    "{%- generation -%}{{ message['content'] + '<|im_end|>' }}{%- endgeneration -%}"
    "{%- else -%}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' }}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '\\n<|im_start|>assistant\\n' }}{%- endif -%}"
)

#: Architecture of the tiny model (a small Llama: about 1.8 M parameters with the
#: default vocabulary). At this size a training step costs about the same for 128x2
#: and 192x3 (the step is overhead-bound on a CPU), and 192x3 learns more.
TINY_CONFIG: Mapping[str, Any] = {
    "hidden_size": 192,
    "intermediate_size": 512,
    "num_hidden_layers": 3,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 1024,
    "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
    "initializer_range": 0.02,
}


#: The files a tiny model directory holds (transformers may add or drop a tokenizer file
#: between versions; the ones written are checked again before they are moved in).
TINY_FILES: tuple[str, ...] = (
    "config.json", "generation_config.json", "model.safetensors", "tokenizer.json",
    "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja",
    "piilab_prompt.json", "piilab_tiny.json",
)

#: Upper bounds of the integer settings (a typo must not allocate gigabytes).
_LIMITS = {"hidden_size": 4096, "intermediate_size": 16384, "num_hidden_layers": 64,
           "num_attention_heads": 64, "num_key_value_heads": 64,
           "max_position_embeddings": 32768}


def check_tiny_config(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The architecture `TINY_CONFIG` with `config`'s overrides, checked; else `TinyModelError`.

    >>> check_tiny_config({"hidden_size": -5})
    Traceback (most recent call last):
    ...
    piilab.tiny.TinyModelError: tiny-model setting hidden_size must be an integer from 1 to 4096
    """
    unknown = sorted(set(config or {}) - set(TINY_CONFIG))
    if unknown:
        raise TinyModelError(f"unknown tiny-model setting(s): {', '.join(unknown)}")
    architecture = {**TINY_CONFIG, **(config or {})}
    for name, limit in _LIMITS.items():
        value = architecture[name]
        if type(value) is not int or not 1 <= value <= limit:
            raise TinyModelError(f"tiny-model setting {name} must be an integer from 1 to {limit}")
    heads, kv_heads = architecture["num_attention_heads"], architecture["num_key_value_heads"]
    if architecture["hidden_size"] % heads or (architecture["hidden_size"] // heads) % 2:
        raise TinyModelError(f"tiny-model setting hidden_size must be a multiple of "
                             f"2 x num_attention_heads ({2 * heads})")
    if heads % kv_heads:
        raise TinyModelError("tiny-model setting num_attention_heads must be a multiple of "
                             "num_key_value_heads")
    return architecture


#: Standard deviation of the output head at initialization (see `build_tiny_model`).
HEAD_STD = 0.1

#: The system-prompt setting the tiny model is trained and prompted with.
PROMPT_SETTING = "none"

#: What the copy-friendly pre-tokenizer isolates: every whitespace character, digit,
#: punctuation mark and Hangul syllable becomes a piece of its own, so BPE merges stay
#: inside runs of Latin letters (or other scripts) and never cross a value's edge.
COPY_SPLIT = r"\s|\d|[^\w\s]|[\uac00-\ud7a3]"


def _training_texts(records: Iterable[Mapping[str, Any]],
                    system_prompt: str = PROMPT_SETTING) -> Iterator[str]:
    """What the tokenizer learns from, in a fixed order: per record, the system
    prompt when there is one (the model reads it in every example, so it should
    compress well), the document and the target rows."""
    prompt = system_prompt_text(system_prompt)
    for record in records:
        if prompt:
            yield "system\n" + prompt
        yield "user\n" + record["source_text"]
        if record.get("target_tsv"):
            yield record["target_tsv"]


def train_tokenizer(records: Iterable[Mapping[str, Any]], vocab_size: int = 2048, *,
                    copy_friendly: bool = True, system_prompt: str = PROMPT_SETTING):
    """Train the byte-level BPE tokenizer and wrap it for transformers.

    Returns a `transformers.PreTrainedTokenizerFast` with the chat template,
    ``eos_token`` = ``<|im_end|>`` and ``pad_token`` = ``<|endoftext|>``.
    `copy_friendly=False` gives the plain byte-level BPE (for comparison).
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    # Byte-level: every string is encodable (Hangul, kana, tabs), no unknown token.
    if copy_friendly:
        bpe.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(COPY_SPLIT), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
    else:
        bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(list(_training_texts(records, system_prompt)), trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token=END_OF_TURN,
        pad_token=PAD,
        chat_template=CHAT_TEMPLATE,
        model_max_length=TINY_CONFIG["max_position_embeddings"],
        clean_up_tokenization_spaces=False,
    )


def build_tiny_model(out_dir: str | os.PathLike, records: Iterable[Mapping[str, Any]],
                     seed: int = 0, *, vocab_size: int = 2048,
                     config: Mapping[str, Any] | None = None, copy_friendly: bool = True,
                     system_prompt: str = PROMPT_SETTING, force: bool = True) -> Path:
    """Write the tiny tokenizer and model to `out_dir` and return its path.

    `records` are the training records (``source_text``, ``target_tsv``). The
    result loads with ``AutoTokenizer``/``AutoModelForCausalLM.from_pretrained``.
    `config` overrides keys of `TINY_CONFIG` (e.g. ``{"num_hidden_layers": 2}``;
    checked by `check_tiny_config`); `system_prompt` is the setting saved with
    the model for training and inference. The files are staged and moved in
    all together (module docstring); with ``force=False`` a file already in
    `out_dir` is refused (`piilab.files.OutputError`) instead of replaced.
    """
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    architecture = check_tiny_config(config)
    records = list(records)
    if not records:
        raise TinyModelError("build_tiny_model needs at least one training record")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise TinyModelError(f"{out}: exists and is not a directory")
    if out.is_dir():  # before the work, not after
        check_outputs([out / name for name in TINY_FILES], force=force)

    tokenizer = train_tokenizer(records, vocab_size=vocab_size, copy_friendly=copy_friendly,
                                system_prompt=system_prompt)
    eos_id = tokenizer.convert_tokens_to_ids(END_OF_TURN)
    pad_id = tokenizer.convert_tokens_to_ids(PAD)
    model_config = LlamaConfig(
        vocab_size=len(tokenizer),
        bos_token_id=None,
        eos_token_id=eos_id,
        pad_token_id=pad_id,
        dtype="float32",
        **architecture,
    )
    # Draw the weights from `seed` without disturbing the caller's RNG state.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(model_config)
        # The output head gets a larger scale than the other weights: behind the final
        # RMSNorm, the largest logit a frozen head allows is about hidden_size * HEAD_STD,
        # and LoRA does not train the head. At the usual 0.02 that bound (about 2.6)
        # keeps the output near uniform whatever the adapter learns.
        with torch.no_grad():
            model.get_output_embeddings().weight.normal_(0.0, HEAD_STD)
    model.generation_config = GenerationConfig(
        bos_token_id=None, eos_token_id=eos_id, pad_token_id=pad_id, do_sample=False,
        max_new_tokens=256,
    )
    provenance = {
        "builder": "piilab.tiny.build_tiny_model",
        "architecture": {k: architecture[k] for k in ("hidden_size", "intermediate_size",
                                                      "num_hidden_layers")},
        "copy_friendly": copy_friendly,
        "system_prompt": system_prompt,
        "seed": seed,
        "training_records": len(records),
        "vocab_size": len(tokenizer),
        "parameters": sum(p.numel() for p in model.parameters()),
    }
    with output_folder(out) as folder, staging_folder(folder / "model") as stage:
        model.save_pretrained(stage)
        tokenizer.save_pretrained(stage)
        write_prompt_setting(stage, system_prompt)
        (stage / "piilab_tiny.json").write_text(
            json.dumps(provenance, indent=2, sort_keys=True) + "\n")
        names = sorted((p.name for p in stage.iterdir() if p.is_file()),
                       key=lambda name: (name == "piilab_tiny.json", name))  # the marker last
        targets = check_outputs([folder / name for name in names], force=force)
        write_all([(target, (stage / target.name).read_bytes(),
                    stat.S_IMODE((stage / target.name).stat().st_mode)) for target in targets])
    return out
