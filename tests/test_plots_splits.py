"""Split composition (`piilab.course.plots_splits`): the counts are right, and the figure
renders every glyph it shows in English and Japanese."""

from __future__ import annotations

import warnings

import pytest

from piilab.course.plots_splits import (
    STRATA,
    TEXT,
    TITLES,
    plot_split_composition,
    split_composition,
)
from piilab.splits import family_split

BOOK_EXTRA = "needs the book extra: pip install -e '.[book]'"


def rec(family, language="ko", entities=(), **extra):
    return {"id": f"{family}-{language}-{len(entities)}", "language": language,
            "entities": list(entities), "template_id": family, **extra}


def test_composition_counts_strata_augmented_copies_and_families():
    pii = [{"type": "PERSON", "value": "김가상"}]
    splits = {
        "train": [rec("a", "ko", pii), rec("a", "ko"), rec("b", "en", pii),
                  rec("a", "ko", pii, augmented_from="x")],
        "test": [rec("b", "en"), rec("c", "en", pii)],
    }
    c = split_composition(splits)
    assert c["train"]["records"] == 4
    assert c["train"]["strata"] == {"ko/positive": 1, "ko/negative": 1, "en/positive": 1,
                                    "en/negative": 0}
    assert c["train"]["augmented"] == 1
    assert (c["train"]["families_only_here"], c["train"]["families_shared"]) == (1, 1)
    assert (c["test"]["families_only_here"], c["test"]["families_shared"]) == (1, 1)
    assert list(c) == ["train", "test"]


def test_default_corpus_shares_every_family_and_a_family_split_none(corpus, all_records):
    seed = split_composition(corpus)
    assert all(s["families_only_here"] == 0 and s["families_shared"] == 43 for s in seed.values())
    assert sum(sum(s["strata"].values()) for s in seed.values()) == len(all_records)
    family = split_composition(family_split(all_records))
    assert all(s["families_shared"] == 0 for s in family.values())
    assert sum(s["families_only_here"] for s in family.values()) == 43


def test_both_languages_have_the_same_text_keys():
    assert set(TEXT["en"]) == set(TEXT["ja"])
    assert set(STRATA) <= set(TEXT["en"])
    assert all(set(titles) == {"en", "ja"} for titles in TITLES.values())


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("title", ["seed", "family", None])
def test_composition_plot_renders_without_missing_glyphs(corpus, lang, title, tmp_path):
    pytest.importorskip("matplotlib", reason=BOOK_EXTRA)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    splits = {name: records[:300] for name, records in corpus.items()}
    splits["train"] = splits["train"] + [dict(r, augmented_from=r["id"]) for r in
                                         splits["train"][:50] if r["entities"]]
    fig = plot_split_composition(splits, lang, title=title)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s)" is a UserWarning
        fig.savefig(tmp_path / "composition.png", dpi=60)
    texts = [t.get_text() for ax in fig.axes for t in [*ax.texts, ax.title]]
    texts += [t.get_text() for ax in fig.axes for t in ax.get_legend().get_texts()]
    assert TEXT[lang]["records_title"] in texts and TEXT[lang]["augmented"] in texts
    if title:
        assert fig._suptitle.get_text() == TITLES[title][lang]
    plt.close(fig)
    assert (tmp_path / "composition.png").stat().st_size > 1000


def test_unknown_language_is_refused(corpus):
    pytest.importorskip("matplotlib", reason=BOOK_EXTRA)
    with pytest.raises(ValueError, match="lang"):
        plot_split_composition(corpus, "fr")
