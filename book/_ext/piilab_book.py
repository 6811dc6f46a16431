"""Sphinx extension for the PII Lab book (loaded through `sphinx.local_extensions` in _config.yml).

It makes two small per-page adjustments that Jupyter Book 1.x cannot be configured to do:

- the theme's Colab launch button points at the page's source (`book/en/NN_name.md`), which
  Colab cannot open; here it is pointed at the executed twin `notebooks/en/NN_name.ipynb`;
- pages of the Japanese track get `<html lang="ja">`, so browsers pick Japanese glyphs and
  fonts (the book's `language` is English for everything else);
- a script registered twice is written once (sphinx-thebe 0.3.1 registers its inline
  configuration twice under Sphinx 7, and the second `const THEBE_JS_URL` is a JavaScript
  error on every page).

It does not change content, execution or the table of contents.
"""

from __future__ import annotations

import re
from typing import Any

_CHAPTER = re.compile(r"^book/(?P<lang>en|ja)/(?P<chapter>\d\d_[A-Za-z0-9_]+)$")


def _adjust_page(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    _drop_duplicate_scripts(context)
    match = _CHAPTER.match(pagename)
    if not match:
        return
    if match["lang"] == "ja":
        context["language"] = "ja"
    theme = app.config.html_theme_options
    colab = theme.get("launch_buttons", {}).get("colab_url", "").rstrip("/")
    repo = theme.get("repository_url", "").rstrip("/").removeprefix("https://github.com/")
    branch = theme.get("repository_branch") or "main"
    if not (colab and repo):
        return
    notebook = f"notebooks/{match['lang']}/{match['chapter']}.ipynb"
    target = f"{colab}/github/{repo}/blob/{branch}/{notebook}"
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
    # After sphinx-book-theme's add_launch_buttons (priority 501) has filled header_buttons.
    app.connect("html-page-context", _adjust_page, priority=502)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
