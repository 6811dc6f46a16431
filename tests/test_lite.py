"""The in-browser exercises: chapter 03 runs in JupyterLite (Pyodide) in Chromium, offline.

Runs against the JupyterLite site that `make lite` (tools/build_lite.py; `make book` runs it)
builds into `_build/html/lite` (or `$PIILAB_LITE_SITE`), served on 127.0.0.1, in Debian's
Chromium driven by Playwright, like tests/test_browser.py. The test opens chapter 03's notebook
in JupyterLite's notebook app, waits for the Pyodide kernel, runs every cell above the
"write a restore function" exercise (the first installs piilab from the site), then runs the
exercise twice, its code replaced in the page by a correct and by a wrong `my_restore`, and
reads the checker's ✓ and ✗ from the page. The notebook opens trusted, and its Help menu has
the reset its first cell describes (Clear Browser Data). Last, it runs the chapter's quiz and
answers a question: the whole quiz and its feedback are on the page, not cut off in a
scrolling output box.

The slow tests run every cell of chapters 00-05, in both languages, with *Run All*: no cell
fails, every figure of the book is still on the page afterwards (cells that cannot run in
Pyodide show the book's output in a Markdown cell), and no solution ran (no ✓ anywhere: the
answer cells hold placeholders, the solutions are Markdown).

Every request the browser makes is recorded: one that is not for the local server fails the
test (it is also aborted, and Chromium resolves no other host). The server counts the bytes it
sends; the time to a ready kernel and the bytes a learner's browser downloads are printed and
written to `test-artifacts/lite-metrics.json` (the README quotes them).

Without Chromium, Playwright or the built site the test is skipped, unless `CI` is set or
`PIILAB_REQUIRE_BROWSER=1`, in which case it fails.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _browser import launched, missing

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parent.parent
SITE = Path(os.environ.get("PIILAB_LITE_SITE") or REPO / "_build" / "html" / "lite")
ARTIFACTS = REPO / "test-artifacts"
NOTEBOOK = "notebooks/en/03_tokenization.ipynb"
#: Chromium may reach 127.0.0.1 only: any other host name fails to resolve.
LOCAL_ONLY_ARGS = ("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",)
KERNEL_READY_S = 240
RUN_S = 600

CORRECT = '''\
import re


def my_restore(masked_text, mapping):
    return re.sub(r"\\[[A-Z]+_[0-9]+\\]", lambda m: mapping.get(m.group(), m.group()), masked_text)
'''
WRONG = '''\
def my_restore(masked_text, mapping):
    for token, value in mapping.items():  # one replace per token: values can look like tokens
        masked_text = masked_text.replace(token, value)
    return masked_text
'''






class _CountingHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site and counts what it sends: {path: bytes} in `self.server.sent`."""

    def log_message(self, format: str, *args: object) -> None:  # keep pytest output clean
        pass

    def copyfile(self, source, outputfile) -> None:  # type: ignore[override]
        sent = 0
        while chunk := source.read(64 * 1024):
            outputfile.write(chunk)
            sent += len(chunk)
        with self.server.lock:  # type: ignore[attr-defined]
            self.server.sent.append((self.path, sent))  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def server() -> Iterator[http.server.ThreadingHTTPServer]:
    if not (SITE / "jupyter-lite.json").is_file() or not (SITE / "files" / NOTEBOOK).is_file():
        missing(f"{SITE} has no JupyterLite site with {NOTEBOOK}: run `make lite` "
                 "(or `make book`) first")
    handler = functools.partial(_CountingHandler, directory=str(SITE))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.sent, httpd.lock = [], threading.Lock()  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with launched(LOCAL_ONLY_ARGS) as browser:
        yield browser


def _exercise_cell(notebook: dict) -> int:
    """Index of the 'write a restore function' exercise: the code cell that defines `my_restore`
    for the learner (not the hidden solution)."""
    for index, cell in enumerate(notebook["cells"]):
        source = "".join(cell["source"])
        if (cell["cell_type"] == "code" and "def my_restore" in source
                and "check_restore_function(my_restore)" in source
                and "hide-cell" not in cell.get("metadata", {}).get("tags", [])):
            return index
    raise AssertionError(f"{NOTEBOOK} has no 'write a restore function' exercise cell")


def _with_answer(source: str, answer: str) -> str:
    """The exercise cell with its `my_restore` replaced by `answer` (imports and the checker
    call kept as they are)."""
    pattern = re.compile(r"^def my_restore\(.*?(?=^\S)", re.M | re.S)
    assert pattern.search(source), source
    return pattern.sub(lambda _: answer + "\n\n", source, count=1)


