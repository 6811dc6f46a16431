"""Generate the textlint prh dictionary `.textlint/prh.yml` from `book/ja/glossary.md`.

Every row of the glossary's tables becomes one prh rule. The columns are found by their header:
the term (用語, or 日本語 in the orthography table), English, コード上の名前 and 使わない表記;
the term table also has 意味 (a definition) and 初出 (the chapter of first use, a link). In the
rule, `expected` is the term and `patterns` are the forms in 使わない表記 (separated by " / ").
A form that is a prefix of the term (トークナイザ → トークナイザー) gets a look-ahead so that
the term itself does not match.

`first_use(term)` is the first Japanese chapter whose prose (code, inline code and links'
targets left out) uses the term; the glossary's 初出 column must say it, and each chapter's
line 「この章で初めて出てくる用語」 lists exactly the terms it introduces (`chapter_terms`).
`python tools/glossary_prh.py --check` fails when the committed dictionary is out of date, or
when a 初出 entry or a chapter's term line disagrees with the chapters; `--fix` rewrites both
from the chapters (then writes the dictionary).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GLOSSARY = REPO / "book" / "ja" / "glossary.md"
PRH = REPO / ".textlint" / "prh.yml"
# Allowed uses of an avoided form: a look-behind the pattern must not follow.
EXCEPTIONS = {"コース": "(?<!日)", "ラウンドトリップ": "(?<!\\()"}


TERM_HEADERS = ("用語", "日本語")
CHAPTERS = REPO / "book" / "ja"
TERM_LINE = "この章で初めて出てくる用語"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def glossary_entries(text: str) -> list[dict[str, str | list[str]]]:
    """Every row of every table whose header names a term column, as a dict: term, english,
    code, avoided (a list), definition and first_use ("" where the table has no such column)."""
    entries, header = [], None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = _cells(line)
        if header is None:
            header = cells if cells[0] in TERM_HEADERS else []
            continue
        if not header or set(cells[0]) <= set("-:"):
            continue
        row = dict(zip(header, cells, strict=True))
        entries.append({
            "term": row[header[0]], "english": row["English"], "code": row["コード上の名前"],
            "avoided": [f.strip() for f in row["使わない表記"].split(" / ") if f.strip()],
            "definition": row.get("意味", ""), "first_use": row.get("初出", ""),
        })
    return entries


def glossary_rows(text: str) -> list[tuple[str, str, str, list[str]]]:
    """(term, English, code names, avoided forms) for every row, in page order."""
    return [(e["term"], e["english"], e["code"], e["avoided"]) for e in glossary_entries(text)]


def _fence_comments(match: re.Match) -> str:
    """The comments of a shell or text fence (`# ...`), which a reader reads as prose."""
    return "\n".join(line.split("# ", 1)[1] for line in match[0].splitlines() if "# " in line)


def chapter_prose(text: str) -> str:
    """A chapter's prose: no front matter, code cells, inline code, link targets or the
    chapter's own term line; of the other fences (shell commands), only their comments."""
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
    text = re.sub(r"```\{code-cell\}.*?```", "", text, flags=re.S)
    text = re.sub(r"```.*?```", _fence_comments, text, flags=re.S)
    text = "\n".join(line for line in text.splitlines() if TERM_LINE not in line)
    text = re.sub(r"`[^`]*`", "", text)
    return re.sub(r"\]\([^)]*\)", "]", text)


def chapter_files() -> list[Path]:
    return sorted(p for p in CHAPTERS.glob("*.md") if re.match(r"^\d\d_", p.name))


def search_form(term: str) -> str:
    """What is searched for: the term without a parenthesized gloss (通称(別名) -> 通称)."""
    return re.sub(r"\(.*\)$", "", term)


def first_use(term: str, chapters: dict[str, str] | None = None) -> str | None:
    """The stem of the first chapter (in number order) whose prose uses `term`, or None."""
    if chapters is None:
        chapters = {p.stem: chapter_prose(p.read_text(encoding="utf-8")) for p in chapter_files()}
    form = search_form(term)
    return next((stem for stem, prose in sorted(chapters.items()) if form in prose), None)


def first_use_cell(stem: str | None) -> str:
    return "" if stem is None else f"[{stem[:2]}]({stem}.md)"


