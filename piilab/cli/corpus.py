"""`piilab mask-corpus` and `piilab verify-corpus`: masking a whole corpus (chapter 10).

    piilab mask-corpus --input PATH --out DIR --detector rules|ADAPTER_OR_ALIAS
                       [--engine local|ray] [--address ADDR] [--batch-size N]
                       [--workers N] [--blocks N] [--rows-per-file N]
                       [--keep-column NAME ...] [--tracking-uri URI] [--no-progress]
    piilab verify-corpus DIR [--sample N]

A thin layer over `piilab.corpus_mask`. ``--engine ray`` needs the ``scale`` extra
(``pip install 'piilab[scale]'``); a model detector needs the ``train`` extra. Messages
name files, line numbers, fields and counts, never a text, a value or a mapping.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from piilab.cli import CLIError, one_line

#: MLflow's HTTP settings while the tracking store is opened: one try, a short timeout, so
#: a server that does not answer is reported within seconds (MLflow's own defaults retry
#: with back-off for minutes). Set only for that call, and only where the user has not.
TRACKING_OPEN_ENV = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0",
                     "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "0",
                     "MLFLOW_HTTP_REQUEST_TIMEOUT": "10"}


def _count(minimum: int):
    """An argparse type: a whole number of at least `minimum`."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError("must be a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}")
        return value
    return parse


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "mask-corpus", help="mask every record of a JSONL/Parquet corpus (mappings kept apart)")
    p.add_argument("--input", required=True, metavar="PATH",
                   help="JSONL file, Parquet file or folder of Parquet files (id, source_text)")
    p.add_argument("--out", required=True, metavar="DIR", help="new output folder")
    p.add_argument("--detector", required=True, metavar="rules|MODEL",
                   help="'rules' (the rule baseline) or a model: adapter folder or alias")
    p.add_argument("--engine", choices=("local", "ray"), default="local")
    p.add_argument("--address", metavar="ADDR",
                   help="Ray cluster address (default: RAY_ADDRESS, else a local Ray)")
    p.add_argument("--batch-size", type=_count(1), default=256, metavar="N",
                   help="documents per detector call (default 256)")
    p.add_argument("--workers", type=_count(1), default=1, metavar="N",
                   help="Ray actors (default 1)")
    p.add_argument("--blocks", type=_count(1), default=None, metavar="N",
                   help="Ray blocks (default: 2 per worker)")
    p.add_argument("--rows-per-file", type=_count(1), default=None, metavar="N",
                   help="records per output partition (default 50,000)")
    p.add_argument("--model-batch-size", type=_count(1), default=16, metavar="N",
                   help="documents per generation batch of a model detector (default 16)")
    p.add_argument("--keep-column", action="append", default=[], dest="keep_columns",
                   metavar="NAME",
                   help="copy this input column, UNMASKED, beside masked_text (repeatable); "
                        "the masked files then count as sensitive (mode 0600). Without it, "
                        "every column but id is dropped")
    p.add_argument("--tracking-uri", metavar="URI",
                   help="log counts, throughput and the detector's identity to this MLflow "
                        "store (never text)")
    p.add_argument("--no-progress", dest="progress", action="store_false",
                   help="no progress bar (it shows counts only)")
    p.set_defaults(func=cmd_mask_corpus, extra="scale")

    p = subparsers.add_parser("verify-corpus",
                              help="check a mask-corpus output against its manifest")
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--sample", type=_count(0), default=100, metavar="N",
                   help="records restored to prove the round trip (default 100)")
    p.set_defaults(func=cmd_verify_corpus, extra="scale")