def test_chapter_03_exercise_runs_in_the_browser(browser, server):
    base = f"http://127.0.0.1:{server.server_address[1]}"
    notebook = json.loads((SITE / "files" / NOTEBOOK).read_text("utf-8"))
    exercise = _exercise_cell(notebook)
    source = "".join(notebook["cells"][exercise]["source"])

    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    requests: list[str] = []
    outside: list[str] = []
    failed: list[str] = []

    def route(route):
        url = route.request.url
        requests.append(url)
        if url.startswith(base + "/") or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    context.route("**/*", route)
    context.on("request", lambda request: requests.append(request.url))
    context.on("requestfailed", lambda request: failed.append(request.url))
    # Every request the site answers succeeds, the icons the app swaps in as the kernel goes
    # busy and idle included (the review found them 404 on every state change).
    missing: list[str] = []
    context.on("response", lambda response: missing.append(f"{response.status} {response.url}")
               if response.status >= 400 else None)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    cells = page.locator(".jp-Notebook .jp-Cell")
    try:
        start = time.monotonic()
        page.goto(f"{base}/notebooks/index.html?path={NOTEBOOK}", wait_until="load")
        page.wait_for_function(
            f"document.querySelectorAll('.jp-Notebook .jp-Cell').length == {len(notebook['cells'])}"
            , timeout=60_000)
        page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]').wait_for(
            timeout=KERNEL_READY_S * 1000)
        kernel_ready_s = time.monotonic() - start
        trust = page.locator(".jp-NotebookTrustedStatus")
        assert trust.inner_text().strip() == "Trusted", trust.inner_text()
        page.get_by_role("menuitem", name="Help", exact=True).click()
        assert page.get_by_text("Clear Browser Data", exact=True).count() == 1
        page.keyboard.press("Escape")

        # Every cell above the exercise: set-up (installs piilab from the site), then the chapter.
        cells.nth(exercise).locator(".jp-InputPrompt").click()
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_text("Run All Above Selected Cell").click()
        cells.nth(1).locator(".jp-OutputArea").get_by_text("ready").wait_for(
            timeout=RUN_S * 1000)
        setup_s = time.monotonic() - start

        # The exercise, run after them (the kernel runs in order): its number says they all ran.
        code_above = sum(cell["cell_type"] == "code" for cell in notebook["cells"][:exercise])
        checks, numbers = {}, []
        for name, answer in (("correct", CORRECT), ("wrong", WRONG)):
            cell = cells.nth(exercise)
            cell.locator(".cm-content").click()
            page.keyboard.press("Control+A")
            page.keyboard.insert_text(_with_answer(source, answer))
            numbers.append(_run_selected(page, cells, exercise))
            if name == "correct":
                above_s = time.monotonic() - start
            checks[name] = cell.locator(".jp-OutputArea-output").inner_text().strip()
            cell.scroll_into_view_if_needed()
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"lite-03-restore-{name}.png"))
        _assert_no_error(cells, exercise)
        assert numbers == [code_above + 1, code_above + 2], (numbers, code_above)

        assert checks["correct"].startswith("✓"), checks
        assert checks["wrong"].startswith("✗"), checks
        quiz = _check_quiz_shows_whole(page, cells, notebook)
    finally:
        context.close()

    with server.lock:
        sent = list(server.sent)
    metrics = {
        "notebook": NOTEBOOK,
        "kernel_ready_s": round(kernel_ready_s, 1),
        "setup_cell_done_s": round(setup_s, 1),
        "cells_above_exercise_done_s": round(above_s, 1),
        "requests": len(sent),
        "downloaded_bytes": sum(size for _, size in sent),
        "largest": sorted(sent, key=lambda item: -item[1])[:8],
        "checker": checks,
        "quiz": quiz,
    }
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "lite-metrics.json").write_text(json.dumps(metrics, indent=2, ensure_ascii=False)
                                                 + "\n", encoding="utf-8")
    print(f"\nJupyterLite: kernel ready in {kernel_ready_s:.1f} s, piilab installed at "
          f"{setup_s:.1f} s, {metrics['requests']} requests, "
          f"{metrics['downloaded_bytes'] / 1e6:.1f} MB downloaded")
    assert outside == [], f"requests that left the local server: {outside}"
    # The browser-side record is complete: it saw every request the server answered, the
    # kernel's web worker and the service worker included.
    seen = {url[len(base):] for url in requests if url.startswith(base)}
    unseen = sorted({path for path, _ in sent} - seen)
    assert unseen == [], f"served but not seen by the request log: {unseen}"
    assert all(url.startswith((base, "data:", "blob:")) for url in requests), requests
    assert not [url for url in failed if not url.startswith(base)], failed
    assert missing == [], f"requests the site answered with an error: {missing}"
    assert errors == []