def chapter_terms(entries, chapters: dict[str, str]) -> dict[str, list[str]]:
    """For each chapter stem, the terms (with a definition) it uses first, in glossary order."""
    found: dict[str, list[str]] = {stem: [] for stem in chapters}
    for entry in entries:
        if entry["definition"]:
            stem = first_use(entry["term"], chapters)
            if stem:
                found[stem].append(entry["term"])
    return found


def term_line(terms: list[str]) -> str:
    return f"· {TERM_LINE}([用語集](glossary.md)で定義): " + "、".join(terms) + "。"


def consistency_problems(text: str) -> list[str]:
    """Where the glossary's 初出 column or a chapter's term line disagrees with the chapters."""
    entries = glossary_entries(text)
    files = {p.stem: p.read_text(encoding="utf-8") for p in chapter_files()}
    chapters = {stem: chapter_prose(body) for stem, body in files.items()}
    problems = []
    for entry in entries:
        if not entry["definition"]:
            continue
        expected = first_use_cell(first_use(entry["term"], chapters))
        if entry["first_use"] != expected:
            problems.append(f"glossary: {entry['term']}: 初出 should be {expected or 'empty'}")
    for stem, terms in chapter_terms(entries, chapters).items():
        lines = [line for line in files[stem].splitlines() if TERM_LINE in line]
        wanted = [term_line(terms)] if terms else []
        if lines != wanted:
            problems.append(f"book/ja/{stem}.md: the term line should be {wanted}")
    return problems


def js_escape(text: str) -> str:
    """Escape for a JavaScript regular expression with the u flag (no escaped spaces)."""
    return re.sub(r"([.*+?^${}()|[\]\\/])", r"\\\1", text)


def pattern(term: str, form: str) -> str:
    regex = EXCEPTIONS.get(form, "") + js_escape(form)
    if term.startswith(form):
        regex += f"(?!{js_escape(term[len(form):])})"
    return f"/{regex}/"


def render(rows) -> str:
    out = ["# Generated by tools/glossary_prh.py from book/ja/glossary.md: do not edit by hand.",
           "version: 1", "rules:"]
    for term, english, _code, avoided in rows:
        out.append(f"  - expected: {json.dumps(term, ensure_ascii=False)}")
        out.append(f"    # {english}")
        if avoided:
            out.append("    patterns:")
            out.extend(f"      - {json.dumps(pattern(term, form), ensure_ascii=False)}"
                       for form in avoided)
        else:
            out.append(f"    patterns: [{json.dumps(term, ensure_ascii=False)}]")
    return "\n".join(out) + "\n"


def fix(text: str) -> str:
    """Rewrite the 初出 cells of `text` and every chapter's term line from the chapters; return
    the new glossary text (the chapters are written in place)."""
    files = {p.stem: p for p in chapter_files()}
    bodies = {stem: p.read_text(encoding="utf-8") for stem, p in files.items()}
    chapters = {stem: chapter_prose(body) for stem, body in bodies.items()}
    lines, header = [], None
    for line in text.splitlines():
        if line.startswith("|") and header is None:
            header = _cells(line)
        elif not line.startswith("|"):
            header = None
        elif header and "初出" in header and not set(_cells(line)[0]) <= set("-:"):
            cells = _cells(line)
            cells[header.index("初出")] = first_use_cell(first_use(cells[0], chapters))
            line = "| " + " | ".join(cells) + " |"
        lines.append(line)
    text = "\n".join(lines) + "\n"
    for stem, terms in chapter_terms(glossary_entries(text), chapters).items():
        kept = [line for line in bodies[stem].split("\n") if TERM_LINE not in line]
        if terms:
            at = next(i for i, line in enumerate(kept)
                      if line.startswith("·") and "](glossary.md)" in line)
            kept.insert(at + 1, term_line(terms))
        files[stem].write_text("\n".join(kept), encoding="utf-8")
    return text


def main(argv: list[str]) -> int:
    if "--fix" in argv:
        GLOSSARY.write_text(fix(GLOSSARY.read_text(encoding="utf-8")), encoding="utf-8")
    text = render(glossary_rows(GLOSSARY.read_text(encoding="utf-8")))
    if "--check" in argv:
        if not PRH.exists() or PRH.read_text(encoding="utf-8") != text:
            print(f"{PRH.relative_to(REPO)} is out of date: run python tools/glossary_prh.py")
            return 1
        problems = consistency_problems(GLOSSARY.read_text(encoding="utf-8"))
        for problem in problems:
            print(problem)
        return 1 if problems else 0
    PRH.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
