"""Plots render every glyph they show, in English, Japanese and Korean."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

import matplotlib

matplotlib.use("Agg")

from piilab.course.plots import (
    TEXT,
    MissingFontError,
    cjk_font_path,
    plot_label_counts,
    plot_leaks,
    plot_per_type,
    setup_cjk_fonts,
)
from piilab.evaluation import evaluate, oracle_predictions


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


def test_the_cjk_font_comes_from_the_installed_package_not_the_system():
    """A machine with system CJK fonts must not hide a missing font package again."""
    import importlib.util

    from matplotlib import font_manager

    family = setup_cjk_fonts()
    assert family.startswith("Noto Sans CJK")
    package_dir = Path(importlib.util.find_spec("noto_cjk_sans_otc").origin).parent
    resolved = Path(font_manager.findfont(font_manager.FontProperties(family=family),
                                          fallback_to_default=False))
    assert resolved.resolve() == (package_dir / "NotoSansCJK-Regular.ttc").resolve()
    assert matplotlib.rcParams["font.family"][-1] == family


def test_the_packaged_font_covers_hangul_kana_and_kanji():
    from matplotlib.ft2font import FT2Font

    charmap = FT2Font(str(cjk_font_path())).get_charmap()
    texts = ("김가상 연락처 홍길동", "ひらがな カタカナ", "漏洩率 適合率 再現率 個人情報 学習 分割")
    for text in texts:
        missing = [c for c in text if not c.isspace() and ord(c) not in charmap]
        assert not missing, missing


def test_a_missing_font_package_names_a_command_that_exists(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(MissingFontError, match="pip install noto-cjk-sans-otc"):
        cjk_font_path()


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


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def _legend_covers_a_bar(ax) -> bool:
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    return any(_overlaps(legend, bar.get_window_extent(renderer)) for bar in ax.patches
               if bar.get_height() > 0)


def test_leak_plot_shows_a_zero_rate_and_its_legend_covers_no_bar(corpus, result):
    """The oracle leaks nothing: its bars have height 0, so the plot must say 0.00 in words."""
    import matplotlib.pyplot as plt

    from piilab.baseline import baseline_output
    from piilab.evaluation import make_prediction

    recs = corpus["validation"]
    baseline = evaluate(recs, [make_prediction(r["id"], baseline_output(r["source_text"]),
                                               r["source_text"]) for r in recs])
    assert baseline.documents.leak_rate > 0
    ax = plot_leaks({"oracle": result, "rules": baseline}, "en")
    labels = [text.get_text() for text in ax.texts]
    assert labels.count("0.00") >= 2, labels  # the oracle's two bars
    assert f"{baseline.documents.leak_rate:.2f}" in labels
    assert not _legend_covers_a_bar(ax)
    plt.close(ax.figure)


def test_per_type_legend_covers_no_bar(result):
    import matplotlib.pyplot as plt

    ax = plot_per_type(result, "ja")
    assert not _legend_covers_a_bar(ax)
    plt.close(ax.figure)
