"""Masking a corpus: records/s of the local engine and of Ray Data with 1 and 2 workers.

    python benchmarks/bench_corpus.py [--records 220000] [--model-records 2000]
                                      [--model ADAPTER_OR_ALIAS] [--skip-model]
                                      [--input parquet|jsonl|both]

1. The rule detector over ``--records`` generated records (the default corpus generator at
   the scale that gives that many; ids are unique): ``engine="local"``, then Ray with 1 and
   2 workers (actors), 2 blocks per worker. Prints records/s and the ratios; the goal of
   issue 24 on 2 cores is Ray 2 workers >= 1.6x Ray 1 worker. The corpus is read from
   Parquet and from JSONL (``--input``): the driver reads the input before any worker
   starts, and parsing JSON lines in Python is a serial cost (a few seconds for 220,000
   records) that Parquet, read by Arrow, mostly avoids.
2. Ray's fixed cost: the same job on the first 2,000 records, local and Ray (1 worker); the
   difference is Ray's overhead (start-up of the actors, scheduling, moving the results
   back); goal < 15 s. Ray itself is started once before any timing (as a cluster would
   be running already); its start-up time is printed apart.
3. The fine-tuned model (default: the committed wide adapter) on ``--model-records``
   records, local and Ray with 2 workers (each actor loads the model once, 1 torch thread
   per actor).

Every run's output is compared byte for byte with the local engine's. Only counts, timings
and hashes are printed. Run it on a quiet machine; the load average is printed with the
figures.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

REPO = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = REPO / "results" / "adapters" / "smollm2-135m-lora-wide"


def folder_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def write_corpus(path: Path, records: int) -> None:
    from piilab.dataset import split_bytes
    from piilab.generator import generate_dataset

    scale = -(-records // 2200)
    corpus = generate_dataset(scale=scale)
    rows = [r for split in corpus.values() for r in split][:records]
    path.write_bytes(split_bytes(rows))


def run(label: str, source: Path, work: Path, **kwargs) -> tuple[float, str, int]:
    from piilab.corpus_mask import mask_corpus

    out = work / label
    t0 = time.perf_counter()
    result = mask_corpus(source, out, **kwargs)
    seconds = time.perf_counter() - t0
    digest = folder_digest(out)
    shutil.rmtree(out)
    print(f"  {label:<28} {result.records:>8} records {seconds:>8.2f} s "
          f"{result.records / seconds:>9.1f} records/s  output {digest}", flush=True)
    return seconds, digest, result.records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=220_000)
    parser.add_argument("--model-records", type=int, default=2000)
    parser.add_argument("--model", default=str(DEFAULT_MODEL))
    parser.add_argument("--skip-model", action="store_true")
    parser.add_argument("--input", choices=("parquet", "jsonl", "both"), default="both",
                        help="the format of the rule detector's corpus (default: both, "
                             "Parquet first)")
    parser.add_argument("--batch-size", type=int, default=1000,
                        help="documents per rule-detector batch (default 1000)")
    args = parser.parse_args(argv)

    from piilab.corpus_mask import start_ray

    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    work = Path(tempfile.mkdtemp(prefix="bench-corpus-"))
    try:
        big, small = work / "big.jsonl", work / "small.jsonl"
        t0 = time.perf_counter()
        write_corpus(big, args.records)
        with big.open("rb") as handle:
            small.write_bytes(b"".join(itertools.islice(handle, 2000)))
        inputs = []
        if args.input in ("parquet", "both"):
            import pyarrow.parquet as pq

            from piilab.corpus_mask import read_corpus

            pq.write_table(read_corpus(big), work / "big.parquet")
            inputs.append(("Parquet", work / "big.parquet"))
        if args.input in ("jsonl", "both"):
            inputs.append(("JSONL", big))
        print(f"generated {args.records} records in {time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        start_ray(num_cpus=os.cpu_count())
        print(f"Ray started locally in {time.perf_counter() - t0:.1f} s (not counted below)")

        digests = set()
        for name, source in inputs:
            print(f"rule detector, {args.records} records from {name}, batch "
                  f"{args.batch_size}:")
            local_s, local_d, _ = run("local", source, work, batch_size=args.batch_size)
            ray1_s, ray1_d, _ = run("ray, 1 worker", source, work, engine="ray", workers=1,
                                    batch_size=args.batch_size)
            ray2_s, ray2_d, _ = run("ray, 2 workers", source, work, engine="ray", workers=2,
                                    batch_size=args.batch_size)
            print(f"  ray 2 workers / ray 1 worker: {ray1_s / ray2_s:.2f}x (goal >= 1.6x); "
                  f"ray 2 workers / local: {local_s / ray2_s:.2f}x; "
                  f"identical outputs: {local_d == ray1_d == ray2_d}")
            digests |= {local_d, ray1_d, ray2_d}

        print("Ray's fixed cost, rule detector, 2,000 records:")
        small_local, small_ld, _ = run("local (2,000)", small, work, batch_size=200)
        small_ray, small_rd, _ = run("ray, 1 worker (2,000)", small, work, engine="ray",
                                     workers=1, batch_size=200)
        print(f"  Ray overhead: {small_ray - small_local:.2f} s (goal < 15 s); "
              f"identical outputs: {small_ld == small_rd}")

        identical = len(digests) == 1 and small_ld == small_rd
        if not args.skip_model:
            head = work / "model.jsonl"
            with small.open("rb") as handle:
                head.write_bytes(b"".join(itertools.islice(handle, args.model_records)))
            print(f"model detector ({Path(args.model).name}), {args.model_records} records:")
            m_local, m_ld, _ = run("local", head, work, detector=args.model, batch_size=64)
            m_ray, m_rd, _ = run("ray, 2 workers", head, work, engine="ray", workers=2,
                                 batch_size=32, detector=args.model, threads=1)
            print(f"  ray 2 workers / local: {m_local / m_ray:.2f}x; "
                  f"identical outputs: {m_ld == m_rd}")
            identical &= m_ld == m_rd
        print(f"load average at the end {os.getloadavg()[0]:.2f}")
        return 0 if identical else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
