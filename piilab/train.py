"""Fine-tuning with TRL's `SFTTrainer`: LoRA or all weights (chapter 06, "Fine-tuning").

One entry point, `train(config)` (and ``piilab train --config CONFIG``), runs
(`build_trainer` does steps 1-3 alone, for inspection):

1. load the training records (``<data_dir>/<train_split>.jsonl``, or records
   given in memory) and the tokenizer;
2. build the prompt-completion examples and their ``input_ids``/``labels`` with
   `piilab.sft.prepare_training_dataset`, which runs `check_loss_mask` first:
   a mismatched example stops the run, a truncated one too unless
   ``drop_truncated`` is set;
3. load the model in the precision the hardware supports and train it with
   `SFTTrainer` on exactly those tokens: with a PEFT LoRA adapter
   (``method="lora"``) or every weight (``method="full"``: no PEFT
   configuration, the same TRL path);
4. save the adapter (``<output_dir>/adapter``; with ``method="full"``, the whole
   model and its tokenizer under the same name) with the system-prompt setting
   it was trained with (``piilab_prompt.json``), optionally the merged model
   (``<output_dir>/merged``, with the tokenizer), the resolved configuration
   (``train_config.json``), the loss-mask report (``loss_mask.json``) and the
   training metrics (``metrics.json``).

Hardware rules (``precision="auto"``, ``gradient_checkpointing="auto"``):

- no CUDA device: fp32 weights and no mixed precision, activation checkpointing
  off (TRL's defaults, bf16 and checkpointing on, fail or crawl on a CPU);
  ``use_cpu`` is set, so a Mac's MPS device is not used either;
- CUDA: bf16 where the GPU supports it natively (Ampere and later), else fp16
  mixed precision (T4, V100) with the LoRA weights kept in fp32; activation
  checkpointing on.

Several GPUs: the same code runs under Accelerate, one process per GPU (only the
main process writes files and tracks)::

    accelerate launch --multi_gpu --num_processes 2 -m piilab train \
        --config configs/train_colab_gpu.json

Tracking (`piilab.tracking`): MLflow, by default in ``<output_dir>/mlflow.db``;
hyperparameters, counts and metrics only. Nothing here prints or logs text: the
run's ``train.log`` holds counts and metrics, like the tracking store.

Models: `model` is a local directory, a hub id, or an alias of `piilab.models`
(``smollm2-135m``, fetched once with ``piilab fetch-model``). The system-prompt
setting (``system_prompt``) is ``auto`` by default: the setting saved with the
model (the tiny model saves ``none``), else ``full``. Budgets are in steps
(``max_steps``); ``max_train_seconds`` also stops a run at a wall-clock limit
(the schedule is not shortened, so prefer steps).

How `TrainConfig` reaches TRL and PEFT is declared in `piilab.train_config`
(standard library only, testable without a model): `lora_kwargs` and
`sft_kwargs` build the arguments of `LoraConfig` and `SFTConfig` from the
pass-through fields (`LORA_FIELDS`, `SFT_FIELDS`), the derived ones
(`DERIVED_SFT`) and the fixed ones (`FIXED_SFT`, `FIXED_LORA`), each with its
reason. `TrainConfig`, `load_config` and `ConfigError` live there too and are
re-exported here. `build_trainer` is loading plus those calls.

The system-prompt setting travels explicitly: `PreparedRun.prompt_setting`
and `TrainResult.prompt_setting` carry it (pass it to
`piilab.inference.generate` as ``system_prompt``), and it is saved beside the
adapter (``piilab_prompt.json``), where `piilab.inference.load_for_inference`
reads it back.

Deliberate limits: single-turn examples only, no evaluation during training (the
course evaluates generated predictions with `piilab.evaluation` instead of a
validation loss), no quantization (QLoRA needs bitsandbytes and a GPU).

Needs the ``train`` extra.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from piilab import __version__
from piilab._compat import checkpointing_name
from piilab.dataset import read_jsonl, split_bytes
from piilab.files import write_atomic
from piilab.generator import GENERATOR_VERSION
from piilab.models import resolve_model
from piilab.sft import prepare_training_dataset, read_prompt_setting, write_prompt_setting
from piilab.tracking import open_tracker
from piilab.train_config import (
    DEFAULT_TARGET_MODULES,
    LORA_FIELDS,
    SFT_FIELDS,
    ConfigError,
    Hardware,
    TrainConfig,
    hyperparameters,
    load_config,
    lora_kwargs,
    sft_kwargs,
)

__all__ = [
    "DEFAULT_TARGET_MODULES", "LORA_FIELDS", "SFT_FIELDS", "ConfigError", "Hardware",
    "PreparedRun", "TrainConfig", "TrainResult", "build_trainer", "load_config",
    "resolve_hardware", "train",
]

logger = logging.getLogger("piilab.train")


def resolve_prompt_setting(setting: str, model_path: str | os.PathLike) -> str:
    """``auto`` becomes the setting saved with the model (``piilab_prompt.json``), else
    ``full``; an explicit setting is kept."""
    if setting != "auto":
        return setting
    saved = read_prompt_setting(model_path) if Path(model_path).is_dir() else None
    return saved or "full"


def _time_limit(seconds: float):
    """A callback that ends training after `seconds` of wall time (checked every step)."""
    from transformers import TrainerCallback

    class TimeLimit(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            self.start = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            if time.perf_counter() - self.start >= seconds:
                control.should_training_stop = True

    return TimeLimit()


# ---------------------------------------------------------------------------
# Hardware
# ---------------------------------------------------------------------------


def resolve_hardware(precision: str = "auto", gradient_checkpointing: str | bool = "auto",
                     ) -> Hardware:
    """Choose precision and activation checkpointing for this machine (see module doc)."""
    import torch

    cuda = torch.cuda.is_available()
    if precision == "auto":
        if not cuda:
            precision = "fp32"
        elif torch.cuda.is_bf16_supported(including_emulation=False):
            precision = "bf16"
        else:
            precision = "fp16"
    if precision in ("bf16", "fp16") and not cuda:
        raise ConfigError(f"precision {precision} needs a CUDA GPU; use fp32 or auto on a CPU")
    if gradient_checkpointing == "auto":
        gradient_checkpointing = cuda
    return Hardware("cuda" if cuda else "cpu", precision, bool(gradient_checkpointing))


# ---------------------------------------------------------------------------
# Data version and records
# ---------------------------------------------------------------------------


def data_version(config: TrainConfig, records: Sequence[Mapping[str, Any]], *,
                 from_data_dir: bool = True) -> dict[str, str]:
    """Generator version, manifest hash (when the records came from a data directory
    that has one) and the hash of the training records actually used.

    In-memory records (``from_data_dir=False``) are identified by their own hash
    only: tagging them with the manifest of whatever `config.data_dir` points at
    would claim a dataset they may not come from.
    """
    manifest = Path(config.data_dir) / "manifest.json"
    info = {"generator_version": GENERATOR_VERSION,
            "train_records_sha256": hashlib.sha256(split_bytes(records)).hexdigest()}
    if from_data_dir and manifest.exists():
        raw = manifest.read_bytes()
        info["manifest_sha256"] = hashlib.sha256(raw).hexdigest()
        info["generator_version"] = str(json.loads(raw).get("generator_version", GENERATOR_VERSION))
    return info


def _load_records(config: TrainConfig) -> list[dict]:
    path = Path(config.data_dir) / f"{config.train_split}.jsonl"
    if not path.exists():
        raise ConfigError(f"{path}: file not found (generate the data with `piilab generate`)")
    return read_jsonl(path)


# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainResult:
    """Where a run wrote its outputs, its metrics (numbers only), and the trained
    PEFT model and tokenizer, still in memory (ready for `piilab.inference`)."""

    output_dir: Path
    adapter_dir: Path
    merged_dir: Path | None
    metrics: dict[str, Any]
    loss_history: tuple[tuple[int, float], ...]
    loss_mask: dict[str, Any]
    tracking_uri: str | None
    run_id: str | None
    hardware: Hardware = field(default_factory=lambda: Hardware("cpu", "fp32", False))
    model: Any = field(default=None, repr=False, compare=False)
    tokenizer: Any = field(default=None, repr=False, compare=False)
    #: False in the other processes of a multi-GPU run (they write no files).
    main_process: bool = True
    #: The system-prompt setting the model was trained with (give it to `generate`).
    prompt_setting: str = "full"


def _numeric(logs: Mapping[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in logs.items()
            if isinstance(v, int | float) and not isinstance(v, bool)}


def _make_callback(tracker, log_path: Path, history: list[tuple[int, float]], main: bool):
    from transformers import TrainerCallback

    class MetricsCallback(TrainerCallback):
        """Collects the loss curve; tracks and logs numeric log values only."""

        def on_log(self, args, state, control, logs=None, **kwargs):
            values = _numeric(logs or {})
            if "loss" in values:
                history.append((int(state.global_step), values["loss"]))
            if main and values:
                tracker.log_metrics(values, step=int(state.global_step))
                line = json.dumps({"step": int(state.global_step), **values}, sort_keys=True)
                with log_path.open("a", encoding="utf-8") as fh:
                    fh.write(line + "\n")

    return MetricsCallback()


@dataclass(frozen=True)
class PreparedRun:
    """A trainer ready to run: what `build_trainer` returns and `train` runs."""

    config: TrainConfig
    hardware: Hardware
    trainer: Any = field(repr=False)
    tokenizer: Any = field(repr=False)
    records: tuple = field(repr=False)
    report: Any = field(repr=False)  # piilab.sft.LossMaskReport
    #: The resolved system-prompt setting the examples were built with.
    prompt_setting: str = "full"

    @property
    def main_process(self) -> bool:
        """True in the process that writes files and tracks (rank 0)."""
        return self.trainer.args.process_index == 0


def build_trainer(config: TrainConfig | Mapping[str, Any],
                  records: Iterable[Mapping[str, Any]] | None = None) -> PreparedRun:
    """Steps 1-3 of `train`, without training: records, the loss-mask check, the
    model in its precision, the LoRA configuration and the `SFTTrainer`.

    Raises `piilab.sft.LossMaskError` when an example cannot be trained correctly
    (see `prepare_training_dataset`), before any model is loaded.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.trainer_callback import PrinterCallback
    from trl import SFTConfig, SFTTrainer

    if not isinstance(config, TrainConfig):
        config = TrainConfig.from_mapping(config)
    hw = resolve_hardware(config.precision, config.gradient_checkpointing)
    records = list(records) if records is not None else _load_records(config)
    if config.max_train_records is not None:
        records = records[: config.max_train_records]
    if not records:
        raise ConfigError("no training records")

    # 1-2. Tokenizer, examples, and the loss-mask check (every process does it: cheap
    # and deterministic, and each needs the dataset).
    model_path = resolve_model(config.model)
    setting = resolve_prompt_setting(config.system_prompt, model_path)
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    dataset, report = prepare_training_dataset(tokenizer, records, config.max_length,
                                               drop_truncated=config.drop_truncated,
                                               system_prompt=setting)

    # 3. The model, in the precision chosen for this hardware, and its trainer.
    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=getattr(torch, hw.dtype_name))
    if config.init_adapter is not None:
        from peft import PeftModel

        adapter = Path(config.init_adapter)
        if not (adapter / "adapter_config.json").is_file():
            raise ConfigError(f"{adapter}: not an adapter directory (init_adapter)")
        model = PeftModel.from_pretrained(model, adapter, is_trainable=True)
    lora = lora_kwargs(config)
    if lora is not None:
        from peft import LoraConfig

        lora = LoraConfig(**lora)
    checkpointing = checkpointing_name(f.name for f in dataclasses.fields(SFTConfig))
    args = SFTConfig(**sft_kwargs(config, hw, checkpointing=checkpointing))
    trainer = SFTTrainer(model=model, args=args, train_dataset=dataset,
                         processing_class=tokenizer, peft_config=lora)
    if config.max_train_seconds is not None:
        trainer.add_callback(_time_limit(config.max_train_seconds))
    if not config.progress:
        # Without progress bars transformers adds a callback that prints every log dict
        # (timings included) to stdout; library code prints nothing, so drop it. Losses
        # still reach the tracker and train.log through our own callback.
        trainer.remove_callback(PrinterCallback)
    return PreparedRun(config, hw, trainer, tokenizer, tuple(records), report, setting)


