"""Plots render every glyph they show, in English, Japanese and Korean."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("matplotlib")

import matplotlib

matplotlib.use("Agg")

from piilab.evaluation import evaluate, oracle_predictions
from piilab.plots import (
    TEXT,
    plot_label_counts,
    plot_leaks,
    plot_per_type,
    setup_cjk_fonts,
)


@pytest.fixture(scope="module")
def result(corpus):
    recs = corpus["validation"]
    return evaluate(recs, oracle_predictions(recs))


def _render(ax, tmp_path, name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s)" is a UserWarning
        ax.figure.savefig(tmp_path / name, dpi=60)
    import matplotlib.pyplot as plt

    plt.close(ax.figure)
    assert (tmp_path / name).stat().st_size > 1000


def test_a_cjk_font_is_found():
    assert setup_cjk_fonts()


def test_both_languages_have_the_same_text_keys():
    assert set(TEXT["en"]) == set(TEXT["ja"])


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_per_type_and_leak_plots_render_without_missing_glyphs(result, lang, tmp_path):
    _render(plot_per_type(result, lang), tmp_path, f"per_type_{lang}.png")
    _render(plot_leaks({"oracle": result, "한국어 기준선": result}, lang), tmp_path, "leaks.png")


def test_label_count_plot_renders(corpus, tmp_path):
    from piilab.dataset import dataset_stats

    _render(plot_label_counts(dataset_stats(corpus), "ja"), tmp_path, "counts.png")


def test_unknown_language_is_rejected(result):
    with pytest.raises(ValueError):
        plot_per_type(result, "fr")
