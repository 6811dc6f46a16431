"""The course map is current: every chapter of the book is on every overview page.

The overviews are typed prose, so they drift when a chapter is added (chapter 10 was missing
from all of them once). For each language:

- chapter 00's table of paths has one row per chapter of `_toc.yml`, in order, each with a time;
  the total the page states ("about N hours") is the sum of those times, rounded;
- the workshop page's table of routes covers every chapter exactly once;
- the landing page and the README name the last chapter in their self-paced and route lines.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LANGS = ("en", "ja")
#: How each language writes a duration in chapter 00's table, and the stated total.
DURATION = {
    "en": (r"^(?:(\d+(?:\.\d+)?) h|(\d+) min)$", r"about (\d+) hours by the table above"),
    "ja": (r"^(?:(\d+(?:\.\d+)?) 時間|(\d+) 分)$", r"講座全体で約 (\d+) 時間"),
}
RANGE = re.compile(r"^(\d\d)(?:\s*(?:-|〜)\s*(\d\d))?$")


def toc_chapters(lang: str) -> list[str]:
    """The chapter numbers of one part of `_toc.yml`, in order (sections excluded)."""
    toc = (REPO / "_toc.yml").read_text(encoding="utf-8")
    return re.findall(rf"^      - file: book/{lang}/(\d\d)_\w+$", toc, re.M)


def table_rows(text: str, first_header: str) -> list[list[str]]:
    """The body rows of the first Markdown table whose header starts with `first_header`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def covered(cell: str) -> list[str]:
    """The chapter numbers a route cell such as `08-10`, `08〜10` or `09` covers."""
    match = RANGE.match(cell)
    assert match, f"not a chapter range: {cell!r}"
    first, last = int(match[1]), int(match[2] or match[1])
    return [f"{n:02d}" for n in range(first, last + 1)]


def hours(cell: str, lang: str) -> float:
    match = re.match(DURATION[lang][0], cell)
    assert match, f"{lang}: not a duration: {cell!r}"
    return float(match[1]) if match[1] else int(match[2]) / 60


def test_the_helpers_read_ranges_and_durations():
    assert covered("08-10") == ["08", "09", "10"] and covered("00〜05")[-1] == "05"
    assert covered("09") == ["09"]
    assert hours("1.5 h", "en") == 1.5 and hours("45 min", "en") == 0.75
    assert hours("2.5 時間", "ja") == 2.5 and hours("30 分", "ja") == 0.5
    with pytest.raises(AssertionError):
        covered("06, 07")


@pytest.mark.parametrize("lang", LANGS)
def test_the_welcome_table_lists_every_chapter_with_a_time(lang):
    text = (REPO / "book" / lang / "00_welcome.md").read_text(encoding="utf-8")
    rows = table_rows(text, "#")
    assert [row[0] for row in rows] == toc_chapters(lang)
    total = sum(hours(row[3], lang) for row in rows)
    stated = re.search(DURATION[lang][1], text)
    assert stated, f"{lang}/00_welcome: the total time is not stated"
    assert int(stated[1]) == round(total), (
        f"{lang}/00_welcome: the page says about {stated[1]} hours, its table adds up to "
        f"{total:.2f}")


@pytest.mark.parametrize("lang", LANGS)
def test_the_workshop_routes_cover_every_chapter_once(lang):
    text = (REPO / "book" / lang / "workshop.md").read_text(encoding="utf-8")
    header = {"en": "chapters", "ja": "章"}[lang]
    chapters = [n for row in table_rows(text, header) for n in covered(row[0])]
    assert chapters == toc_chapters(lang)


def test_the_landing_page_and_the_readme_reach_the_last_chapter():
    last = toc_chapters("en")[-1]
    index = (REPO / "book" / "index.md").read_text(encoding="utf-8")
    assert f"chapters 00-{last}" in index and f"00〜{last} 章" in index
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    routes = table_rows(readme, "chapters")
    assert [n for row in routes for n in covered(row[0])] == toc_chapters("en")


def test_the_english_glossary_mirrors_the_japanese_one():
    from _tools import load_tool

    tool = load_tool("glossary_prh")
    japanese = (REPO / "book" / "ja" / "glossary.md").read_text(encoding="utf-8")
    expected = {(e["english"], e["term"]) for e in tool.glossary_entries(japanese)
                if e["definition"]}
    english = (REPO / "book" / "en" / "glossary.md").read_text(encoding="utf-8")
    rows = table_rows(english, "term")
    assert {(row[0], row[1]) for row in rows} == expected
    assert all(row[2] for row in rows), "every English term has a meaning"
    assert [row[0].lower() for row in rows] == sorted(row[0].lower() for row in rows)
    toc = (REPO / "_toc.yml").read_text(encoding="utf-8")
    assert "file: book/en/glossary" in toc and "file: book/ja/glossary" in toc
