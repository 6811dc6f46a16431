"""The labels the chapters print, as data (`piilab/course/messages/<lang>.json`, issue 27).

A chapter's code cell is the same in both tracks, so a printed label comes from
`piilab.course.lang.say(key, ...)`, which reads the page's language. Both catalogs have the same
keys and each key the same format fields; every key a chapter or a course module names exists;
every key is used somewhere; and the chapter 01 pipeline and diagram take their words from the
catalogs, and so do the figure modules (`plots.py`, `plots_splits.py`), so no Japanese is left
in those Python modules.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from string import Formatter

import pytest

from piilab.course import ch01, diagram, plots, plots_splits
from piilab.course.lang import LANGUAGES, page_messages, say

REPO = Path(__file__).resolve().parent.parent
CATALOGS = REPO / "piilab" / "course" / "messages"
SAY_CALL = re.compile(r"""\bsay\(\s*(f?)["']([^"']+)["']""")
#: ``say("a" if condition else "b")``: the key after ``else`` is printed too.
SAY_ELSE = re.compile(r"""\bsay\(\s*["'][^"']+["']\s+if\s[^()]*?\selse\s+["']([^"']+)["']""")
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def _catalog(lang: str) -> dict[str, str]:
    return json.loads((CATALOGS / f"{lang}.json").read_text(encoding="utf-8"))


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in Formatter().parse(template) if name is not None}


def _chapter_keys() -> dict[str, set[str]]:
    """Keys of the `say("...")` calls in the English chapters (the Japanese cells are the same),
    with the chapters that use them; an f-string key is kept as a regex."""
    found: dict[str, set[str]] = {}
    for path in sorted((REPO / "book" / "en").glob("[0-9][0-9]_*.md")):
        text = path.read_text(encoding="utf-8")
        for key in SAY_ELSE.findall(text):
            found.setdefault(key, set()).add(path.stem)
        for f, key in SAY_CALL.findall(text):
            pattern = re.sub(r"\\\{[^}]*\\\}", "[a-z0-9_]+", re.escape(key)) if f else key
            found.setdefault(pattern, set()).add(path.stem)
    return found


def test_both_catalogs_have_the_same_keys_and_fields():
    en, ja = _catalog("en"), _catalog("ja")
    assert list(en) == list(ja)
    for key in en:
        assert _fields(en[key]) == _fields(ja[key]), key


def test_every_key_a_chapter_prints_exists_and_every_key_is_used():
    keys = set(_catalog("en"))
    used: set[str] = set()
    for pattern, chapters in _chapter_keys().items():
        matching = {key for key in keys if re.fullmatch(pattern, key)}
        assert matching, f"{sorted(chapters)}: say({pattern!r}) has no message"
        used |= matching
    modules = [REPO / "piilab" / "course" / name for name in ("ch01.py", "diagram.py")]
    for module in modules:
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                used |= {key for key in keys if key == node.value}
    used |= {f"ch01.stage_{stage.id.replace('-', '_')}" for stage in ch01.PIPELINE}
    used |= {f"ch01.{kind}_{a.id}" for a in ch01.ARTIFACTS for kind in ("artifact", "why")}
    used |= {f"ch01.diagram_{word}" for word in diagram._DIAGRAM_WORDS}
    used |= {f"plots.{name}" for name in plots.TEXT_NAMES}
    used |= {f"plots.split_{name.replace('/', '_')}" for name in plots_splits.TEXT_NAMES}
    used |= {f"plots.split_title_{key}" for key in plots_splits.TITLES}
    assert sorted(keys - used) == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_say_formats_in_each_language_and_names_a_missing_key(lang):
    assert say("ch07.test_documents", lang=lang, count=16, languages="ko 8", pairs=40)
    with pytest.raises(KeyError, match=r"no page message 'ch99\.nothing' in .*" + lang):
        say("ch99.nothing", lang=lang)
    with pytest.raises(ValueError):
        page_messages("ko")


def test_chapter_01_words_come_from_the_catalogs():
    for module in ("ch01.py", "diagram.py"):
        source = (REPO / "piilab" / "course" / module).read_text(encoding="utf-8")
        assert not JAPANESE.search(source), f"{module} holds Japanese text"
    ja = _catalog("ja")
    assert ch01.PIPELINE[0].title == {"en": "generate", "ja": ja["ch01.stage_generate"]}
    mapping = next(a for a in ch01.ARTIFACTS if a.id == "mapping")
    assert mapping.why["ja"] == ja["ch01.why_mapping"] and mapping.sensitive
    svg = diagram.pipeline_diagram("ja").svg
    assert ja["ch01.diagram_legend_raw"] in svg and ja["ch01.stage_restore"] in svg
    assert _catalog("en")["ch01.diagram_legend_raw"] in diagram.pipeline_diagram("en").svg


@pytest.mark.parametrize("module", ["plots.py", "plots_splits.py"])
def test_figure_words_come_from_the_catalogs(module):
    source = (REPO / "piilab" / "course" / module).read_text(encoding="utf-8")
    assert not JAPANESE.search(source), f"{module} holds Japanese text"


def test_figure_text_is_the_catalog_text():
    for lang in LANGUAGES:
        catalog = _catalog(lang)
        assert plots.TEXT[lang]["leak_docs"] == catalog["plots.leak_docs"]
        assert plots_splits.TEXT[lang]["ko/positive"] == catalog["plots.split_ko_positive"]
        assert plots_splits.TITLES["seed"][lang] == catalog["plots.split_title_seed"]
    assert JAPANESE.search(plots.TEXT["ja"]["per_type_title"])
    assert JAPANESE.search(plots_splits.TEXT["ja"]["records_title"])
