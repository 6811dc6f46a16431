"""Split names on the figures (`piilab.course.plots_splits.split_name`): a Japanese figure shows
the dataset's splits in Japanese, from the catalog, and leaves other names alone (issue 38, E2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from piilab.course.lang import LanguageError
from piilab.course.plots_splits import SPLIT_NAMES, split_name

CATALOGS = Path(__file__).resolve().parent.parent / "piilab" / "course" / "messages"
BOOK_EXTRA = "needs the book extra: pip install -e '.[book]'"


def _catalog(lang: str) -> dict[str, str]:
    return json.loads((CATALOGS / f"{lang}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_split_names_come_from_the_catalog(lang):
    catalog = _catalog(lang)
    for split in SPLIT_NAMES:
        assert split_name(split, lang) == catalog[f"plots.split_{split}"]


def test_japanese_split_names_are_not_the_english_ids():
    assert all(split_name(split, "ja") != split for split in SPLIT_NAMES)
    assert [split_name(split, "en") for split in SPLIT_NAMES] == list(SPLIT_NAMES)


def test_other_names_pass_through_and_a_bad_language_is_refused():
    assert split_name("holdout", "ja") == "holdout"
    with pytest.raises(LanguageError):
        split_name("train", "ko")


def test_label_count_legend_and_composition_ticks_are_in_the_page_language():
    pytest.importorskip("matplotlib", reason=BOOK_EXTRA)
    pytest.importorskip("noto_cjk_sans_otc", reason=BOOK_EXTRA)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from piilab.course.plots import plot_label_counts
    from piilab.course.plots_splits import plot_split_composition
    from piilab.labels import LABELS

    stats = {split: {"labels": dict.fromkeys(LABELS, 1)} for split in SPLIT_NAMES}
    ax = plot_label_counts(stats, lang="ja")
    legend = [text.get_text() for text in ax.get_legend().get_texts()]
    assert legend == [split_name(split, "ja") for split in SPLIT_NAMES]
    plt.close(ax.figure)

    record = {"language": "ko", "entities": [], "template_id": "a"}
    fig = plot_split_composition({split: [record] for split in SPLIT_NAMES}, lang="ja")
    for ax in fig.axes:
        ticks = [tick.get_text() for tick in ax.get_xticklabels()]
        assert ticks == [split_name(split, "ja") for split in SPLIT_NAMES]
    plt.close(fig)