#: The height above which the notebook app would fold an output into a scrolling box
#: (1.3 x 14 px x 100 lines), unless the site turns that off (tools/lite/site.py).
SCROLLED_ABOVE_PX = 1.3 * 14 * 100


def _check_quiz_shows_whole(page, cells, notebook: dict) -> dict:
    """Run the chapter's quiz cell, answer its last question, and check that the whole quiz and
    the feedback are on the page, not folded into a scrolling output box (the review found the
    JA 04 feedback cut off there)."""
    index = next(i for i, cell in enumerate(notebook["cells"])
                 if cell["cell_type"] == "code" and "show_quiz(" in "".join(cell["source"]))
    cell = cells.nth(index)
    cell.locator(".jp-InputPrompt").click(force=True)
    _run_selected(page, cells, index)
    quizzes = cell.locator(".Quiz")
    quizzes.last.locator(".MCButton").first.wait_for(timeout=60_000)
    quizzes.last.locator(".MCButton").first.click()
    feedback = quizzes.last.locator(".Feedback")
    feedback.wait_for(timeout=10_000)
    page.wait_for_function("(el) => el.textContent.trim().length > 0",
                           arg=feedback.element_handle())
    geometry = cell.evaluate("""(cell) => {
      const area = cell.querySelector('.jp-OutputArea');
      const box = area.getBoundingClientRect();
      const fb = [...cell.querySelectorAll('.Quiz')].pop().querySelector('.Feedback')
        .getBoundingClientRect();
      return {scrolled: cell.classList.contains('jp-mod-outputsScrolled'),
              height: area.scrollHeight, visible: area.clientHeight,
              feedback_inside: fb.top >= box.top - 1 && fb.bottom <= box.bottom + 1,
              feedback_height: fb.height};
    }""")
    assert quizzes.count() >= 3, quizzes.count()
    # the quiz is taller than the fold, so this checks the case the review met
    assert geometry["height"] > SCROLLED_ABOVE_PX, geometry
    assert not geometry["scrolled"], geometry
    assert geometry["visible"] >= geometry["height"] - 1, geometry
    assert geometry["feedback_inside"] and geometry["feedback_height"] > 0, geometry
    return geometry


LITE_CHAPTERS = ("00_welcome.ipynb", "01_architecture.ipynb", "02_synthetic_data.ipynb",
                 "03_tokenization.ipynb", "04_evaluation.ipynb", "05_augmentation.ipynb")
#: Run All costs 25-45 s a notebook. The two languages' notebooks hold byte-identical code
#: (tests/test_book_parity.py), so `make test` runs each chapter once, the languages taking
#: turns (en 00, ja 01, en 02, ...), which keeps CI in its budget; PIILAB_LITE_ALL=1 runs all
#: twelve.
CHAPTERS = [
    f"notebooks/{lang}/{name}" for i, name in enumerate(LITE_CHAPTERS)
    for lang in ("en", "ja")
    if os.environ.get("PIILAB_LITE_ALL") == "1" or lang == ("en", "ja")[i % 2]
]


@pytest.mark.slow
@pytest.mark.parametrize("notebook_path", CHAPTERS)
def test_every_cell_of_the_chapter_runs_in_the_browser(browser, server, notebook_path):
    """A learner can run a whole chapter 00-05, in either language, in the browser."""
    base = f"http://127.0.0.1:{server.server_address[1]}"
    if not (SITE / "files" / notebook_path).is_file():
        pytest.fail(f"{notebook_path} is not in the JupyterLite site")
    notebook = json.loads((SITE / "files" / notebook_path).read_text("utf-8"))
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    outside: list[str] = []
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(
        (base + "/", "data:", "blob:")) else (outside.append(route.request.url), route.abort()))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    cells = page.locator(".jp-Notebook .jp-Cell")
    try:
        page.goto(f"{base}/notebooks/index.html?path={notebook_path}", wait_until="load")
        page.wait_for_function(
            f"document.querySelectorAll('.jp-Notebook .jp-Cell').length == {len(notebook['cells'])}"
            , timeout=60_000)
        page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]').wait_for(
            timeout=KERNEL_READY_S * 1000)
        figures = _book_figures(notebook)
        start = time.monotonic()
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_text("Run All Cells", exact=True).click()
        cells.nth(1).locator(".jp-OutputArea").get_by_text("ready").wait_for(
            timeout=RUN_S * 1000)
        # A last cell, queued after them all: its number says they all ran.
        count = len(notebook["cells"])
        cells.nth(count - 1).locator(".jp-InputPrompt").click(force=True)
        page.keyboard.press("b")
        page.wait_for_function(
            f"document.querySelectorAll('.jp-Notebook .jp-Cell').length == {count + 1}")
        cells.nth(count).locator(".cm-content").click()
        page.keyboard.insert_text('print("all cells ran")')
        number = _run_selected(page, cells, count)
        print(f"\n{notebook_path}: all cells ran in {time.monotonic() - start:.1f} s")
        _assert_no_error(cells, count)
        assert number == sum(cell["cell_type"] == "code" for cell in notebook["cells"]) + 1
        assert "all cells ran" in cells.nth(count).locator(".jp-OutputArea").inner_text()
        # The book's figures are all still there, and no solution ran.
        shown = page.evaluate(_FIGURES_ON_PAGE)
        assert shown >= figures, (notebook_path, shown, figures)
        verdicts = cells.locator(".jp-OutputArea-output").filter(has_text="✓")
        assert verdicts.count() == 0, verdicts.first.inner_text()
    finally:
        context.close()
    assert outside == [], f"requests that left the local server: {outside}"
    assert errors == []


