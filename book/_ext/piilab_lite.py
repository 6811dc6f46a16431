"""Sphinx extension: "open in the browser" buttons for the chapters that run in JupyterLite.

`make lite` (tools/build_lite.py) builds a JupyterLite site with the Pyodide kernel into the HTML
output, `<html>/<piilab_lite_path>/`, holding the notebooks `notebooks/<lang>/NN_name.ipynb` of
the chapters listed in `piilab_lite_chapters` (both values are set in `_config.yml`, which the
build script reads too). On each of those chapter pages, in both languages, this extension adds

- a button under the chapter's title that opens the page's notebook in JupyterLite's notebook
  app (`../../lite/notebooks/index.html?path=notebooks/en/03_tokenization.ipynb`, relative, so
  the book works from any address or folder);
- the same link in the theme's launch menu, next to Colab.

Other chapters (06-08 need torch) get nothing and keep Colab. The links are relative URLs into
the same HTML output; nothing here checks that the site was built (`make book` builds both).
"""

from __future__ import annotations

import posixpath
import re
from html import escape
from typing import Any
from urllib.parse import quote

from docutils import nodes

_CHAPTER = re.compile(r"^book/(?P<lang>en|ja)/(?P<chapter>(?P<number>\d\d)_[A-Za-z0-9_]+)$")

LABELS = {
    "en": ("Open in the browser (JupyterLite)",
           "Run this chapter's notebook in your browser: nothing to install, works offline"),
    "ja": ("ブラウザで開く (JupyterLite)",
           "この章のノートブックをブラウザで実行します。インストール不要、オフラインで動きます"),
}


def lite_url(app: Any, docname: str) -> str | None:
    """The relative URL (from the page of `docname`) of its notebook in JupyterLite, or None
    when the page is not a chapter that runs there."""
    match = _CHAPTER.match(docname)
    if not match or match["number"] not in {str(c) for c in app.config.piilab_lite_chapters}:
        return None
    site = app.config.piilab_lite_path.strip("/")
    notebook = f"notebooks/{match['lang']}/{match['chapter']}.ipynb"
    app_page = posixpath.relpath(f"{site}/notebooks/index.html", posixpath.dirname(docname))
    return f"{app_page}?path={quote(notebook)}"


def _add_button(app: Any, doctree: nodes.document, docname: str) -> None:
    if app.builder.format != "html":
        return
    url = lite_url(app, docname)
    if url is None:
        return
    text, tooltip = LABELS[_CHAPTER.match(docname)["lang"]]
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None or not section.children or not isinstance(section[0], nodes.title):
        return
    button = (f'<p class="piilab-lite-launch"><a class="sd-btn sd-btn-outline-primary" '
              f'href="{escape(url)}" title="{escape(tooltip)}">&#9654;&#xFE0E; '
              f'{escape(text)}</a></p>')
    section.insert(1, nodes.raw("", button, format="html"))


def _add_launch_menu_entry(app: Any, pagename: str, templatename: str, context: dict,
                           doctree: Any) -> None:
    url = lite_url(app, pagename)
    if url is None:
        return
    text = LABELS[_CHAPTER.match(pagename)["lang"]][0]
    for group in context.get("header_buttons", []):
        if group.get("label") == "launch-buttons":
            group["buttons"].append({
                "type": "link",
                "text": "JupyterLite",
                "tooltip": text,
                "icon": "_static/images/logo_jupyterlite.svg",
                "url": url,
                "label": "launch-jupyterlite-button",
            })


def setup(app: Any) -> dict[str, Any]:
    app.add_config_value("piilab_lite_chapters", [], "html", types=[list])
    app.add_config_value("piilab_lite_path", "lite", "html", types=[str])
    app.connect("doctree-resolved", _add_button)
    # After sphinx-book-theme's add_launch_buttons (priority 501) has filled header_buttons.
    app.connect("html-page-context", _add_launch_menu_entry, priority=503)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
