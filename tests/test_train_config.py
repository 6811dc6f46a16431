"""The training configuration and its TRL/PEFT mapping, without a model (`piilab.train_config`)."""

from __future__ import annotations

import ast
import dataclasses
import doctest
import json
import sys
from pathlib import Path

import pytest

from piilab import train_config as TC
from piilab._compat import checkpointing_name
from piilab.errors import PiilabError
from piilab.train_config import ConfigError, Hardware, TrainConfig, load_config

CPU = Hardware("cpu", "fp32", False)
GPU = Hardware("cuda", "fp16", True)


def test_doctests_pass():
    assert doctest.testmod(TC).failed == 0


def test_the_module_needs_only_the_standard_library():
    tree = ast.parse(Path(TC.__file__).read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert {m for m in imported if m not in sys.stdlib_module_names} <= {"piilab", "__future__"}


def test_the_train_module_re_exports_the_names():
    import piilab.train as T

    for name in ("TrainConfig", "ConfigError", "load_config", "SFT_FIELDS", "LORA_FIELDS",
                 "Hardware"):
        assert getattr(T, name) is getattr(TC, name)
    assert issubclass(ConfigError, PiilabError)


def test_sft_kwargs_are_the_declared_three_parts_and_nothing_else():
    config = TrainConfig("m", max_steps=7, output_dir="runs/x", seed=3, progress=False)
    kwargs = TC.sft_kwargs(config, GPU)
    assert set(kwargs) == set(TC.SFT_FIELDS) | set(TC.DERIVED_SFT) | set(TC.FIXED_SFT)
    assert not set(TC.SFT_FIELDS) & set(TC.DERIVED_SFT) | set(TC.SFT_FIELDS) & set(TC.FIXED_SFT)
    assert all(kwargs[name] == getattr(config, name) for name in TC.SFT_FIELDS)
    assert all(kwargs[name] == fixed.value for name, fixed in TC.FIXED_SFT.items())
    assert all(fixed.reason for fixed in (*TC.FIXED_SFT.values(), *TC.FIXED_LORA.values()))
    assert all(TC.DERIVED_SFT.values())
    assert kwargs["output_dir"] == str(Path("runs/x") / "trainer")
    assert (kwargs["fp16"], kwargs["bf16"], kwargs["use_cpu"]) == (True, False, False)
    assert kwargs["data_seed"] == 3 and kwargs["disable_tqdm"] is True
    assert kwargs["gradient_checkpointing"] is True
    assert kwargs["gradient_checkpointing_kwargs"] == {"use_reentrant": False}
    cpu = TC.sft_kwargs(config, CPU, checkpointing="activation_checkpointing")
    assert cpu["use_cpu"] and not cpu["fp16"] and cpu["activation_checkpointing"] is False
    assert cpu["activation_checkpointing_kwargs"] is None and "gradient_checkpointing" not in cpu


def test_checkpointing_name_follows_the_installed_release():
    assert checkpointing_name(["gradient_checkpointing"]) == "gradient_checkpointing"
    assert checkpointing_name(["activation_checkpointing", "gradient_checkpointing"]) \
        == "activation_checkpointing"


def test_lora_kwargs_rename_the_fields_and_only_a_new_adapter_gets_them():
    config = TrainConfig("m", lora_r=4, lora_alpha=8, lora_dropout=0.1,
                         lora_target_modules=["q_proj", "v_proj"])
    assert TC.lora_kwargs(config) == {"r": 4, "lora_alpha": 8, "lora_dropout": 0.1,
                                      "target_modules": ["q_proj", "v_proj"],
                                      "bias": "none", "task_type": "CAUSAL_LM"}
    assert TC.lora_kwargs(TrainConfig("m", method="full")) is None
    assert TC.lora_kwargs(TrainConfig("m", init_adapter="runs/a")) is None
    assert TC.lora_kwargs(TrainConfig("m", lora_target_modules="all-linear"))[
        "target_modules"] == "all-linear"


def test_the_kwargs_are_fields_of_the_installed_sft_and_lora_configs(tmp_path):
    trl = pytest.importorskip("trl", reason="needs the train extra")
    peft = pytest.importorskip("peft", reason="needs the train extra")
    sft_names = {f.name for f in dataclasses.fields(trl.SFTConfig)}
    lora_names = {f.name for f in dataclasses.fields(peft.LoraConfig)}
    config = TrainConfig("m", max_steps=2, output_dir=str(tmp_path))
    kwargs = TC.sft_kwargs(config, CPU, checkpointing=checkpointing_name(sft_names))
    assert set(kwargs) <= sft_names
    assert set(TC.lora_kwargs(config)) <= lora_names
    args = trl.SFTConfig(**kwargs)  # and they are accepted, values included
    assert args.max_steps == 2 and args.completion_only_loss is True
    assert peft.LoraConfig(**TC.lora_kwargs(config)).r == config.lora_r


def test_hyperparameters_list_the_declared_fields_and_the_hardware():
    params = TC.hyperparameters(TrainConfig("m"), CPU)
    assert set(TC.SFT_FIELDS) | set(TC.LORA_FIELDS) <= set(params)
    assert (params["device"], params["precision"]) == ("cpu", "fp32")
    assert "output_dir" not in params and "tracking_uri" not in params


# --- errors name the file and the field, never a value -------------------------------------


def _write(tmp_path, values, name="c.json"):
    path = tmp_path / name
    path.write_text(values if isinstance(values, str) else json.dumps(values))
    return path


@pytest.mark.parametrize(("field", "value", "says"), [
    ("max_steps", "ZZ", "must be an integer"),
    ("max_steps", True, "must be an integer"),
    ("learning_rate", "fast", "must be a number"),
    ("merge", "yes", "must be true or false"),
    ("max_train_records", "all", "must be an integer or null"),
    ("lora_target_modules", [1, 2], "must be a list of strings"),
    ("model", 7, "must be a string"),
])
def test_a_wrongly_typed_field_is_named_with_its_file(tmp_path, field, value, says):
    path = _write(tmp_path, {"model": "m", field: value})
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert message.startswith(f"{path}: field '{field}' {says}")
    # the value is never echoed (looked for after the path, which may hold any digits)
    rest = message[len(str(path)):]
    assert "not supported" not in rest and repr(value) not in rest


def test_unknown_keys_are_counted_never_quoted(tmp_path):
    secret = "9001011234567"
    path = _write(tmp_path, {"model": "m", secret: 1, "learning_rat": 0.1})
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value).startswith(f"{path}: 2 key(s) that are no TrainConfig field")
    assert "did you mean learning_rate" in str(err.value) and secret not in str(err.value)


def test_malformed_files_name_the_position_not_the_text(tmp_path):
    path = _write(tmp_path, '{"model": "m", "max_steps": 9001011234567x}')
    with pytest.raises(ConfigError, match=r"c\.json: malformed JSON \(.* line 1, column"):
        load_config(path)
    toml = _write(tmp_path, 'model = "m"\nmax_steps = 9001011234567x\n', "c.toml")
    with pytest.raises(ConfigError, match=r"c\.toml: malformed TOML") as err:
        load_config(toml)
    assert "9001011234567" not in str(err.value)
    with pytest.raises(ConfigError, match="must be an object"):
        load_config(_write(tmp_path, "[1, 2]"))
    with pytest.raises(ConfigError, match="file not found"):
        load_config(tmp_path / "missing.json")


def test_old_style_values_still_load(tmp_path):
    # ints for float fields, a single module as a string, "_comment" keys: as before.
    config = load_config(_write(tmp_path, {"_comment": "x", "model": "m", "num_train_epochs": 2,
                                           "warmup_steps": 0, "lora_target_modules": "q_proj"}))
    assert config.num_train_epochs == 2 and config.lora_target_modules == ("q_proj",)
    assert TrainConfig.from_mapping(config.to_dict()) == config
