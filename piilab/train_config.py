"""The training configuration, and exactly what of it reaches TRL and PEFT (chapter 06).

`TrainConfig` holds everything a run needs; `load_config` reads it from a JSON
or TOML file. Two pure functions say what `piilab.train.build_trainer` hands
to the libraries, so that they can be read and tested without loading a model:

* `lora_kwargs(config)`: the arguments of ``peft.LoraConfig`` (None when no
  new adapter is made: ``method="full"``, or ``init_adapter`` continues one),
  made of the pass-through fields `LORA_FIELDS` (renamed) and `FIXED_LORA`;
* `sft_kwargs(config, hardware)`: the arguments of ``trl.SFTConfig``, made of
  three declared parts: the pass-through fields `SFT_FIELDS` (same name), the
  fields derived from the configuration and the hardware (`DERIVED_SFT`) and
  the settings every run fixes (`FIXED_SFT`). Each derived or fixed entry
  carries a one-line reason.

A new TRL option is one line in one of these tables. The tests check every
name against ``SFTConfig`` and ``LoraConfig`` where the ``train`` extra is
installed.

**Errors.** `load_config` and `TrainConfig` raise `ConfigError` (a
`piilab.errors.PiilabError`) naming the file and the field, never a value:
``max_steps`` given as text is "field 'max_steps' must be an integer", and a
key that is no field is counted, not quoted (a mistyped key can hold data),
with the nearest field names as suggestions.

Standard library only: the configuration is read and checked before torch is
imported.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import json
import os
import tomllib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from piilab.errors import PiilabError

__all__ = [
    "DEFAULT_TARGET_MODULES",
    "DERIVED_SFT",
    "FIXED_LORA",
    "FIXED_SFT",
    "LORA_FIELDS",
    "SFT_FIELDS",
    "ConfigError",
    "Fixed",
    "Hardware",
    "TrainConfig",
    "hyperparameters",
    "load_config",
    "lora_kwargs",
    "sft_kwargs",
]

DEFAULT_TARGET_MODULES: tuple[str, ...] = (
    "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj",
)

#: `TrainConfig` fields that `SFTConfig` takes under the same name.
SFT_FIELDS: tuple[str, ...] = (
    "max_steps", "num_train_epochs", "learning_rate", "per_device_train_batch_size",
    "gradient_accumulation_steps", "max_length", "warmup_steps", "lr_scheduler_type",
    "weight_decay", "seed", "logging_steps", "train_sampling_strategy",
)

#: `TrainConfig` fields that `LoraConfig` takes, and their names there.
LORA_FIELDS: Mapping[str, str] = {
    "lora_r": "r", "lora_alpha": "lora_alpha", "lora_dropout": "lora_dropout",
    "lora_target_modules": "target_modules",
}


class Fixed(NamedTuple):
    """A setting every run fixes, and why."""

    value: Any
    reason: str


#: `SFTConfig` settings every run fixes.
FIXED_SFT: Mapping[str, Fixed] = {
    "completion_only_loss": Fixed(True, "the labels already mask the prompt; explicit for "
                                        "every TRL 1.x"),
    "save_strategy": Fixed("no", "the adapter is saved once, at the end, by piilab"),
    "eval_strategy": Fixed("no", "the course evaluates generated predictions, not a "
                                 "validation loss"),
    "report_to": Fixed("none", "tracking is piilab's own (piilab.tracking): no config dumps"),
    "ddp_find_unused_parameters": Fixed(False, "every trained parameter is used: skip DDP's "
                                               "search for unused ones"),
    "dataloader_num_workers": Fixed(0, "the examples are tokenized already; workers only "
                                       "add processes"),
}

#: `SFTConfig` settings derived from the configuration and the hardware (`_derived_sft`).
DERIVED_SFT: Mapping[str, str] = {
    "output_dir": "TRL's scratch folder, inside the run's output_dir (``trainer``)",
    "data_seed": "the data order follows the run's seed",
    "bf16": "bf16 mixed precision where the hardware chose bf16",
    "fp16": "fp16 mixed precision where the hardware chose fp16 (T4, V100)",
    "use_cpu": "on a machine without CUDA, the CPU (never a Mac's MPS device)",
    "disable_tqdm": "progress bars only when the configuration asks for them",
    "gradient_checkpointing": "activation checkpointing as the hardware chose it (TRL's "
                              "default is on; the name follows the installed release, "
                              "`piilab._compat.checkpointing_name`)",
    "gradient_checkpointing_kwargs": "non-reentrant checkpointing, which works with frozen "
                                     "base weights (LoRA) and under DDP",
}

#: `LoraConfig` settings every new adapter fixes.
FIXED_LORA: Mapping[str, Fixed] = {
    "bias": Fixed("none", "biases stay frozen: the adapter is the LoRA matrices only"),
    "task_type": Fixed("CAUSAL_LM", "the model writes its answer as next-token prediction"),
}


class ConfigError(PiilabError):
    """A training configuration is malformed (names the file and the field, never data)."""


@dataclass(frozen=True)
class Hardware:
    """What `piilab.train.resolve_hardware` decided: device, precision, checkpointing."""

    device: str  # "cuda" or "cpu"
    precision: str  # "fp32", "bf16" or "fp16"
    gradient_checkpointing: bool

    @property
    def dtype_name(self) -> str:
        """The dtype the base weights are loaded in."""
        return {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}[self.precision]


@dataclass(frozen=True)
class TrainConfig:
    """Everything a training run needs; every field is a hyperparameter or a path.

    `model` is a hub id (``Qwen/Qwen2.5-0.5B-Instruct``) or a local directory.
    ``init_adapter`` (LoRA only) continues training from a saved adapter directory
    instead of a fresh adapter (the LoRA shape then comes from that adapter).
    ``method`` is ``lora`` or ``full``; ``system_prompt`` is ``auto``, ``full``,
    ``short`` or ``none`` (see `piilab.sft.SYSTEM_PROMPTS`).
    ``max_steps > 0`` wins over ``num_train_epochs``. ``max_train_records``
    keeps the first N training records (file order) for quick runs.
    ``tracking_uri=None`` means the local store in the run directory;
    ``track=False`` switches tracking off.
    """

    model: str
    method: str = "lora"
    system_prompt: str = "auto"
    init_adapter: str | None = None
    output_dir: str = "runs/lora"
    data_dir: str = "data"
    train_split: str = "train"
    max_train_records: int | None = None
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    lora_target_modules: tuple[str, ...] = DEFAULT_TARGET_MODULES
    max_steps: int = -1
    num_train_epochs: float = 1.0
    learning_rate: float = 2e-4
    per_device_train_batch_size: int = 8
    gradient_accumulation_steps: int = 1
    max_length: int = 512
    drop_truncated: bool = False
    warmup_steps: float = 0.0
    lr_scheduler_type: str = "linear"
    weight_decay: float = 0.0
    train_sampling_strategy: str = "random"
    max_train_seconds: float | None = None
    logging_steps: int = 1
    seed: int = 0
    precision: str = "auto"
    gradient_checkpointing: str | bool = "auto"
    merge: bool = False
    track: bool = True
    tracking_uri: str | None = None
    experiment_name: str = "piilab"
    run_name: str | None = None
    progress: bool = True

    def __post_init__(self):
        if isinstance(self.lora_target_modules, list | str):
            modules = (self.lora_target_modules if isinstance(self.lora_target_modules, list)
                       else [self.lora_target_modules])
            object.__setattr__(self, "lora_target_modules", tuple(modules))
        for name, kinds in _field_kinds().items():
            if not _is_kind(getattr(self, name), kinds):
                raise ConfigError(f"field '{name}' must be {_describe(kinds)}")
        if self.method not in ("lora", "full"):
            raise ConfigError("field 'method' must be lora or full")
        if self.system_prompt not in ("auto", "full", "short", "none"):
            raise ConfigError("field 'system_prompt' must be one of auto, full, short, none")
        if self.init_adapter is not None and self.method != "lora":
            raise ConfigError("field 'init_adapter' continues a LoRA adapter: it needs "
                              "method lora")
        if self.max_train_seconds is not None and not self.max_train_seconds > 0:
            raise ConfigError("field 'max_train_seconds' must be a positive number of seconds")
        if self.precision not in ("auto", "fp32", "bf16", "fp16"):
            raise ConfigError("field 'precision' must be one of auto, fp32, bf16, fp16")
        if self.gradient_checkpointing not in ("auto", True, False):
            raise ConfigError("field 'gradient_checkpointing' must be auto, true or false")
        if self.max_steps <= 0 and self.num_train_epochs <= 0:
            raise ConfigError("set max_steps > 0 or num_train_epochs > 0")
        for key in ("per_device_train_batch_size", "gradient_accumulation_steps", "max_length",
                    "lora_r", "logging_steps"):
            if getattr(self, key) < 1:
                raise ConfigError(f"field '{key}' must be at least 1")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], where: str = "configuration",
                     ) -> TrainConfig:
        """A configuration from a mapping; `ConfigError` names `where` (the file) and the
        field. Unknown keys are counted, never quoted."""
        if not isinstance(values, Mapping):
            raise ConfigError(f"{where}: the configuration must be an object")
        known = [f.name for f in dataclasses.fields(cls)]
        unknown = [key for key in values if key not in known]
        if unknown:
            near = sorted({match for key in unknown if isinstance(key, str)
                           for match in difflib.get_close_matches(key, known, n=1)})
            hint = f" (did you mean {', '.join(near)}?)" if near else ""
            raise ConfigError(f"{where}: {len(unknown)} key(s) that are no TrainConfig "
                              f"field{hint}")
        if "model" not in values:
            raise ConfigError(f"{where}: the configuration needs 'model' (a hub id or a "
                              "local path)")
        try:
            return cls(**values)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["lora_target_modules"] = list(self.lora_target_modules)
        return out

    def replace(self, **changes: Any) -> TrainConfig:
        return TrainConfig.from_mapping({**self.to_dict(), **changes})


# The accepted Python types of each field, read once from the annotations.
_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false",
          type(None): "null", tuple: "a list of strings"}


@functools.cache
def _field_kinds() -> dict[str, tuple[type, ...]]:
    kinds: dict[str, tuple[type, ...]] = {}
    for name, hint in typing.get_type_hints(TrainConfig).items():
        union = typing.get_origin(hint) in (typing.Union, types.UnionType)
        options = typing.get_args(hint) if union else (hint,)
        kinds[name] = tuple(typing.get_origin(o) or o for o in options)
    return kinds


def _is_kind(value: Any, kinds: tuple[type, ...]) -> bool:
    for kind in kinds:
        if kind is bool and isinstance(value, bool):
            return True
        if kind is int and isinstance(value, int) and not isinstance(value, bool):
            return True
        if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
            return True
        if kind is str and isinstance(value, str):
            return True
        if kind is type(None) and value is None:
            return True
        if kind is tuple and isinstance(value, tuple) and all(isinstance(v, str)
                                                              for v in value):
            return True
    return False


def _describe(kinds: tuple[type, ...]) -> str:
    return " or ".join(_NAMES[kind] for kind in kinds)


def load_config(path: str | os.PathLike, **overrides: Any) -> TrainConfig:
    """Read a JSON or TOML configuration file; `overrides` (not None) win.

    Keys starting with ``_`` (``"_comment"``) are ignored. Relative
    ``data_dir``/``output_dir`` are kept as written (relative to the working
    directory, like every path the CLI takes). Raises `ConfigError` naming the
    file (and line, for a syntax error) and the field, never a value.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 (byte {exc.start + 1})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        values = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except json.JSONDecodeError as exc:  # its message names a position, never the text
        raise ConfigError(f"{path}: malformed JSON ({exc.msg} at line {exc.lineno}, "
                          f"column {exc.colno})") from None
    except tomllib.TOMLDecodeError as exc:  # "... (at line L, column C)"
        raise ConfigError(f"{path}: malformed TOML ({exc})") from None
    except (RecursionError, ValueError):
        raise ConfigError(f"{path}: not a readable configuration") from None
    if not isinstance(values, dict):
        raise ConfigError(f"{path}: the configuration must be an object")
    values = {k: v for k, v in values.items() if not (isinstance(k, str) and k.startswith("_"))}
    values.update({k: v for k, v in overrides.items() if v is not None})
    return TrainConfig.from_mapping(values, str(path))