def train(config: TrainConfig | Mapping[str, Any],
          records: Iterable[Mapping[str, Any]] | None = None) -> TrainResult:
    """Fine-tune a LoRA adapter as `config` says; return a `TrainResult`.

    `records` replaces the data directory's training split (the course passes
    in-memory records in tests and exercises). Raises `piilab.sft.LossMaskError`
    when an example cannot be trained correctly (see `prepare_training_dataset`).
    """
    run = build_trainer(config, records)
    config, out, main = run.config, Path(run.config.output_dir), run.main_process
    version = data_version(config, run.records, from_data_dir=records is None)
    report = run.report
    counts = {"n_train_records": len(run.records),
              "n_train_examples": len(run.trainer.train_dataset),
              "n_truncated": len(report.truncated),
              "n_dropped": len(run.records) - len(run.trainer.train_dataset),
              "loss_mask_checked": report.checked,
              "tokens_total_max": report.lengths["total"]["max"],
              "tokens_total_mean": report.lengths["total"]["mean"]}

    # Files and tracking on the main process only (under `accelerate launch` there is one
    # process per GPU).
    tracker = open_tracker(None, out, enabled=False)
    if main:
        out.mkdir(parents=True, exist_ok=True)
        (out / "train.log").write_text(json.dumps({"counts": counts}, sort_keys=True) + "\n",
                                       encoding="utf-8")
        tracker = open_tracker(config.tracking_uri, out, experiment=config.experiment_name,
                               run_name=config.run_name, enabled=config.track,
                               tags={"piilab_version": __version__,
                                     **{f"data.{k}": v for k, v in version.items()}})
    try:
        tracker.log_params(hyperparameters(config, run.hardware))
        tracker.log_params(counts)
        result = _fit_and_save(run, out, tracker, main, version, counts)
    except BaseException:
        tracker.close("FAILED")
        raise
    tracker.close("FINISHED")
    return result


