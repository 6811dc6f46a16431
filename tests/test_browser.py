"""The built book in a real browser: pages render, the diagram is there, quizzes react to clicks.

Runs against `_build/html` (build it first: `make book-html`; `make test` does) served on
127.0.0.1, in Debian's Chromium driven by Playwright. Requests to any other host are blocked,
so the test needs no network. Screenshots go to `test-artifacts/` for a human to look at.

Without Chromium (or Playwright, from the test extra) the tests are skipped, unless `CI` is set
or `PIILAB_REQUIRE_BROWSER=1`, in which case they fail (`make browser-deps` installs Chromium).
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parent.parent
SITE = REPO / "_build" / "html"
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]

#: (page, text its heading must contain, text its body must contain)
PAGES = [
    ("book/en/01_architecture", "01 Platform architecture", "Where PII lives"),
    ("book/ja/00_welcome", "00 ようこそ", "講座の進め方"),
    ("book/ja/01_architecture", "01 プラットフォームのアーキテクチャ", "対応表が機密である理由"),
]


def _chromium() -> str | None:
    candidates = [
        os.environ.get("PIILAB_CHROMIUM", ""), "/usr/bin/chromium", "/usr/bin/chromium-browser"
    ]
    return next((c for c in candidates if c and Path(c).exists()), None) or shutil.which("chromium")


@pytest.fixture(scope="module")
def site_url() -> Iterator[str]:
    if not (SITE / "book" / "en").is_dir():
        pytest.fail(f"{SITE} has no built book: run `make book-html` (or `make book`) first")

    handler = functools.partial(_QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # keep pytest output clean
        pass


def _missing(message: str) -> NoReturn:
    """Skip, or fail where the browser test is required (CI or PIILAB_REQUIRE_BROWSER=1)."""
    if os.environ.get("CI") or os.environ.get("PIILAB_REQUIRE_BROWSER") == "1":
        pytest.fail(message + "; required because CI or PIILAB_REQUIRE_BROWSER=1 is set")
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    executable = _chromium()
    if executable is None:
        _missing("Chromium not found (install it with `make browser-deps`)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Playwright not found: needs the test extra: pip install -e '.[test]'")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser, site_url):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # Offline and deterministic: only the local server is reachable.
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(site_url)
               else route.abort())
    page.js_errors = errors
    yield page
    context.close()


def _quiz(page_name: str) -> list[dict]:
    lang, chapter = page_name.split("/")[1:]
    return json.loads((REPO / "book" / "quizzes" / lang / f"{chapter}.json").read_text("utf-8"))


@pytest.mark.parametrize(("page_name", "heading", "body_text"), PAGES)
def test_chapter_renders_with_an_interactive_quiz(page, site_url, page_name, heading, body_text):
    lang = page_name.split("/")[1]
    page.goto(f"{site_url}/{page_name}.html", wait_until="load")

    assert heading in page.locator("article h1").first.inner_text()
    assert body_text in page.locator("article").inner_text()
    assert page.locator("html").get_attribute("lang") == lang

    # Badge and launch button open the executed twin on Colab.
    twin = f"/notebooks/{lang}/{page_name.split('/')[-1]}.ipynb"
    colab_links = page.locator(f'a[href^="https://colab.research.google.com/github/"][href$="{twin}"]')
    assert colab_links.count() >= 1

    # The quiz: jupyterquiz's script built one panel per question.
    questions = _quiz(page_name)
    panels = page.locator("article .Quiz")
    panels.first.wait_for(state="visible", timeout=10_000)
    assert panels.count() == len(questions)
    first_panel = panels.first
    assert first_panel.locator(".Answer label").count() == len(questions[0]["answers"])

    wrong = next(a for a in questions[0]["answers"] if not a["correct"])
    first_panel.locator('.Answer label[data-correct="false"]').first.click()
    feedback = first_panel.locator(".Feedback")
    assert "incorrect" in (feedback.get_attribute("class") or "")
    assert feedback.inner_text().strip() in {
        _plain(a["feedback"]) for a in questions[0]["answers"] if not a["correct"]
    }, wrong

    right = next(a for a in questions[0]["answers"] if a["correct"])
    first_panel.locator('.Answer label[data-correct="true"]').click()
    assert "correct" in (feedback.get_attribute("class") or "").split()
    assert feedback.inner_text().strip() == _plain(right["feedback"])

    first_panel.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    stem = page_name.replace("/", "_")
    page.screenshot(path=str(ARTIFACTS / f"{stem}-quiz.png"))
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(ARTIFACTS / f"{stem}-top.png"))
    assert page.js_errors == []


def test_architecture_diagram_is_inline_and_localized(page, site_url):
    for lang, stage_title in (("en", "downstream use"), ("ja", "下流での利用")):
        page.goto(f"{site_url}/book/{lang}/01_architecture.html", wait_until="load")
        diagram = page.locator("article .piilab-figure svg")
        assert diagram.count() == 1
        assert diagram.locator(".piilab-stage").count() == 8
        assert stage_title in diagram.text_content()
        diagram.scroll_into_view_if_needed()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"diagram-{lang}.png"))


def test_landing_page_offers_both_tracks(page, site_url):
    page.goto(f"{site_url}/index.html", wait_until="load")
    page.wait_for_url("**/book/index.html")
    text = page.locator("article").inner_text()
    assert "English" in text and "日本語" in text
    page.locator("article .sd-card", has_text="日本語").first.click()
    page.wait_for_url("**/book/ja/00_welcome.html")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "landing-to-ja.png"))


def test_search_finds_japanese_words(page, site_url):
    page.goto(f"{site_url}/search.html?q=対応表", wait_until="load")
    results = page.locator("#search-results li a")
    results.first.wait_for(timeout=10_000)
    hrefs = [results.nth(i).get_attribute("href") for i in range(results.count())]
    assert any("book/ja/01_architecture" in href for href in hrefs), hrefs


def _plain(html_text: str) -> str:
    """Quiz feedback as the browser shows it (tags dropped, entities decoded)."""
    import html
    import re

    return html.unescape(re.sub(r"<[^>]+>", "", html_text)).strip()
