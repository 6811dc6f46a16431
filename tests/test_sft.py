"""Training records and the completion-only loss mask (`piilab.sft`, docs/contract.md, section 8).

The loss-mask tests run on the tiny offline model's real tokenizer and chat template,
then on variants of that template that break the mask in each way the check must catch.
"""

from __future__ import annotations

import json
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytest.importorskip("transformers", reason="needs the train extra: pip install -e '.[train]'")
pytest.importorskip("datasets", reason="needs the train extra: pip install -e '.[train]'")

from piilab.errors import PiilabError
from piilab.labels import LABELS
from piilab.sft import (
    IGNORE_INDEX,
    SYSTEM_PROMPT,
    LossMaskError,
    SFTError,
    build_messages,
    build_sft_dataset,
    check_loss_mask,
    end_of_turn_token,
    length_stats,
    prepare_training_dataset,
    tokenize_example,
)
from piilab.tiny import CHAT_TEMPLATE, END_OF_TURN

pytestmark = pytest.mark.train


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory, corpus):
    from piilab.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny"), corpus["train"], seed=0)


@pytest.fixture
def tokenizer(tiny_dir):
    """A fresh copy per test: some tests swap the chat template."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_dir)


def _by_language(records, language, n):
    return [r for r in records if r["language"] == language][:n]


def _loss_text(tokenizer, tokenized) -> str:
    ids = [t for t in tokenized.labels if t != IGNORE_INDEX]
    return tokenizer.decode(ids, skip_special_tokens=False)


# --- the conversation -------------------------------------------------------------------


def test_build_messages_has_system_user_and_assistant(corpus):
    record = corpus["train"][0]
    example = build_messages(record)
    assert [m["role"] for m in example["prompt"]] == ["system", "user"]
    assert example["prompt"][0]["content"] == SYSTEM_PROMPT
    assert example["prompt"][1]["content"] == record["source_text"]
    assert example["completion"] == [{"role": "assistant", "content": record["target_tsv"]}]


def test_system_prompt_states_every_label_and_the_format():
    for label in LABELS:
        assert f"{label}:" in SYSTEM_PROMPT
    assert "TYPE<TAB>VALUE" in SYSTEM_PROMPT
    assert "empty message" in SYSTEM_PROMPT


def test_dataset_is_in_trl_prompt_completion_conversational_format(corpus):
    pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")
    from trl.data_utils import is_conversational

    dataset = build_sft_dataset(corpus["train"][:5])
    assert set(dataset.column_names) == {"id", "language", "prompt", "completion"}
    assert len(dataset) == 5
    assert is_conversational(dataset[0])
    assert dataset[0]["completion"][0]["content"] == corpus["train"][0]["target_tsv"]


# --- the loss mask on the real template ---------------------------------------------------


@pytest.mark.parametrize("language", ["ko", "en"])
def test_loss_mask_is_exactly_completion_plus_end_of_turn(tokenizer, corpus, language):
    records = _by_language(corpus["train"], language, 60)
    report = check_loss_mask(tokenizer, records, max_length=512)
    assert report.ok and report.checked == 60
    assert report.mismatched == () and report.truncated == ()
    assert report.end_of_turn == (END_OF_TURN,)
    eot_id = tokenizer.convert_tokens_to_ids(END_OF_TURN)
    for record in records:
        tok = tokenize_example(tokenizer, record)
        # Checked here independently of the function's own checks:
        assert _loss_text(tokenizer, tok) == record["target_tsv"] + END_OF_TURN
        assert tok.labels[: tok.prompt_tokens] == (IGNORE_INDEX,) * tok.prompt_tokens
        assert tok.labels[tok.prompt_tokens:] == tok.input_ids[tok.prompt_tokens:]
        assert tok.input_ids[-1] == eot_id


def test_negative_document_trains_only_the_end_of_turn_token(tokenizer, corpus):
    negatives = [r for r in corpus["train"] if r["target_tsv"] == ""][:20]
    assert negatives
    report = check_loss_mask(tokenizer, negatives, max_length=512)
    assert report.ok and report.lengths["completion"]["max"] == 1
    eot_id = tokenizer.convert_tokens_to_ids(END_OF_TURN)
    for record in negatives:
        tok = tokenize_example(tokenizer, record)
        assert [t for t in tok.labels if t != IGNORE_INDEX] == [eot_id]


def test_prompt_tokens_are_what_inference_feeds_the_model(tokenizer, corpus):
    record = corpus["train"][3]
    tok = tokenize_example(tokenizer, record)
    prompt = tokenizer.apply_chat_template(build_messages(record)["prompt"], tokenize=True,
                                           add_generation_prompt=True, return_dict=True)
    assert list(tok.input_ids[: tok.prompt_tokens]) == list(prompt["input_ids"])


def test_report_has_length_statistics_and_mapping_access(tokenizer, corpus):
    report = check_loss_mask(tokenizer, corpus["train"][:30], max_length=512)
    for part in ("total", "prompt", "completion"):
        stats = report.lengths[part]
        assert stats["min"] <= stats["p50"] <= stats["p95"] <= stats["max"]
    assert report.lengths["total"]["max"] <= (report.lengths["prompt"]["max"]
                                              + report.lengths["completion"]["max"])
    assert report.checked == 30
    assert json.loads(json.dumps(report.to_dict()))["checked"] == 30


def test_prompt_completion_examples_are_accepted_as_well_as_records(tokenizer, corpus):
    dataset = build_sft_dataset(corpus["train"][:8])
    report = check_loss_mask(tokenizer, list(dataset), max_length=512)
    assert report.ok and report.checked == 8


def test_template_without_generation_markers_is_checked_from_token_boundaries(tokenizer, corpus):
    # Most published templates have no {% generation %} markers: the check must not need them.
    tokenizer.chat_template = (CHAT_TEMPLATE.replace("{%- generation -%}", "")
                               .replace("{%- endgeneration -%}", ""))
    report = check_loss_mask(tokenizer, corpus["train"][:40], max_length=512)
    assert report.ok and report.end_of_turn == (END_OF_TURN,)


def test_text_after_the_end_of_turn_token_is_not_trained(tokenizer, corpus):
    # Qwen-style ChatML writes "<|im_end|>\n" after every turn, the assistant's included.
    tokenizer.chat_template = (
        "{%- for m in messages -%}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] "
        "+ '<|im_end|>\\n' }}{%- endfor -%}"
        "{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\\n' }}{%- endif -%}")
    record = corpus["train"][0]
    tok = tokenize_example(tokenizer, record)
    assert _loss_text(tokenizer, tok) == record["target_tsv"] + END_OF_TURN
    assert check_loss_mask(tokenizer, corpus["train"][:20], max_length=512).ok


def test_end_of_turn_token_is_found_from_the_template(tokenizer):
    assert end_of_turn_token(tokenizer) == END_OF_TURN


# --- what the check must catch ------------------------------------------------------------


def _swap(tokenizer, old: str, new: str) -> None:
    assert old in CHAT_TEMPLATE
    tokenizer.chat_template = CHAT_TEMPLATE.replace(old, new)


def test_missing_end_of_turn_token_is_a_mismatch(tokenizer, corpus):
    _swap(tokenizer, "message['content'] + '<|im_end|>'", "message['content']")
    report = check_loss_mask(tokenizer, corpus["train"][:5], max_length=512)
    assert not report.ok and len(report.mismatched) == 5
    assert set(report.reasons.values()) == {"no_end_of_turn"}


def test_end_of_turn_outside_the_assistant_mask_is_a_mismatch(tokenizer, corpus):
    _swap(tokenizer, "{{ message['content'] + '<|im_end|>' }}{%- endgeneration -%}",
          "{{ message['content'] }}{%- endgeneration -%}{{ '<|im_end|>' }}")
    report = check_loss_mask(tokenizer, corpus["train"][:5], max_length=512)
    assert set(report.reasons.values()) == {"assistant_mask_mismatch"}


def test_template_that_rewrites_the_completion_is_a_mismatch(tokenizer, corpus):
    _swap(tokenizer, "message['content'] + '<|im_end|>'",
          "message['content'] | upper + '<|im_end|>'")
    records = [r for r in corpus["train"] if r["language"] == "en" and r["target_tsv"]][:3]
    report = check_loss_mask(tokenizer, records, max_length=512)
    assert set(report.reasons.values()) == {"completion_rewritten"}


def test_prompt_rendered_differently_alone_is_a_mismatch(tokenizer, corpus):
    # A generation prompt that opens a think block the rendered conversation does not have.
    _swap(tokenizer, "{{ '\\n<|im_start|>assistant\\n' }}",
          "{{ '\\n<|im_start|>assistant\\n<think>\\n' }}")
    report = check_loss_mask(tokenizer, corpus["train"][:3], max_length=512)
    assert set(report.reasons.values()) == {"prompt_not_prefix"}


def test_errors_name_the_record_and_never_its_text(tokenizer, corpus):
    _swap(tokenizer, "message['content'] + '<|im_end|>'", "message['content']")
    record = corpus["train"][0]
    with pytest.raises(LossMaskError) as info:
        tokenize_example(tokenizer, record)
    message = str(info.value)
    assert record["id"] in message and info.value.reason == "no_end_of_turn"
    assert record["source_text"] not in message
    for entity in record["entities"]:
        assert entity["value"] not in message


# --- truncation ---------------------------------------------------------------------------


def test_truncation_into_the_completion_is_detected(tokenizer, corpus):
    records = corpus["train"][:80]
    lengths = {r["id"]: len(tokenize_example(tokenizer, r).input_ids) for r in records}
    limit = sorted(lengths.values())[len(lengths) // 2]
    report = check_loss_mask(tokenizer, records, max_length=limit)
    assert not report.ok
    assert set(report.truncated) == {rid for rid, n in lengths.items() if n > limit}
    assert report.truncated and report.mismatched == ()
    assert all(report.reasons[rid] == "truncated" for rid in report.truncated)


def test_training_refuses_truncated_examples_unless_told_to_drop_them(tokenizer, corpus):
    records = corpus["train"][:40]
    report = check_loss_mask(tokenizer, records, max_length=512)
    limit = int(report.lengths["total"]["p50"])
    with pytest.raises(LossMaskError) as info:
        prepare_training_dataset(tokenizer, records, limit)
    assert info.value.reason == "truncated"
    dataset, report = prepare_training_dataset(tokenizer, records, limit, drop_truncated=True)
    assert len(dataset) == len(records) - len(report.truncated) > 0
    assert max(len(ids) for ids in dataset["input_ids"]) <= limit
    assert dataset.column_names == ["input_ids", "labels", "completion_mask"]
    for labels, mask in zip(dataset["labels"], dataset["completion_mask"], strict=True):
        assert mask == [int(x != IGNORE_INDEX) for x in labels]


def test_training_refuses_mismatched_examples(tokenizer, corpus):
    _swap(tokenizer, "message['content'] + '<|im_end|>'", "message['content']")
    with pytest.raises(LossMaskError):
        prepare_training_dataset(tokenizer, corpus["train"][:5], 512, drop_truncated=True)


def test_length_stats_use_nearest_rank():
    assert length_stats([]) == {"min": 0, "p50": 0, "mean": 0.0, "p95": 0, "max": 0}
    stats = length_stats(list(range(1, 101)))
    assert (stats["min"], stats["p50"], stats["p95"], stats["max"]) == (1, 50, 95, 100)


# --- the system-prompt setting ------------------------------------------------------------


def test_prompt_settings_are_full_short_and_none():
    from piilab.sft import SYSTEM_PROMPTS, system_prompt_text

    assert system_prompt_text("full") == SYSTEM_PROMPT
    assert system_prompt_text("none") == ""
    assert all(label in SYSTEM_PROMPTS["short"] for label in LABELS)
    assert len(SYSTEM_PROMPTS["short"]) < len(SYSTEM_PROMPT) / 3
    with pytest.raises(SFTError, match="full, short, none"):
        system_prompt_text("long")


@pytest.mark.parametrize("setting", ["full", "short", "none"])
def test_every_setting_keeps_an_exact_loss_mask_and_fewer_prompt_tokens(tokenizer, corpus,
                                                                          setting):
    records = corpus["train"][:40]
    report = check_loss_mask(tokenizer, records, max_length=1024, system_prompt=setting)
    assert report.ok, report.reasons
    full = check_loss_mask(tokenizer, records, max_length=1024, system_prompt="full")
    if setting != "full":
        assert report.lengths["prompt"]["mean"] < full.lengths["prompt"]["mean"]
    assert report.lengths["completion"] == full.lengths["completion"]


def test_the_setting_is_saved_and_read_back(tmp_path):
    from piilab.sft import PROMPT_FILE, read_prompt_setting, write_prompt_setting

    assert read_prompt_setting(tmp_path) is None
    write_prompt_setting(tmp_path, "short")
    assert read_prompt_setting(tmp_path) == "short"
    (tmp_path / PROMPT_FILE).write_text('{"system_prompt": "long"}')
    with pytest.raises(SFTError, match="field 'system_prompt' must be one of") as info:
        read_prompt_setting(tmp_path)
    assert "long" not in str(info.value)
    (tmp_path / PROMPT_FILE).write_text('["short"')
    with pytest.raises(PiilabError, match=PROMPT_FILE):
        read_prompt_setting(tmp_path)