def cmd_mask_corpus(args: argparse.Namespace) -> int:
    from piilab.corpus_mask import DEFAULT_ROWS_PER_FILE, mask_corpus

    if args.detector != "rules":  # the extras an import error should name
        args.extra = "train" if args.engine == "local" else "scale,train"
    if not args.progress:
        # no bar at all: also not the model libraries' own ("Loading weights"), here and in
        # the workers, which inherit the environment
        # (read when the libraries are imported; switched off too where already imported)
        os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
        if "transformers" in sys.modules:
            sys.modules["transformers"].utils.logging.disable_progress_bar()
    tracker = None
    try:
        if args.tracking_uri:
            tracker = _open_tracker(args.tracking_uri, args.out)
        result = mask_corpus(args.input, args.out, detector=args.detector, engine=args.engine,
                             batch_size=args.batch_size, workers=args.workers,
                             blocks=args.blocks, address=args.address,
                             rows_per_file=(DEFAULT_ROWS_PER_FILE if args.rows_per_file is None
                                            else args.rows_per_file),
                             model_batch_size=args.model_batch_size,
                             keep_columns=args.keep_columns,
                             # a bar only on a terminal: in a log its updates are noise
                             progress=args.progress and sys.stderr.isatty(),
                             tracker=tracker)
    except BaseException:
        if tracker is not None:
            with contextlib.suppress(Exception):
                tracker.close("FAILED")
        raise  # a CorpusError is a PiilabError: main prints its one line
    if tracker is not None:
        tracker.close()
    print(f"piilab mask-corpus: {result.records} records, {result.spans} spans masked, "
          f"{result.partitions} partitions in {result.out_dir} "
          f"({_rate(result.records_per_second)} records/s, engine {result.engine}); "
          f"mappings in {result.out_dir}/mappings (sensitive, mode 0600)")
    if args.keep_columns:
        print(f"piilab mask-corpus: {len(args.keep_columns)} column(s) kept UNMASKED "
              f"(--keep-column): {result.out_dir}/masked is sensitive too (mode 0600)")
    return 0


def _rate(per_second: float) -> str:
    """Records/s as a reader needs it: one decimal below 100 (a model detector masks a few
    records a second, which an integer would show as 0), none above.

    >>> _rate(0.42), _rate(8.036), _rate(11064.3)
    ('0.4', '8.0', '11,064')
    """
    return f"{per_second:,.0f}" if per_second >= 100 else f"{per_second:.1f}"


def _shown_uri(uri: str) -> str:
    """`uri` without a user name, password, query or fragment (they can hold secrets)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(uri)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(unreadable URI)"
    if not parts.scheme:
        return uri
    netloc = f"{host}{port}" if parts.netloc else ""
    return f"{parts.scheme}://{netloc}{parts.path}"


def _open_tracker(uri: str, out: str):
    """The MLflow run of this job at `uri`, or a `CLIError` naming --tracking-uri: a file
    store is refused, and a server that does not answer is reported within seconds."""
    from urllib.parse import urlsplit

    scheme = urlsplit(uri).scheme.lower() if uri.isprintable() else ""
    if scheme == "file" or (not scheme and not uri.startswith("databricks")):
        raise CLIError(f"--tracking-uri {_shown_uri(uri)}: MLflow no longer writes file "
                       "stores; use a database (sqlite:///PATH/mlflow.db) or a server "
                       "(http://HOST:PORT)")
    from piilab.corpus_mask.engines import environment_defaults

    try:
        from piilab.tracking import open_tracker
    except ImportError:
        raise CLIError("--tracking-uri needs the train extra: pip install 'piilab[train]'"
                       ) from None
    try:
        with environment_defaults(TRACKING_OPEN_ENV):
            return open_tracker(uri, out, experiment="piilab-corpus")
    except ImportError as exc:
        module = (exc.name or "").partition(".")[0] or "mlflow"
        raise CLIError(f"--tracking-uri needs the train extra: pip install 'piilab[train]' "
                       f"({module} is not installed)") from None
    except Exception as exc:  # MLflow's and the HTTP client's own errors
        raise CLIError(f"--tracking-uri {_shown_uri(uri)}: the tracking store does not "
                       f"answer or refuses the run ({type(exc).__name__})") from None


def cmd_verify_corpus(args: argparse.Namespace) -> int:
    from piilab.corpus_mask import verify_corpus

    # A refused folder raises a CorpusError (a PiilabError): main prints its one line.
    report = verify_corpus(args.dir, sample=args.sample)
    for problem in report.problems:  # names from a manifest may hold anything: one line
        print(f"piilab verify-corpus: {one_line(problem)}", file=sys.stderr)
    status = "ok" if report.ok else f"{len(report.problems)} problems"
    print(f"piilab verify-corpus: {report.records} records in {report.files} files, "
          f"{report.sampled} restored: {status}")
    return 0 if report.ok else 1
