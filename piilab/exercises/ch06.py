"""Checkers for chapter 06 ("Fine-tuning"): mark the tokens that carry loss, spot broken templates.

- `check_loss_positions(answer)`: the learner reads `TOY_TOKENS`, one conversation rendered
  with a Qwen-style ChatML template (`TOY_TEMPLATE`, which writes a newline after *every*
  ``<|im_end|>``) and cut into tokens, and lists the positions whose tokens carry loss in
  completion-only training: the completion and the end-of-turn token that closes it, nothing
  before (system, user, the assistant header) and nothing after.
- `check_broken_templates(answer)`: the learner reads the chat templates of `TEMPLATES` and
  lists those with which a correct completion-only loss mask is impossible; in the notebook
  each verdict can be confirmed with `piilab.sft.check_loss_mask`.

Both follow the pattern of `piilab.exercises`: validate the shape of the answer first, then
say what is wrong, in the reader's language, without printing the solution. The expected
answers are kept here as data; `tests/test_exercises_ch06.py` derives them again from the real
machinery (the template rendering, and `check_loss_mask` on the tiny model's tokenizer), so
data and machinery cannot drift apart. This module needs only the standard library.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from piilab.exercises import CheckResult, _as_string_list, _not_a_list, _say

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
    refused = _not_a_list(answer, lang, "token positions (integers)", "トークンの位置(整数)")
    if refused is not None:
        return refused
    items = list(answer)
    size = len(TOY_TOKENS)
    for item in items:
        if not isinstance(item, int) or isinstance(item, bool):
            return CheckResult(False, _say(
                lang,
                en=f"{item!r} is not a token position: use integers, e.g. 0 for the first token",
                ja=f"{item!r} はトークンの位置ではありません。"
                "整数で書いてください(最初のトークンは 0)",
            ))
        if not 0 <= item < size:
            return CheckResult(False, _say(
                lang,
                en=f"{item} is not a position of TOY_TOKENS: positions go from 0 to {size - 1}",
                ja=f"{item} は TOY_TOKENS の位置ではありません。位置は 0 から {size - 1} までです",
            ))
    repeated = sorted({item for item in items if items.count(item) > 1})
    if repeated:
        return CheckResult(False, _say(
            lang,
            en=f"position {repeated[0]} is listed twice: list each position once",
            ja=f"位置 {repeated[0]} が 2 回出てきます。各位置は 1 回だけ書いてください",
        ))
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
        return CheckResult(False, _say(
            lang,
            en="no positions yet: list every token the model must learn to write",
            ja="まだ位置がひとつもありません。モデルが書けるようになるべきトークンをすべて挙げてください",
        ))
    chosen = set(items)
    in_header = sorted(i for i in chosen if header <= i < start)
    if in_header:
        i = in_header[0]
        return CheckResult(False, _say(
            lang,
            en=f"token {i} ({TOY_TOKENS[i]!r}) belongs to the assistant header: the prompt "
            "ends with it (add_generation_prompt=True), so the model reads it and never "
            "writes it",
            ja=f"トークン {i}({TOY_TOKENS[i]!r})はアシスタントのヘッダーの一部です。"
            "プロンプトはこのヘッダーで終わる(add_generation_prompt=True)ので、"
            "モデルはこれを読むだけで、書くことはありません",
        ))
    in_prompt = sorted(i for i in chosen if i < header)
    if in_prompt:
        i = in_prompt[0]
        return CheckResult(False, _say(
            lang,
            en=f"token {i} ({TOY_TOKENS[i]!r}) is part of the prompt (system or user turn): "
            "the model is given it, it is not trained to produce it",
            ja=f"トークン {i}({TOY_TOKENS[i]!r})はプロンプト(system か user のターン)の"
            "一部です。モデルに与えられるもので、生成するよう学習させるものではありません",
        ))
    after = sorted(i for i in chosen if i > end)
    if after:
        i = after[0]
        return CheckResult(False, _say(
            lang,
            en=f"token {i} ({TOY_TOKENS[i]!r}) comes after the end-of-turn token that closes "
            "the answer: generation stops before it, so it is not trained",
            ja=f"トークン {i}({TOY_TOKENS[i]!r})は回答を閉じるターン終了トークンの後にあります。"
            "生成はその手前で止まるので、学習の対象にはなりません",
        ))
    if end not in chosen:
        return CheckResult(False, _say(
            lang,
            en="the token that closes the answer is missing: without loss on it the model "
            "never learns to stop",
            ja="回答を閉じるトークンが抜けています。そこに損失がないと、"
            "モデルは止まることを学べません",
        ))
    missing = [i for i in range(start, end) if i not in chosen]
    if missing:
        return CheckResult(False, _say(
            lang,
            en=f"{len(missing)} token(s) of the answer are missing: every token the model "
            "must write carries loss",
            ja=f"回答のトークンが {len(missing)} 個抜けています。"
            "モデルが書くべきトークンにはすべて損失がかかります",
        ))
    return CheckResult(True, _say(
        lang,
        en=f"correct: positions {start}-{end}, the completion and its {END_OF_TURN}; the "
        "header before and the newline after carry no loss",
        ja=f"正解です: 位置 {start}〜{end}、つまり回答とそれを閉じる {END_OF_TURN} です。"
        "その前のヘッダーと後ろの改行には損失がかかりません",
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

#: Why a template the learner marked as broken trains correctly.
_WHY_FINE: dict[str, dict[str, str]] = {
    "A": {
        "en": "A has no {% generation %} markers, but it does not need them: piilab finds the "
        "boundary from the rendered prompt and the tokens, and the markers are only a "
        "cross-check",
        "ja": "A には {% generation %} マーカーがありませんが、なくても困りません。piilab は"
        "描画したプロンプトとトークンから境界を見つけるので、マーカーは照合に使うだけです",
    },
    "E": {
        "en": "E writes a blank line after the assistant's <|im_end|>, but whatever follows "
        "the end-of-turn token is left out of the training sequence",
        "ja": "E はアシスタントの <|im_end|> の後に空行を書きますが、ターン終了トークンより"
        "後ろは学習用の系列に入りません",
    },
}


def check_broken_templates(answer: Any, *, lang: str | None = None) -> CheckResult:
    """Chapter 06, exercise 2: the ids of the `TEMPLATES` that make a correct loss mask
    impossible (order and letter case do not matter).

    Reports, in this order: a wrong shape; an unknown id; an id listed twice; a template that
    trains correctly (with why); broken templates still missing (how many, not which).
    """
    items = _as_string_list(
        answer, lang, "template ids such as ['A']", "['A'] のようなテンプレート id"
    )
    if isinstance(items, CheckResult):
        return items
    ids = [item.strip().upper() for item in items]
    unknown = [item for item, norm in zip(items, ids, strict=True) if norm not in TEMPLATES]
    if unknown:
        return CheckResult(False, _say(
            lang,
            en=f"{unknown[0]!r} is not a template id; the ids are {', '.join(TEMPLATES)}",
            ja=f"{unknown[0]!r} はテンプレートの id ではありません。"
            f"id は {', '.join(TEMPLATES)} です",
        ))
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        return CheckResult(False, _say(
            lang,
            en=f"{repeated[0]} is listed twice: list each template once",
            ja=f"{repeated[0]} が 2 回出てきます。各テンプレートは 1 回だけ書いてください",
        ))
    fine = sorted(i for i in set(ids) if i not in _BROKEN)
    if fine:
        why = _WHY_FINE[fine[0]]
        return CheckResult(False, _say(
            lang,
            en=f"{why['en']}: check_loss_mask accepts it",
            ja=f"{why['ja']}。check_loss_mask はこのテンプレートを受け入れます",
        ))
    missing = [i for i in _BROKEN if i not in ids]
    if missing:
        return CheckResult(False, _say(
            lang,
            en=f"{len(missing)} broken template(s) still missing: for each template, render "
            "the prompt and the whole conversation, and look at what follows the answer",
            ja=f"壊れたテンプレートがまだ {len(missing)} つあります。各テンプレートで"
            "プロンプトと会話全体を描画し、回答の後ろに何が続くかを見てください",
        ))
    broken = ", ".join(sorted(_BROKEN))
    reasons = ", ".join(f"{i}: {_BROKEN[i]}" for i in sorted(_BROKEN))
    return CheckResult(True, _say(
        lang,
        en=f"correct: {broken} make a correct mask impossible ({reasons})",
        ja=f"正解です: {broken} では正しいマスクが作れません({reasons})",
    ))
