"""Train (or take a trained run, or none), predict, evaluate, and append one row to the results.

    # train and record (the tiny model is built first with --tiny)
    .venv/bin/python tools/record_run.py --config configs/train_tiny_cpu.json --tiny --holdout
    # record a run that `piilab train` already finished (its directory holds the metrics)
    .venv/bin/python tools/record_run.py --config configs/train_smollm2_cpu.json \\
        --from-run runs/smollm2-lora --n-eval 100 --holdout \\
        --save-adapter results/adapters/smollm2-135m-lora
    # the wide run of chapter 07: course test, holdout and the wide test split
    .venv/bin/python tools/record_run.py --config configs/train_smollm2_wide_cpu.json \\
        --from-run runs/smollm2-lora-wide --n-eval 100 --holdout --wide runs/wide \\
        --save-adapter results/adapters/smollm2-135m-lora-wide
    # a base model with no training at all (zero-shot, full system prompt)
    .venv/bin/python tools/record_run.py --zero-shot smollm2-135m --n-eval 100 --holdout
    # a token classifier (tools/train_classifier.py), alone and merged with the rules
    .venv/bin/python tools/record_run.py --classifier runs/ner-gemma3 --n-eval 400 \
        --holdout --wide runs/wide --save-classifier results/classifiers/gemma-3-270m-ner
    .venv/bin/python tools/record_run.py \
        --classifier results/classifiers/gemma-3-270m-ner+rules --n-eval 400 --holdout \
        --wide runs/wide

Every row of `results/runs.jsonl` is written by this script, never by hand (chapter 07 reads
the file; `results/README.md` describes its fields). The steps:

1. verify the dataset directory against its manifest (the data version of the row is the
   generator version plus the manifest's SHA-256);
2. with `--tiny`, build the tiny offline model (`piilab.tiny`) from the training split into
   the configuration's `model` path (deterministic, so the row can be reproduced);
3. train with `piilab.train` (or, with `--from-run`, load the adapter and the metrics that
   run wrote; with `--zero-shot`, use the base model as it is), predict the first
   `--n-eval` test documents and, with `--holdout`, the hand-written holdout documents
   (`data/holdout/holdout.jsonl`) with `piilab.inference` (predictions stay in the run
   directory, never in the results file), evaluate with `piilab.evaluation`;
4. with `--save-adapter DIR`, copy the LoRA adapter there in fp16 and record its SHA-256;
5. append the row: model, data version, configuration, commit, hardware, package versions,
   training metrics and learning curve, evaluation metrics. Only numbers and identifiers,
   no text of the data.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from piilab.course.results import run_id_of

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "results" / "runs.jsonl"
HOLDOUT = REPO / "data" / "holdout" / "holdout.jsonl"
#: Points kept of a run's loss curve in its row (evenly spaced over the logged steps).
CURVE_POINTS = 60


def git_state() -> dict:
    """The commit the code came from (None before the first commit) and whether the tree
    had uncommitted changes."""
    def run(*cmd: str) -> str | None:
        try:
            done = subprocess.run(["git", *cmd], cwd=REPO, capture_output=True, text=True,
                                  check=True)
        except (OSError, subprocess.CalledProcessError):
            return None
        return done.stdout.strip()

    status = run("status", "--porcelain")
    return {"commit": run("rev-parse", "HEAD"), "dirty": bool(status) if status is not None
            else None}


def loss_curve(history: list, points: int = CURVE_POINTS) -> list[list[float]]:
    """At most `points` (step, loss) pairs of `history`, evenly spaced, the last one kept."""
    if len(history) <= points:
        return [[int(s), round(float(v), 4)] for s, v in history]
    stride = len(history) / points
    picked = [history[int(i * stride)] for i in range(points - 1)] + [history[-1]]
    return [[int(s), round(float(v), 4)] for s, v in picked]


def save_adapter_fp16(adapter_dir: Path, dest: Path) -> dict:
    """Copy a PEFT adapter directory to `dest` with its weights in fp16; return the
    ``adapter`` block of the row (path relative to the repository, SHA-256, bytes)."""
    import torch
    from safetensors.torch import load_file, save_file

    dest.mkdir(parents=True, exist_ok=True)
    weights = load_file(str(adapter_dir / "adapter_model.safetensors"))
    half = {k: v.to(torch.float16).contiguous() for k, v in weights.items()}
    target = dest / "adapter_model.safetensors"
    save_file(half, str(target), metadata={"format": "pt"})
    for name in ("adapter_config.json", "piilab_prompt.json"):
        (dest / name).write_bytes((adapter_dir / name).read_bytes())
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    try:
        shown = str(target.resolve().relative_to(REPO))
    except ValueError:
        shown = str(target)
    return {"path": shown, "sha256": digest, "bytes": target.stat().st_size,
            "dtype": "float16", "parameters": sum(v.numel() for v in half.values())}


def evaluate_split(model, tokenizer, records, out_path: Path, args, *,
                   system_prompt: str) -> tuple[dict, dict]:
    """Predict `records` with the model's prompt setting, write the predictions (0600) and
    return (eval block, metrics)."""
    from piilab.course.results import metrics_summary
    from piilab.evaluation import evaluate
    from piilab.inference import predict_records
    from piilab.predictions import write_predictions

    predictions, gen = predict_records(model, tokenizer, records, batch_size=args.batch_size,
                                       max_new_tokens=args.max_new_tokens,
                                       system_prompt=system_prompt)
    write_predictions(out_path, predictions)
    scores = evaluate(records, predictions)
    block = {"documents": len(records), "max_new_tokens": args.max_new_tokens,
             "decoding": "greedy", "batch_size": args.batch_size, "new_tokens": gen.new_tokens,
             "generation_s": round(gen.seconds, 1),
             "generation_tokens_per_s": round(gen.tokens_per_second, 1)}
    return block, metrics_summary(scores)


def evaluate_detector(detector, records, out_path: Path) -> tuple[dict, dict]:
    """Predict `records` with a `piilab.detectors.Detector`, write the predictions (0600)
    and return (eval block with documents/s, metrics)."""
    from piilab.course.results import metrics_summary
    from piilab.evaluation import evaluate
    from piilab.predictions import make_prediction, write_predictions

    before_docs, before_s = detector.documents, detector.seconds
    outputs = detector.outputs([r["source_text"] for r in records])
    seconds = detector.seconds - before_s
    predictions = [make_prediction(r["id"], out, r["source_text"])
                   for r, out in zip(records, outputs, strict=True)]
    write_predictions(out_path, predictions)
    block = {"documents": detector.documents - before_docs, "detector": detector.identity,
             "seconds": round(seconds, 2),
             "documents_per_s": round(len(records) / seconds, 2) if seconds else None}
    return block, metrics_summary(evaluate(records, predictions))


def _manifest_block(folder: Path) -> dict:
    manifest = folder / "manifest.json"
    return {"generator_version": json.loads(manifest.read_text())["generator_version"],
            "manifest_sha256": hashlib.sha256(manifest.read_bytes()).hexdigest()}


def record_detector(args, argv, code_state: dict) -> int:
    """Record a token classifier (or the classifier merged with the rules): the same
    evaluation blocks as a generative row, with documents/s, and the classifier's own
    training summary from its ``piilab_classifier.json``."""
    import shutil

    import torch

    from piilab.dataset import load_dataset_dir, read_jsonl, verify_dataset
    from piilab.detectors import MERGE_SUFFIX, load_detector
    from piilab.models import MODELS
    from piilab.ner.pretrained import read_meta
    from piilab.train import package_versions

    if args.threads:
        torch.set_num_threads(args.threads)
    folder = args.classifier[: -len(MERGE_SUFFIX)] if args.classifier.endswith(MERGE_SUFFIX) \
        else args.classifier
    merged = folder != args.classifier
    if args.save_classifier:
        if merged:
            print("--save-classifier takes a classifier, not a merge", file=sys.stderr)
            return 2
        dest = Path(args.save_classifier)
        dest.mkdir(parents=True, exist_ok=True)
        for name in ("adapter_model.safetensors", "adapter_config.json", "piilab_classifier.json"):
            shutil.copyfile(Path(folder) / name, dest / name)
        meta = read_meta(dest)
        if meta["base"] in MODELS and "gemma" in meta["base"]:
            notice = REPO / "results" / "adapters" / "gemma-3-270m-lora-wide" / "NOTICE"
            shutil.copyfile(notice, dest / "NOTICE")
        folder = str(dest)
    meta = read_meta(folder)
    if not verify_dataset(args.data_dir).ok:
        print(f"{args.data_dir}: dataset does not match its manifest; run `make data`",
              file=sys.stderr)
        return 1
    name = folder + (MERGE_SUFFIX if merged else "")
    detector = load_detector(name, batch_size=args.batch_size, decoding=args.decoding,
                             operating_point=args.operating_point)
    base = meta["base"]
    src = MODELS.get(base)
    model_info = {"id": base, "kind": "pretrained base (piilab.models)", "hub_id": src.hub_id,
                  "weights": f"{src.package}=={src.version} {Path(src.member).name}",
                  "parameters": src.parameters, "license": src.license} if src else \
        {"id": base, "kind": "local"}
    train = dict(meta.get("train", {}))
    run_dir = REPO / "runs" / f"record-{Path(folder).name}{'-rules' if merged else ''}"
    run_dir.mkdir(parents=True, exist_ok=True)
    test = load_dataset_dir(args.data_dir)["test"][: args.n_eval]
    eval_block, metrics = evaluate_detector(detector, test, run_dir / "predictions_test.jsonl")
    weights = Path(folder) / "adapter_model.safetensors"
    try:
        shown = str(weights.resolve().relative_to(REPO))
    except ValueError:
        shown = str(weights)
    from safetensors.torch import load_file

    tensors = load_file(str(weights))
    attention = "bidirectional" if meta["bidirectional"] else "causal"
    row = {
        "recorded_at": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "system": args.name or (f"{src.hub_id.split('/')[-1] if src else base} token "
                                f"classifier{' + rules' if merged else ''}"),
        "model": model_info,
        "method": (f"token classifier: {attention} attention, BIOES head "
                   f"({len(meta['classes'])} classes), LoRA r={meta['config']['lora_r']} "
                   f"alpha={meta['config']['lora_alpha']}, {detector.identity['decoding']} "
                   f"decoding at '{detector.identity['operating_point']}'"
                   + ("; merged with the rules' fixed-format recognizers" if merged else "")),
        "data": {**_manifest_block(Path(args.data_dir)),
                 "seed": json.loads((Path(args.data_dir) / "manifest.json").read_text())["seed"],
                 "test_sha256": json.loads((Path(args.data_dir) / "manifest.json")
                                           .read_text())["splits"]["test"]["sha256"],
                 "train_files": meta["config"]["train_files"],
                 "train_records": meta["config"]["train_records"],
                 **({"wide": _manifest_block(Path(args.wide))} if args.wide else {})},
        # the classifier's configuration, with the names the results table reads
        "config": {**meta["config"], "method": "lora",
                   "per_device_train_batch_size": meta["config"]["batch_size"],
                   "lr_scheduler_type": "cosine"},
        "operating_points": meta.get("operating_points"),
        "operating_points_chosen_on": {k: v for k, v in
                                       (meta.get("operating_points_chosen_on") or {}).items()
                                       if k != "metrics"},
        **code_state,
        "hardware": {"device": "cpu", "precision": "float32",
                     "torch_threads": torch.get_num_threads()},
        "packages": package_versions(),
        "train": {k: v for k, v in {
            "global_step": train.get("steps"), "loss_first": train.get("first_loss"),
            "loss_last": train.get("last_loss"), "train_wall_s": train.get("wall_s"),
            "train_tokens": train.get("tokens"),
            "train_tokens_per_s": train.get("tokens_per_second"),
            "n_train_examples": train.get("examples"), "projection": train.get("projection"),
            "loss_curve": train.get("loss_curve")}.items() if v is not None},
        "eval": {"split": "test", **eval_block},
        "metrics": metrics,
        "adapter": {"path": shown, "sha256": hashlib.sha256(weights.read_bytes()).hexdigest(),
                    "bytes": weights.stat().st_size, "dtype": "float16",
                    "parameters": sum(v.numel() for v in tensors.values())},
        "produced_by": "tools/record_run.py " + " ".join(argv if argv is not None
                                                          else sys.argv[1:]),
    }
    if args.holdout:
        block, hmetrics = evaluate_detector(detector, read_jsonl(HOLDOUT),
                                            run_dir / "predictions_holdout.jsonl")
        row["holdout"] = {"eval": {"split": "holdout", **block}, "metrics": hmetrics}
    if args.wide:
        wide_test = load_dataset_dir(args.wide)["test"][: args.n_wide]
        block, wmetrics = evaluate_detector(detector, wide_test,
                                            run_dir / "predictions_wide_test.jsonl")
        row["wide_test"] = {"eval": {"split": "wide test", **block}, "metrics": wmetrics,
                            "data": _manifest_block(Path(args.wide))}
    row["run_id"] = run_id_of(row)  # the reader's own formula: read_runs verifies it
    out = Path(args.out)
    with out.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    line = (f"appended run {row['run_id']} ({row['system']}) to {out}: test entity F1 "
            f"{metrics['entity']['f1']:.3f} on {len(test)} documents")
    if args.holdout:
        line += (f"; holdout F1 {row['holdout']['metrics']['entity']['f1']:.3f}, documents "
                 f"leaking {row['holdout']['metrics']['documents_leak_rate']:.3f}, "
                 f"{row['holdout']['eval']['documents_per_s']} documents/s")
    if args.wide:
        line += f"; wide test F1 {row['wide_test']['metrics']['entity']['f1']:.3f}"
    print(line)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--config", help="training configuration (trains unless --from-run)")
    source.add_argument("--zero-shot", metavar="MODEL",
                        help="record a base model without training (alias, path or hub id)")
    source.add_argument("--classifier", metavar="DIR[+rules]",
                        help="record a token classifier (tools/train_classifier.py), or with "
                             "'+rules' the classifier merged with the rules (piilab.detectors)")
    parser.add_argument("--save-classifier", metavar="DIR",
                        help="copy the classifier's folder here (its weights are fp16) and "
                             "hash them")
    parser.add_argument("--decoding", default="viterbi", choices=("viterbi", "argmax"))
    parser.add_argument("--operating-point", help="default: the classifier's own default")
    parser.add_argument("--from-run", help="a run directory that `piilab train` finished")
    parser.add_argument("--tiny", action="store_true",
                        help="build the tiny offline model at the configuration's model path")
    parser.add_argument("--name", help="the system's name in the results table")
    parser.add_argument("--n-eval", type=int, default=400, help="test documents (default 400)")
    parser.add_argument("--holdout", action="store_true", help="also evaluate the holdout")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=16, help="generation batch size")
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads")
    parser.add_argument("--save-adapter", help="copy the adapter here (fp16) and hash it")
    parser.add_argument("--wide", metavar="DIR",
                        help="also evaluate the test split of a wide corpus (piilab generate "
                             "--profile wide), verified against its manifest")
    parser.add_argument("--n-wide", type=int, default=200,
                        help="wide test documents (default 200)")
    parser.add_argument("--data-dir", default="data")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args(argv)
    # The code state is read before training: the run reflects the tree it started from,
    # whatever is committed while it trains.
    code_state = git_state()
    if args.classifier:
        return record_detector(args, argv, code_state)

    import torch

    from piilab.dataset import load_dataset_dir, read_jsonl, verify_dataset
    from piilab.inference import load_for_inference
    from piilab.models import MODELS, is_alias
    from piilab.train import data_version, load_config, package_versions, train

    if args.threads:
        torch.set_num_threads(args.threads)
    config = load_config(args.config, progress=False) if args.config else None
    data_dir = config.data_dir if config else args.data_dir
    if not verify_dataset(data_dir).ok:
        print(f"{data_dir}: dataset does not match its manifest; run `make data`",
              file=sys.stderr)
        return 1
    splits = load_dataset_dir(data_dir)
    model_id = config.model if config else args.zero_shot
    model_info: dict = {"id": model_id, "kind": "hub or local"}
    if is_alias(model_id):
        src = MODELS[model_id]
        model_info = {"id": model_id, "kind": "pretrained base (piilab.models)",
                      "hub_id": src.hub_id, "weights": f"{src.package}=={src.version} "
                      f"{Path(src.member).name}", "parameters": src.parameters,
                      "license": src.license}
    if args.tiny:
        from piilab.tiny import build_tiny_model

        build_tiny_model(config.model, splits[config.train_split], seed=0)
        info = json.loads((Path(config.model) / "piilab_tiny.json").read_text())
        model_info = {"id": "piilab.tiny", "kind": "tiny offline model (random weights)",
                      **{k: info[k] for k in ("seed", "parameters", "vocab_size",
                                              "architecture", "copy_friendly")}}

    train_block: dict = {}
    hardware: dict
    if config is None:  # zero-shot: the base model, the full system prompt, no training
        loaded = load_for_inference(model_id)
        model, tokenizer, setting = loaded.model, loaded.tokenizer, loaded.prompt_setting
        run_dir = REPO / "runs" / f"zero-shot-{model_id.replace('/', '_')}"
        run_dir.mkdir(parents=True, exist_ok=True)
        device = next(model.parameters()).device.type
        hardware = {"device": device, "precision": str(next(model.parameters()).dtype)
                    .replace("torch.", "")}
        method = "zero-shot (no training)"
        config_dict = {"model": model_id, "system_prompt": setting}
        data = {"generator_version": json.loads((Path(data_dir) / "manifest.json")
                                                .read_text())["generator_version"]}
    else:
        if args.from_run:
            run_dir = Path(args.from_run)
            saved = json.loads((run_dir / "train_config.json").read_text())
            m = json.loads((run_dir / "metrics.json").read_text())
            history = m.pop("loss_history", [])
            config = load_config(args.config, **{k: v for k, v in saved["config"].items()
                                                  if k != "lora_target_modules"},
                                 lora_target_modules=saved["config"]["lora_target_modules"])
            hardware = dict(saved["hardware"])
            data = dict(saved["data"])
            loaded = load_for_inference(run_dir / "adapter")
            model, tokenizer, setting = loaded.model, loaded.tokenizer, loaded.prompt_setting
        else:
            result = train(config)
            m, history, run_dir = result.metrics, list(result.loss_history), result.output_dir
            hardware = dict(result.hardware.__dict__)
            data = data_version(config, splits[config.train_split])
            model, tokenizer, setting = result.model, result.tokenizer, result.prompt_setting
        config_dict = config.to_dict()
        method = (f"LoRA r={config.lora_r} alpha={config.lora_alpha}" if config.method == "lora"
                  else "full fine-tuning (every weight)")
        train_block = {k: m[k] for k in ("global_step", "loss_first", "loss_last", "train_loss",
                                         "train_wall_s", "train_tokens", "train_tokens_per_s",
                                         "n_train_examples") if k in m}
        train_block["loss_curve"] = loss_curve(history)
    hardware["torch_threads"] = torch.get_num_threads()

    manifest = json.loads((Path(data_dir) / "manifest.json").read_text())
    data.update(seed=manifest["seed"], test_sha256=manifest["splits"]["test"]["sha256"],
                manifest_sha256=hashlib.sha256((Path(data_dir) / "manifest.json")
                                               .read_bytes()).hexdigest())
    test = splits["test"][: args.n_eval]
    eval_block, metrics = evaluate_split(model, tokenizer, test,
                                         Path(run_dir) / "predictions_test.jsonl", args,
                                         system_prompt=setting)
    row = {
        "recorded_at": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "system": args.name or model_info["id"],
        "model": model_info,
        "method": method,
        "data": data,
        "config": config_dict,
        **code_state,
        "hardware": hardware,
        "packages": package_versions(),
        "train": train_block,
        "eval": {"split": "test", **eval_block},
        "metrics": metrics,
        "produced_by": "tools/record_run.py " + " ".join(argv if argv is not None
                                                          else sys.argv[1:]),
    }
    if args.holdout:
        holdout = read_jsonl(HOLDOUT)
        block, hmetrics = evaluate_split(model, tokenizer, holdout,
                                         Path(run_dir) / "predictions_holdout.jsonl", args,
                                         system_prompt=setting)
        row["holdout"] = {"eval": {"split": "holdout", **block}, "metrics": hmetrics}
    if args.wide:
        wide_manifest = Path(args.wide) / "manifest.json"
        if not verify_dataset(args.wide).ok or \
                json.loads(wide_manifest.read_text()).get("profile") != "wide":
            print(f"{args.wide}: not a wide corpus matching its manifest", file=sys.stderr)
            return 1
        wide_test = load_dataset_dir(args.wide)["test"][: args.n_wide]
        block, wmetrics = evaluate_split(model, tokenizer, wide_test,
                                         Path(run_dir) / "predictions_wide_test.jsonl", args,
                                         system_prompt=setting)
        row["wide_test"] = {"eval": {"split": "wide test", **block}, "metrics": wmetrics,
                            "data": {"generator_version": json.loads(wide_manifest.read_text())
                                     ["generator_version"],
                                     "manifest_sha256": hashlib.sha256(
                                         wide_manifest.read_bytes()).hexdigest()}}
    if args.save_adapter:
        if config is None or config.method != "lora":
            parser.error("--save-adapter needs a LoRA run")
        row["adapter"] = save_adapter_fp16(Path(run_dir) / "adapter", Path(args.save_adapter))
    row["run_id"] = run_id_of(row)  # the reader's own formula: read_runs verifies it
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    line = (f"appended run {row['run_id']} ({row['system']}) to {out}: test entity F1 "
            f"{metrics['entity']['f1']:.3f}, document leak rate "
            f"{metrics['documents_leak_rate']:.3f} on {len(test)} documents")
    if args.holdout:
        line += f"; holdout F1 {row['holdout']['metrics']['entity']['f1']:.3f}"
    if args.wide:
        line += f"; wide test F1 {row['wide_test']['metrics']['entity']['f1']:.3f}"
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
