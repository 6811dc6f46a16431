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
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from _browser import launched

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parent.parent
SITE = REPO / "_build" / "html"
ARTIFACTS = REPO / "test-artifacts"

#: (page, text its heading must contain, text its body must contain)
PAGES = [
    ("book/en/01_architecture", "01 Platform architecture", "Where PII lives"),
    ("book/ja/00_welcome", "00 ようこそ", "講座の進め方"),
    ("book/ja/01_architecture", "01 プラットフォームのアーキテクチャ", "対応表が機密である理由"),
]




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




@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with launched() as browser:
        yield browser


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


# ---------------------------------------------------------------------------- the reader's view
# Every chapter page, in both languages, at the review's desktop width (1366 px).

CHAPTER_PAGES = [
    f"book/{lang}/{path.stem}"
    for lang in ("en", "ja")
    for path in sorted((REPO / "book" / lang).glob("[0-9][0-9]_*.md"))
]
DESKTOP = {"width": 1366, "height": 900}
#: Blocks allowed to scroll sideways, as (page, text the block starts with). None now.
SCROLL_EXCEPTIONS: set[tuple[str, str]] = set()

_MEASURE = """() => {
  const blocks = [...document.querySelectorAll(
      "article div.cell_input pre, article div.cell_output pre, article div.output pre")];
  return blocks
    .filter(el => el.offsetParent !== null && el.scrollWidth > el.clientWidth + 1)
    .map(el => [el.scrollWidth - el.clientWidth, el.textContent.trim().slice(0, 60)]);
}"""

_PIPE_TABLE_TEXT = """() => {
  const found = [];
  for (const el of document.querySelectorAll("article p, article div.output, article li")) {
    if (el.closest("pre, code, table")) continue;
    const text = el.innerText || "";
    if (/\\|\\s*[-:\\u2014]{3,}\\s*\\|/.test(text) || /^\\s*\\|.*\\|.*\\|/m.test(text)) {
      found.push(text.slice(0, 80));
    }
  }
  return found;
}"""


@pytest.fixture
def desktop_page(browser, site_url):
    context = browser.new_context(viewport=DESKTOP, locale="en-US")
    page = context.new_page()
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(site_url)
               else route.abort())
    yield page
    context.close()


@pytest.mark.parametrize("page_name", CHAPTER_PAGES)
def test_chapter_reads_well_at_desktop_width(desktop_page, site_url, page_name):
    page = desktop_page
    page.goto(f"{site_url}/{page_name}.html", wait_until="load")
    lang = page_name.split("/")[1]

    # No code or output block scrolls sideways (outputs wrap; code fits 88 characters).
    overflowing = [(px, text) for px, text in page.evaluate(_MEASURE)
                   if (page_name, text) not in SCROLL_EXCEPTIONS]
    assert not overflowing, f"{page_name}: blocks wider than the column: {overflowing}"

    # Computed tables are HTML tables, not pipes left as text.
    assert page.evaluate(_PIPE_TABLE_TEXT) == [], f"{page_name}: a Markdown table left as text"

    # Every figure has a caption and an alt text; matplotlib figures are numbered.
    for figure in page.locator("article figure").all():
        caption = figure.locator("figcaption")
        assert caption.count() == 1 and caption.inner_text().strip(), page_name
        image = figure.locator("img, [role=img]")
        if image.count():
            alt = image.first.get_attribute("alt") or image.first.get_attribute("aria-label")
            assert alt and alt.strip() and "_images/" not in alt, page_name  # not a file path
    for img in page.locator("article div.cell_output img").all():
        assert (img.get_attribute("alt") or "").strip() not in ("", "png"), page_name

    # No pre-baked verdict under an answer nobody gave: the answer cells show no output.
    verdicts = page.locator("article div.cell_output").filter(has_text="✗")
    assert verdicts.count() == 0, f"{page_name}: a failing verdict on the static page"

    # Previous/Next stay in this language; the header links the other language's chapter.
    for link in page.locator("a.left-prev, a.right-next").all():
        href = link.get_attribute("href") or ""
        other = "ja" if lang == "en" else "en"
        assert f"../{other}/" not in href, f"{page_name}: prev/next leaves the track: {href}"
    twin = page_name.replace(f"/{lang}/", f"/{'ja' if lang == 'en' else 'en'}/")
    chapter = twin.split("/")[-1]
    assert page.locator(f'header a[href$="{chapter}.html"]').count() >= 1 or \
        page.locator(f'.bd-header-article a[href*="{chapter}.html"]').count() >= 1, \
        f"{page_name}: no header link to {twin}"

    # Japanese pages show the theme's labels in Japanese.
    if lang == "ja":
        nav = page.locator(".prev-next-area").inner_text() if \
            page.locator(".prev-next-area").count() else ""
        assert "next" not in nav.lower() and "previous" not in nav.lower(), nav


def test_the_last_english_chapter_does_not_lead_into_japanese(desktop_page, site_url):
    english = [p for p in CHAPTER_PAGES if "/en/" in p]
    desktop_page.goto(f"{site_url}/{english[-1]}.html", wait_until="load")
    assert desktop_page.locator("a.right-next").count() == 0
    japanese = [p for p in CHAPTER_PAGES if "/ja/" in p]
    desktop_page.goto(f"{site_url}/{japanese[0]}.html", wait_until="load")
    prev = desktop_page.locator("a.left-prev")
    assert prev.count() == 0 or "/en/" not in (prev.get_attribute("href") or "")
