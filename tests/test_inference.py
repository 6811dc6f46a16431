"""Batched generation and predictions files (`piilab.inference`, chapter 07).

The model is the tiny offline model: untrained (its outputs are noise, which is all
these tests need) or with a random LoRA adapter saved to disk.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from piilab.predictions import make_prediction, parse_flag

TRAIN_EXTRA = "needs the train extra: pip install -e '.[train]'"

# One intra-op torch thread for the whole module (see conftest.one_torch_thread).
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_importing_inference_stays_standard_library_only():
    code = ("import sys, piilab.inference, piilab.fast_generate, piilab._compat\n"
            "heavy = [m for m in ('torch', 'transformers', 'peft', 'numpy') if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_think_blocks_in_raw_output_are_handled_by_the_parse_rule():
    source = "고객 김가상 님"
    assert parse_flag("<think>names...</think>PERSON\t김가상", source)
    assert make_prediction("r1", "<think>\n\n</think>\n\n", source)["parse_success"]
    assert not parse_flag("<think>still thinking", source)


# --- everything below needs the train extra -----------------------------------------------


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory, corpus):
    pytest.importorskip("transformers", reason=TRAIN_EXTRA)
    from piilab.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny"), corpus["train"], seed=0)


@pytest.fixture(scope="module")
def loaded(tiny_dir):
    from piilab.inference import load_for_inference

    return load_for_inference(tiny_dir)


@pytest.fixture(scope="module")
def adapter_dir(tiny_dir, tmp_path_factory):
    """A LoRA adapter with random (nonzero) weights, saved like a trained one."""
    pytest.importorskip("peft", reason=TRAIN_EXTRA)
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(tiny_dir)
    torch.manual_seed(0)
    peft_model = get_peft_model(base, LoraConfig(r=4, target_modules=["q_proj", "v_proj"],
                                                 init_lora_weights=False))
    out = tmp_path_factory.mktemp("adapter")
    peft_model.save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory, corpus):
    from piilab.dataset import split_bytes

    out = tmp_path_factory.mktemp("data")
    (out / "test.jsonl").write_bytes(split_bytes(corpus["test"][:10]))
    return out


@pytest.mark.train
def test_batched_left_padded_generation_equals_one_by_one(loaded, corpus):
    from piilab.inference import generate

    model, tokenizer = loaded
    texts = [r["source_text"] for r in corpus["test"][:6]]
    batched = generate(model, tokenizer, texts, batch_size=6, max_new_tokens=12)
    single = generate(model, tokenizer, texts, batch_size=1, max_new_tokens=12)
    assert batched.outputs == single.outputs
    assert len(batched.outputs) == 6 and all(isinstance(o, str) for o in batched.outputs)
    assert 0 < batched.new_tokens <= 6 * 12
    assert batched.tokens_per_second > 0


@pytest.mark.train
def test_outputs_come_back_in_input_order(loaded, corpus):
    from piilab.inference import generate

    model, tokenizer = loaded
    texts = [r["source_text"] for r in corpus["test"][:5]]
    forward = generate(model, tokenizer, texts, batch_size=2, max_new_tokens=6).outputs
    backward = generate(model, tokenizer, texts[::-1], batch_size=2, max_new_tokens=6).outputs
    assert list(forward) == list(backward[::-1])


@pytest.mark.train
def test_generation_stops_at_the_end_of_turn_token(loaded):
    from piilab.inference import _stop_ids
    from piilab.tiny import END_OF_TURN

    model, tokenizer = loaded
    assert tokenizer.convert_tokens_to_ids(END_OF_TURN) in _stop_ids(model, tokenizer)


@pytest.mark.train
def test_prompt_is_rendered_as_in_training(loaded, corpus):
    from piilab.inference import prompt_ids
    from piilab.sft import tokenize_example

    _, tokenizer = loaded
    record = corpus["test"][0]
    setting = loaded.prompt_setting
    assert setting == "none"  # what the tiny model was saved with, read by load_for_inference
    assert not hasattr(tokenizer, "piilab_system_prompt")  # nothing glued to the tokenizer
    tok = tokenize_example(tokenizer, record, system_prompt=setting)
    prompt = prompt_ids(tokenizer, record["source_text"], system_prompt=setting)
    assert prompt == list(tok.input_ids[: tok.prompt_tokens])
    # None is the full prompt, the setting of a model saved without one
    assert prompt_ids(tokenizer, record["source_text"]) == prompt_ids(
        tokenizer, record["source_text"], system_prompt="full")
    # the setting matters: the full system prompt is another, much longer, prompt
    full = prompt_ids(tokenizer, record["source_text"], system_prompt="full")
    assert len(full) > len(tok.input_ids[: tok.prompt_tokens]) + 50


@pytest.mark.train
def test_an_adapter_carries_its_training_prompt_setting(adapter_dir, tmp_path):
    import shutil

    from piilab.inference import load_for_inference
    from piilab.sft import write_prompt_setting

    copy = tmp_path / "adapter"
    shutil.copytree(adapter_dir, copy)
    write_prompt_setting(copy, "short")
    assert load_for_inference(copy, device="cpu").prompt_setting == "short"


@pytest.mark.train
def test_templates_are_asked_not_to_think(tiny_dir):
    from transformers import AutoTokenizer

    from piilab.inference import prompt_ids

    tokenizer = AutoTokenizer.from_pretrained(tiny_dir)
    tokenizer.chat_template += ("{%- if add_generation_prompt and enable_thinking is defined "
                                "and not enable_thinking -%}{{ '<think></think>' }}{%- endif -%}")
    assert tokenizer.decode(prompt_ids(tokenizer, "x")).endswith("assistant\n<think></think>")


@pytest.mark.train
def test_predictions_file_is_valid_and_evaluated(loaded, corpus, tmp_path):
    from piilab.dataset import read_jsonl
    from piilab.evaluation import evaluate
    from piilab.inference import predict_records
    from piilab.predictions import read_predictions, write_predictions

    model, tokenizer = loaded
    records = corpus["test"][:8]
    predictions, generation = predict_records(model, tokenizer, records, batch_size=4,
                                              max_new_tokens=8)
    assert len(generation.outputs) == 8 and generation.new_tokens > 0
    path = tmp_path / "preds.jsonl"
    assert write_predictions(path, predictions) == 8
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    rows = read_predictions(path)
    assert rows == read_jsonl(path)
    assert [r["id"] for r in rows] == [r["id"] for r in records]
    for row, record in zip(rows, records, strict=True):
        assert set(row) == {"id", "output", "parse_success"}
        assert row["parse_success"] == parse_flag(row["output"], record["source_text"])
    result = evaluate(records, rows)
    assert 0.0 <= result.parse.success_rate <= 1.0


@pytest.mark.train
def test_adapter_directory_loads_on_its_base_model(adapter_dir, tiny_dir, corpus):
    import torch
    from peft import PeftModel

    from piilab.inference import generate, load_for_inference

    loaded = load_for_inference(adapter_dir)
    model, tokenizer = loaded
    assert isinstance(model, PeftModel)
    base, _ = load_for_inference(tiny_dir)
    ids = torch.tensor([tokenizer("고객 김가상 님")["input_ids"]])
    with torch.no_grad():
        assert not torch.allclose(model(ids).logits, base(ids).logits)
    again, _ = load_for_inference(adapter_dir)
    texts = [r["source_text"] for r in corpus["test"][:3]]
    setting = loaded.prompt_setting
    assert (generate(model, tokenizer, texts, max_new_tokens=6, system_prompt=setting).outputs
            == generate(again, tokenizer, texts, max_new_tokens=6,
                        system_prompt=setting).outputs)


@pytest.mark.train
def test_a_merged_adapter_predicts_what_the_adapter_predicts(adapter_dir, corpus):
    from peft import PeftModel

    from piilab.inference import generate, load_for_inference

    apart = load_for_inference(adapter_dir, device="cpu")
    merged = load_for_inference(adapter_dir, device="cpu", merge=True)
    assert isinstance(apart.model, PeftModel)
    assert not isinstance(merged.model, PeftModel)  # folded in: plain linear layers
    assert merged.prompt_setting == apart.prompt_setting
    texts = [r["source_text"] for r in corpus["test"][:6]]
    kwargs = {"max_new_tokens": 12, "system_prompt": apart.prompt_setting, "batch_size": 3}
    produced = generate(merged.model, merged.tokenizer, texts, **kwargs)
    assert produced.new_tokens > 0
    assert produced.outputs == generate(apart.model, apart.tokenizer, texts, **kwargs).outputs


@pytest.mark.train
@pytest.mark.parametrize("which", ["merged", "adapter"])
def test_cli_predict_then_evaluate(which, tiny_dir, adapter_dir, data_dir, tmp_path, capsys):
    from piilab.cli import main

    model = tiny_dir if which == "merged" else adapter_dir
    preds = tmp_path / "preds.jsonl"
    assert main(["predict", "--model", str(model), "--data-dir", str(data_dir), "--split", "test",
                 "--out", str(preds), "--max-new-tokens", "8", "--batch-size", "4",
                 "--no-progress"]) == 0
    assert "wrote 10 predictions" in capsys.readouterr().out
    report = tmp_path / "report.json"
    assert main(["evaluate", "--records", str(data_dir / "test.jsonl"),
                 "--predictions", str(preds), "--json", str(report)]) == 0
    assert "entity" in json.loads(report.read_text())


@pytest.mark.train
def test_cli_predict_rejects_a_missing_model_directory(data_dir, tmp_path, capsys):
    from piilab.cli import main

    assert main(["predict", "--model", str(tmp_path / "nope"), "--data-dir", str(data_dir),
                 "--out", str(tmp_path / "p.jsonl")]) == 2
    assert "neither 'rules', a model alias nor a model" in capsys.readouterr().err


# --- the opt-in fast greedy path (piilab.fast_generate): identical to generate -------------


@pytest.fixture(scope="module")
def stopping(tiny_dir, corpus):
    """The tiny model with its end-of-turn row of the output layer set just above the row of
    the token it generates most: documents then stop at different steps, so finished rows
    leave the batch while others go on."""
    import torch

    from piilab.inference import _stop_ids, generate, load_for_inference

    model, tokenizer = load_for_inference(tiny_dir, device="cpu")
    texts = [r["source_text"] for r in corpus["test"][:12]]
    reference = generate(model, tokenizer, texts, batch_size=4, max_new_tokens=24)
    ids = [tokenizer.encode(o, add_special_tokens=False) for o in reference.outputs]
    first_steps: dict[int, set[int]] = {}  # token -> the steps where rows first emit it
    for row in ids:
        for step, token in enumerate(row):
            if step not in first_steps.setdefault(token, set()) and token not in row[:step]:
                first_steps[token].add(step)
    chosen = max(first_steps, key=lambda t: (len(first_steps[t]), -t))
    eot = _stop_ids(model, tokenizer)[-1]
    with torch.no_grad():
        head = model.get_output_embeddings().weight
        head[eot] = head[chosen] * 1.001
    return model, tokenizer, texts


def _both(model, tokenizer, texts, **kwargs):
    """`generate` and `generate_fast` called with the very same arguments."""
    from piilab.fast_generate import generate_fast
    from piilab.inference import generate

    return (generate(model, tokenizer, texts, **kwargs),
            generate_fast(model, tokenizer, texts, **kwargs))


@pytest.mark.train
@pytest.mark.parametrize("batch_size", [1, 3, 5, 12])
def test_fast_path_equals_the_reference_token_for_token(stopping, batch_size):
    model, tokenizer, texts = stopping
    reference, fast = _both(model, tokenizer, texts, batch_size=batch_size, max_new_tokens=24)
    assert fast.outputs == reference.outputs
    assert fast.new_tokens == reference.new_tokens
    lengths = {len(tokenizer.encode(o, add_special_tokens=False)) for o in fast.outputs}
    assert len(lengths) > 2, "the documents must stop at different steps for this test"


@pytest.mark.train
@pytest.mark.parametrize("text", ["", "김", "김가상"])
def test_both_paths_run_a_short_document_to_max_new_tokens(loaded, text):
    """No length cap but ``max_new_tokens`` in either path: on a short document that the
    untrained model never ends, both paths stop at the same place with the same text."""
    model, tokenizer = loaded
    reference, fast = _both(model, tokenizer, [text], max_new_tokens=40)
    assert fast.outputs == reference.outputs
    assert fast.new_tokens == reference.new_tokens


@pytest.mark.train
def test_generate_refuses_the_old_fast_flag_and_a_bad_batch_size(loaded):
    from piilab.fast_generate import generate_fast
    from piilab.inference import InferenceError, generate

    model, tokenizer = loaded
    with pytest.raises(TypeError, match="fast_generate"):
        generate(model, tokenizer, ["x"], fast=True)
    for decode in (generate, generate_fast):
        with pytest.raises(InferenceError, match="batch_size"):
            decode(model, tokenizer, ["x"], batch_size=0)


@pytest.mark.train
def test_threads_apply_for_the_call_only(loaded):
    import torch

    from piilab.fast_generate import generate_fast
    from piilab.inference import generate

    model, tokenizer = loaded
    before = torch.get_num_threads()
    generate(model, tokenizer, ["고객 김가상 님"], max_new_tokens=2, threads=2)
    assert torch.get_num_threads() == before
    generate_fast(model, tokenizer, ["고객 김가상 님"], max_new_tokens=2, threads=2)
    assert torch.get_num_threads() == before
