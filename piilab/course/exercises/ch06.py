"""Checkers for chapter 06 ("Fine-tuning"): mark the tokens that carry loss, spot broken templates.

- `check_loss_positions(answer)`: the learner reads `TOY_TOKENS`, one conversation rendered
  with a Qwen-style ChatML template (`TOY_TEMPLATE`, which writes a newline after *every*
  ``<|im_end|>``) and cut into tokens, and lists the positions whose tokens carry loss in
  completion-only training: the completion and the end-of-turn token that closes it, nothing
  before (system, user, the assistant header) and nothing after.
- `check_broken_templates(answer)`: the learner reads the chat templates of `TEMPLATES` and
  lists those with which a correct completion-only loss mask is impossible; in the notebook
  each verdict can be confirmed with `piilab.sft.check_loss_mask`.

Both follow the pattern of `piilab.course.exercises`: validate the shape of the answer first, then
say what is wrong, in the reader's language, without printing the solution. The expected
answers are kept here as data; `tests/test_exercises_ch06.py` derives them again from the real
machinery (the template rendering, and `check_loss_mask` on the tiny model's tokenizer), so
data and machinery cannot drift apart. This module needs only the standard library.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from piilab.course.exercises import CheckResult, _as_string_list, _not_a_list, _say

__all__ = [
    "TEMPLATES",
    "TOY_MESSAGES",
    "TOY_TEMPLATE",
    "TOY_TOKENS",
    "check_broken_templates",
    "check_loss_positions",
]

END_OF_TURN = "<|im_end|>"

# --------------------------------------------------------------------------------------------
# Exercise 1: which tokens carry loss?
# --------------------------------------------------------------------------------------------

#: Qwen-style ChatML: every turn, the assistant's included, ends with ``<|im_end|>`` and a
#: newline; no ``{% generation %}`` markers.
TOY_TEMPLATE = (
    "{%- for m in messages -%}"
    "{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\\n' }}{%- endif -%}"
)

#: The conversation of the exercise (synthetic: a 555-01XX phone number).
TOY_MESSAGES: tuple[Mapping[str, str], ...] = (
    {"role": "system", "content": "List PII as TYPE<TAB>VALUE rows."},
    {"role": "user", "content": "Call Jo Park on 555-0142."},
    {"role": "assistant", "content": "PERSON\tJo Park\nPHONE\t555-0142"},
)

#: `TOY_MESSAGES` rendered with `TOY_TEMPLATE`, cut into tokens the way a small BPE
#: vocabulary might cut it (the joined tokens are exactly the rendered text).
TOY_TOKENS: tuple[str, ...] = (
    "<|im_start|>", "system", "\n", "List", " PII", " as", " TYPE", "<", "TAB", ">", "VALUE",
    " rows", ".", "<|im_end|>", "\n",
    "<|im_start|>", "user", "\n", "Call", " Jo", " Park", " on", " 555", "-", "01", "42", ".",
    "<|im_end|>", "\n",
    "<|im_start|>", "assistant", "\n", "PERSON", "\t", "Jo", " Park", "\n", "PHONE", "\t",
    "555", "-", "01", "42", "<|im_end|>", "\n",
)


def _toy_layout() -> tuple[int, int, int]:
    """(first completion position, position of the closing end-of-turn token, header start).

    The assistant header is the last ``<|im_start|>``; the completion starts after the
    header's newline; the end-of-turn token is the first ``<|im_end|>`` after that.
    """
    header = max(i for i, t in enumerate(TOY_TOKENS) if t == "<|im_start|>")
    start = header + 3  # "<|im_start|>", "assistant", "\n"
    end = TOY_TOKENS.index(END_OF_TURN, start)
    return start, end, header


def _expected_positions() -> list[int]:
    start, end, _ = _toy_layout()
    return list(range(start, end + 1))


def _as_positions(answer: Any, lang: str | None) -> list[int] | CheckResult:
    """`answer` as a list of token positions, or a failed CheckResult about its shape."""
    refused = _not_a_list(answer, lang, "ch06.what_positions")
    if refused is not None:
        return refused
    items = list(answer)
    size = len(TOY_TOKENS)
    for item in items:
        if not isinstance(item, int) or isinstance(item, bool):
            return CheckResult(False, _say(lang, "ch06.not_a_position", item=item))
        if not 0 <= item < size:
            return CheckResult(False, _say(
                lang, "ch06.position_out_of_range", item=item, last=size - 1
            ))
    repeated = sorted({item for item in items if items.count(item) > 1})
    if repeated:
        return CheckResult(False, _say(lang, "ch06.position_repeated", position=repeated[0]))
    return items


def check_loss_positions(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 06, exercise 1: the positions of `TOY_TOKENS` that carry loss.

    Order does not matter. Reports, in this order: a wrong shape; an empty answer; a token of
    the assistant header; another prompt token; a token after the end-of-turn token; a missing
    end-of-turn token; missing completion tokens (how many, not which).
    """
    items = _as_positions(answer, lang)
    if isinstance(items, CheckResult):
        return items
    start, end, header = _toy_layout()
    if not items:
        return CheckResult(False, _say(lang, "ch06.no_positions"))
    chosen = set(items)
    in_header = sorted(i for i in chosen if header <= i < start)
    if in_header:
        i = in_header[0]
        return CheckResult(False, _say(lang, "ch06.token_in_header", position=i,
                                       token=TOY_TOKENS[i]))
    in_prompt = sorted(i for i in chosen if i < header)
    if in_prompt:
        i = in_prompt[0]
        return CheckResult(False, _say(lang, "ch06.token_in_prompt", position=i,
                                       token=TOY_TOKENS[i]))
    after = sorted(i for i in chosen if i > end)
    if after:
        i = after[0]
        return CheckResult(False, _say(lang, "ch06.token_after_end", position=i,
                                       token=TOY_TOKENS[i]))
    if end not in chosen:
        return CheckResult(False, _say(lang, "ch06.end_of_turn_missing"))
    missing = [i for i in range(start, end) if i not in chosen]
    if missing:
        return CheckResult(False, _say(lang, "ch06.answer_tokens_missing", count=len(missing)))
    return CheckResult(True, _say(
        lang, "ch06.positions_correct", start=start, end=end, end_of_turn=END_OF_TURN
    ))