def _fit_and_save(run: PreparedRun, out: Path, tracker, main: bool, version: dict,
                  counts: dict) -> TrainResult:
    """Step 4 of `train`: the loop, then the files of the run."""
    trainer, config, hw = run.trainer, run.config, run.hardware
    history: list[tuple[int, float]] = []
    trainer.add_callback(_make_callback(tracker, out / "train.log", history, main))
    logger.info("training on %d examples (%d dropped as truncated)", counts["n_train_examples"],
                counts["n_dropped"])
    t0 = time.perf_counter()
    output = trainer.train()
    wall = time.perf_counter() - t0

    # Save (main process), after every process has finished its steps.
    trainer.accelerator.wait_for_everyone()
    adapter_dir, merged_dir = out / "adapter", None
    tokens_seen = float(getattr(trainer, "_total_train_tokens", 0))  # TRL's non-pad token count
    metrics = {
        **_numeric(output.metrics),
        "train_wall_s": round(wall, 3),
        "train_tokens": tokens_seen,
        "train_tokens_per_s": round(tokens_seen / wall, 1) if wall > 0 else 0.0,
        "global_step": int(output.global_step),
        "loss_first": history[0][1] if history else float("nan"),
        "loss_last": history[-1][1] if history else float("nan"),
        **counts,
    }
    if main:
        trainer.model.save_pretrained(adapter_dir)
        if config.method == "full":  # a whole model: keep its tokenizer beside it
            run.tokenizer.save_pretrained(adapter_dir)
        else:
            _record_base_alias(adapter_dir, config.model)
        write_prompt_setting(adapter_dir, run.prompt_setting)
        if config.merge and config.method == "lora":
            merged_dir = _merge(config.model, adapter_dir, out / "merged", hw, run.tokenizer)
            write_prompt_setting(merged_dir, run.prompt_setting)
        _write_json(out / "train_config.json", {
            "config": config.to_dict(), "hardware": dataclasses.asdict(hw),
            "data": version, "piilab_version": __version__, "packages": package_versions()})
        _write_json(out / "loss_mask.json", run.report.to_dict())
        _write_json(out / "metrics.json", {**metrics, "loss_history": history})
        tracker.log_metrics({k: v for k, v in metrics.items()
                             if k.startswith(("train", "loss", "global"))})
    trainer.accelerator.wait_for_everyone()
    model = trainer.accelerator.unwrap_model(trainer.model)
    model.eval()
    return TrainResult(out, adapter_dir, merged_dir, metrics, tuple(history),
                       run.report.to_dict(), tracker.uri, tracker.run_id, hw, model,
                       run.tokenizer, main, run.prompt_setting)


