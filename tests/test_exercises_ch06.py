"""The checkers of chapter 06 (`piilab.course.exercises.ch06`): right answers pass, typical wrong
answers get a specific message in both languages, no failure message gives the answer away,
and the expected answers kept as data agree with the real machinery (the chat template
rendering and `check_loss_mask` on the tiny model's tokenizer)."""

from __future__ import annotations

import os

import pytest

from piilab.course.exercises import CheckResult
from piilab.course.exercises.ch06 import (
    TEMPLATES,
    TOY_MESSAGES,
    TOY_TEMPLATE,
    TOY_TOKENS,
    check_broken_templates,
    check_loss_positions,
)

HEADER = 29  # the last "<|im_start|>": the assistant header is 29, 30, 31
START, END = 32, 43  # the completion, then its <|im_end|>
RIGHT = list(range(START, END + 1))
BROKEN = ["B", "C", "D"]
TRAIN_EXTRA = "needs the train extra: pip install -e '.[train]'"


def _both(check, answer):
    return check(answer, lang="en"), check(answer, lang="ja")


# ---------------------------------------------------------------------------- exercise 1: loss


def test_the_toy_tokens_have_the_layout_the_tests_assume():
    assert TOY_TOKENS[HEADER:START] == ("<|im_start|>", "assistant", "\n")
    assert TOY_TOKENS[END] == "<|im_end|>" and TOY_TOKENS[END + 1:] == ("\n",)
    completion = TOY_MESSAGES[-1]["content"]
    assert "".join(TOY_TOKENS[START:END]) == completion


@pytest.mark.parametrize("answer", [RIGHT, RIGHT[::-1], tuple(RIGHT), set(RIGHT)])
def test_the_completion_and_its_end_of_turn_token_pass_in_any_order(answer):
    for result in _both(check_loss_positions, answer):
        assert isinstance(result, CheckResult) and result.ok and bool(result)
    assert str(check_loss_positions(answer, lang="ja")).startswith("✓ 正解です")


@pytest.mark.parametrize(
    ("answer", "en_part", "ja_part"),
    [
        ("32-43", "expected a list of token positions", "のリストを渡してください"),
        (None, "expected a list", "のリストを渡してください"),
        ({32: 1}, "expected a list", "のリストを渡してください"),
        ([32.0], "is not a token position", "トークンの位置ではありません"),
        ([True], "is not a token position", "トークンの位置ではありません"),
        ([45], "positions go from 0 to 44", "0 から 44 まで"),
        ([-1], "not a position of TOY_TOKENS", "TOY_TOKENS の位置ではありません"),
        ([32, 32], "listed twice", "2 回出てきます"),
        ([], "no positions yet", "まだ位置がひとつもありません"),
        ([31, *RIGHT], "belongs to the assistant header", "ヘッダーの一部"),
        ([29, *RIGHT], "belongs to the assistant header", "ヘッダーの一部"),
        ([27, *RIGHT], "part of the prompt", "プロンプト"),
        ([0, *RIGHT], "part of the prompt", "プロンプト"),
        ([*RIGHT, 44], "comes after the end-of-turn token", "ターン終了トークンの後"),
        (RIGHT[:-1], "never learns to stop", "止まることを学べません"),
        ([*RIGHT[2:]], "2 token(s) of the answer are missing", "2 個抜けています"),
        ([END], "11 token(s) of the answer are missing", "11 個抜けています"),
    ],
)
def test_wrong_loss_positions_say_what_is_wrong(answer, en_part, ja_part):
    en, ja = _both(check_loss_positions, answer)
    assert not en.ok and not ja.ok
    assert en_part in en.message
    assert ja_part in ja.message


@pytest.mark.parametrize("answer", [[], [END], RIGHT[:-1], [31, *RIGHT], [*RIGHT, 44]])
def test_loss_failure_messages_never_give_the_answer(answer):
    for result in _both(check_loss_positions, answer):
        assert str(START) not in result.message
        assert f"{START}-{END}" not in result.message


