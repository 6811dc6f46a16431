"""Write the Japanese strings of the quizzes and the exercise checkers to files for textlint.

textlint reads Markdown and plain text, not JSON or Python. This writes one file per source file
into OUT (default `.textlint/tmp`), one string per paragraph:

- `book/quizzes/ja/*.json` -> `quiz_<stem>.md`: questions and feedback as text, answer options
  (plain-form phrases) as list items, HTML tags removed;
- `piilab/course/exercises/messages/ja.json` (the checkers' Japanese message catalog) ->
  `checker_<chapter>.txt`, one file per key prefix (`common`, `ch00`, ...): every message in
  catalog order, format fields kept as `{name}` (conversions and format specs dropped) and
  `{{`/`}}` written as the braces they stand for;
- `piilab/course/messages/ja.json` (the labels the chapters print through
  `piilab.course.lang.say`, and the words of the chapter 01 pipeline and its diagram) ->
  `page_<chapter>.txt`, grouped and written the same way;
- `book/ja/NN_*.md` -> `code_<stem>.txt`: the Japanese string literals of the chapter's code
  cells (plot labels, table headers), which textlint skips inside Markdown code blocks;
- `notebooks/colab/*_ja.ipynb` (the Japanese Colab notebook) -> `colab_<stem>.md`: its Markdown
  cells, in order, as one Markdown file (code cells are skipped, as in the chapters).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from string import Formatter

REPO = Path(__file__).resolve().parent.parent
CHECKER_MESSAGES = REPO / "piilab" / "course" / "exercises" / "messages" / "ja.json"
PAGE_MESSAGES = REPO / "piilab" / "course" / "messages" / "ja.json"
COLAB_NOTEBOOKS = REPO / "notebooks" / "colab"
TAG = re.compile(r"<[^>]+>")
QUIZ_KEYS = ("question", "answer", "feedback", "answers")


def quiz_strings(data) -> list[str]:
    if isinstance(data, str):
        return [data]
    if isinstance(data, list):
        return [s for item in data for s in quiz_strings(item)]
    if isinstance(data, dict) and isinstance(data.get("answer"), str):
        return ["- " + data["answer"], *quiz_strings(data.get("feedback", []))]
    if isinstance(data, dict):
        return [s for key, value in data.items() if key in QUIZ_KEYS for s in quiz_strings(value)]
    return []


def template_text(template: str) -> str:
    """A `str.format` template as text: literals as they print, each field as `{name}`."""
    return "".join(literal + ("" if name is None else "{" + name + "}")
                   for literal, name, _spec, _conversion in Formatter().parse(template))


def checker_strings(catalog: dict[str, str]) -> dict[str, list[str]]:
    """The messages of `catalog` as text, grouped by key prefix (`ch03.x` -> `ch03`)."""
    groups: dict[str, list[str]] = {}
    for key, template in catalog.items():
        groups.setdefault(key.split(".", 1)[0], []).append(template_text(template))
    return groups


def clean(text: str) -> str:
    return " ".join(TAG.sub("", text).split())


JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
CODE_CELL = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)```", re.S)


def code_strings(markdown: str) -> list[str]:
    """The Japanese string literals of a chapter's code cells (plot labels, table headers),
    f-string fields kept as `{name}`; cells with IPython magics (`!pip`) are skipped."""
    import ast

    found = []
    for body in CODE_CELL.findall(markdown):
        lines = body.split("\n")
        if lines and lines[0] == "---":
            lines = lines[lines.index("---", 1) + 1:]
        code = "\n".join(line for line in lines if not line.startswith(":"))
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue  # a cell with IPython syntax
        parts = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)
                 for part in node.values}
        for node in ast.walk(tree):
            if id(node) in parts:
                continue  # a piece of an f-string, read with the whole string
            if isinstance(node, ast.JoinedStr):
                text = "".join(part.value if isinstance(part, ast.Constant)
                               else "{" + ast.unparse(part.value) + "}" for part in node.values)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
            else:
                continue
            if JAPANESE.search(text) and text not in found:
                found.append(text)
    return found


def notebook_markdown(notebook: dict) -> str:
    """The Markdown cells of a notebook (parsed .ipynb JSON), in order, one Markdown text."""
    cells = ["".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
             for cell in notebook["cells"] if cell["cell_type"] == "markdown"]
    return "\n\n".join(cell.strip("\n") for cell in cells) + "\n"


def write(path: Path, strings: list[str]) -> None:
    path.write_text("\n\n".join(map(clean, strings)) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else REPO / ".textlint" / "tmp"
    out.mkdir(parents=True, exist_ok=True)
    for path in sorted((REPO / "book" / "quizzes" / "ja").glob("*.json")):
        write(out / f"quiz_{path.stem}.md", quiz_strings(json.loads(path.read_text("utf-8"))))
    for prefix, path in (("checker", CHECKER_MESSAGES), ("page", PAGE_MESSAGES)):
        catalog = json.loads(path.read_text(encoding="utf-8"))
        for group, strings in checker_strings(catalog).items():
            write(out / f"{prefix}_{group}.txt", strings)
    for path in sorted((REPO / "book" / "ja").glob("[0-9][0-9]_*.md")):
        strings = code_strings(path.read_text(encoding="utf-8"))
        if strings:
            write(out / f"code_{path.stem}.txt", strings)
    for path in sorted(COLAB_NOTEBOOKS.glob("*_ja.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        (out / f"colab_{path.stem}.md").write_text(notebook_markdown(notebook), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