# ---------------------------------------------------------------------------
# What reaches PEFT and TRL
# ---------------------------------------------------------------------------


def lora_kwargs(config: TrainConfig) -> dict[str, Any] | None:
    """The ``peft.LoraConfig`` arguments of a new adapter; None for ``method="full"`` or
    when ``init_adapter`` continues a saved one.

    >>> lora_kwargs(TrainConfig("m", lora_target_modules=["all-linear"]))["target_modules"]
    'all-linear'
    """
    if config.method != "lora" or config.init_adapter is not None:
        return None
    out = {peft_name: getattr(config, name) for name, peft_name in LORA_FIELDS.items()}
    # PEFT's shortcut "all-linear" is a string; module names go as a list.
    modules = out["target_modules"]
    out["target_modules"] = "all-linear" if modules == ("all-linear",) else list(modules)
    return {**out, **{name: fixed.value for name, fixed in FIXED_LORA.items()}}


def _derived_sft(config: TrainConfig, hardware: Hardware, checkpointing: str) -> dict[str, Any]:
    enabled = hardware.gradient_checkpointing
    return {
        "output_dir": str(Path(config.output_dir) / "trainer"),
        "data_seed": config.seed,
        "bf16": hardware.precision == "bf16",
        "fp16": hardware.precision == "fp16",
        "use_cpu": hardware.device == "cpu",
        "disable_tqdm": not config.progress,
        checkpointing: enabled,
        f"{checkpointing}_kwargs": {"use_reentrant": False} if enabled else None,
    }


