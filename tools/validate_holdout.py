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
3. Safety, the generator's rules applied to hand-written values: CARD values
   fail the Luhn check, 13-digit RRN values fail the Korean check digit,
   EMAIL values use example.com/.net/.org, PHONE values are Korean
   ``010-0XXX-XXXX`` / ``010-1XXX-XXXX`` (``+82 10-...`` included) or US
   ``555-01XX`` placeholders. Digits are read through the OCR confusions the
   holdout uses on purpose (``O`` -> 0, ``l``/``I`` -> 1) and through spelled-out
   digits (``five five five``, ``공일공``), so such mentions are checked too.

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

from piilab import templates as T  # noqa: E402
from piilab.checksums import luhn_valid, rrn_valid  # noqa: E402
from piilab.dataset import DatasetError, read_jsonl  # noqa: E402
from piilab.labels import LABELS  # noqa: E402
from piilab.records import gold_problems, record_problems  # noqa: E402

DEFAULT_PATH = REPO / "data" / "holdout" / "holdout.jsonl"
RESERVED_DOMAINS = frozenset({"example.com", "example.net", "example.org"})
ID_PATTERN = re.compile(r"holdout-(ko|en)-\d{3}")

# Digits as a reader would take them: OCR look-alikes and spelled-out digits.
_OCR_DIGITS = {"O": "0", "o": "0", "l": "1", "I": "1"}
_WORD_DIGITS = {
    "zero": "0", "oh": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
    "six": "6", "seven": "7", "eight": "8", "nine": "9",
    "공": "0", "영": "0", "일": "1", "이": "2", "삼": "3", "사": "4", "오": "5", "육": "6",
    "칠": "7", "팔": "8", "구": "9",
}
_WORD = re.compile(r"[A-Za-z]+|[가-힣]")


def read_digits(value: str) -> str:
    """The digits a value spells: ASCII digits, OCR look-alikes between them, or words.

    >>> read_digits("010-1O74-2519"), read_digits("five five five oh one"), read_digits("공일공")
    ('01010742519', '55501', '010')
    """
    if any(ch.isdigit() and ch.isascii() for ch in value):
        return "".join(ch if ch.isdigit() and ch.isascii() else _OCR_DIGITS.get(ch, "")
                       for ch in value)
    return "".join(_WORD_DIGITS.get(w.lower(), "") for w in _WORD.findall(value))


def placeholder_phone(value: str) -> bool:
    """True for the placeholder ranges of the generator (see the module docstring)."""
    digits = read_digits(value)
    if digits.startswith("82") and len(digits) == 12:  # +82 10-XXXX-XXXX
        digits = "0" + digits[2:]
    if re.fullmatch(r"010[01]\d{7}", digits):
        return True
    return re.fullmatch(r"(1?\d{3})?55501\d\d", digits) is not None


def safety_problems(record: dict) -> list[str]:
    rid = record.get("id", "?")
    problems = []
    for i, ent in enumerate(record.get("entities", [])):
        label, value = ent.get("type"), ent.get("value", "")
        where = f"record {rid}: entities[{i}] ({label})"
        digits = read_digits(value)
        if label == "CARD" and luhn_valid(digits):
            problems.append(f"{where} passes the Luhn check (must fail)")
        elif label == "RRN" and len(digits) == 13 and rrn_valid(digits):
            problems.append(f"{where} has a correct RRN check digit (must fail)")
        elif label == "RRN" and len(digits) != 13 and "*" not in value:
            problems.append(f"{where} is neither a 13-digit nor a masked RRN")
        elif label == "EMAIL" and value.rsplit("@", 1)[-1].lower() not in RESERVED_DOMAINS:
            problems.append(f"{where} is not on example.com/.net/.org")
        elif label == "PHONE" and not placeholder_phone(value):
            problems.append(f"{where} is outside the placeholder phone ranges")
    return problems


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