def test_the_language_follows_the_page_by_default(monkeypatch):
    monkeypatch.setenv("PIILAB_LANG", "ja")
    assert "正解です" in check_loss_positions(RIGHT).message
    assert "正解です" in check_broken_templates(BROKEN).message
    monkeypatch.setenv("PIILAB_LANG", "en")
    assert check_loss_positions(RIGHT).message.startswith("correct")
    assert check_broken_templates(BROKEN).message.startswith("correct")


# ---------------------------------------------------------------------------- exercise 2: templates


@pytest.mark.parametrize("answer", [BROKEN, BROKEN[::-1], ["b", " c", "D"], tuple(BROKEN)])
def test_the_broken_templates_pass_in_any_order_and_case(answer):
    for result in _both(check_broken_templates, answer):
        assert result.ok
    assert "no_end_of_turn" in check_broken_templates(answer, lang="en").message


@pytest.mark.parametrize(
    ("answer", "en_part", "ja_part"),
    [
        ("BCD", "expected a list of template ids", "のリストを渡してください"),
        ({"B": True}, "expected a list", "のリストを渡してください"),
        ([2], "must be a string", "文字列にしてください"),
        (["F"], "'F' is not a template id", "id ではありません"),
        (["B", "b"], "B is listed twice", "2 回出てきます"),
        ([*BROKEN, "A"], "A has no {% generation %} markers", "A には"),
        (["E", "B"], "E writes a blank line", "E は"),
        ([], "3 broken template(s) still missing", "まだ 3 つ"),
        (["C"], "2 broken template(s) still missing", "まだ 2 つ"),
    ],
)
def test_wrong_template_answers_say_what_is_wrong(answer, en_part, ja_part):
    en, ja = _both(check_broken_templates, answer)
    assert not en.ok and not ja.ok
    assert en_part in en.message
    assert ja_part in ja.message


@pytest.mark.parametrize("answer", [[], ["B"], ["C", "D"], ["A", "B"]])
def test_template_failure_messages_never_name_the_missing_ones(answer):
    for result in _both(check_broken_templates, answer):
        for template in BROKEN:
            if template not in answer:
                assert template not in result.message.replace("A", "").replace("E", "")
        for reason in ("no_end_of_turn", "prompt_not_prefix", "assistant_mask_mismatch"):
            assert reason not in result.message


# ---------------------------------------------------------------------------- data vs machinery


@pytest.fixture(scope="module")
def tokenizer(corpus):
    pytest.importorskip("transformers", reason=TRAIN_EXTRA)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from piilab.tiny import train_tokenizer

    return train_tokenizer(corpus["train"][:200])


@pytest.mark.train
def test_the_toy_tokens_are_the_toy_template_rendered(tokenizer):
    tokenizer.chat_template = TOY_TEMPLATE
    rendered = tokenizer.apply_chat_template(list(TOY_MESSAGES), tokenize=False)
    assert rendered == "".join(TOY_TOKENS)
    prompt = tokenizer.apply_chat_template(list(TOY_MESSAGES[:2]), tokenize=False,
                                           add_generation_prompt=True)
    assert prompt == "".join(TOY_TOKENS[:START])


@pytest.mark.train
def test_the_toy_loss_positions_are_what_tokenize_example_trains(tokenizer):
    from piilab.sft import IGNORE_INDEX, tokenize_example

    tokenizer.chat_template = TOY_TEMPLATE
    example = {"prompt": list(TOY_MESSAGES[:2]), "completion": [TOY_MESSAGES[2]]}
    tok = tokenize_example(tokenizer, example, "toy")
    loss_ids = [t for t in tok.labels if t != IGNORE_INDEX]
    assert tokenizer.decode(loss_ids) == "".join(TOY_TOKENS[i] for i in RIGHT)


@pytest.mark.train
@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_the_template_verdicts_are_what_check_loss_mask_finds(tokenizer, corpus, template):
    from piilab.sft import check_loss_mask

    tokenizer.chat_template = TEMPLATES[template]
    records = [r for r in corpus["train"] if r["language"] == "en"][:10] + corpus["train"][:10]
    report = check_loss_mask(tokenizer, records, max_length=512)
    assert report.ok is (template not in BROKEN)
    expected = {"B": {"no_end_of_turn"}, "C": {"prompt_not_prefix"},
                "D": {"assistant_mask_mismatch"}}.get(template, set())
    assert set(report.reasons.values()) == expected
