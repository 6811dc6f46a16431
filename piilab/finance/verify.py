"""`piilab finance verify DIR`: prove a build's rules again, with code of its own.

Chapter 09 teaches this module. The builder checks its rows as it makes them;
a check written by the same hand with the same helpers would repeat the same
mistakes. So this module shares no rule with the builder: check digits, Luhn,
the reserved and placeholder ranges (all in `piilab.safety`, the one checker of
every dataset, which no generator imports), the token offsets, the BIOES
decoding, the placeholder numbering, the value normalization, the MD5
partition and the card's statistics are written again, directly from
docs/contract.md, section 10, and the card, and run over every row of the
output. Only the o200k vocabulary (`bpe-openai`), the taxonomy file, the
card's Markdown layout (`piilab.finance.card.render_card`, given the
statistics counted here) and the course generator (whose manifest hash the build records) are
shared.

The checks (`CHECKS`), each counted as rows or values checked and failed:

* ``files``: every file is there; ``schema``: the 9 columns in order with
  their types, ``split`` matching the file, ``uid`` unique and of the form
  ``source/language/split/cluster/number``; ``parquet``: the Parquet schema
  and rows equal the JSONL rows;
* ``spans``: ``privacy_mask`` sorted, disjoint, inside the text, values equal
  to the text, labels from the taxonomy; ``masked_text``: the placeholders;
* ``tokens``: the tokens spell the text's bytes and are exactly the o200k
  tokens of the text; ``round_trip``: ``token_classes`` are well-formed BIOES
  tags of the 73 classes and decode to exactly the spans;
* one check per invalidation rule (RRN, FRN, CARD_NUMBER, EMAIL, PHONE,
  DRIVER_LICENSE, PASSPORT, CVC), and the **RRN/FRN audit**: every
  registration-number-shaped string in any text is a labelled RRN or FRN
  whose label agrees with its gender digit, whose date is a calendar date
  and which fails both check-digit rules; every card-shaped string fails Luhn;
* ``pools``: each value's MD5 partition is its split and the splits' value
  sets are disjoint; ``en_share``: 20-30 % per split;
* ``card``: ``README.md`` equals the card rendered from statistics counted
  here, and ``build_report.json`` agrees with the rows;
  ``course_generator``: the report names the installed course
  ``GENERATOR_VERSION`` and the SHA-256 of the course corpus manifest at the
  build's seed, as the installed generator makes it (a changed generator
  would change the course rows under an unchanged version).

Failures are reported as counts and the places of the first failing rows
(``train.jsonl:3``, `VerifyReport.examples`), never as text or a uid (a uid is
data too, and a tampered file can put anything there). A file that cannot be
read as what it should be (a line that is not JSON, or not an object; a
number too long to read; a corrupt Parquet file; a report that is not JSON)
fails its check at that place: it never stops the verification.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from piilab.inputs import InputError, loads_json
from piilab.safety import (
    CARD_SHAPE,
    RRN_SHAPE,
    email_ok,
    licence_ok,
    luhn_passes,
    only_digits,
    passport_ok,
    phone_ok,
    registration_ok,
)

__all__ = ["CHECKS", "VerifyReport", "verify_build", "verify_rows"]

SPLITS = ("train", "validation")
COLUMNS = ("source_text", "masked_text", "privacy_mask", "language", "split", "uid",
           "source_dataset", "tokens", "token_classes")
SOURCES = ("course-ko", "course-en", "domain")
EN_BAND = (0.20, 0.30)
#: Pool shares: the first 20 % of the MD5 range is validation (docs/contract.md, section 10).
VALIDATION_EDGE = 0.2

CHECKS: tuple[str, ...] = (
    "files", "schema", "parquet", "spans", "masked_text", "tokens", "round_trip",
    "RRN", "FRN", "CARD_NUMBER", "EMAIL", "PHONE", "DRIVER_LICENSE", "PASSPORT", "CVC",
    "rrn_frn_audit", "card_shaped_audit", "pools", "en_share", "card", "course_generator",
)

# --------------------------------------------------------------------------------
# The rules, written again
# --------------------------------------------------------------------------------

# The value rules (check digits, Luhn, reserved domains, placeholder phones, unassigned
# licence regions and passport letters) are `piilab.safety`'s: one checker for every
# dataset of the course, shared with no generator.


# --------------------------------------------------------------------------------
# Tokens, offsets, tags: written again
# --------------------------------------------------------------------------------


def _byte_alphabet() -> dict[str, int]:
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    others = [b for b in range(256) if b not in printable]
    table = {chr(b): b for b in printable}
    table.update({chr(256 + i): b for i, b in enumerate(others)})
    return table


_ALPHABET = _byte_alphabet()


def _offsets(text: str, tokens: Sequence[str]) -> list[tuple[int, int]] | None:
    """Character offsets of spelled tokens (whitespace trimmed unless all whitespace)."""
    starts: list[int] = []  # the byte offset where each character starts
    position = 0
    for ch in text:
        starts.append(position)
        position += len(ch.encode("utf-8"))
    total = position
    out = []
    position = 0
    for token in tokens:
        if any(ch not in _ALPHABET for ch in token) or not token:
            return None
        first, last = position, position + len(token) - 1
        position += len(token)
        if last >= total:
            return None
        # The characters holding the first and the last byte.
        lo = _bisect(starts, first)
        hi = _bisect(starts, last) + 1
        while lo < hi and text[lo].isspace() and not text[lo:hi].isspace():
            lo += 1
        while hi > lo and text[hi - 1].isspace() and not text[lo:hi].isspace():
            hi -= 1
        out.append((lo, hi))
    return out if position == total else None


def _bisect(starts: Sequence[int], byte: int) -> int:
    lo, hi = 0, len(starts)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if starts[mid] <= byte:
            lo = mid
        else:
            hi = mid
    return lo


def _decode_strict(offsets: Sequence[tuple[int, int]], tags: Sequence[str]
                   ) -> list[tuple[int, int, str]] | None:
    """Spans of a well-formed BIOES sequence; None if it is ill-formed."""
    spans: list[tuple[int, int, str]] = []
    open_label, open_start = None, 0
    for (start, end), tag in zip(offsets, tags, strict=True):
        prefix, _, label = tag.partition("-")
        if tag == "O":
            if open_label is not None:
                return None
        elif prefix == "S" and open_label is None:
            spans.append((start, end, label))
        elif prefix == "B" and open_label is None:
            open_label, open_start = label, start
        elif prefix == "I" and open_label == label:
            pass
        elif prefix == "E" and open_label == label:
            spans.append((open_start, end, label))
            open_label = None
        else:
            return None
    return spans if open_label is None else None


def _expected_masked(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    present = set(re.findall(r"\[[A-Z_]+_[0-9]+\]", text))
    counter: Counter = Counter()
    names: dict[tuple[str, str], str] = {}
    out, cursor = [], 0
    for start, end, label in spans:
        key = (label, text[start:end])
        if key not in names:
            counter[label] += 1
            while f"[{label}_{counter[label]}]" in present:
                counter[label] += 1
            names[key] = f"[{label}_{counter[label]}]"
        out += [text[cursor:start], names[key]]
        cursor = end
    return "".join(out) + text[cursor:]


def _normalized(value: str) -> str:
    return re.sub(r"[ \-./()+,:_]", "", unicodedata.normalize("NFC", value).casefold())


def _pool_of(value: str) -> str:
    digest = hashlib.md5(_normalized(value).encode("utf-8"), usedforsecurity=False).digest()
    return "validation" if int.from_bytes(digest[:4], "big") / 2**32 < VALIDATION_EDGE else "train"


# --------------------------------------------------------------------------------
# Running the checks
# --------------------------------------------------------------------------------


@dataclass
class VerifyReport:
    """Per check: how many rows or values were checked and failed, and where the first failed.

    `examples` holds up to five places per check (``train.jsonl:3``, a file
    name or a split), never a value or a uid.
    """

    checked: Counter = field(default_factory=Counter)
    failed: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def count(self, check: str, ok: bool, uid: str = "") -> None:
        self.checked[check] += 1
        if not ok:
            self.failed[check] += 1
            shown = self.examples.setdefault(check, [])
            if uid and len(shown) < 5:
                shown.append(uid)

    @property
    def ok(self) -> bool:
        return not sum(self.failed.values()) and self.checked["files"] > 0

    def summary(self) -> dict[str, dict[str, int]]:
        return {c: {"checked": self.checked[c], "failed": self.failed[c]} for c in CHECKS}


_UID = re.compile(r"([a-z-]+)/(ko|en)/(train|validation)/([^/]+)/([0-9]{6})")


def _check_schema(row: Any, split: str, report: VerifyReport, where: str = "") -> bool:
    ok = isinstance(row, dict) and tuple(row) == COLUMNS
    if ok:
        ok = (all(isinstance(row[c], str) for c in COLUMNS
                  if c not in ("privacy_mask", "tokens", "token_classes"))
              and isinstance(row["tokens"], list) and all(isinstance(t, str) for t in row["tokens"])
              and isinstance(row["token_classes"], list)
              and all(isinstance(t, str) for t in row["token_classes"])
              and isinstance(row["privacy_mask"], list)
              and all(isinstance(e, dict) and tuple(e) == ("label", "start", "end", "value")
                      and isinstance(e["label"], str) and isinstance(e["value"], str)
                      and type(e["start"]) is int and type(e["end"]) is int
                      for e in row["privacy_mask"])
              and row["split"] == split and row["language"] in ("ko", "en")
              and row["source_dataset"] in SOURCES)
        match = _UID.fullmatch(row["uid"]) if ok else None
        ok = ok and match is not None and match.group(1) == row["source_dataset"] \
            and match.group(2) == row["language"] and match.group(3) == split
    report.count("schema", ok, where)
    return ok


def _check_row(row: dict, labels: Sequence[str], classes: frozenset[str],
               report: VerifyReport, encode, where: str = "") -> None:
    uid, text = where, row["source_text"]  # failures are reported by place, never by uid
    spans = [(e["start"], e["end"], e["label"]) for e in row["privacy_mask"]]
    sound = (spans == sorted(spans)
             and all(0 <= s < e <= len(text) for s, e, _ in spans)
             and all(b[0] >= a[1] for a, b in itertools.pairwise(spans))
             and all(lab in labels for _, _, lab in spans)
             and all(text[e["start"]:e["end"]] == e["value"] for e in row["privacy_mask"]))
    report.count("spans", sound, uid)
    report.count("masked_text", sound and row["masked_text"] == _expected_masked(text, spans), uid)

    offsets = _offsets(text, row["tokens"])
    spelled = offsets is not None and bytes(
        _ALPHABET[ch] for t in row["tokens"] for ch in t) == text.encode("utf-8")
    report.count("tokens", spelled and encode(text) == row["tokens"], uid)
    tags = row["token_classes"]
    decoded = (_decode_strict(offsets, tags)
               if offsets is not None and len(tags) == len(offsets) and set(tags) <= classes
               else None)
    report.count("round_trip", decoded is not None and decoded == spans, uid)

    language = row["language"]
    card_values = [e["value"] for e in row["privacy_mask"] if e["label"] == "CARD_NUMBER"]
    for entry in row["privacy_mask"]:
        label, value = entry["label"], entry["value"]
        if label in ("RRN", "FRN"):
            report.count(label, registration_ok(value, label), uid)
        elif label == "CARD_NUMBER":
            digits = only_digits(value)
            report.count(label, len(digits) >= 13 and not luhn_passes(digits), uid)
        elif label == "EMAIL":
            report.count(label, email_ok(value), uid)
        elif label == "PHONE":
            report.count(label, phone_ok(value), uid)
        elif label == "DRIVER_LICENSE":
            report.count(label, licence_ok(value, language), uid)
        elif label == "PASSPORT":
            report.count(label, passport_ok(value), uid)
        elif label == "CVC":
            report.count(label, any(len(only_digits(c)) >= 13 and not luhn_passes(
                only_digits(c)) for c in card_values), uid)

    labelled = {(s, e): lab for s, e, lab in spans}
    for match in RRN_SHAPE.finditer(text):
        label = labelled.get((match.start(), match.end()))
        report.count("rrn_frn_audit", label in ("RRN", "FRN")
                     and registration_ok(match.group(), label), uid)
    for match in CARD_SHAPE.finditer(text):
        report.count("card_shaped_audit", not luhn_passes(only_digits(match.group())), uid)


def _count_stats(rows_by_split: Mapping[str, Sequence[dict]], labels: Sequence[str]
                 ) -> dict[str, Any]:
    """The card's statistics, counted here (the layout of `piilab.finance.card.row_stats`)."""
    families = json.loads((Path(__file__).with_name("templates.json")).read_text("utf-8"))
    hard = {f["id"]: f["hard_negative"] for f in families["families"]}
    splits = list(rows_by_split)
    stats: dict[str, Any] = {"splits": {}, "labels": {lab: dict.fromkeys(splits, 0)
                                                      for lab in labels},
                             "sources": {}, "hard_negatives": {}, "pools": {}}
    pools = {}
    for split in splits:
        rows = rows_by_split[split]
        languages = Counter(r["language"] for r in rows)
        stats["splits"][split] = {"rows": len(rows), "ko": languages["ko"],
                                  "en": languages["en"]}
        pools[split] = {_normalized(e["value"]) for r in rows for e in r["privacy_mask"]}
        stats["pools"][split] = len(pools[split])
        for row in rows:
            stats["sources"].setdefault(row["source_dataset"], dict.fromkeys(splits, 0))[split] += 1
            kind = hard.get(row["uid"].split("/")[3]) if row["source_dataset"] == "domain" else None
            if kind:
                stats["hard_negatives"].setdefault(kind, dict.fromkeys(splits, 0))[split] += 1
            for entry in row["privacy_mask"]:
                stats["labels"][entry["label"]][split] += 1
    stats["pools_shared"] = sum(len(pools[a] & pools[b])
                                for a, b in itertools.combinations(splits, 2))
    stats["families"] = len(families["families"])
    return stats