#: Figures in the notebook's page: images in outputs and Markdown, inline SVG diagrams.
_FIGURES_ON_PAGE = """() => document.querySelectorAll(
  '.jp-Notebook .jp-OutputArea-output img, .jp-Notebook .jp-RenderedMarkdown img,'
  + ' .jp-Notebook .jp-OutputArea-output svg.piilab-diagram,'
  + ' .jp-Notebook .jp-OutputArea-output .piilab-figure svg').length"""


def _book_figures(notebook: dict) -> int:
    """Figures the book shows for this notebook: image outputs of code cells and figures
    attached to Markdown cells (the book's output of a cell that cannot run in Pyodide)."""
    count = 0
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            count += "".join(cell["source"]).count("](attachment:")
        for output in cell.get("outputs", []):
            count += any(mime.startswith("image/") for mime in output.get("data", {}))
    return count


def _run_selected(page, cells, index: int) -> int:
    """Run the selected cell (number `index`) and return its new execution count once it has
    run; fails as soon as a cell above it shows an error (JupyterLab then runs no further cell).
    """
    before = cells.nth(index).locator(".jp-InputPrompt").text_content()
    page.keyboard.press("Control+Enter")
    handle = page.wait_for_function(
        "([i, before]) => { const cells = document.querySelectorAll('.jp-Notebook .jp-Cell');"
        " for (const c of Array.from(cells).slice(0, i)) {"
        "   if (c.querySelector('[data-mime-type=\"application/vnd.jupyter.stderr\"]'))"
        "     return 'error'; }"
        " const prompt = cells[i].querySelector('.jp-InputPrompt').textContent;"
        " const m = prompt.match(/\\[(\\d+)\\]/);"
        " return m && prompt !== before ? m[1] : false; }",
        arg=[index, before], timeout=RUN_S * 1000)
    value = handle.json_value()
    if value == "error":
        _assert_no_error(cells, index)
    return int(value)


def _assert_no_error(cells, count: int) -> None:
    errors = []
    for index in range(count):
        error = cells.nth(index).locator('[data-mime-type="application/vnd.jupyter.stderr"]')
        if error.count():
            errors.append((index, (error.first.text_content() or "")[-800:]))
    assert errors == [], errors


def test_chapter_pages_open_their_notebook_in_the_lite_site():
    """The built book's chapter pages 00-05 (both languages) link to their notebook in the
    built JupyterLite site; chapters 06-08 do not (they need torch)."""
    import yaml

    html_root = REPO / "_build" / "html"
    if not (html_root / "book" / "en").is_dir():
        missing(f"{html_root} has no built book: run `make book` first")
    config = yaml.safe_load((REPO / "_config.yml").read_text("utf-8"))["sphinx"]["config"]
    chapters = set(config["piilab_lite_chapters"])
    site = html_root / config["piilab_lite_path"]
    if not (site / "notebooks" / "index.html").is_file():
        missing(f"{site} has no JupyterLite site: run `make lite` (or `make book`) first")
    seen = set()
    for lang in ("en", "ja"):
        for page in sorted((html_root / "book" / lang).glob("[0-9][0-9]_*.html")):
            links = set(re.findall(r'href="([^"]*/notebooks/index\.html\?path=[^"]*)"',
                                   page.read_text("utf-8")))
            if page.name[:2] not in chapters:
                assert not links, (page, links)
                continue
            assert len(links) == 1, (page, links)
            app, _, notebook = next(iter(links)).partition("?path=")
            assert (page.parent / app).resolve() == (site / "notebooks" / "index.html").resolve()
            assert notebook == f"notebooks/{lang}/{page.stem}.ipynb"
            assert (site / "files" / notebook).is_file(), notebook
            seen.add((lang, page.name[:2]))
    assert seen == {(lang, c) for lang in ("en", "ja") for c in chapters}, seen
