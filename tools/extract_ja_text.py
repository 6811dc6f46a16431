"""Write the Japanese strings of the quizzes and the exercise checkers to files for textlint.

textlint reads Markdown and plain text, not JSON or Python. This writes one file per source file
into OUT (default `.textlint/tmp`), one string per paragraph:

- `book/quizzes/ja/*.json` -> `quiz_<stem>.md`: questions and feedback as text, answer options
  (plain-form phrases) as list items, HTML tags removed;
- `piilab/exercises/*.py` -> `checker_<stem>.txt`: every `ja=` keyword argument, f-string fields
  kept as `{name}`.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
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


def _fstring(node: ast.JoinedStr) -> str:
    return "".join(part.value if isinstance(part, ast.Constant) else
                   "{" + ast.unparse(part.value) + "}" for part in node.values)


def checker_strings(source: str) -> list[str]:
    strings = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        for keyword in node.keywords:
            value = keyword.value
            if keyword.arg == "ja" and isinstance(value, ast.Constant):
                strings.append(str(value.value))
            elif keyword.arg == "ja" and isinstance(value, ast.JoinedStr):
                strings.append(_fstring(value))
    return strings


def clean(text: str) -> str:
    return " ".join(TAG.sub("", text).split())


def write(path: Path, strings: list[str]) -> None:
    path.write_text("\n\n".join(map(clean, strings)) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else REPO / ".textlint" / "tmp"
    out.mkdir(parents=True, exist_ok=True)
    for path in sorted((REPO / "book" / "quizzes" / "ja").glob("*.json")):
        write(out / f"quiz_{path.stem}.md", quiz_strings(json.loads(path.read_text("utf-8"))))
    for path in sorted((REPO / "piilab" / "exercises").glob("*.py")):
        strings = checker_strings(path.read_text(encoding="utf-8"))
        if strings:
            write(out / f"checker_{path.stem}.txt", strings)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
