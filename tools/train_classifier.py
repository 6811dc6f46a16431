"""Train a token classifier on a pretrained base (chapter 08), in the background.

    .venv/bin/python tools/train_classifier.py configs/ner_gemma3_wide_cpu.json \\
        [--log runs/ner-gemma3.log.jsonl]

Reads a `piilab.ner.pretrained.ClassifierConfig` file, trains, and saves the LoRA adapter
and head (fp16) with ``piilab_classifier.json`` into the config's ``output_dir``. The log
gets one JSON line of numbers every 10 steps (step, loss, seconds, tokens/s), never text.
Record the finished run with ``tools/record_run.py --classifier DIR``.
"""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    from piilab.ner.pretrained import ClassifierConfig, train_classifier

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("config")
    p.add_argument("--log", help="JSON-lines file for the progress numbers (default: stdout)")
    p.add_argument("--max-steps", type=int, help="override the config's max_steps (smoke runs)")
    p.add_argument("--output-dir", help="override the config's output_dir")
    args = p.parse_args(argv)
    config = ClassifierConfig.from_file(args.config)
    if args.max_steps is not None:
        config.max_steps = args.max_steps
    if args.output_dir:
        config.output_dir = args.output_dir

    def log(row: dict) -> None:
        line = json.dumps(row) + "\n"
        if args.log:
            with open(args.log, "a", encoding="utf-8") as handle:
                handle.write(line)
        else:
            sys.stdout.write(line)
            sys.stdout.flush()

    summary = train_classifier(config, log=log)
    log({"done": True, **{k: v for k, v in summary.items() if k != "loss_curve"}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
