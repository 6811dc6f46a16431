"""Training records and the completion-only loss mask (chapter 06, "Fine-tuning").

A training example is one conversation in TRL's *prompt-completion conversational*
format, built by `build_messages(record)`:

- prompt: a system message, then a user message that carries the document
  (`source_text`). The system message is a *setting* (`SYSTEM_PROMPTS`):
  ``full`` states the task, every label and the output format (what a model that
  was never trained on the task needs: zero-shot); ``short`` is one sentence and
  the label names; ``none`` leaves the message empty. A fine-tuned model learns
  the task from its examples, so a shorter prompt only saves tokens: the full one
  is more than half of every example's tokens on the tiny model. Training and
  inference must use the same setting, so it is saved beside the model
  (``piilab_prompt.json``, `write_prompt_setting`) and read back by
  `piilab.inference.load_for_inference`;
- completion: one assistant message whose content is the record's `target_tsv`
  (``TYPE<TAB>VALUE`` lines; ``""`` for a document without PII).

The model must learn to write the completion *and to stop*, so the loss is
computed on the completion tokens plus the end-of-turn token that closes the
assistant turn (``<|im_end|>`` in ChatML templates), and on nothing else.
`tokenize_example` turns one example into ``input_ids`` and ``labels`` (prompt
positions set to -100) using the model's real chat template, and
`check_loss_mask` proves, example by example, that what carries loss decodes to
exactly ``completion + end-of-turn token``. `piilab.train` trains on the very
``input_ids``/``labels`` that `tokenize_example` builds, so the check is a check
of the training input, not of a copy of it.

How the boundary is found (it does not rely on ``{% generation %}`` markers,
which most published templates lack):

1. render the prompt with ``add_generation_prompt=True`` (text P) and the whole
   conversation (text F); F must start with P;
2. after P, F must continue with the completion exactly, then with a special
   token: that token is the end-of-turn token (the longest special or added
   token that matches there). Whatever the template writes after it (ChatML's
   trailing newline) is left out of the training sequence;
3. ``input_ids`` = tokens of ``P + completion + end-of-turn``; the tokens of P
   alone must be a prefix of them (no BPE merge across the boundary), so the
   model is trained on the very context it sees at inference;
4. checks: the unmasked tokens decode to ``completion + end-of-turn``, the last
   one is the end-of-turn token, the sequence is a prefix of what the template
   itself tokenizes, and, where the template has ``{% generation %}`` markers,
   its assistant mask marks the same positions.

An example longer than ``max_length`` would be cut inside its completion (the
prompt comes first), so the model would never see its end-of-turn token; such
examples are reported in ``truncated`` and training refuses them unless told to
drop them.

What this module does not do: it never prints or logs text (a report holds record
ids, reason codes and counts only), it does not choose ``max_length`` for you
(the report's length statistics help you choose), and it handles single-turn
conversations only, which is all the course needs.

Needs the ``train`` extra for `build_sft_dataset` and `prepare_training_dataset`
(``datasets``); the other functions take any Hugging Face tokenizer object.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from piilab.errors import PiilabError
from piilab.inputs import loads_json
from piilab.labels import LABEL_DESCRIPTIONS, LABELS

__all__ = [
    "CHAT_TEMPLATE_KWARGS",
    "IGNORE_INDEX",
    "PROMPT_FILE",
    "SYSTEM_PROMPT",
    "SYSTEM_PROMPTS",
    "LossMaskError",
    "LossMaskReport",
    "SFTError",
    "TokenizedExample",
    "build_messages",
    "build_sft_dataset",
    "check_loss_mask",
    "end_of_turn_token",
    "has_generation_markers",
    "length_stats",
    "prepare_training_dataset",
    "read_prompt_setting",
    "system_prompt",
    "system_prompt_text",
    "tokenize_example",
    "write_prompt_setting",
]

#: The label value that makes a position carry no loss (PyTorch's cross-entropy default).
IGNORE_INDEX = -100

#: Extra variables given to every chat template, in training and at inference alike.
#: Templates of reasoning models (Qwen3 and others) read ``enable_thinking``: with
#: False the prompt ends with an empty think block, so the completion is the TSV
#: alone. Templates that do not know the variable ignore it.
CHAT_TEMPLATE_KWARGS: Mapping[str, Any] = {"enable_thinking": False}

# Reason codes of `LossMaskError` and of `LossMaskReport.reasons` (never text).
REASONS: dict[str, str] = {
    "prompt_not_prefix": "the rendered prompt is not a prefix of the rendered conversation",
    "completion_rewritten": "the template does not render the completion verbatim after the prompt",
    "no_end_of_turn": "no special token closes the assistant turn right after the completion",
    "boundary_merge": "the prompt's tokens are not a prefix of the conversation's tokens",
    "end_of_turn_not_last": "the last loss token is not the end-of-turn token",
    "decode_mismatch": "the loss tokens do not decode to the completion plus end-of-turn token",
    "template_token_mismatch": "the tokens differ from what the chat template tokenizes",
    "assistant_mask_mismatch": "the template's assistant mask marks other positions",
    "truncated": "longer than max_length: truncation would cut into the completion",
}


class SFTError(PiilabError):
    """A setting or an argument of the training-example pipeline that cannot be used."""


class LossMaskError(PiilabError):
    """An example cannot be trained with a correct loss mask.

    `reason` is one of the codes in `REASONS`; `record_id` names the example. The
    message holds both and never any text of the example.
    """

    def __init__(self, record_id: str, reason: str, detail: str = ""):
        self.record_id = record_id
        self.reason = reason
        message = f"record {record_id}: {REASONS.get(reason, reason)} ({reason})"
        super().__init__(message + (f"; {detail}" if detail else ""))


# ---------------------------------------------------------------------------
# 1. The conversation
# ---------------------------------------------------------------------------


def system_prompt(labels: Sequence[str] = LABELS) -> str:
    """The system message: the task, the allowed labels and the output format.

    >>> "PERSON" in system_prompt() and "TYPE<TAB>VALUE" in system_prompt()
    True
    """
    # Short on purpose: every training and inference example pays for these tokens.
    lines = [
        "List the personal information (PII) in the document, one value per line as "
        "TYPE<TAB>VALUE, with VALUE copied exactly from the document, in order of first "
        "occurrence. If there is none, answer with an empty message. Types:",
    ]
    lines += [f"{label}: {LABEL_DESCRIPTIONS.get(label, label)}" for label in labels]
    return "\n".join(lines)


#: The full system message (the ``full`` setting, the default).
SYSTEM_PROMPT = system_prompt()

#: The system-message settings a model can be trained and prompted with.
SYSTEM_PROMPTS: Mapping[str, str] = {
    "full": SYSTEM_PROMPT,
    "short": "List the personal information in the document as TYPE<TAB>VALUE lines. Types: "
             + ", ".join(LABELS) + ".",
    "none": "",
}

#: The file, beside a model or adapter, that names the setting it was trained with.
PROMPT_FILE = "piilab_prompt.json"


def system_prompt_text(setting: str = "full") -> str:
    """The system message of a setting (``full``, ``short`` or ``none``).

    >>> system_prompt_text("none")
    ''
    """
    if setting not in SYSTEM_PROMPTS:
        raise SFTError(f"system prompt setting must be one of {', '.join(SYSTEM_PROMPTS)}")
    return SYSTEM_PROMPTS[setting]


def read_prompt_setting(model_dir: str | os.PathLike) -> str | None:
    """The setting saved in `model_dir` (``piilab_prompt.json``), or None without one."""
    path = Path(model_dir) / PROMPT_FILE
    if not path.is_file():
        return None
    data = loads_json(path.read_bytes(), str(path))
    setting = data.get("system_prompt") if isinstance(data, dict) else None
    if setting not in SYSTEM_PROMPTS:
        raise SFTError(f"{path}: field 'system_prompt' must be one of "
                       f"{', '.join(SYSTEM_PROMPTS)}")
    return setting


def write_prompt_setting(model_dir: str | os.PathLike, setting: str) -> None:
    """Save `setting` beside a model or adapter, for inference to read."""
    system_prompt_text(setting)
    path = Path(model_dir) / PROMPT_FILE
    path.write_text(json.dumps({"system_prompt": setting}) + "\n", encoding="utf-8")


def build_messages(record: Mapping[str, Any], system_prompt: str = "full",
                   ) -> dict[str, list[dict[str, str]]]:
    """One record as TRL's prompt-completion conversational example.

    `system_prompt` is a setting of `SYSTEM_PROMPTS` (``none`` keeps an empty
    system message, so every chat template renders the same turns).

    >>> ex = build_messages({"source_text": "고객 김가상 님", "target_tsv": "PERSON\\t김가상"})
    >>> [m["role"] for m in ex["prompt"]], ex["completion"][0]["content"]
    (['system', 'user'], 'PERSON\\t김가상')
    """
    return {
        "prompt": [
            {"role": "system", "content": system_prompt_text(system_prompt)},
            {"role": "user", "content": record["source_text"]},
        ],
        "completion": [{"role": "assistant", "content": record.get("target_tsv", "")}],
    }


def build_sft_dataset(records: Iterable[Mapping[str, Any]], system_prompt: str = "full"):
    """A `datasets.Dataset` with columns ``id``, ``language``, ``prompt``, ``completion``.

    The format TRL's `SFTTrainer` accepts as is (completion-only loss is its
    default there); `piilab.train` tokenizes it with `prepare_training_dataset`
    instead, so that the checked mask is the trained one.
    """
    from datasets import Dataset

    rows = []
    for record in records:
        example = build_messages(record, system_prompt)
        rows.append({"id": str(record["id"]), "language": record.get("language", ""), **example})
    return Dataset.from_list(rows)


# ---------------------------------------------------------------------------
# 2. Tokenizing one example, with its loss mask
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TokenizedExample:
    """``input_ids`` and ``labels`` of one example (labels are -100 on the prompt)."""

    id: str
    input_ids: tuple[int, ...]
    labels: tuple[int, ...]
    prompt_tokens: int
    end_of_turn: str

    @property
    def completion_tokens(self) -> int:
        """Tokens that carry loss: the completion plus the end-of-turn token."""
        return len(self.input_ids) - self.prompt_tokens


def _as_example(item: Mapping[str, Any], system_prompt: str = "full") -> dict[str, Any]:
    """Accept a record (with ``target_tsv``) or a prompt-completion example."""
    if "prompt" in item and "completion" in item:
        return {"prompt": list(item["prompt"]), "completion": list(item["completion"])}
    return build_messages(item, system_prompt)


def _special_tokens(tokenizer) -> list[str]:
    """Special and added tokens, longest first (so ``<|im_end|>`` beats ``<|im``)."""
    names = set(getattr(tokenizer, "all_special_tokens", []) or [])
    for token in (getattr(tokenizer, "added_tokens_decoder", None) or {}).values():
        names.add(str(token))
    return sorted((n for n in names if n), key=len, reverse=True)


def _render(tokenizer, messages, **kwargs) -> str:
    return tokenizer.apply_chat_template(messages, tokenize=False, **CHAT_TEMPLATE_KWARGS, **kwargs)


def _encode(tokenizer, text: str) -> list[int]:
    # The template writes BOS/EOS itself where it wants them: add none here.
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def end_of_turn_token(tokenizer) -> str:
    """The token that closes an assistant turn in this tokenizer's chat template.

    Found the way `tokenize_example` finds it, on a one-word probe conversation;
    generation stops there. Raises `LossMaskError` (record id ``probe``) when the
    template closes the assistant turn with no special token.
    """
    probe = {"id": "probe", "source_text": "x", "target_tsv": "y"}
    return tokenize_example(tokenizer, probe, verify=False).end_of_turn


_GENERATION_TAG = re.compile(r"\{%-?\s*generation\s*-?%\}")


def has_generation_markers(tokenizer) -> bool:
    """True when the chat template marks assistant output with ``{% generation %}``."""
    template = getattr(tokenizer, "chat_template", None) or ""
    return bool(_GENERATION_TAG.search(template))


def tokenize_example(tokenizer, example: Mapping[str, Any], example_id: str | None = None,
                     *, verify: bool = True, system_prompt: str = "full") -> TokenizedExample:
    """Tokenize one example and build its completion-only labels.

    `example` is a record (``source_text``, ``target_tsv``) or a prompt-completion
    example. Raises `LossMaskError` (with a reason code) when the chat template
    makes a correct mask impossible or, with `verify`, when a check fails.
    Truncation is not applied here: see `check_loss_mask`. `system_prompt` is the
    setting a record is rendered with (ignored for a prompt-completion example).
    """
    rid = str(example_id if example_id is not None else example.get("id", "?"))
    ex = _as_example(example, system_prompt)
    completion = "".join(m["content"] for m in ex["completion"])

    # 1. Render the prompt (ending with the assistant header) and the whole turn.
    prompt_text = _render(tokenizer, ex["prompt"], add_generation_prompt=True)
    full_text = _render(tokenizer, ex["prompt"] + ex["completion"])
    if not full_text.startswith(prompt_text):
        raise LossMaskError(rid, "prompt_not_prefix")
    rest = full_text[len(prompt_text):]
    if not rest.startswith(completion):
        raise LossMaskError(rid, "completion_rewritten")

    # 2. The end-of-turn token is the special token that follows the completion.
    after = rest[len(completion):]
    end_of_turn = next((t for t in _special_tokens(tokenizer) if after.startswith(t)), None)
    if end_of_turn is None:
        raise LossMaskError(rid, "no_end_of_turn")

    # 3. Tokenize prompt + completion + end-of-turn; nothing after it is trained.
    prompt_ids = _encode(tokenizer, prompt_text)
    input_ids = _encode(tokenizer, prompt_text + completion + end_of_turn)
    if input_ids[: len(prompt_ids)] != prompt_ids:
        raise LossMaskError(rid, "boundary_merge")
    n_prompt = len(prompt_ids)
    labels = [IGNORE_INDEX] * n_prompt + input_ids[n_prompt:]
    result = TokenizedExample(rid, tuple(input_ids), tuple(labels), n_prompt, end_of_turn)
    if verify:
        _verify(tokenizer, ex, result, completion)
    return result


def _verify(tokenizer, ex: Mapping[str, Any], tok: TokenizedExample, completion: str) -> None:
    """The checks of step 4 (see the module docstring)."""
    rid, ids, n_prompt = tok.id, list(tok.input_ids), tok.prompt_tokens
    loss_ids = [t for t in tok.labels if t != IGNORE_INDEX]
    eot_id = tokenizer.convert_tokens_to_ids(tok.end_of_turn)
    if not loss_ids or loss_ids[-1] != eot_id or loss_ids != ids[n_prompt:]:
        raise LossMaskError(rid, "end_of_turn_not_last")
    decoded = tokenizer.decode(loss_ids, skip_special_tokens=False,
                               clean_up_tokenization_spaces=False)
    if decoded != completion + tok.end_of_turn:
        raise LossMaskError(rid, "decode_mismatch")
    # The template's own tokenization of the conversation must start with our sequence.
    template_out = tokenizer.apply_chat_template(
        ex["prompt"] + ex["completion"], tokenize=True, return_dict=True,
        return_assistant_tokens_mask=has_generation_markers(tokenizer), **CHAT_TEMPLATE_KWARGS)
    template_ids = list(template_out["input_ids"])
    if template_ids[: len(ids)] != ids:
        raise LossMaskError(rid, "template_token_mismatch")
    if has_generation_markers(tokenizer):
        mask = list(template_out["assistant_masks"])[: len(ids)]
        if [i for i, m in enumerate(mask) if m] != list(range(n_prompt, len(ids))):
            raise LossMaskError(rid, "assistant_mask_mismatch")


# ---------------------------------------------------------------------------
# 3. Checking a whole set of examples
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LossMaskReport:
    """What `check_loss_mask` found. Ids and counts only, never text.

    - `ok`: at least one example checked, none mismatched, none truncated;
    - `checked`: examples examined;
    - `mismatched`: ids whose loss tokens are not exactly completion + end-of-turn
      (or whose template makes that impossible); `reasons` gives each one's code;
    - `truncated`: ids longer than `max_length`;
    - `lengths`: token-length statistics (``min``, ``p50``, ``mean``, ``p95``,
      ``max``) of the ``total`` sequence, the ``prompt`` and the ``completion``
      (end-of-turn token included);
    - `end_of_turn`: the end-of-turn token(s) found (normally one).
    """

    ok: bool
    checked: int
    max_length: int
    mismatched: tuple[str, ...]
    truncated: tuple[str, ...]
    reasons: dict[str, str] = field(default_factory=dict)
    lengths: dict[str, dict[str, float]] = field(default_factory=dict)
    end_of_turn: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy (lists instead of tuples)."""
        out = asdict(self)
        for key in ("mismatched", "truncated", "end_of_turn"):
            out[key] = list(out[key])
        return out


