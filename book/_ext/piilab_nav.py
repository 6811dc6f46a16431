"""Sphinx extension: reading the book one language at a time (loaded from `_config.yml`).

- Previous/Next stay within a track: the English chapter 08 does not lead to the Japanese
  welcome page, nor the Japanese welcome page back to English chapter 08.
- Each chapter page gets a header button to the same chapter in the other language (the
  text link under the title stays for readers without the header).
- Hidden code cells whose source starts with a solution comment (``# Solution`` or
  ``# One possible solution``) get the prompt "Solution" / 「解答」 instead of the generic
  "Show code cell content", so code and prose solutions read the same; on Japanese pages the
  other hidden cells' prompts are Japanese too (「コードを表示」, 「出力を表示」).
- Figures are numbered per track: Sphinx numbers them across the whole book, so the Japanese
  chapter 01's first figure was 図 13; here each track's figures (and the rest of the book's)
  are numbered from 1 in reading order, so a chapter and its twin show the same numbers.

It changes navigation, labels and numbers only, never content.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from docutils import nodes

_PAGE = re.compile(r"^book/(?P<lang>en|ja)/(?P<name>[^/]+)$")
_SOLUTION = re.compile(r"^\s*# (Solution|One possible solution)\b")

#: The prompts of hidden solution cells, per language.
SOLUTION_PROMPTS = {
    "en": ("Solution", "Hide the solution"),
    "ja": ("解答", "解答を隠す"),
}
#: The prompts of the other hidden cells on Japanese pages, by what is hidden (MyST-NB's
#: `hide_mode`; its English prompts are "Show code cell content/source/outputs").
HIDDEN_PROMPTS_JA = {
    "all": ("コードセルを表示", "コードセルを隠す"),
    "input": ("コードを表示", "コードを隠す"),
    "output": ("出力を表示", "出力を隠す"),
    "input+output": ("コードと出力を表示", "コードと出力を隠す"),
}
#: The header button to the other track: its label and tooltip, by the page's language.
TWIN_BUTTON = {
    "en": ("日本語", "この章の日本語版"),
    "ja": ("English", "This chapter in English"),
}


def _language(docname: str) -> str | None:
    match = _PAGE.match(docname)
    return match["lang"] if match else None


def _solution_prompts(app: Any, doctree: nodes.document) -> None:
    lang = _language(app.env.docname)
    if lang is None:
        return
    show, hide = SOLUTION_PROMPTS[lang]
    for node in doctree.findall(nodes.container):
        if node.get("nb_element") != "cell_code" or not node.get("hide_mode"):
            continue
        sources = list(node.findall(nodes.literal_block))
        if sources and _SOLUTION.match(sources[0].astext()):
            node["prompt_show"], node["prompt_hide"] = show, hide
        elif lang == "ja" and node["hide_mode"] in HIDDEN_PROMPTS_JA:
            node["prompt_show"], node["prompt_hide"] = HIDDEN_PROMPTS_JA[node["hide_mode"]]


def _same_track(link: dict | None, lang: str, pagename: str) -> bool:
    """True when a prev/next `link` (relative to `pagename`) stays in book/<lang>/."""
    if not link or not link.get("link"):
        return False
    target = posixpath.normpath(posixpath.join(posixpath.dirname(pagename), link["link"]))
    return target.startswith(f"book/{lang}/")


def _adjust_navigation(app: Any, pagename: str, templatename: str, context: dict,
                       doctree: Any) -> None:
    lang = _language(pagename)
    if lang is None:
        return
    for key in ("prev", "next"):
        if context.get(key) and not _same_track(context[key], lang, pagename):
            context[key] = None
    other = "ja" if lang == "en" else "en"
    twin = f"book/{other}/{_PAGE.match(pagename)['name']}"
    if twin not in app.env.all_docs:
        return
    label, tooltip = TWIN_BUTTON[lang]
    context.setdefault("header_buttons", []).append({
        "type": "link",
        "url": context["pathto"](twin),
        "label": "piilab-twin-language",
        "tooltip": tooltip,
        "text": label,
        "icon": "fas fa-language",
    })


def _track(docname: str) -> str:
    match = _PAGE.match(docname)
    return match["lang"] if match else ""


def number_figures_per_track(
        numbers: dict[str, dict[str, dict[str, tuple[int, ...]]]]) -> list[str]:
    """Renumber Sphinx's figure numbers (`env.toc_fignumbers`: docname -> figure type -> id ->
    number) from 1 within each track, keeping their order; returns the pages that changed.
    Numbers with a section part (a numbered toctree) are left as they are."""
    groups: dict[tuple[str, str], list[tuple[tuple[int, ...], str, str]]] = {}
    for docname, by_type in numbers.items():
        for figtype, by_id in by_type.items():
            for figure_id, number in by_id.items():
                if len(number) == 1:
                    groups.setdefault((_track(docname), figtype), []).append(
                        (number, docname, figure_id))
    changed = set()
    for (_, figtype), entries in groups.items():
        for new, (old, docname, figure_id) in enumerate(sorted(entries), start=1):
            if old != (new,):
                numbers[docname][figtype][figure_id] = (new,)
                changed.add(docname)
    return sorted(changed)


def _renumber_figures(app: Any, env: Any) -> list[str]:
    # After Sphinx's TocTreeCollector (priority 500) has numbered the whole book.
    return number_figures_per_track(env.toc_fignumbers)


def setup(app: Any) -> dict[str, Any]:
    app.connect("env-get-updated", _renumber_figures, priority=600)
    app.connect("doctree-read", _solution_prompts)
    # After the theme's prev/next and header buttons are in the context.
    app.connect("html-page-context", _adjust_navigation, priority=503)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
