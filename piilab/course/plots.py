"""Plots of evaluation results and corpus distributions, in English and Japanese.

Chapter 04 draws per-type precision/recall/F1 bars and leak-rate bars with
`plot_per_type` and `plot_leaks`; chapter 02 draws the corpus with
`plot_label_counts`. Every text on a figure comes from `TEXT[lang]`, so the same
code cell renders in both tracks of the book; the words themselves are the
messages ``plots.*`` of ``piilab/course/messages/<lang>.json``.

CJK glyphs: `setup_cjk_fonts()` registers Noto Sans CJK (Regular), shipped inside
the ``noto-cjk-sans-otc`` wheel (SIL Open Font License 1.1; part of the ``book``
and ``colab`` extras, so ``make book`` and every Colab install cell bring it), and
puts it behind matplotlib's default font as a per-glyph fallback. One font
covers Hangul, kana and the Japanese kanji (NanumGothic, the other packaged
candidate, lacks Japanese forms such as the kanji U+5B66, and IPAexGothic lacks Hangul). The font is
found in the installed package, never among the system fonts, so every machine
(Linux, macOS, Windows, Colab) draws the same glyphs. Without the package it
raises `MissingFontError`, whose message names the install command.

Needs matplotlib (the ``book`` extra); the library core never imports this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from piilab.course.lang import LANGUAGES, LanguageError, say
from piilab.errors import PiilabError
from piilab.evaluation import EvaluationResult
from piilab.labels import LABELS

#: The names of the dataset's splits as a figure shows them (``plots.split_train`` ...).
SPLIT_NAMES: tuple[str, ...] = ("train", "validation", "test")


def split_name(split: str, lang: str = "en") -> str:
    """A split's name in `lang` for a figure: ``train``, ``validation`` and ``test`` in the
    page's language; any other name (``wide-mix``, ``holdout``...) unchanged.

    >>> split_name("validation", "ja") == say("plots.split_validation", lang="ja")
    True
    >>> split_name("holdout", "ja")
    'holdout'
    """
    if lang not in LANGUAGES:
        raise LanguageError(f"lang must be one of {sorted(LANGUAGES)}")
    return say(f"plots.split_{split}", lang=lang) if split in SPLIT_NAMES else split


#: The package that ships the font, and the font file inside it (SIL Open Font License).
FONT_PACKAGE = "noto_cjk_sans_otc"
FONT_FILE = "NotoSansCJK-Regular.ttc"

#: The words on the figures, by name; each is the message ``plots.<name>`` of
#: ``piilab/course/messages/<lang>.json`` (the data textlint reads).
TEXT_NAMES: tuple[str, ...] = (
    "per_type_title", "precision", "recall", "f1", "leak_title", "leak_docs",
    "leak_entities", "rate", "label_counts_title", "count", "label",
)

TEXT: dict[str, dict[str, str]] = {
    lang: {name: say(f"plots.{name}", lang=lang) for name in TEXT_NAMES} for lang in LANGUAGES
}


class MissingFontError(PiilabError, RuntimeError):
    """The packaged CJK font is not installed."""


def cjk_font_path() -> Path:
    """The Noto Sans CJK file inside the installed ``noto-cjk-sans-otc`` package
    (located without importing the package)."""
    import importlib.util

    spec = importlib.util.find_spec(FONT_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        path = Path(location) / FONT_FILE
        if path.is_file():
            return path
    raise MissingFontError(
        "the CJK font for the plots is missing: install it with "
        "`pip install noto-cjk-sans-otc` (or `pip install 'piilab[colab]'`)")


def setup_cjk_fonts() -> str:
    """Make matplotlib render Japanese and Korean; return the CJK family used."""
    import matplotlib as mpl
    from matplotlib import font_manager

    path = str(cjk_font_path())
    manager = font_manager.fontManager
    if not any(f.fname == path for f in manager.ttflist):
        manager.addfont(path)
    family = font_manager.FontProperties(fname=path).get_name()
    # A system copy of the same family (Debian's fonts-noto-cjk) must not be picked instead:
    # every machine draws with the packaged file.
    others = [f for f in manager.ttflist if f.name == family and f.fname != path]
    if others:
        manager.ttflist = [f for f in manager.ttflist if f not in others]
        manager._findfont_cached.cache_clear()
    # A list of families makes matplotlib fall back glyph by glyph (matplotlib >= 3.6).
    mpl.rcParams["font.family"] = ["DejaVu Sans", family]
    mpl.rcParams["axes.unicode_minus"] = False
    return family


def _text(lang: str) -> Mapping[str, str]:
    if lang not in TEXT:
        raise LanguageError(f"lang must be one of {sorted(TEXT)}")
    return TEXT[lang]


def plot_per_type(result: EvaluationResult, lang: str = "en", ax=None, title: str | None = None):
    """Grouped bars of precision, recall and F1 per label from an `evaluate` result."""
    import matplotlib.pyplot as plt

    setup_cjk_fonts()
    t = _text(lang)
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3.6))
    width = 0.27
    xs = range(len(LABELS))
    for k, metric in enumerate(("precision", "recall", "f1")):
        values = [getattr(result.per_type[label], metric) for label in LABELS]
        ax.bar([x + (k - 1) * width for x in xs], values, width, label=t[metric])
    ax.set_xticks(list(xs), LABELS, rotation=30)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(t["rate"])
    ax.set_title(title or t["per_type_title"])
    # Outside the axes, on the right, so that it never covers a bar.
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    ax.figure.tight_layout()
    return ax


def plot_leaks(results: Mapping[str, EvaluationResult], lang: str = "en", ax=None):
    """Bars of document and entity leak rates, one group per named result."""
    import matplotlib.pyplot as plt

    setup_cjk_fonts()
    t = _text(lang)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.2))
    names = list(results)
    width = 0.38
    docs = [results[n].documents.leak_rate for n in names]
    ents = [results[n].entities.leak_rate for n in names]
    for offset, values, label in ((-width / 2, docs, t["leak_docs"]),
                                  (width / 2, ents, t["leak_entities"])):
        bars = ax.bar([i + offset for i in range(len(names))], values, width, label=label)
        # Every bar gets its value, so a rate of 0 (the oracle's) is visible, not a missing bar.
        ax.bar_label(bars, fmt="%.2f", padding=2, fontsize="small")
    ax.axhline(0, color="0.3", linewidth=0.8)
    ax.set_xticks(range(len(names)), names)
    ax.set_ylim(0, 1.12)  # room for the value labels above a rate of 1
    ax.set_ylabel(t["rate"])
    ax.set_title(t["leak_title"])
    # Below the axes, so that it never covers a bar or a label.
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, fontsize="small",
              frameon=False)
    ax.figure.tight_layout()
    return ax


def plot_label_counts(stats: Mapping[str, Mapping[str, Any]], lang: str = "en", ax=None,
                      splits: Sequence[str] | None = None):
    """Entities per label for each split, from `piilab.dataset.dataset_stats`."""
    import matplotlib.pyplot as plt

    setup_cjk_fonts()
    t = _text(lang)
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3.4))
    splits = list(splits or stats)
    width = 0.8 / len(splits)
    for k, split in enumerate(splits):
        values = [stats[split]["labels"][label] for label in LABELS]
        ax.bar([i + (k - (len(splits) - 1) / 2) * width for i in range(len(LABELS))], values,
               width, label=split_name(split, lang))
    ax.set_xticks(range(len(LABELS)), LABELS, rotation=30)
    ax.set_xlabel(t["label"])
    ax.set_ylabel(t["count"])
    ax.set_title(t["label_counts_title"])
    ax.legend(fontsize="small")
    ax.figure.tight_layout()
    return ax
