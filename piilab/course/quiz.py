"""Chapter quizzes: load, validate and show them (every chapter's "Quiz" section).

A quiz is data, one JSON file per chapter and language (`book/quizzes/<lang>/<chapter>.json`).
The file is in jupyterquiz's format (a list of questions, each with `question`, `type` and
`answers`, each answer with `answer`, `correct` and `feedback`) plus an `id` per question that
the English and Japanese files share. `piilab/course/quiz_schema.json` is the formal definition.

- `load_quiz(path)` reads and validates a file.
- `validate_quiz(data, source)` checks a quiz against the schema and a few rules a schema cannot
  express (unique ids, safe markup), and raises `QuizError` naming the file and the question.
- `answer_key(quiz)` reduces a quiz to what both languages must share: per id, the number of
  answers and the position of the correct one.
- `show_quiz(path)` renders the quiz interactively with `jupyterquiz.display_quiz`, in a notebook
  and in the built book alike.

This module does not grade or store a reader's answers, and only `show_quiz` needs jupyterquiz.
"""

from __future__ import annotations

import json
import random
import re
import sys
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from piilab.errors import PiilabError

#: HTML tags a quiz text may use (jupyterquiz inserts texts as HTML).
ALLOWED_TAGS = frozenset({"code", "b", "i", "em", "strong", "br", "kbd"})

_TAG = re.compile(r"<\s*/?\s*([A-Za-z][A-Za-z0-9]*)\s*/?\s*>")
_BARE_AMPERSAND = re.compile(r"&(?![A-Za-z]+;|#[0-9]+;|#x[0-9A-Fa-f]+;)")


class QuizError(PiilabError):
    """A quiz file does not follow `piilab/course/quiz_schema.json` or the quiz rules."""