def verify_rows(rows_by_split: Mapping[str, Sequence[dict]],
                report: VerifyReport | None = None,
                where: Mapping[str, Sequence[str]] | None = None) -> VerifyReport:
    """Every row check, the pools and the en share over rows already read.

    `where` names each split's rows in `VerifyReport.examples` (``{split:
    [file:line]}``); by default ``<split> row N``.
    """
    import bpe_openai

    from piilab.taxonomy import finance_labels

    report = report or VerifyReport()
    labels = finance_labels()
    classes = frozenset({"O", *(f"{p}-{lab}" for lab in labels for p in "BIES")})
    encoding = bpe_openai.get_encoding("o200k_base")
    symbol = {b: ch for ch, b in _ALPHABET.items()}

    def spelled_tokens(text: str) -> list[str]:
        return ["".join(symbol[b] for b in encoding.decode_single_token_bytes(i))
                for i in encoding.encode_ordinary(text)]

    seen: set[str] = set()
    pools: dict[str, set[str]] = {}
    for split, rows in rows_by_split.items():
        pools[split] = set()
        places = (list(where[split]) if where is not None
                  else [f"{split} row {i}" for i in range(1, len(rows) + 1)])
        for row, place in zip(rows, places, strict=True):
            if not _check_schema(row, split, report, place):
                continue
            report.count("schema", row["uid"] not in seen, place)
            seen.add(row["uid"])
            _check_row(row, labels, classes, report, spelled_tokens, place)
            for entry in row["privacy_mask"]:
                pools[split].add(_normalized(entry["value"]))
                report.count("pools", _pool_of(entry["value"]) == split, place)
        en = sum(isinstance(r, dict) and r.get("language") == "en" for r in rows)
        report.count("en_share", bool(rows) and EN_BAND[0] <= en / len(rows) <= EN_BAND[1])
    for a, b in itertools.combinations(sorted(pools), 2):
        report.count("pools", not pools[a] & pools[b])
    return report