def length_stats(values: Sequence[int]) -> dict[str, float]:
    """``min``, ``p50``, ``mean``, ``p95``, ``max`` (nearest-rank percentiles); zeros if empty.

    >>> length_stats([1, 2, 3, 4])
    {'min': 1, 'p50': 2, 'mean': 2.5, 'p95': 4, 'max': 4}
    """
    if not values:
        return {"min": 0, "p50": 0, "mean": 0.0, "p95": 0, "max": 0}
    ordered = sorted(values)

    def rank(p: float) -> int:
        return ordered[max(0, math.ceil(p * len(ordered)) - 1)]

    return {"min": ordered[0], "p50": rank(0.5), "mean": round(sum(ordered) / len(ordered), 2),
            "p95": rank(0.95), "max": ordered[-1]}


def _check(tokenizer, examples: Iterable[Mapping[str, Any]], max_length: int,
           system_prompt: str = "full") -> tuple[LossMaskReport, list[TokenizedExample]]:
    mismatched: list[str] = []
    truncated: list[str] = []
    reasons: dict[str, str] = {}
    tokenized: list[TokenizedExample] = []
    checked = 0
    for index, example in enumerate(examples):
        checked += 1
        rid = str(example.get("id", f"#{index}"))
        try:
            tok = tokenize_example(tokenizer, example, rid, system_prompt=system_prompt)
        except LossMaskError as exc:
            mismatched.append(rid)
            reasons[rid] = exc.reason
            continue
        tokenized.append(tok)
        if len(tok.input_ids) > max_length:
            truncated.append(rid)
            reasons.setdefault(rid, "truncated")
    lengths = {
        "total": length_stats([len(t.input_ids) for t in tokenized]),
        "prompt": length_stats([t.prompt_tokens for t in tokenized]),
        "completion": length_stats([t.completion_tokens for t in tokenized]),
    }
    report = LossMaskReport(
        ok=checked > 0 and not mismatched and not truncated,
        checked=checked,
        max_length=max_length,
        mismatched=tuple(mismatched),
        truncated=tuple(truncated),
        reasons=reasons,
        lengths=lengths,
        end_of_turn=tuple(sorted({t.end_of_turn for t in tokenized})),
    )
    return report, tokenized