def _record_base_alias(adapter_dir: Path, model: str) -> None:
    """Name the base by its alias (not this machine's cache path) in ``adapter_config.json``,
    so that the adapter loads wherever the same base model was fetched."""
    from piilab.models import is_alias

    path = adapter_dir / "adapter_config.json"
    if is_alias(model) and path.is_file():
        values = json.loads(path.read_text(encoding="utf-8"))
        values["base_model_name_or_path"] = model
        path.write_text(json.dumps(values, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _merge(model_id: str, adapter_dir: Path, merged_dir: Path, hw: Hardware, tokenizer) -> Path:
    """Load a fresh base model, apply the saved adapter, merge it in and save."""
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(resolve_model(model_id),
                                                dtype=getattr(torch, hw.dtype_name))
    merged = PeftModel.from_pretrained(base, adapter_dir).merge_and_unload()
    merged.save_pretrained(merged_dir)
    tokenizer.save_pretrained(merged_dir)
    return merged_dir


def _write_json(path: Path, obj: Any) -> None:
    write_atomic(path, (json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n").encode())


def package_versions() -> dict[str, str]:
    """Versions of the training stack (for run records)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("torch", "transformers", "trl", "peft", "datasets", "accelerate",
                 "mlflow-skinny", "tokenizers"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    return out
