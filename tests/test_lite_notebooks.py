"""The notebooks of the in-browser exercises (tools/lite/notebooks.py), without a browser.

*Run All* in JupyterLite must keep every figure of the book and never run or show a solution;
answer cells start without a verdict; the notebook opens trusted; its first cell says how to
reset it. tests/test_lite.py checks the same in Chromium on the built site.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))

from lite.notebooks import lite_notebook  # noqa: E402
from lite.paths import BuildError  # noqa: E402

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nnot really").decode()


def _code(source: str, tags=(), outputs=()) -> dict:
    return {"cell_type": "code", "id": f"c{abs(hash(source)) % 10**8}", "source": source,
            "metadata": {"tags": list(tags)}, "outputs": list(outputs), "execution_count": 3}


def _markdown(source: str) -> dict:
    return {"cell_type": "markdown", "id": f"m{abs(hash(source)) % 10**8}", "source": source,
            "metadata": {}}


def _notebook(*cells: dict) -> dict:
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        _markdown("# 03 Title\n\n[![Open In Colab](https://colab.research.google.com/assets/"
                  "colab-badge.svg)](https://colab.research.google.com/x)"),
        _code('import sys\nif "google.colab" in sys.modules:\n    pass', tags=["remove-cell"]),
        *cells,
    ]}


FIGURE = _code("import matplotlib.pyplot as plt\nfig = plt.figure()", outputs=[
    {"output_type": "display_data", "metadata": {},
     "data": {"image/png": PNG, "text/plain": "<Figure>"}}])
ANSWER = _code("answer = None\ncheck(answer)", tags=["remove-output"], outputs=[
    {"output_type": "stream", "name": "stdout", "text": "✗ not yet\n"}])
SOLUTION = _code("# Solution\nanswer = 42\ncheck(answer)", tags=["hide-cell"], outputs=[
    {"output_type": "stream", "name": "stdout", "text": "✓ correct\n"}])


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_figure_cell_keeps_the_book_figure_in_markdown(lang):
    cells = lite_notebook(_notebook(FIGURE), lang)["cells"]
    index = next(i for i, c in enumerate(cells) if "piilab-lite-skip" in c["metadata"]
                 .get("tags", []))
    skipped, shown = cells[index], cells[index + 1]
    assert skipped["outputs"] == [] and skipped["source"].startswith("# ")
    assert "# import matplotlib.pyplot as plt" in skipped["source"]
    # Markdown: no run can clear it; the figure is an attachment, the same bytes as the book's.
    assert shown["cell_type"] == "markdown"
    (name, data), = shown["attachments"].items()
    assert data == {"image/png": PNG} and f"](attachment:{name})" in shown["source"]


def test_a_solution_becomes_closed_markdown_and_an_answer_loses_its_verdict():
    cells = lite_notebook(_notebook(ANSWER, SOLUTION), "en")["cells"]
    answer = next(c for c in cells if c["cell_type"] == "code" and "check(answer)" in
                  c["source"])
    assert answer["outputs"] == []
    solution = next(c for c in cells if "answer = 42" in c["source"])
    assert solution["cell_type"] == "markdown"
    assert solution["source"].startswith("<details><summary>Solution</summary>")
    assert "✓" not in json.dumps(cells, ensure_ascii=False)
    assert not any(c["cell_type"] == "code" and "answer = 42" in c["source"] for c in cells)


def test_a_cell_that_needs_what_only_a_solution_defines_fails_the_build():
    uses = _code("print(answer_table)")
    solution = _code("# Solution\nanswer_table = {}", tags=["hide-cell"])
    with pytest.raises(BuildError, match="answer_table"):
        lite_notebook(_notebook(solution, uses), "en")
    # defined by a cell that runs as well: fine
    lite_notebook(_notebook(_code("answer_table = None"), solution, uses), "en")


def test_code_cells_are_trusted_and_the_first_cell_says_how_to_reset():
    cells = lite_notebook(_notebook(ANSWER, _code("print(1)")), "ja")["cells"]
    assert all(c["metadata"].get("trusted") is True for c in cells if c["cell_type"] == "code")
    assert "Clear Browser Data" in cells[0]["source"] and "colab-badge" not in cells[0]["source"]


def test_the_committed_notebooks_convert_and_keep_every_figure():
    for path in sorted((REPO / "notebooks").glob("*/0[0-5]_*.ipynb")):
        book = json.loads(path.read_text("utf-8"))
        lite = lite_notebook(book, path.parent.name)
        figures = sum(any(m.startswith("image/") for m in o.get("data", {}))
                      for c in book["cells"] for o in c.get("outputs", []))
        kept = sum(c["source"].count("](attachment:") for c in lite["cells"]) + sum(
            any(m.startswith("image/") for m in o.get("data", {}))
            for c in lite["cells"] for o in c.get("outputs", []))
        assert kept == figures, path
        ran = [c for c in lite["cells"] if c["cell_type"] == "code"]
        assert not any("✓" in json.dumps(c["outputs"], ensure_ascii=False) for c in ran), path