def check_loss_mask(tokenizer, examples: Iterable[Mapping[str, Any]],
                    max_length: int, *, system_prompt: str = "full") -> LossMaskReport:
    """Prove, with the real tokenizer and chat template, that only the completion
    plus the end-of-turn token carries loss, and find examples that would be truncated.

    `examples` are records (``id``, ``source_text``, ``target_tsv``) or
    prompt-completion examples (an ``id`` key is used when present, else the
    position ``#i``). See `LossMaskReport` for the result.
    """
    if max_length < 1:
        raise SFTError("max_length must be a positive number of tokens")
    return _check(tokenizer, examples, max_length, system_prompt)[0]


# ---------------------------------------------------------------------------
# 4. The training dataset
# ---------------------------------------------------------------------------


def prepare_training_dataset(tokenizer, records: Iterable[Mapping[str, Any]], max_length: int,
                             *, drop_truncated: bool = False, system_prompt: str = "full"):
    """Check every example, then return ``(dataset, report)`` for training.

    The dataset (a `datasets.Dataset`) has the columns ``input_ids``, ``labels``
    and ``completion_mask``, which TRL's `SFTTrainer` uses as they are. Raises `LossMaskError`
    when an example is mismatched (always) or truncated (unless `drop_truncated`,
    which removes those examples; the report still lists them).
    """
    from datasets import Dataset

    report, tokenized = _check(tokenizer, records, max_length, system_prompt)
    if report.mismatched:
        first = report.mismatched[0]
        raise LossMaskError(first, report.reasons[first],
                            f"{len(report.mismatched)} example(s) mismatched; "
                            "run check_loss_mask for the full list")
    if report.truncated and not drop_truncated:
        raise LossMaskError(report.truncated[0], "truncated",
                            f"{len(report.truncated)} example(s) exceed max_length={max_length}; "
                            "raise max_length or set drop_truncated")
    keep = [t for t in tokenized if len(t.input_ids) <= max_length]
    if not keep:
        raise SFTError("no training example left after dropping truncated ones")
    # `labels` is what TRL trains on; `completion_mask` says the same thing for TRL
    # releases whose collator rebuilds labels from it.
    dataset = Dataset.from_dict({
        "input_ids": [list(t.input_ids) for t in keep],
        "labels": [list(t.labels) for t in keep],
        "completion_mask": [[int(x != IGNORE_INDEX) for x in t.labels] for t in keep],
    })
    return dataset, report
