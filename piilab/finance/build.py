"""Building the finance rows: three sources, BIOES over o200k, checked as they are made.

Chapter 09 teaches this module; its contract is section 10 of docs/contract.md. A build is
`build_rows(rows, seed)`; `write_build` stores it (`piilab finance build`).
In the order the chapter explains it:

1. **Three sources**, mixed in fixed shares per split (`COMPOSITION`, the
   card's proportions: about half perturbed Korean course rows, a quarter
   English replay, the rest synthesized, en share 26.5 %):

   * ``course-ko``: a Korean record of the course corpus
     (`piilab.generator.make_record`; record ``i`` of the course split, so
     the first ones are the default corpus and later ones its scaled
     continuation), **perturbed mention by mention**: every gold occurrence
     (`piilab.ner.gold_spans`) is re-labelled to the finance taxonomy by the
     mapping of ``label-taxonomy.yaml`` (`piilab.taxonomy.map_spans`:
     ACCOUNT -> ACCOUNT_NUMBER, CARD -> CARD_NUMBER, DOB -> DATE, REL -> O,
     the others by name) and replaced by a fresh value of its new label from
     the row's split pool; two mentions of one value get one new value, and a
     name written spaced (``김 가 상``) gets the new name spaced.
   * ``course-en``: an English course record **replayed**: re-labelled the
     same way, with one exception the taxonomy file documents (its ADDRESS is
     ``broader``: it includes the postal code), so an address's trailing ZIP
     code becomes its own ZIPCODE span (`_split_zip`); values kept, except a
     value whose MD5 pool is another split's: it is replaced by a fresh one
     (counted in the build report), so the pools stay disjoint.
   * ``domain``: a template family (`piilab.finance.templates`) rendered with
     fresh values.

2. **A row** (`make_row`): the spans become ``privacy_mask`` entries and the
   ``[LABEL_n]`` placeholders of ``masked_text``, numbered by the course's
   own rule (`piilab.masking.number_tokens`, the numbering step of
   `mask_text`: per label in source order; one spelling, one placeholder; a
   name the source already holds is skipped); the text is
   tokenized with o200k (`piilab.finance.tokens`) and the spans projected to
   BIOES tags (`piilab.bioes.spans_to_bioes`). A span whose boundary falls
   inside a token cannot be tagged: the row is **redrawn** (new values, or
   the next course record) and the redraw counted per cluster in the report.
   Every row is checked before it is kept: the tags decode back to exactly
   the spans (the round trip), and ``masked_text`` with its values put back
   (`piilab.masking.reassemble_text`) is ``source_text``.

3. **The split** (`build_rows`): the rows of each split are shuffled
   (seeded) and checked as a whole: the value pools of the splits are
   pairwise disjoint (the MD5 partition of `piilab.finance.values`), the en
   share is within 20-30 %, and every CVC has an invalid card number in its
   row. A failed check is a `BuildError`: nothing is written.

``uid`` is ``source/language/split/cluster/NNNNNN``: the cluster is the
template family (the course's ``template_id`` for course rows), so a family
split can be redone from the rows. Everything is seeded from SHA-256 of the
seed and the row's coordinates: the same seed and row count give the same
rows, whatever ``PYTHONHASHSEED`` is. The course rows depend on the course
generator too, so the report and the card record the course
``GENERATOR_VERSION`` and the SHA-256 of the course corpus manifest at the
build's seed (`course_manifest_sha256`); ``piilab finance verify`` checks both
against the installed generator.

What it deliberately does not do: read the upstream corpus the card names
(not available: docs/contract.md, section 10, says what stands in for it), or check its own
work a second time: `piilab.finance.verify` does that with separate code.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import os
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from piilab.bioes import bioes_classes, bioes_to_spans, check_alignment, spans_to_bioes
from piilab.errors import PiilabError
from piilab.finance import templates as TPL
from piilab.finance import tokens as TOK
from piilab.finance import values as V
from piilab.finance.card import render_card, row_stats
from piilab.finance.spec import (
    COLUMNS,
    COMPOSITION,
    DEFAULT_ROWS,
    DEFAULT_SEED,
    EN_SHARE_BAND,
    FINANCE_VERSION,
    SOURCES,
    SPLIT_SHARES,
    SPLITS,
    arrow_schema,
)
from piilab.generator import GENERATOR_VERSION
from piilab.masking import number_tokens, reassemble_text
from piilab.safe_values import seeded_random
from piilab.taxonomy import EXPERIMENT, FINANCE, finance_labels, map_spans
from piilab.templating import spaced as spaced_name

__all__ = [
    "COLUMNS",
    "COMPOSITION",
    "DEFAULT_ROWS",
    "DEFAULT_SEED",
    "EN_SHARE_BAND",
    "FINANCE_VERSION",
    "SOURCES",
    "SPLITS",
    "BuildError",
    "FinanceBuild",
    "build_rows",
    "course_manifest_sha256",
    "finance_classes",
    "write_build",
]

#: How often one row is redrawn before the build gives up (a template bug).
MAX_REDRAWS = 25

_TRAILING_ZIP = re.compile(r" ([0-9]{5})$")
_ERROR_BASE = PiilabError  # a failed check of the build's own rules


class BuildError(PiilabError, RuntimeError):
    """A build check failed (the message names rows, labels and counts, never a value)."""


class _Misaligned(PiilabError):  # control flow inside the builder, never raised out
    """A span boundary falls inside an o200k token: the row is redrawn."""


def finance_classes() -> tuple[str, ...]:
    """The 73 BIOES classes of the finance taxonomy (``O``, then B/I/E/S per label, card order)."""
    return bioes_classes(finance_labels())


# --------------------------------------------------------------------------------
# 2. One row
# --------------------------------------------------------------------------------


def make_row(text: str, spans: Sequence[tuple[int, int, str]], *, language: str, split: str,
             uid: str, source: str) -> dict[str, Any]:
    """One row in the card's 9 columns, round-trip checked; `_Misaligned` if o200k cuts a span."""
    spans = sorted(spans)
    for (_, end, _), (start, _, _) in itertools.pairwise(spans):
        if start < end:
            raise BuildError(f"row {uid}: two spans overlap")
    tokens, offsets = TOK.tokenize(text)
    if check_alignment(offsets, spans):
        raise _Misaligned
    tags = spans_to_bioes(offsets, spans)
    if [tuple(s) for s in bioes_to_spans(offsets, tags)] != [tuple(s) for s in spans]:
        raise BuildError(f"row {uid}: token_classes do not decode to the spans")
    masked = number_tokens(text, spans)
    row = {
        "source_text": text,
        "masked_text": masked.masked_text,
        "privacy_mask": [{"label": label, "start": start, "end": end, "value": text[start:end]}
                         for start, end, label in spans],
        "language": language,
        "split": split,
        "uid": uid,
        "source_dataset": source,
        "tokens": tokens,
        "token_classes": tags,
    }
    if reassemble_text(masked.masked_text, masked.mapping) != text:
        raise BuildError(f"row {uid}: masked_text does not reassemble to source_text")
    return row


