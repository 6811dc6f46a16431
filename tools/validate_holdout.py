"""Validate the hand-written holdout set (`data/holdout/holdout.jsonl`, chapter 05).

    .venv/bin/python tools/validate_holdout.py [PATH]

Checks every record and prints the problems found (record id, field, label and
reason, never a value) and a summary; exits 1 when there is any problem.

1. Structure: the fields of a record (`piilab.records.record_problems`); ``split`` is
   ``"holdout"``; ids look like ``holdout-ko-001``, are unique and agree with
   ``language``; ``template_id`` names a holdout style (``holdout-...``).
2. Gold (`piilab.records.gold_problems`): types from `LABELS`; unique pairs in
   order of first literal occurrence; every value occurs literally in its
   source; no two gold occurrences (literal or variant) partly overlap;
   ``target_tsv`` matches the entities; NFC text.
3. Safety, by the one checker of every dataset (`piilab.safety.safety_problems`): CARD
   values fail the Luhn check; RRN values are 13-digit registration numbers with a
   calendar date that fail the resident check digit (or are masked with ``*``); EMAIL
   values are on reserved domains; PHONE values are in the Korean, US or UK placeholder
   ranges; and no unlabelled RRN- or card-shaped string in the text passes its check.
   Digits are read through the OCR confusions the holdout uses on purpose (``O`` -> 0,
   ``l``/``I`` -> 1) and through spelled-out digits (``five five five``, ``공일공``).
   One rule is narrower here than for the generated datasets: three hand-written RRN
   values pass the pre-2020 foreigner (FRN) check digit, so the holdout is checked with
   ``foreign_check=False`` until those values are replaced (the holdout is evaluation
   data: changing it is its owner's decision, and changes every recorded holdout score).

What it does not check: whether the annotation is *right* (a missed name is
invisible to it); that is what the second-pass review (`data/holdout/REVIEW.md`)
is for.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from piilab import safety  # noqa: E402
from piilab import templates as T  # noqa: E402
from piilab.dataset import DatasetError, read_jsonl  # noqa: E402
from piilab.labels import LABELS  # noqa: E402
from piilab.records import gold_problems, record_problems  # noqa: E402

DEFAULT_PATH = REPO / "data" / "holdout" / "holdout.jsonl"
ID_PATTERN = re.compile(r"holdout-(ko|en)-\d{3}")

#: The digits a value spells (ASCII, OCR look-alikes among digits, or words).
read_digits = safety.digits_of
#: True for the placeholder phone ranges (`piilab.safety.phone_ok`).
placeholder_phone = safety.phone_ok


def safety_problems(record: dict) -> list[str]:
    """`piilab.safety.safety_problems` with the holdout's one narrower rule (see above)."""
    return safety.safety_problems(record, f"record {record.get('id', '?')}",
                                  foreign_check=False)


def structure_problems(records: list[dict]) -> list[str]:
    problems = []
    ids = Counter(r.get("id") for r in records)
    for r in records:
        rid = r.get("id", "?")
        shape = record_problems(r)
        if shape:
            problems += shape
            continue
        match = ID_PATTERN.fullmatch(rid)
        if not match:
            problems.append(f"record {rid}: field 'id' does not look like holdout-ko-001")
        elif match.group(1) != r["language"]:
            problems.append(f"record {rid}: field 'language' disagrees with the id")
        if ids[rid] > 1:
            problems.append(f"record {rid}: duplicate id")
        if r["split"] != "holdout":
            problems.append(f"record {rid}: field 'split' must be 'holdout'")
        if not r["template_id"].startswith("holdout-"):
            problems.append(f"record {rid}: field 'template_id' must name a holdout style")
    return problems


def validate(records: list[dict]) -> list[str]:
    """Every problem found, in record order (structure first)."""
    problems = structure_problems(records)
    for r in records:
        problems += gold_problems(r) + safety_problems(r)
    return problems


def generator_names() -> frozenset[str]:
    """Every PERSON value the generator's vocabularies can form."""
    ko = {s + g for s in T.KO_SURNAMES for g in T.KO_GIVEN}
    en = {f"{f} {last}" for f in T.EN_FIRST for last in T.EN_LAST}
    return frozenset(ko | en)


def summary(records: list[dict]) -> dict:
    """Counts for the README: languages, styles, negatives, labels, novel names."""
    known = generator_names()
    names = {e["value"] for r in records for e in r["entities"] if e["type"] == "PERSON"}
    return {
        "records": len(records),
        "languages": dict(Counter(r["language"] for r in records)),
        "styles": dict(sorted(Counter(r["template_id"] for r in records).items())),
        "negative": sum(not r["entities"] for r in records),
        "entities": sum(len(r["entities"]) for r in records),
        "labels": {label: sum(e["type"] == label for r in records for e in r["entities"])
                   for label in LABELS},
        "person_values": len(names),
        "person_values_outside_generator_vocabulary": len(names - known),
    }


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else DEFAULT_PATH
    try:
        records = read_jsonl(path)
    except (OSError, DatasetError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    problems = validate(records)
    for problem in problems:
        print(f"FAIL: {problem}")
    print(json.dumps(summary(records), ensure_ascii=False, indent=2))
    print(f"{path}: {len(records)} records, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
