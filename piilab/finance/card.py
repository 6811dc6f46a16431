"""The dataset card (``README.md`` of a build), generated from the rows.

Chapter 09 teaches this module. A card whose numbers are typed by hand
drifts from its data; here every number on the card comes from `row_stats`,
computed from the rows, and the build report (counts of redraws). The prose
is a data file, ``card_template.md``; `render_card` fills in the tables.
`piilab.finance.verify` recomputes the statistics with its own code and
renders the card again: the two must be byte-identical.

What it deliberately does not do: judge the numbers (the builder and
`verify` check the rules), or print any value: the card holds counts only.
"""

from __future__ import annotations

import itertools
import string
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from piilab.finance.spec import EN_SHARE_BAND
from piilab.finance.templates import families
from piilab.finance.values import normalize_value
from piilab.taxonomy import finance_labels

__all__ = ["INVALIDATION", "render_card", "row_stats"]

CARD_TEMPLATE = "card_template.md"

#: The labels invalid by construction, the mechanism, and the `verify` check that proves it.
INVALIDATION: tuple[tuple[str, str, str], ...] = (
    ("RRN", "pre-2020.10 scheme, check digit + 5", "fails the RRN and the FRN check digit"),
    ("FRN", "pre-2020.10 foreign scheme, check digit + 5", "fails the FRN and the RRN check digit"),
    ("CARD_NUMBER", "13+ digits, Luhn check digit + 5", "13+ digits and fails Luhn"),
    ("EMAIL", "RFC 2606 reserved domains", "domain is example.com/net/org"),
    ("PHONE", "unassigned prefix (ko: 0/1 after the area code; en: 555-01XX)",
     "ko: group after the prefix starts with 0/1; en: 555-01XX"),
    ("DRIVER_LICENSE", "unassigned region code", "ko: not 11-26 or 28; en: not a US code"),
    ("PASSPORT", "unissued prefix letter", "first letter is Q, X or Z"),
    ("CVC", "only next to an invalid card number", "its row holds a card number failing Luhn"),
)


def row_stats(rows_by_split: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """The statistics the card shows, computed from the rows (plain ints, label order)."""
    hard_negative = {f.id: f.hard_negative for f in families()}
    splits = list(rows_by_split)
    pools: dict[str, set[str]] = {}
    stats: dict[str, Any] = {
        "splits": {}, "labels": {label: dict.fromkeys(splits, 0) for label in finance_labels()},
        "sources": {}, "hard_negatives": {}, "pools": {},
    }
    for split, rows in rows_by_split.items():
        ko = sum(r["language"] == "ko" for r in rows)
        stats["splits"][split] = {"rows": len(rows), "ko": ko, "en": len(rows) - ko}
        pool: set[str] = set()
        for row in rows:
            source = row["source_dataset"]
            stats["sources"].setdefault(source, dict.fromkeys(splits, 0))[split] += 1
            cluster = row["uid"].split("/")[3]
            kind = hard_negative.get(cluster) if source == "domain" else None
            if kind:
                stats["hard_negatives"].setdefault(kind, dict.fromkeys(splits, 0))[split] += 1
            for entry in row["privacy_mask"]:
                stats["labels"][entry["label"]][split] += 1
                pool.add(normalize_value(entry["value"]))
        stats["pools"][split] = len(pool)
        pools[split] = pool
    stats["pools_shared"] = sum(len(pools[a] & pools[b])
                                for a, b in itertools.combinations(splits, 2))
    stats["families"] = len(families())
    return stats


def _table(header: Sequence[str], body: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(f"{c:,}" if isinstance(c, int) else str(c) for c in row) + " |"
              for row in body]
    return "\n".join(lines)


def render_card(stats: Mapping[str, Any], report: Mapping[str, Any]) -> str:
    """The card's Markdown text from `row_stats` and the build report."""
    splits = list(stats["splits"])
    total = {k: sum(stats["splits"][s][k] for s in splits) for k in ("rows", "ko", "en")}
    language_rows = []
    for split in splits:
        s = stats["splits"][split]
        language_rows.append([split, s["rows"], s["ko"], s["en"],
                              f"{100 * s['en'] / max(s['rows'], 1):.1f}%"])
    language_rows.append(["total", total["rows"], total["ko"], total["en"],
                          f"{100 * total['en'] / max(total['rows'], 1):.1f}%"])
    source_rows = [[source, *(c[s] for s in splits), sum(c.values())]
                   for source, c in sorted(stats["sources"].items())]
    label_rows = [[label, *(c[s] for s in splits), sum(c.values())]
                  for label, c in stats["labels"].items()]
    hard_rows = [[kind, *(c[s] for s in splits), sum(c.values())]
                 for kind, c in sorted(stats["hard_negatives"].items())]
    invalidation_rows = "\n".join(
        f"| {label} | {mechanism} | {sum(stats['labels'][label].values()):,} | {check} |"
        for label, mechanism, check in INVALIDATION)
    template = string.Template(resources.files("piilab.finance").joinpath(CARD_TEMPLATE)
                               .read_text(encoding="utf-8"))
    return template.substitute(
        version=report["finance_version"], seed=report["seed"], rows=f"{total['rows']:,}",
        tokenizer=report["tokenizer"],
        course_generator=report["course_generator_version"],
        course_manifest=report["course_manifest_sha256"],
        language_table=_table(["split", "rows", "ko", "en", "en share"], language_rows),
        en_band=f"{EN_SHARE_BAND[0]:.0%}-{EN_SHARE_BAND[1]:.0%} in each split",
        source_table=_table(["source_dataset", *splits, "total"], source_rows),
        annotations=f"{sum(sum(c.values()) for c in stats['labels'].values()):,}",
        label_table=_table(["label", *splits, "total"], label_rows),
        hard_negative_table=_table(["hard negative", *splits, "total"], hard_rows),
        invalidation_rows=invalidation_rows,
        misaligned=f"{report['redrawn_misaligned_rows']:,}",
        replay_redrawn=f"{report['replay_values_redrawn']:,}",
        pool_sizes=", ".join(f"{split} {stats['pools'][split]:,}" for split in splits),
        pool_shared=f"{stats['pools_shared']:,}",
        families=stats["families"],
    )