# --------------------------------------------------------------------------------------------
# Exercise 2: spot the broken chat templates
# --------------------------------------------------------------------------------------------

_SYSTEM_OR_USER = (
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' }}"
)

#: Five ChatML chat templates for the tiny model's tokenizer (its special tokens are
#: ``<|im_start|>``, ``<|im_end|>`` and ``<|endoftext|>``). Some of them make a correct
#: completion-only loss mask impossible.
TEMPLATES: dict[str, str] = {
    # The tiny model's own template with its {% generation %} markers taken out.
    "A": (
        "{%- for message in messages -%}"
        "{%- if not loop.first -%}{{ '\\n' }}{%- endif -%}"
        "{%- if message['role'] == 'assistant' -%}"
        "{{ '<|im_start|>assistant\\n' + message['content'] + '<|im_end|>' }}"
        "{%- else -%}" + _SYSTEM_OR_USER + "{%- endif -%}"
        "{%- endfor -%}"
        "{%- if add_generation_prompt -%}{{ '\\n<|im_start|>assistant\\n' }}{%- endif -%}"
    ),
    # The assistant's content is followed by a blank line instead of a special token.
    "B": (
        "{%- for message in messages -%}"
        "{%- if not loop.first -%}{{ '\\n' }}{%- endif -%}"
        "{%- if message['role'] == 'assistant' -%}"
        "{{ '<|im_start|>assistant\\n' }}"
        "{%- generation -%}{{ message['content'] + '\\n\\n' }}{%- endgeneration -%}"
        "{%- else -%}" + _SYSTEM_OR_USER + "{%- endif -%}"
        "{%- endfor -%}"
        "{%- if add_generation_prompt -%}{{ '\\n<|im_start|>assistant\\n' }}{%- endif -%}"
    ),
    # The generation prompt opens (and closes) an empty think block.
    "C": (
        "{%- for message in messages -%}"
        "{%- if not loop.first -%}{{ '\\n' }}{%- endif -%}"
        "{%- if message['role'] == 'assistant' -%}"
        "{{ '<|im_start|>assistant\\n' }}"
        "{%- generation -%}{{ message['content'] + '<|im_end|>' }}{%- endgeneration -%}"
        "{%- else -%}" + _SYSTEM_OR_USER + "{%- endif -%}"
        "{%- endfor -%}"
        "{%- if add_generation_prompt -%}"
        "{{ '\\n<|im_start|>assistant\\n<think>\\n\\n</think>\\n\\n' }}"
        "{%- endif -%}"
    ),
    # The {% generation %} markers enclose the assistant header too.
    "D": (
        "{%- for message in messages -%}"
        "{%- if not loop.first -%}{{ '\\n' }}{%- endif -%}"
        "{%- if message['role'] == 'assistant' -%}"
        "{%- generation -%}"
        "{{ '<|im_start|>assistant\\n' + message['content'] + '<|im_end|>' }}"
        "{%- endgeneration -%}"
        "{%- else -%}" + _SYSTEM_OR_USER + "{%- endif -%}"
        "{%- endfor -%}"
        "{%- if add_generation_prompt -%}{{ '\\n<|im_start|>assistant\\n' }}{%- endif -%}"
    ),
    # Every turn, the assistant's included, ends with <|im_end|> and a blank line.
    "E": (
        "{%- for message in messages -%}"
        "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n\\n' }}"
        "{%- endfor -%}"
        "{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\\n' }}{%- endif -%}"
    ),
}

