"""Sphinx extension for the PII Lab book (loaded through `sphinx.local_extensions` in _config.yml).

It makes small per-page adjustments that Jupyter Book 1.x cannot be configured to do:

- the course's address is written once, in `_config.yml` (`repository.url`, `repository.branch`):
  chapter sources carry placeholders (`@REPOSITORY_URL@`, `@REPOSITORY_BRANCH@`, `@COLAB_PATH@`,
  see `piilab.course.links.CourseLinks`) in their Colab badge and Colab set-up cell, replaced
  here when
  Sphinx reads a page (`source-read`), before MyST-NB parses and executes it;
- the theme's Colab launch button points at the page's source (`book/en/NN_name.md`), which
  Colab cannot open; here it is pointed at the executed twin `notebooks/en/NN_name.ipynb`;
- pages of the Japanese track (`book/ja/`: the chapters and the glossary) get
  `<html lang="ja">`, so browsers pick Japanese glyphs and fonts and book/_static/piilab.js
  shows the theme's labels in Japanese (the book's `language` is English for everything else);
- a script registered twice is written once (sphinx-thebe 0.3.1 registers its inline
  configuration twice under Sphinx 7, and the second `const THEBE_JS_URL` is a JavaScript
  error on every page).

Apart from the placeholders, it does not change content, execution or the table of contents.
"""

from __future__ import annotations

import re
from typing import Any

from piilab.course.links import DEFAULT_BRANCH, DEFAULT_COLAB_URL, PLACEHOLDERS, CourseLinks

_CHAPTER = re.compile(r"^book/(?P<lang>en|ja)/(?P<chapter>\d\d_[A-Za-z0-9_]+)$")
_TRACK = re.compile(r"^book/(?P<lang>en|ja)/")


def _course_links(app: Any) -> CourseLinks | None:
    """The course's address from the configuration Jupyter Book derives from `_config.yml`
    (`repository.url` -> `repository_url`, `repository.branch` -> `repository_branch`)."""
    theme = app.config.html_theme_options
    url = theme.get("repository_url", "")
    if not url:
        return None
    return CourseLinks(
        repository_url=url,
        branch=theme.get("repository_branch") or DEFAULT_BRANCH,
        colab_url=theme.get("launch_buttons", {}).get("colab_url") or DEFAULT_COLAB_URL,
    )


def _expand_placeholders(app: Any, docname: str, source: list[str]) -> None:
    if not any(placeholder in source[0] for placeholder in PLACEHOLDERS):
        return
    links = _course_links(app)
    if links is None:
        raise ValueError(f"{docname}: uses the placeholders {PLACEHOLDERS} but _config.yml "
                         "has no repository.url to fill them in with")
    source[0] = links.expand(source[0])


def _adjust_page(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    _drop_duplicate_scripts(context)
    track = _TRACK.match(pagename)
    if track and track["lang"] == "ja":
        context["language"] = "ja"
    match = _CHAPTER.match(pagename)
    if not match:
        return
    links = _course_links(app)
    if links is None:
        return
    target = links.colab(f"notebooks/{match['lang']}/{match['chapter']}.ipynb")
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        for button in group.get("buttons", []):
            if button.get("text") == "Colab":
                button["url"] = target


def _drop_duplicate_scripts(context: dict) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple[str, str]] = set()
    unique = []
    for script in scripts:
        # Same file and attributes (an inline script's text is its `body` attribute; its
        # filename is None or "" depending on how it was registered).
        key = (str(getattr(script, "filename", script) or ""),
               repr(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def setup(app: Any) -> dict[str, Any]:
    app.connect("source-read", _expand_placeholders)
    # After sphinx-book-theme's add_launch_buttons (priority 501) has filled header_buttons.
    app.connect("html-page-context", _adjust_page, priority=502)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
