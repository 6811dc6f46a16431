"""What each split is made of, counted and drawn (chapter 05, "Data augmentation workshop").

`split_composition(splits)` counts, per split, the records of each balance class
(`piilab.splits.stratum`: language x with/without PII), the augmented copies (records with
``augmented_from``), and the template families that occur only in that split or also in
another one. `plot_split_composition(splits, lang)` draws those counts as two stacked bar
charts, so a record-level split (every family in every split) and a family split (no family
shared) can be told apart at a glance. Every text on the figure comes from `TEXT[lang]`
(English or Japanese: the messages ``plots.split_*`` of ``piilab/course/messages``); CJK
glyphs are set up by `piilab.course.plots.setup_cjk_fonts`.

`split_composition` is plain Python; only `plot_split_composition` needs matplotlib (the
``book`` extra), imported when it is called. Nothing here reads a source text or a value.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from piilab.course.lang import LANGUAGES, LanguageError, say
from piilab.course.plots import SPLIT_NAMES, split_name  # one implementation, re-exported
from piilab.splits import stratum

__all__ = ["SPLIT_NAMES", "STRATA", "TEXT", "TITLES", "plot_split_composition", "split_composition",
           "split_name"]

#: The balance classes in the order they are stacked (bottom to top).
STRATA: tuple[str, ...] = ("ko/positive", "ko/negative", "en/positive", "en/negative")

#: The words on the figure, by name; each is the message ``plots.split_<name>`` of
#: ``piilab/course/messages/<lang>.json`` (the data textlint reads), "/" written "_".
TEXT_NAMES: tuple[str, ...] = (
    "records_title", "records", "families_title", "families", *STRATA, "augmented",
    "only_here", "shared", "split",
)

TEXT: dict[str, dict[str, str]] = {
    lang: {name: say(f"plots.split_{name.replace('/', '_')}", lang=lang) for name in TEXT_NAMES}
    for lang in LANGUAGES
}

#: Figure titles a chapter can ask for by key (`plot_split_composition(..., title="seed")`),
#: the messages ``plots.split_title_<key>``.
TITLES: dict[str, dict[str, str]] = {
    key: {lang: say(f"plots.split_title_{key}", lang=lang) for lang in LANGUAGES}
    for key in ("seed", "family")
}


def split_composition(splits: Mapping[str, Sequence[Mapping]]) -> dict[str, dict[str, Any]]:
    """Per split: ``strata`` (original records per `STRATA` class), ``augmented`` (records
    with ``augmented_from``), ``records``, ``families_only_here`` and ``families_shared``.

    A family is *shared* when its ``template_id`` occurs in at least one other split.

    >>> rec = lambda fam, lang: {"language": lang, "entities": [], "template_id": fam}
    >>> c = split_composition({"a": [rec("x", "ko"), rec("y", "en")], "b": [rec("x", "ko")]})
    >>> c["a"]["families_only_here"], c["a"]["families_shared"], c["a"]["strata"]["en/negative"]
    (1, 1, 1)
    """
    families = {name: {r["template_id"] for r in records} for name, records in splits.items()}
    out = {}
    for name, records in splits.items():
        others = set().union(*(f for other, f in families.items() if other != name))
        originals = [r for r in records if "augmented_from" not in r]
        counts = Counter(stratum(r) for r in originals)
        out[name] = {
            "records": len(records),
            "strata": {s: counts.get(s, 0) for s in STRATA},
            "augmented": len(records) - len(originals),
            "families_only_here": len(families[name] - others),
            "families_shared": len(families[name] & others),
        }
    return out


def plot_split_composition(splits: Mapping[str, Sequence[Mapping]], lang: str = "en", *,
                           title: str | None = None):
    """Two stacked bar charts of `split_composition(splits)`; returns the figure.

    Left: records per split, by language and with/without PII, augmented copies on top.
    Right: template families per split, those found only there and those shared with another
    split. `title` is a key of `TITLES` (shown in `lang`), any other text, or None.
    """
    import matplotlib.pyplot as plt

    from piilab.course.plots import setup_cjk_fonts

    setup_cjk_fonts()
    if lang not in TEXT:
        raise LanguageError(f"lang must be one of {sorted(TEXT)}")
    t = TEXT[lang]
    composition = split_composition(splits)
    names = list(composition)
    xs = range(len(names))
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    colours = {"ko/positive": "#1f5f99", "ko/negative": "#8fb8de", "en/positive": "#b8561b",
               "en/negative": "#f2b48a", "augmented": "#9e9e9e"}

    bottom = [0] * len(names)
    for key in (*STRATA, "augmented"):
        values = [composition[n]["strata"][key] if key in STRATA else composition[n][key]
                  for n in names]
        if not any(values):
            continue  # no empty legend entries (e.g. no augmented copies yet)
        left.bar(xs, values, 0.6, bottom=bottom, label=t[key], color=colours[key],
                 hatch="//" if key == "augmented" else None, edgecolor="white")
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    shown = [split_name(n, lang) for n in names]
    left.set_xticks(list(xs), shown)
    left.set_xlabel(t["split"])
    left.set_ylabel(t["records"])
    left.set_title(t["records_title"])
    left.legend(fontsize="small", loc="upper right")

    only = [composition[n]["families_only_here"] for n in names]
    shared = [composition[n]["families_shared"] for n in names]
    right.bar(xs, only, 0.6, label=t["only_here"], color="#2e7d32")
    right.bar(xs, shared, 0.6, bottom=only, label=t["shared"], color="#c62828")
    right.set_xticks(list(xs), shown)
    right.set_xlabel(t["split"])
    right.set_ylabel(t["families"])
    right.set_title(t["families_title"])
    right.set_ylim(0, max(o + s for o, s in zip(only, shared, strict=True)) * 1.25 + 1)
    right.legend(fontsize="small", loc="upper right")

    if title is not None:
        fig.suptitle(TITLES[title][lang] if title in TITLES else title)
    fig.tight_layout()
    return fig