@cache
def quiz_schema() -> dict[str, Any]:
    """The JSON schema of a quiz file (`piilab/course/quiz_schema.json`)."""
    text = resources.files("piilab.course").joinpath("quiz_schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def load_quiz(path: str | Path) -> list[dict[str, Any]]:
    """Read the quiz at `path` (UTF-8 JSON), validate it and return its questions."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise QuizError(f"{path}: not valid JSON ({where}): {exc.msg}") from exc
    validate_quiz(data, source=str(path))
    return data


def validate_quiz(data: Any, source: str = "<quiz>") -> None:
    """Raise `QuizError` listing every problem of `data`, each naming `source` and the question.

    Checks, in order: the schema (structure, 5-8 questions, 2-6 answers with exactly one
    correct, feedback on every answer); unique question ids; answers that differ within a
    question; markup (only `ALLOWED_TAGS`, `&` written as an entity, no `$`).
    """
    import jsonschema  # a dependency of the book extra (through nbformat); imported on use

    problems: list[str] = []
    validator = jsonschema.Draft202012Validator(quiz_schema())
    for error in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        problems.append(f"{_where(data, list(error.absolute_path))}: {_schema_message(error)}")

    if isinstance(data, list):
        seen: dict[str, int] = {}
        for index, question in enumerate(data):
            if not isinstance(question, dict):
                continue
            where = _where(data, [index])
            qid = question.get("id")
            if isinstance(qid, str):
                if qid in seen:
                    problems.append(f"{where}: id repeats question #{seen[qid] + 1}")
                seen.setdefault(qid, index)
            texts = [("question", question.get("question"))]
            answers = question.get("answers") if isinstance(question.get("answers"), list) else []
            spelled = [a.get("answer") for a in answers if isinstance(a, dict)]
            if len(set(map(str, spelled))) != len(spelled):
                problems.append(f"{where}: two answers have the same text")
            for a_index, answer in enumerate(answers):
                if isinstance(answer, dict):
                    texts += [
                        (f"answers[{a_index}].answer", answer.get("answer")),
                        (f"answers[{a_index}].feedback", answer.get("feedback")),
                    ]
            for field, text in texts:
                if isinstance(text, str):
                    problems += [f"{where}: {field}: {p}" for p in _markup_problems(text)]

    if problems:
        raise QuizError(f"{source}: invalid quiz\n  " + "\n  ".join(problems))


def answer_key(quiz: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Per question id: (number of answers, position of the correct answer).

    Two language versions of one chapter's quiz must have equal answer keys.
    """
    return {
        q["id"]: (len(q["answers"]), next(i for i, a in enumerate(q["answers"]) if a["correct"]))
        for q in quiz
    }


#: JupyterLab's MathJax 3 (which JupyterLite runs) sets a global `MathJax` with a version and
#: no `typeset`. jupyterquiz takes that for a MathJax it must load itself: it replaces the
#: global and adds a script from a CDN, and every answer click then fails in `check_mc` (the
#: feedback shows, the console logs a TypeError). The quizzes hold no formulas, so in the
#: browser kernel the quiz is given a `typeset` that does nothing; a MathJax that can typeset
#: (the book's) is left alone.
_LAB_MATHJAX_SHIM = """
if (window.MathJax && String(window.MathJax.version || "").startsWith("3")
    && typeof window.MathJax.typeset !== "function") {
  window.MathJax.typeset = function () {};
}
"""


def show_quiz(path: str | Path, *, shuffle_answers: bool = True) -> None:
    """Display the quiz at `path` interactively (jupyterquiz) in a notebook or the built book.

    The reader clicks an answer and reads its feedback; nothing is recorded. jupyterquiz names
    its HTML container with random letters, so they are drawn from a generator seeded with the
    file name: re-running a chapter gives the same output. (Answers are still shuffled by the
    page's JavaScript each time it loads.)
    """
    from jupyterquiz import display_quiz

    path = Path(path)
    questions = load_quiz(path)
    if sys.platform == "emscripten":  # Pyodide, in JupyterLite
        from IPython.display import Javascript, display

        display(Javascript(_LAB_MATHJAX_SHIM))
    state = random.getstate()
    random.seed(f"piilab-quiz:{path.parent.name}/{path.name}")
    try:
        display_quiz(questions, shuffle_answers=shuffle_answers, max_width=720)
    finally:
        random.setstate(state)


def _where(data: Any, path: list[Any]) -> str:
    """Name the question an error is in, by number and id: `question #3 ('mapping')`."""
    if not path or not isinstance(path[0], int):
        return "quiz"
    index = path[0]
    qid = None
    if isinstance(data, list) and index < len(data) and isinstance(data[index], dict):
        qid = data[index].get("id")
    label = f"question #{index + 1}" + (f" ({qid!r})" if isinstance(qid, str) else "")
    rest = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path[1:])
    return label + (f" {rest.lstrip('.')}" if rest else "")


def _schema_message(error: Any) -> str:
    """A jsonschema error, reworded where the default message is obscure."""
    if error.validator == "contains" or error.validator in ("minContains", "maxContains"):
        return "needs exactly one answer with \"correct\": true"
    if error.validator == "additionalProperties":
        return f"{error.message} (allowed: see piilab/course/quiz_schema.json)"
    return error.message


def _markup_problems(text: str) -> list[str]:
    problems = []
    for match in _TAG.finditer(text):
        if match.group(1).lower() not in ALLOWED_TAGS:
            problems.append(
                f"tag <{match.group(1)}> is not allowed (write &lt; for a literal '<'; "
                f"allowed tags: {', '.join(sorted(ALLOWED_TAGS))})"
            )
    if "<" in _TAG.sub("", text):
        problems.append("a bare '<' would be read as HTML: write &lt;")
    if _BARE_AMPERSAND.search(text):
        problems.append("a bare '&' would be read as an HTML entity: write &amp;")
    if "$" in text:
        problems.append("'$' starts LaTeX in jupyterquiz: rephrase without it")
    return problems
