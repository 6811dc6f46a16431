"""Sphinx extension: one search index that finds English, Japanese and Korean words.

Sphinx builds one search index per book, with one language's word splitter. The course has
three languages in it: English prose, Japanese prose, and Korean in examples, code and outputs
(`김가상`, `주민등록번호`). Sphinx's Japanese splitter (TinySegmenter) cuts the index into words
that the browser's query splitter never produces (a query `過剰マスキング` stays one word, the
index holds `過剰` and `マスキング`), and it splits Hangul into fragments, so such queries found
nothing. Here the index and the query are split by the same rule, written once below and sent
to the browser as JavaScript:

- a run of CJK characters (kanji, kana, Hangul) is indexed as its characters and its
  overlapping pairs of characters (`過剰マスキング` -> `過剰`, `剰マ`, `マス`, ...); a query is
  split into the same pairs (one character alone stays a character), and every pair must occur
  in a page, so a query finds the pages that contain it, in any language;
- other words are English words: lower-cased, English stop words left out, and stemmed with
  Sphinx's Porter stemmer (`leaks` finds `leak`), the same in Python and in the browser.

The search page can keep to one track: a Japanese page's search box asks for Japanese results
first, an English page's for English ones (book/_static/piilab.js adds the filter).

Set `html_search_language: piilab` in `_config.yml`.
"""

from __future__ import annotations

import re
from typing import Any

import snowballstemmer
from sphinx.search import SearchLanguage
from sphinx.search.en import english_stopwords, js_porter_stemmer

#: Code point ranges of the characters indexed by pairs: CJK punctuation-free letters (kana,
#: the prolonged sound mark, CJK ideographs and their extensions, Hangul syllables and jamo,
#: half-width katakana).
CJK_RANGES = (
    (0x1100, 0x11FF),   # Hangul jamo
    (0x3041, 0x309F),   # hiragana
    (0x30A0, 0x30FF),   # katakana (with ー)
    (0x3130, 0x318F),   # Hangul compatibility jamo
    (0x31F0, 0x31FF),   # katakana phonetic extensions
    (0x3400, 0x4DBF),   # CJK extension A
    (0x4E00, 0x9FFF),   # CJK unified ideographs
    (0xA960, 0xA97F),   # Hangul jamo extended A
    (0xAC00, 0xD7AF),   # Hangul syllables
    (0xD7B0, 0xD7FF),   # Hangul jamo extended B
    (0xF900, 0xFAFF),   # CJK compatibility ideographs
    (0xFF66, 0xFF9F),   # half-width katakana
)


def _class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"\\u{low:04x}-\\u{high:04x}" for low, high in ranges)


_CJK = _class(CJK_RANGES)
#: A word (as Sphinx's default splitter finds words), then its CJK and other runs.
_WORD = re.compile(r"\w+")
_RUN = re.compile(f"[{_CJK}]+|[^{_CJK}]+")
_IS_CJK = re.compile(f"[{_CJK}]")


def cjk_terms(run: str, *, query: bool) -> list[str]:
    """The terms of a CJK run: in the index its characters and pairs, in a query its pairs
    (or the character, when it is alone)."""
    pairs = [run[i:i + 2] for i in range(len(run) - 1)]
    if query:
        return pairs or [run]
    return [*run, *pairs]


def split(text: str, *, query: bool = False) -> list[str]:
    terms: list[str] = []
    for word in _WORD.findall(text):
        for run in _RUN.findall(word):
            terms.extend(cjk_terms(run, query=query) if _IS_CJK.match(run) else [run])
    return terms


#: The browser side of `split(query=True)` and of the stemmer: it replaces the query splitter
#: of Sphinx's searchtools.js (which keeps `splitQuery` when one is defined) and its `Stemmer`.
JS_CODE = (
    js_porter_stemmer.replace("var Stemmer = function", "var PorterStemmer = function", 1)
    + """
/* piilab (book/_ext/piilab_search.py): English words stemmed, CJK pairs as they are. */
var PIILAB_CJK = /[@CJK@]/u;
var Stemmer = function () {
  var porter = new PorterStemmer();
  this.stemWord = function (word) {
    return PIILAB_CJK.test(word) ? word : porter.stemWord(word);
  };
};
var splitQuery = function (query) {
  var terms = [];
  var words = query.split(/[^\\p{Letter}\\p{Number}_\\p{Emoji_Presentation}]+/gu);
  for (var word of words) {
    if (!word) continue;
    for (var run of word.match(/[@CJK@]+|[^@CJK@]+/gu)) {
      if (!PIILAB_CJK.test(run)) { terms.push(run); continue; }
      var chars = Array.from(run);
      if (chars.length === 1) { terms.push(run); continue; }
      for (var i = 0; i + 1 < chars.length; i++) terms.push(chars[i] + chars[i + 1]);
    }
  }
  return terms;
};
""".replace("@CJK@", _CJK)
)


class SearchCourse(SearchLanguage):
    """English stemming and stop words, CJK runs by characters and pairs (see the module)."""

    lang = "piilab"
    language_name = "English, Japanese and Korean"
    js_stemmer_code = JS_CODE
    stopwords = english_stopwords

    def init(self, options: dict[str, str]) -> None:
        self.stemmer = snowballstemmer.stemmer("porter")

    def split(self, input: str) -> list[str]:
        return split(input)

    def word_filter(self, word: str) -> bool:
        return bool(word) and (bool(_IS_CJK.match(word)) or word not in self.stopwords)

    def stem(self, word: str) -> str:
        return word if _IS_CJK.match(word) else self.stemmer.stemWord(word.lower())


def setup(app: Any) -> dict[str, Any]:
    app.add_search_language(SearchCourse)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
