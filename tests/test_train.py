"""LoRA training with TRL on the tiny offline model (`piilab.train`, chapter 06).

One short CPU run (24 steps) is shared by most tests: its loss must fall, its files
must be complete, and its adapter and merged model must reload to the same outputs.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tomllib
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from piilab.train import ConfigError, TrainConfig, load_config

REPO = Path(__file__).resolve().parent.parent


# One intra-op torch thread for the whole module (see conftest.one_torch_thread).
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _mixed(records, n_ko, n_en):
    ko = [r for r in records if r["language"] == "ko"][:n_ko]
    en = [r for r in records if r["language"] == "en"][:n_en]
    return ko + en


# --- configuration (no training) ----------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in (REPO / "configs").glob("ner_*.json")))
def test_committed_classifier_configs_load(name):
    """configs/ner_*.json configure tools/train_classifier.py (piilab.ner.pretrained)."""
    from piilab.ner.pretrained import ClassifierConfig

    config = ClassifierConfig.from_file(REPO / "configs" / name)
    assert config.max_steps > 0 and config.max_length >= 256 and config.lora_r > 0
    assert len(config.train_files) == len(config.train_records)
    assert config.base in ("gemma-3-270m", "smollm2-135m")


@pytest.mark.parametrize("name", sorted(p.name for p in (REPO / "configs").glob("train_*.json")))
def test_committed_configs_load(name):
    config = load_config(REPO / "configs" / name)
    assert config.max_steps > 0 and config.max_length >= 256
    assert set(config.lora_target_modules) >= {"q_proj", "v_proj"}
    assert config.method in ("lora", "full")


def test_colab_and_cpu_configs_train_the_same_pretrained_base():
    from piilab.models import MODELS

    for name in ("train_colab_gpu.json", "train_smollm2_cpu.json"):
        config = load_config(REPO / "configs" / name)
        assert config.model in MODELS and config.method == "lora"


def test_new_options_are_validated():
    for bad in ({"method": "qlora"}, {"system_prompt": "long"}, {"max_train_seconds": 0}):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            TrainConfig("m", **bad)


def test_every_trl_and_peft_field_comes_from_one_declared_mapping():
    import dataclasses

    from piilab.train import LORA_FIELDS, SFT_FIELDS

    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    assert set(SFT_FIELDS) <= fields and set(LORA_FIELDS) <= fields
    trl = pytest.importorskip("trl", reason="needs the train extra")
    sft_names = {f.name for f in dataclasses.fields(trl.SFTConfig)}
    assert set(SFT_FIELDS) <= sft_names  # each goes to SFTConfig under its own name


def test_toml_config_and_overrides(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('model = "m"\nmax_steps = 5\nlora_target_modules = ["q_proj"]\n')
    config = load_config(path, max_steps=7, output_dir=None)
    assert config.max_steps == 7 and config.output_dir == TrainConfig("m").output_dir
    assert config.lora_target_modules == ("q_proj",)
    assert tomllib.loads(path.read_text())["model"] == "m"


def test_unknown_or_missing_keys_are_named(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"model": "m", "max_seq_length": 512}))
    with pytest.raises(ConfigError, match=r"c\.json: 1 key\(s\) .*did you mean max_length") as err:
        load_config(path)
    assert "max_seq_length" not in str(err.value)  # counted, never quoted
    path.write_text(json.dumps({"max_steps": 3}))
    with pytest.raises(ConfigError, match="model"):
        load_config(path)
    with pytest.raises(ConfigError):
        TrainConfig("m", precision="fp8")


@pytest.mark.train
def test_cpu_gets_fp32_and_no_activation_checkpointing():
    pytest.importorskip("torch")
    import torch

    from piilab.train import resolve_hardware

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    hw = resolve_hardware()
    assert (hw.device, hw.precision, hw.gradient_checkpointing) == ("cpu", "fp32", False)
    with pytest.raises(ConfigError, match="CUDA"):
        resolve_hardware("bf16")


# --- one real training run ----------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory, corpus):
    pytest.importorskip("trl")
    from piilab.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny"), corpus["train"], seed=0)


def _config(tiny_dir, out, **changes) -> TrainConfig:
    base = load_config(REPO / "configs" / "train_tiny_cpu.json", model=str(tiny_dir),
                       output_dir=str(out), progress=False)
    return base.replace(**changes)


@pytest.fixture(scope="module")
def run(tiny_dir, tmp_path_factory, corpus):
    from piilab.train import train

    out = tmp_path_factory.mktemp("run")
    config = _config(tiny_dir, out, max_steps=24, per_device_train_batch_size=4, merge=True)
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        result = train(config, records=_mixed(corpus["train"], 96, 32))
    _PRINTED["run"] = stdout.getvalue()
    return result


_PRINTED: dict[str, str] = {}


@pytest.mark.slow
@pytest.mark.train
def test_training_prints_nothing_to_stdout(run):
    # progress=False: no log dicts (with timings) from the trainer's printer callback
    assert _PRINTED["run"] == ""


@pytest.mark.slow
@pytest.mark.train
def test_in_memory_records_are_not_tagged_with_a_data_dir_manifest(run):
    saved = json.loads((run.output_dir / "train_config.json").read_text())
    assert "manifest_sha256" not in saved["data"]
    assert saved["data"]["train_records_sha256"]


@pytest.mark.slow
@pytest.mark.train
def test_loss_falls(run):
    losses = [loss for _, loss in run.loss_history]
    assert len(losses) == 24 and run.metrics["global_step"] == 24
    first, last = sum(losses[:4]) / 4, sum(losses[-4:]) / 4
    assert last < first - 1.0, (first, last)
    assert run.metrics["loss_first"] == losses[0] and run.metrics["loss_last"] == losses[-1]


@pytest.mark.slow
@pytest.mark.train
def test_run_directory_holds_adapter_config_metrics_and_report(run):
    out = run.output_dir
    for name in ("adapter/adapter_config.json", "adapter/adapter_model.safetensors",
                 "merged/model.safetensors", "merged/tokenizer.json", "train_config.json",
                 "metrics.json", "loss_mask.json", "train.log", "mlflow.db"):
        assert (out / name).exists(), name
    saved = json.loads((out / "train_config.json").read_text())
    assert saved["hardware"] == {"device": "cpu", "precision": "fp32",
                                 "gradient_checkpointing": False}
    assert saved["config"]["max_steps"] == 24
    assert saved["data"]["generator_version"] and saved["data"]["train_records_sha256"]
    assert {"torch", "transformers", "trl", "peft"} <= set(saved["packages"])
    metrics = json.loads((out / "metrics.json").read_text())
    assert len(metrics["loss_history"]) == 24 and metrics["train_tokens_per_s"] > 0
    assert metrics["n_train_examples"] == 128
    report = json.loads((out / "loss_mask.json").read_text())
    assert report["ok"] and report["checked"] == 128


@pytest.mark.slow
@pytest.mark.train
def test_adapter_save_and_reload_give_the_same_outputs(run, corpus):
    import torch

    from piilab.inference import generate, load_for_inference

    loaded = load_for_inference(run.adapter_dir)
    reloaded, tokenizer = loaded
    assert loaded.prompt_setting == run.prompt_setting == "none"
    texts = [r["source_text"] for r in corpus["test"][:4]]
    ids = torch.tensor([tokenizer(texts[0])["input_ids"]])
    with torch.no_grad():
        assert torch.equal(run.model(ids).logits, reloaded(ids).logits)
    setting = run.prompt_setting
    assert (generate(run.model, run.tokenizer, texts, max_new_tokens=16,
                     system_prompt=setting).outputs
            == generate(reloaded, tokenizer, texts, max_new_tokens=16,
                        system_prompt=setting).outputs)


@pytest.mark.slow
@pytest.mark.train
def test_merged_model_matches_the_adapter(run, corpus):
    import torch

    from piilab.inference import load_for_inference

    merged, tokenizer = load_for_inference(run.merged_dir)
    assert not hasattr(merged, "peft_config")
    ids = torch.tensor([tokenizer(corpus["test"][0]["source_text"])["input_ids"]])
    with torch.no_grad():
        torch.testing.assert_close(merged(ids).logits, run.model(ids).logits,
                                   atol=1e-4, rtol=1e-4)


@pytest.mark.slow
@pytest.mark.train
def test_training_learned_the_row_format(run, corpus):
    # 24 steps on random weights teach the shape of the answer, not PII detection.
    from piilab.inference import generate

    outputs = generate(run.model, run.tokenizer, [r["source_text"] for r in corpus["test"][:4]],
                       max_new_tokens=8, system_prompt=run.prompt_setting).outputs
    assert any("\t" in o for o in outputs)


@pytest.mark.slow
@pytest.mark.train
def test_same_seed_same_adapter_and_cli_entry_point(tiny_dir, tmp_path, corpus, capsys):
    from safetensors.torch import load_file

    from piilab.cli import main
    from piilab.dataset import split_bytes
    from piilab.train import train

    data = tmp_path / "data"
    data.mkdir()
    (data / "train.jsonl").write_bytes(split_bytes(_mixed(corpus["train"], 12, 4)))
    config = _config(tiny_dir, tmp_path / "a", max_steps=3, per_device_train_batch_size=4,
                     data_dir=str(data), track=False)
    train(config)
    path = tmp_path / "c.json"
    path.write_text(json.dumps(config.replace(output_dir=str(tmp_path / "b")).to_dict()))
    assert main(["train", "--config", str(path)]) == 0
    assert "trained 3 steps on 16 examples" in capsys.readouterr().out
    a = load_file(tmp_path / "a" / "adapter" / "adapter_model.safetensors")
    b = load_file(tmp_path / "b" / "adapter" / "adapter_model.safetensors")
    assert a.keys() == b.keys() and all((a[k] == b[k]).all() for k in a)


@pytest.mark.train
def test_trl_trains_on_exactly_the_checked_labels(tiny_dir, tmp_path, corpus):
    # What the trainer's own dataloader yields, not what we handed it, is compared.
    from piilab.sft import tokenize_example
    from piilab.train import build_trainer

    records = _mixed(corpus["train"], 5, 3)
    negative = next(r for r in corpus["train"] if not r["target_tsv"])
    records.append(negative)
    run = build_trainer(_config(tiny_dir, tmp_path / "r", per_device_train_batch_size=9,
                                track=False), records=records)
    batch = next(iter(run.trainer.get_train_dataloader()))
    expected = {tuple(t.input_ids): t.labels
                for t in (tokenize_example(run.tokenizer, r, system_prompt=run.prompt_setting)
                          for r in records)}
    assert run.prompt_setting == "none"  # what the tiny model saved
    assert batch["input_ids"].shape[0] == len(records)
    for ids, labels, mask in zip(batch["input_ids"].tolist(), batch["labels"].tolist(),
                                 batch["attention_mask"].tolist(), strict=True):
        n = sum(mask)
        assert tuple(ids[:n]) in expected
        assert tuple(labels[:n]) == expected[tuple(ids[:n])]
        assert all(x == -100 for x in labels[n:])


@pytest.mark.train
def test_truncated_examples_stop_training_before_it_starts(tiny_dir, tmp_path, corpus):
    from piilab.sft import LossMaskError
    from piilab.train import train

    config = _config(tiny_dir, tmp_path / "run", max_length=64, track=False)
    with pytest.raises(LossMaskError, match="truncat"):
        train(config, records=corpus["train"][:8])
    assert not (tmp_path / "run" / "adapter").exists()


@pytest.mark.train
def test_cli_reports_configuration_errors(tmp_path, capsys):
    from piilab.cli import main

    path = tmp_path / "c.json"
    path.write_text(json.dumps({"model": "m", "tokenizer": "x", "max_steps": "ZZ"}))
    assert main(["train", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "1 key(s)" in err
    assert "tokenizer" not in err  # a key that is no field may hold data: counted, not quoted
    path.write_text(json.dumps({"model": "m", "max_steps": "ZZ"}))
    assert main(["train", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "field 'max_steps' must be an integer" in err and "ZZ" not in err


@pytest.mark.train
def test_full_training_saves_a_whole_model_with_its_tokenizer_and_prompt(tiny_dir, tmp_path,
                                                                          corpus):
    """method="full": the same TRL path without a PEFT configuration trains every weight."""
    from transformers import AutoModelForCausalLM

    from piilab.inference import load_for_inference
    from piilab.train import train

    config = _config(tiny_dir, tmp_path / "full", method="full", max_steps=3,
                     per_device_train_batch_size=4, track=False)
    result = train(config, records=_mixed(corpus["train"], 8, 4))
    saved = result.adapter_dir
    assert not (saved / "adapter_config.json").exists()
    assert {"model.safetensors", "tokenizer.json", "piilab_prompt.json"} <= {
        p.name for p in saved.iterdir()}
    before = AutoModelForCausalLM.from_pretrained(tiny_dir).state_dict()
    after = AutoModelForCausalLM.from_pretrained(saved).state_dict()
    changed = [k for k in before if not torch_equal(before[k], after[k])]
    assert len(changed) > len(before) // 2  # every kind of weight moved, not an adapter
    assert load_for_inference(saved).prompt_setting == result.prompt_setting == "none"


def torch_equal(a, b) -> bool:
    import torch

    return bool(torch.equal(a, b))


@pytest.mark.train
def test_a_wall_clock_limit_stops_training_early(tiny_dir, tmp_path, corpus):
    from piilab.train import train

    config = _config(tiny_dir, tmp_path / "limited", max_steps=500, max_train_seconds=0.001,
                     per_device_train_batch_size=2, track=False)
    result = train(config, records=_mixed(corpus["train"], 8, 4))
    assert result.metrics["global_step"] == 1