def sft_kwargs(config: TrainConfig, hardware: Hardware, *,
               checkpointing: str = "gradient_checkpointing") -> dict[str, Any]:
    """The ``trl.SFTConfig`` arguments of a run: `SFT_FIELDS`, then `DERIVED_SFT`, then
    `FIXED_SFT`. `checkpointing` is the installed release's name for the option
    (`piilab._compat.checkpointing_name`).

    >>> kwargs = sft_kwargs(TrainConfig("m", max_steps=5), Hardware("cpu", "fp32", False))
    >>> kwargs["max_steps"], kwargs["use_cpu"], kwargs["report_to"]
    (5, True, 'none')
    """
    out = {name: getattr(config, name) for name in SFT_FIELDS}
    out.update(_derived_sft(config, hardware, checkpointing))
    out.update({name: fixed.value for name, fixed in FIXED_SFT.items()})
    return out


def hyperparameters(config: TrainConfig, hardware: Hardware) -> dict[str, Any]:
    """What a run logs as its parameters (tracking): the fields that shape the model, and
    the hardware's decisions. Paths and tracking settings are left out."""
    keys = ("model", "method", "system_prompt", "init_adapter", "train_split", "max_train_records",
            *LORA_FIELDS, *SFT_FIELDS, "drop_truncated", "max_train_seconds", "merge")
    params = {k: getattr(config, k) for k in keys}
    params.update(device=hardware.device, precision=hardware.precision,
                  gradient_checkpointing=hardware.gradient_checkpointing)
    return params