def _read_jsonl(path: Path, report: VerifyReport) -> tuple[list[Any], list[str]]:
    """The rows of a JSONL file and their places (``train.jsonl:3``).

    A line that cannot be read (not UTF-8, not JSON, a number too long) fails
    the ``schema`` check at its place and is left out.
    """
    rows, places = [], []
    with path.open("rb") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            place = f"{path.name}:{number}"
            try:
                rows.append(loads_json(line, place))
            except InputError:
                report.count("schema", False, place)
                continue
            places.append(place)
    return rows, places


def verify_build(out_dir: str | Path) -> VerifyReport:
    """Run every check (`CHECKS`) over the build in `out_dir`."""
    from piilab.taxonomy import finance_labels

    out = Path(out_dir)
    report = VerifyReport()
    names = [f"{s}.{ext}" for s in SPLITS for ext in ("jsonl", "parquet")]
    names += ["build_report.json", "README.md"]
    present = {name: (out / name).is_file() for name in names}
    for name in names:
        report.count("files", present[name], name)
    if not all(present.values()):
        return report
    read = {split: _read_jsonl(out / f"{split}.jsonl", report) for split in SPLITS}
    rows_by_split = {split: rows for split, (rows, _) in read.items()}
    verify_rows(rows_by_split, report, where={split: places for split, (_, places) in read.items()})

    import pyarrow.parquet as pq

    from piilab.finance.spec import arrow_schema

    for split in SPLITS:
        try:
            table = pq.read_table(out / f"{split}.parquet")
            same = (table.schema.equals(arrow_schema())
                    and table.to_pylist() == rows_by_split[split])
        except Exception:  # pyarrow's errors for a corrupt file: ArrowInvalid, OSError, ...
            same = False
        report.count("parquet", same, f"{split}.parquet")

    from piilab.finance.card import render_card

    try:
        build_report = loads_json((out / "build_report.json").read_bytes(), "build_report.json")
    except InputError:
        build_report = None
    if not isinstance(build_report, dict):
        build_report = None
    total = sum(len(rows) for rows in rows_by_split.values())
    report.count("card", build_report is not None and build_report.get("rows") == total,
                 "build_report.json")
    try:
        stats = _count_stats(rows_by_split, finance_labels())
        card = render_card(stats, build_report)
        report.count("card", stats["pools_shared"] == 0, "README.md")
    except (KeyError, TypeError, ValueError, AttributeError):
        card = None
    try:
        written = (out / "README.md").read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        written = None
    report.count("card", card is not None and written == card, "README.md")
    _check_course_generator(build_report or {}, report)
    return report


def _check_course_generator(build_report: Mapping[str, Any], report: VerifyReport) -> None:
    """The build names the installed course generator version and its manifest hash."""
    from piilab.finance.build import course_manifest_sha256
    from piilab.generator import GENERATOR_VERSION

    seed = build_report.get("seed")
    report.count("course_generator",
                 build_report.get("course_generator_version") == GENERATOR_VERSION,
                 "build_report.json")
    report.count("course_generator", isinstance(seed, int) and not isinstance(seed, bool)
                 and build_report.get("course_manifest_sha256") == course_manifest_sha256(seed),
                 "build_report.json")
