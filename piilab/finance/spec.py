"""What a finance build is made of: version, columns, splits, shares, composition, en band.

Chapter 09 teaches the builder (`piilab.finance.build`) and its card
(`piilab.finance.card`); both read these constants from here, at the top of
the module, so neither needs the other to know them (`piilab.finance.verify`
keeps its own copies on purpose: it checks the build with separate code).

>>> sum(share for _, share in SPLIT_SHARES), sum(share for *_, share in COMPOSITION)
(1.0, 1.0)
"""

from __future__ import annotations

__all__ = [
    "COLUMNS",
    "COMPOSITION",
    "DEFAULT_ROWS",
    "DEFAULT_SEED",
    "EN_SHARE_BAND",
    "FINANCE_VERSION",
    "SOURCES",
    "SPLITS",
    "SPLIT_SHARES",
    "arrow_schema",
]

FINANCE_VERSION = "1.0.0"
DEFAULT_SEED = 42
#: Rows of a default build (train + validation); ``--rows 71788`` is the card's scale.
DEFAULT_ROWS = 10000
SPLITS: tuple[str, ...] = ("train", "validation")
#: The share of rows in each split (train first; the value pools' MD5 partition is another
#: matter: `piilab.finance.values.DEFAULT_SPLIT_SHARES`).
SPLIT_SHARES: tuple[tuple[str, float], ...] = (("train", 0.8), ("validation", 0.2))
SOURCES: tuple[str, ...] = ("course-ko", "domain", "course-en")
#: ``(source_dataset, language, share of a split's rows)``: the card's proportions.
COMPOSITION: tuple[tuple[str, str, float], ...] = (
    ("course-ko", "ko", 0.50),
    ("domain", "ko", 0.235),
    ("domain", "en", 0.045),
    ("course-en", "en", 0.22),
)
#: The en share every split must hold (inclusive).
EN_SHARE_BAND: tuple[float, float] = (0.20, 0.30)
#: The card's 9 columns, in order.
COLUMNS: tuple[str, ...] = (
    "source_text", "masked_text", "privacy_mask", "language", "split", "uid",
    "source_dataset", "tokens", "token_classes",
)


def arrow_schema():
    """The Arrow schema of the card's 9 columns (`piilab.ner.export.arrow_schema` without
    ``token_offsets``, which are derived from ``tokens`` here). Needs pyarrow."""
    from piilab.ner.export import arrow_schema as export_schema

    return export_schema(token_offsets=False)
