"""`tools/check_twins.py`: the committed twins against the book build's own run of each chapter.

`make nbval` uses it instead of re-executing every twin, so it must fail exactly where nbval
would: a changed printed number, a missing or extra output, an error, a chapter the book did not
run or ran for other code. Built on a small chapter and a real jupyter-cache in a temporary
folder (no kernel: the "executed" notebook is written with its outputs).
"""

from __future__ import annotations

import copy

import nbformat
import pytest
from _tools import load_tool

check_twins = load_tool("check_twins")
jupyter_cache = pytest.importorskip("jupyter_cache")

CHAPTER = """---
jupytext:
  text_representation:
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A chapter

```{code-cell} ipython3
print("entity F1 0.969 on 400 documents")
```

```{code-cell} ipython3
:tags: [nbval-ignore-output]
print("a quiz")
```
"""


def stream(text):
    return nbformat.v4.new_output("stream", name="stdout", text=text)


@pytest.fixture()
def chapter(tmp_path):
    source = tmp_path / "book" / "en" / "99_demo.md"
    source.parent.mkdir(parents=True)
    source.write_text(CHAPTER, encoding="utf-8")
    executed = check_twins.md_to_notebook(source)
    executed.cells[1].outputs = [stream("entity F1 0.969 on 400 documents\n")]
    executed.cells[2].outputs = [stream("a quiz\n")]
    twin = copy.deepcopy(executed)
    cache = jupyter_cache.get_cache(str(tmp_path / "cache"))
    return source, executed, twin, cache, tmp_path / "twin.ipynb"


def run(source, executed, twin, cache, twin_file):
    cache.cache_notebook_bundle(
        jupyter_cache.base.CacheBundleIn(executed, str(source)),
        check_validity=False, overwrite=True,
    )
    nbformat.write(twin, twin_file)
    return check_twins.compare(source, cache, check_twins.sanitizers(), twin_file)


def test_an_identical_run_passes(chapter):
    assert run(*chapter) == []


def test_a_changed_printed_number_fails(chapter):
    source, executed, twin, cache, twin_file = chapter
    twin.cells[1].outputs = [stream("entity F1 0.970 on 400 documents\n")]
    problems = run(source, executed, twin, cache, twin_file)
    assert len(problems) == 1 and "code cell 1: outputs differ" in problems[0]


def test_an_extra_output_line_fails(chapter):
    source, executed, twin, cache, twin_file = chapter
    executed.cells[1].outputs.append(stream("one more line\n"))
    problems = run(source, executed, twin, cache, twin_file)
    assert len(problems) == 1 and "outputs differ" in problems[0]


def test_a_split_stream_is_the_same_output(chapter):
    source, executed, twin, cache, twin_file = chapter
    executed.cells[1].outputs = [stream("entity F1 0.969 "), stream("on 400 documents\n")]
    assert run(source, executed, twin, cache, twin_file) == []


def test_the_quiz_cell_is_not_compared(chapter):
    source, executed, twin, cache, twin_file = chapter
    executed.cells[2].outputs = [stream("a quiz, shuffled differently\n")]
    assert run(source, executed, twin, cache, twin_file) == []


def test_an_error_fails_even_in_an_ignored_cell(chapter):
    source, executed, twin, cache, twin_file = chapter
    executed.cells[2].outputs = [nbformat.v4.new_output(
        "error", ename="NameError", evalue="x", traceback=[])]
    problems = run(source, executed, twin, cache, twin_file)
    assert len(problems) == 1 and "raised an error" in problems[0]


def test_timings_and_paths_are_sanitized_as_nbval_does(chapter):
    source, executed, twin, cache, twin_file = chapter
    executed.cells[1].outputs = [stream("entity F1 0.969 on 400 documents\n"
                                        "took 12.5 s, /tmp/abc/x\n")]
    twin.cells[1].outputs = [stream("entity F1 0.969 on 400 documents\n"
                                    "took 3 s, /tmp/zzz/y\n")]
    assert run(source, executed, twin, cache, twin_file) == []


def test_a_run_for_other_code_is_not_accepted(chapter):
    source, executed, twin, cache, twin_file = chapter
    executed.cells[1].source = 'print("entity F1 0.969 on 401 documents")'
    problems = run(source, executed, twin, cache, twin_file)
    assert problems and "for other code" in problems[0]


def test_a_chapter_the_book_did_not_run_fails(chapter):
    source, _, twin, cache, twin_file = chapter
    nbformat.write(twin, twin_file)
    problems = check_twins.compare(source, cache, check_twins.sanitizers(), twin_file)
    assert problems and "not executed by the book" in problems[0]
