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


def test_extract_ja_text_hands_textlint_every_page_message(tmp_path):
    """Issue 27: the labels the chapters print (`piilab.course.lang.say`) and the words of the
    chapter 01 pipeline and diagram are data that textlint reads, one message per paragraph."""
    tool = load_tool("extract_ja_text")
    assert tool.main([str(tmp_path)]) == 0
    catalog = json.loads(tool.PAGE_MESSAGES.read_text(encoding="utf-8"))
    groups: dict[str, int] = {}
    for key in catalog:
        groups[key.split(".")[0]] = groups.get(key.split(".")[0], 0) + 1
    files = {p.name: p for p in tmp_path.glob("page_*.txt")}
    assert set(files) == {f"page_{group}.txt" for group in groups}
    for group, count in groups.items():
        paragraphs = files[f"page_{group}.txt"].read_text(encoding="utf-8").rstrip("\n")
        assert len(paragraphs.split("\n\n")) == count, group
    assert "対応表(トークン → 値)" in files["page_ch01.txt"].read_text(encoding="utf-8")


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
    # Chapters 00-09 print their labels through `say` (issue 27), so those labels are page
    # messages and the chapters' code cells hold no Japanese string of their own.
    labels = (tmp_path / "page_ch07.txt").read_text(encoding="utf-8").split("\n\n")
    assert "過剰マスキング" in labels and "テストの F1" in labels
    assert not list(tmp_path.glob("code_0[0-9]_*.txt"))
    assert tool.code_strings('```{code-cell} ipython3\nx = f"{n} 件"\n```\n') == ["{n} 件"]


# ---------------------------------------------------------------- the glossary as a glossary


def test_every_term_has_a_definition_and_its_chapter_of_first_use():
    """Issue 27: a definition per term, the chapter that first uses it (computed from the
    chapters), and, in each chapter, the line that lists the terms it introduces."""
    tool = _tool()
    text = GLOSSARY.read_text(encoding="utf-8")
    terms = [e for e in tool.glossary_entries(text) if e["definition"]]
    assert len(terms) >= 60
    for core in ("トークン", "LoRA", "ホールドアウト", "プロンプト", "パディング", "ベースライン",
                 "ハルシネーション", "漏洩率", "エンティティ", "ファインチューニング", "適合率",
                 "再現率", "BIOES", "オラクル", "チャットテンプレート", "生成器", "マスキング処理",
                 "データカード", "人手で作成した", "過剰マスキング率"):
        assert any(e["term"] == core for e in terms), core
    assert sum(bool(e["first_use"]) for e in terms) >= len(terms) - 1
    assert tool.consistency_problems(text) == []


def test_the_consistency_check_notices_a_wrong_first_use():
    tool = _tool()
    text = GLOSSARY.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| ホールドアウト |"))
    first = tool.glossary_entries(text)
    cell = next(e for e in first if e["term"] == "ホールドアウト")["first_use"]
    broken = text.replace(row, row.replace(cell, "[09](09_finance_dataset.md)"))
    assert any("ホールドアウト" in p for p in tool.consistency_problems(broken))


def test_hand_written_is_never_rendered_as_handwriting():
    """手書き means pen handwriting; the holdout is typed text written by a person."""
    rules = yaml.safe_load(_tool().PRH.read_text(encoding="utf-8"))["rules"]
    assert any(r["expected"] == "人手で作成した" and "/手書き/" in r["patterns"] for r in rules)
    for path in [*CHAPTERS, *(REPO / "book" / "quizzes" / "ja").glob("*.json")]:
        assert "手書き" not in path.read_text(encoding="utf-8"), path.name