#: The verdict of `check_loss_mask` for each broken template (reason codes of `piilab.sft`).
_BROKEN: dict[str, str] = {
    "B": "no_end_of_turn",
    "C": "prompt_not_prefix",
    "D": "assistant_mask_mismatch",
}

#: The message key that says why a template the learner marked as broken trains correctly.
_WHY_FINE: dict[str, str] = {
    "A": "ch06.template_a_is_fine",
    "E": "ch06.template_e_is_fine",
}


def check_broken_templates(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 06, exercise 2: the ids of the `TEMPLATES` that make a correct loss mask
    impossible (order and letter case do not matter).

    Reports, in this order: a wrong shape; an unknown id; an id listed twice; a template that
    trains correctly (with why); broken templates still missing (how many, not which).
    """
    items = _as_string_list(answer, lang, "ch06.what_template_ids")
    if isinstance(items, CheckResult):
        return items
    ids = [item.strip().upper() for item in items]
    unknown = [item for item, norm in zip(items, ids, strict=True) if norm not in TEMPLATES]
    if unknown:
        return CheckResult(False, _say(
            lang, "ch06.not_a_template", item=unknown[0], ids=", ".join(TEMPLATES)
        ))
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        return CheckResult(False, _say(lang, "ch06.template_repeated", template=repeated[0]))
    fine = sorted(i for i in set(ids) if i not in _BROKEN)
    if fine:
        return CheckResult(False, _say(lang, _WHY_FINE[fine[0]]))
    missing = [i for i in _BROKEN if i not in ids]
    if missing:
        return CheckResult(False, _say(lang, "ch06.templates_missing", count=len(missing)))
    broken = ", ".join(sorted(_BROKEN))
    reasons = ", ".join(f"{i}: {_BROKEN[i]}" for i in sorted(_BROKEN))
    return CheckResult(True, _say(lang, "ch06.templates_correct", broken=broken, reasons=reasons))