# --------------------------------------------------------------------------------
# 1. The three sources: each returns (text, spans, cluster)
# --------------------------------------------------------------------------------


@functools.cache
def course_manifest_sha256(seed: int) -> str:
    """The SHA-256 of the course corpus manifest at `seed` (scale 1, as ``piilab generate
    --seed SEED`` writes it): the corpus whose records, and their continuation, a build
    with this seed replays."""
    from piilab.dataset import build_manifest, manifest_bytes, split_bytes
    from piilab.generator import SPLITS as COURSE_SPLITS
    from piilab.generator import generate_dataset

    records = generate_dataset(seed)
    blobs = {split: split_bytes(records[split]) for split in COURSE_SPLITS}
    return hashlib.sha256(manifest_bytes(build_manifest(seed, blobs, records))).hexdigest()


def _rng(seed: int, *parts: object) -> random.Random:
    return seeded_random("piilab-finance", FINANCE_VERSION, seed, *parts)


def _course_spans(record: Mapping[str, Any]) -> list[tuple[int, int, str]]:
    """The record's gold occurrences with finance labels, by the taxonomy file's mapping
    (`piilab.taxonomy.map_spans`); the unmapped ones (REL) are dropped: they become O."""
    from piilab.ner import gold_spans

    spans = [(span.start, span.end, span.label) for span in gold_spans(record)]
    mapped, _unmapped = map_spans(spans, EXPERIMENT, FINANCE)
    return mapped


