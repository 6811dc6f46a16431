"""The Japanese edition's vocabulary (issue 19).

The glossary page exists and is in the table of contents, every Japanese chapter links it, the
textlint prh dictionary is generated from it and covers its terms, and the forms it rules out are
gone from the chapters' prose. `tools/extract_ja_text.py` hands textlint every Japanese checker
message (the catalog `piilab/course/exercises/messages/ja.json`). No npm is needed here;
`make textlint` runs textlint itself.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _tools import load_tool

yaml = pytest.importorskip("yaml")

REPO = Path(__file__).resolve().parent.parent
GLOSSARY = REPO / "book" / "ja" / "glossary.md"
CHAPTERS = sorted(p for p in (REPO / "book" / "ja").glob("*.md") if re.match(r"^\d\d_", p.name))


def _tool():
    return load_tool("glossary_prh")


def test_glossary_exists_and_is_in_the_japanese_part_of_the_toc():
    assert GLOSSARY.exists()
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    japanese = next(part for part in toc["parts"] if part["caption"] == "日本語")
    entries = [e for c in japanese["chapters"] for e in [c, *c.get("sections", [])]]
    files = [entry["file"] for entry in entries]
    assert "book/ja/glossary" in files


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_every_japanese_chapter_links_the_glossary_near_the_top(chapter):
    top = chapter.read_text(encoding="utf-8").split("\n## ", 1)[0]
    prose = re.sub(r"```.*?```", "", top, flags=re.S)  # not in a code cell
    assert "](glossary.md)" in prose


def test_glossary_lists_the_terms_the_review_asked_for():
    text = GLOSSARY.read_text(encoding="utf-8")
    rows = {term: english for term, english, _, _ in _tool().glossary_rows(text)}
    english = " ".join(rows.values())
    for concept in ("leak (", "leakage", "span", "type", "relationship word", "variant",
                    "run directory", "decode", "annotation", "tokenizer"):
        assert concept in english, concept
    assert {"漏洩", "リーケージ", "トークナイザー", "分かる"} <= set(rows)


def test_prh_dictionary_is_generated_from_the_glossary_and_covers_every_term():
    tool = _tool()
    rows = tool.glossary_rows(GLOSSARY.read_text(encoding="utf-8"))
    prh = yaml.safe_load(tool.PRH.read_text(encoding="utf-8"))
    rules = {rule["expected"]: rule.get("patterns", []) for rule in prh["rules"]}
    for term, _english, _code, avoided in rows:
        assert term in rules, term
        for form in avoided:
            bare = [p.replace("\\", "") for p in rules[term]]
            assert any(form in p for p in bare), (term, form)
    assert tool.main(["--check"]) == 0, "run python tools/glossary_prh.py"


def test_avoided_forms_are_gone_from_the_japanese_prose():
    tool = _tool()
    rows = tool.glossary_rows(GLOSSARY.read_text(encoding="utf-8"))
    for chapter in CHAPTERS:
        prose = re.sub(r"```.*?```", "", chapter.read_text(encoding="utf-8"), flags=re.S)
        for term, _english, _code, avoided in rows:
            for form in avoided:
                regex = tool.pattern(term, form).strip("/")
                assert not re.search(regex, prose), f"{chapter.name}: {form} (use {term})"


# ---------------------------------------------------------------------------- checker messages


def test_extract_ja_text_hands_textlint_every_checker_message(tmp_path):
    tool = load_tool("extract_ja_text")
    assert tool.main([str(tmp_path)]) == 0
    # The Makefile lints .textlint/tmp/*.md and .textlint/tmp/*.txt: nothing else is written.
    assert {p.suffix for p in tmp_path.iterdir()} == {".md", ".txt"}
    catalog = json.loads(tool.CHECKER_MESSAGES.read_text(encoding="utf-8"))
    groups: dict[str, list[str]] = {}
    for key in catalog:
        groups.setdefault(key.split(".")[0], []).append(key)
    files = {p.name: p for p in tmp_path.glob("checker_*.txt")}
    assert set(files) == {f"checker_{group}.txt" for group in groups}
    for group, keys in groups.items():
        paragraphs = files[f"checker_{group}.txt"].read_text(encoding="utf-8").rstrip("\n")
        assert len(paragraphs.split("\n\n")) == len(keys), group  # one message per paragraph
    common = files["checker_common.txt"].read_text(encoding="utf-8")
    assert "{what}のリストを渡してください(渡されたのは {type} です)" in common


def test_extract_ja_text_keeps_format_fields_by_name():
    tool = load_tool("extract_ja_text")
    text = tool.template_text("{{{name}}} が {count} 回、{item!r} は {share:.1%} です")
    assert text == "{{name}} が {count} 回、{item} は {share} です"


def test_checker_messages_ask_instead_of_expecting():
    """Issue 19: 「…を期待していますが、X が渡されました」 is a calque of "expected …, got X"."""
    text = (REPO / "piilab" / "course" / "exercises" / "messages" / "ja.json").read_text("utf-8")
    assert "期待していますが" not in text and "で期待して" not in text


def test_extract_ja_text_hands_textlint_the_japanese_strings_of_code_cells(tmp_path):
    tool = load_tool("extract_ja_text")
    assert tool.main([str(tmp_path)]) == 0
    labels = (tmp_path / "code_07_inference.txt").read_text(encoding="utf-8").split("\n\n")
    assert "過剰マスキング" in labels and "テストの F1" in labels
    assert not (tmp_path / "code_03_tokenization.txt").exists()  # no Japanese in its code
    assert tool.code_strings('```{code-cell} ipython3\nx = f"{n} 件"\n```\n') == ["{n} 件"]
