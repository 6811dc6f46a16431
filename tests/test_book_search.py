"""The book's search splitter (book/_ext/piilab_search.py) and per-track figure numbers
(book/_ext/piilab_nav.py), without building the book. tests/test_browser.py searches the
built book in Chromium."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("sphinx", reason="needs the book extra: pip install -e '.[book]'")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "book" / "_ext"))

from piilab_nav import number_figures_per_track
from piilab_search import SearchCourse, split


def test_a_query_is_split_into_terms_the_index_holds():
    text = "過剰マスキング率は 0.71 です。김가상 님의 주민등록번호; the model leaks"
    index = set(split(text))
    for query in ("過剰マスキング", "マスキング率", "김가상", "주민등록번호", "率"):
        terms = split(query, query=True)
        assert terms and set(terms) <= index, (query, terms)
    assert split("김가상 님", query=True) == ["김가", "가상", "님"]
    assert "leaks" in index  # English words stay whole; stemming comes after splitting


def test_english_is_stemmed_and_cjk_is_not():
    language = SearchCourse({})
    assert language.stem("Leaks") == language.stem("leak") == "leak"
    assert language.stem("マス") == "マス"
    assert not language.word_filter("the") and language.word_filter("ます")


def test_figures_are_numbered_from_one_in_each_track():
    numbers = {
        "book/en/01_a": {"figure": {"x": (1,)}},
        "book/en/02_b": {"figure": {"y": (2,), "z": (3,)}},
        "book/ja/01_a": {"figure": {"x": (4,)}},
        "book/ja/02_b": {"figure": {"y": (5,), "z": (6,)}, "table": {"t": (1,)}},
    }
    assert number_figures_per_track(numbers) == ["book/ja/01_a", "book/ja/02_b"]
    assert numbers["book/ja/01_a"]["figure"] == {"x": (1,)}
    assert numbers["book/ja/02_b"]["figure"] == {"y": (2,), "z": (3,)}
    assert numbers["book/en/02_b"]["figure"] == {"y": (2,), "z": (3,)}