def _split_zip(text: str, spans: Sequence[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The one documented exception to the taxonomy mapping: a course ADDRESS includes its
    postal code (relation ``broader`` in ``label-taxonomy.yaml``), which the finance
    taxonomy labels ZIPCODE on its own, so a trailing 5-digit ZIP becomes its own span."""
    out: list[tuple[int, int, str]] = []
    for start, end, label in spans:
        zip_code = _TRAILING_ZIP.search(text, start, end) if label == "ADDRESS" else None
        if zip_code is not None and zip_code.end() == end:
            out += [(start, zip_code.start(), "ADDRESS"), (zip_code.start(1), end, "ZIPCODE")]
        else:
            out.append((start, end, label))
    return out


def _rewrite(text: str, spans: Sequence[tuple[int, int, str]],
             new_text: Sequence[str]) -> tuple[str, list[tuple[int, int, str]]]:
    """Replace each span's text by ``new_text[i]``; return the text and the moved spans."""
    pieces: list[str] = []
    out: list[tuple[int, int, str]] = []
    cursor = length = 0
    for (start, end, label), replacement in zip(spans, new_text, strict=True):
        gap = text[cursor:start]
        pieces += [gap, replacement]
        length += len(gap)
        out.append((length, length + len(replacement), label))
        length += len(replacement)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), out


def _course_ko(record: Mapping[str, Any], rng: random.Random, split: str) -> tuple[str, list]:
    """Method A: every mention gets a fresh value of its finance label (same value, same new)."""
    text = record["source_text"]
    spans = _course_spans(record)
    new_of: dict[tuple[str, str], str] = {}
    taken: set[str] = set()
    replacements = []
    for start, end, label in spans:
        mention = text[start:end]
        key = (label, V.normalize_value(mention))
        if key not in new_of:
            new_of[key] = V.draw(label, rng, "ko", split, avoid=taken)
            taken.add(V.normalize_value(new_of[key]))
        new = new_of[key]
        spaced = label == "PERSON" and " " in mention and " " not in new
        replacements.append(spaced_name(new) if spaced else new)
    return _rewrite(text, spans, replacements)


def _course_en(record: Mapping[str, Any], rng: random.Random, split: str,
               counts: Counter) -> tuple[str, list]:
    """Replay: values kept (ZIP split off addresses); a value of another split's pool is redrawn."""
    text = record["source_text"]
    spans = _split_zip(text, _course_spans(record))
    new_of: dict[tuple[str, str], str] = {}
    taken = {V.normalize_value(text[s:e]) for s, e, _ in spans}
    replacements = []
    for start, end, label in spans:
        value = text[start:end]
        if V.pool_split(value) == split:
            replacements.append(value)
            continue
        key = (label, V.normalize_value(value))
        if key not in new_of:
            new_of[key] = V.draw(label, rng, "en", split, avoid=taken)
            taken.add(V.normalize_value(new_of[key]))
            counts["replay_values_redrawn"] += 1
        replacements.append(new_of[key])
    return _rewrite(text, spans, replacements)


# --------------------------------------------------------------------------------
# 3. The split and the whole build
# --------------------------------------------------------------------------------


def _largest_remainder(total: int, shares: Sequence[float]) -> list[int]:
    """Integer counts proportional to `shares` that add up to `total`."""
    exact = [total * share / sum(shares) for share in shares]
    counts = [int(x) for x in exact]
    order = sorted(range(len(shares)), key=lambda i: (counts[i] - exact[i], i))
    for i in order[:total - sum(counts)]:
        counts[i] += 1
    return counts


@dataclass(frozen=True)
class FinanceBuild:
    """The rows of a build by split, and its report (counts only, never a value)."""

    rows: Mapping[str, tuple[dict[str, Any], ...]]
    report: Mapping[str, Any] = field(default_factory=dict)


def _bucket_rows(source: str, language: str, split: str, n: int, seed: int,
                 counts: Counter, misaligned: Counter) -> list[dict[str, Any]]:
    """The `n` rows of one (source, language, split) bucket, in order."""
    from piilab.generator import make_record

    families = [f for f in TPL.families() if f.language == language]
    weights = [f.weight for f in families]
    rows: list[dict[str, Any]] = []
    cursor = 0  # the next course record of this bucket
    for k in range(n):
        rng = _rng(seed, source, language, split, k)
        for _ in range(MAX_REDRAWS):
            if source == "domain":
                family = rng.choices(families, weights=weights)[0]
                rendered = TPL.render(family, rng, split)
                text, spans, cluster = rendered.text, list(rendered.spans), family.id
            else:
                record = make_record(seed, split, language, cursor)
                cursor += 1
                text, spans = (_course_ko(record, rng, split) if source == "course-ko"
                               else _course_en(record, rng, split, counts))
                cluster = record["template_id"]
            uid = f"{source}/{language}/{split}/{cluster}/{k:06d}"
            try:
                rows.append(make_row(text, spans, language=language, split=split, uid=uid,
                                     source=source))
                break
            except _Misaligned:
                misaligned[cluster] += 1
        else:
            raise BuildError(f"{source}/{language}/{split} row {k}: still misaligned after "
                             f"{MAX_REDRAWS} draws")
    return rows


def _check_split_rows(rows_by_split: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
    """The whole-build checks of step 3 (`BuildError` on failure)."""
    pools: dict[str, set[str]] = {}
    for split, rows in rows_by_split.items():
        pools[split] = {V.normalize_value(e["value"]) for r in rows for e in r["privacy_mask"]}
        en = sum(r["language"] == "en" for r in rows)
        share = en / len(rows) if rows else 0.0
        if rows and not EN_SHARE_BAND[0] <= share <= EN_SHARE_BAND[1]:
            raise BuildError(f"split {split}: en share {share:.3f} is outside {EN_SHARE_BAND}")
        for row in rows:
            labels = [e["label"] for e in row["privacy_mask"]]
            if "CVC" in labels and "CARD_NUMBER" not in labels:
                raise BuildError(f"row {row['uid']}: a CVC without a card number")
    for a, b in itertools.combinations(sorted(pools), 2):
        shared = pools[a] & pools[b]
        if shared:
            raise BuildError(f"value pools of {a} and {b} share {len(shared)} values")


def build_rows(rows: int = DEFAULT_ROWS, seed: int = DEFAULT_SEED) -> FinanceBuild:
    """Build `rows` rows (train + validation) from `seed`; checked, not yet written."""
    if rows < 20:
        raise BuildError("a finance build needs at least 20 rows")
    counts: Counter = Counter()
    misaligned: Counter = Counter()
    by_split: dict[str, tuple[dict[str, Any], ...]] = {}
    split_sizes = _largest_remainder(rows, [share for _, share in SPLIT_SHARES])
    for (split, _), size in zip(SPLIT_SHARES, split_sizes, strict=True):
        bucket_sizes = _largest_remainder(size, [share for *_, share in COMPOSITION])
        split_rows: list[dict[str, Any]] = []
        for (source, language, _), n in zip(COMPOSITION, bucket_sizes, strict=True):
            split_rows += _bucket_rows(source, language, split, n, seed, counts, misaligned)
        _rng(seed, "order", split).shuffle(split_rows)
        by_split[split] = tuple(split_rows)
    _check_split_rows(by_split)
    report = {
        "finance_version": FINANCE_VERSION,
        "course_generator_version": GENERATOR_VERSION,
        "course_manifest_sha256": course_manifest_sha256(seed),
        "seed": seed,
        "rows": rows,
        "tokenizer": TOK.ENCODING_NAME,
        "redrawn_misaligned_rows": sum(misaligned.values()),
        "redrawn_misaligned_by_cluster": dict(sorted(misaligned.items())),
        "replay_values_redrawn": counts["replay_values_redrawn"],
    }
    return FinanceBuild(by_split, report)


# --------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------

#: The (PII-free) report of a build, written next to the rows.
REPORT_FILE = "build_report.json"
CARD_FILE = "README.md"


def jsonl_bytes(rows: Sequence[Mapping[str, Any]]) -> bytes:
    """One JSON object per line, columns in card order, UTF-8 (no ASCII escapes)."""
    return "".join(json.dumps({c: row[c] for c in COLUMNS}, ensure_ascii=False,
                              separators=(",", ":")) + "\n" for row in rows).encode("utf-8")


def parquet_bytes(rows: Sequence[Mapping[str, Any]]) -> bytes:
    """The rows as one Parquet file (deterministic: fixed schema, no timestamps)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist([{c: row[c] for c in COLUMNS} for row in rows],
                                 schema=arrow_schema())
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue().to_pybytes()


def output_names() -> list[str]:
    """The files a build writes, in the order they are renamed into place (card last)."""
    return [*(f"{split}.{ext}" for split in SPLITS for ext in ("jsonl", "parquet")),
            REPORT_FILE, CARD_FILE]


def write_build(out_dir: str | os.PathLike, build: FinanceBuild, *, force: bool = False) -> None:
    """Write the rows (JSONL and Parquet, mode 0600), the report and the card: all or none.

    Existing files are refused unless `force` (`piilab.files.check_outputs`).
    """
    from piilab.files import PRIVATE_MODE, check_outputs, write_all

    out = Path(out_dir)
    out.mkdir(mode=0o700, parents=True, exist_ok=True)
    check_outputs([out / name for name in output_names()], force=force)
    files: list[tuple[Path, bytes, int | None]] = []
    for split in SPLITS:
        rows = build.rows[split]
        files.append((out / f"{split}.jsonl", jsonl_bytes(rows), PRIVATE_MODE))
        files.append((out / f"{split}.parquet", parquet_bytes(rows), PRIVATE_MODE))
    report = dict(build.report)
    files.append((out / REPORT_FILE,
                  (json.dumps(report, indent=2, sort_keys=True) + "\n").encode(), None))
    card = render_card(row_stats(build.rows), report)
    files.append((out / CARD_FILE, card.encode("utf-8"), None))
    write_all(files)
