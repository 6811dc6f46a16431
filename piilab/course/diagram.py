"""The pipeline drawing of chapter 01: an inline SVG built from `piilab.course.ch01.PIPELINE`."""

from __future__ import annotations

import html

from piilab.course.ch01 import PIPELINE
from piilab.course.lang import page_language, say


class SvgFigure:
    """An SVG drawing that notebooks and the book display inline (`_repr_svg_`, `_repr_html_`).

    The HTML form embeds the SVG in the page, so its text is selectable and searchable.
    """

    def __init__(self, svg: str, alt: str) -> None:
        self.svg = svg
        self.alt = alt

    def _repr_svg_(self) -> str:
        return self.svg

    def _repr_html_(self) -> str:
        label = html.escape(self.alt)
        return f'<div class="piilab-figure" role="img" aria-label="{label}">{self.svg}</div>'

    def __repr__(self) -> str:
        return f"<SvgFigure: {self.alt}>"


#: The diagram's own words: page messages `ch01.diagram_<name>` (`piilab/course/messages/`).
_DIAGRAM_WORDS = ("alt", "mapping", "mapping_note", "gold", "legend_raw", "legend_masked",
                  "legend_mapping")

_RAW = ("#fde4e1", "#b83227")  # fill, stroke: stages that handle raw PII
_MASKED = ("#e2f3df", "#2e7d32")  # the stage that sees masked text only
_KEY = ("#fff1c7", "#9a6b00")  # the mapping


def pipeline_diagram(lang: str | None = None) -> SvgFigure:
    """Draw `PIPELINE` as an inline SVG (labels in `lang`, default `page_language()`).

    The stages run left to right on the top row and right to left on the bottom row; colours
    say which stages see raw PII; dashed lines carry the gold labels and the mapping.
    """
    lang = lang or page_language()
    text = {word: say(f"ch01.diagram_{word}", lang=lang) for word in _DIAGRAM_WORDS}
    width, height = 900, 410
    box_w, box_h = 190, 66
    columns = (20, 240, 460, 680)
    top, bottom = 24, 174
    # Snake layout: stages 1-4 on the top row (left to right), 5-8 below (right to left).
    positions = [(columns[i], top) for i in range(4)] + [(columns[3 - i], bottom) for i in range(4)]
    font = "font-family=\"'Noto Sans CJK JP','Noto Sans JP','Hiragino Sans',system-ui,sans-serif\""
    mono = "font-family=\"'DejaVu Sans Mono',Menlo,Consolas,monospace\""

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="100%" style="max-width:{width}px" role="img" '
        'aria-labelledby="piilab-pipeline-title">',
        f'<title id="piilab-pipeline-title">{html.escape(text["alt"])}</title>',
        "<defs>"
        '<marker id="piilab-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse">'
        '<path d="M0,0 L10,5 L0,10 z" fill="#444"/></marker>'
        "</defs>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
    ]

    def arrow(x1: float, y1: float, x2: float, y2: float, dashed: bool = False) -> str:
        dash = ' stroke-dasharray="6 5"' if dashed else ""
        return (
            f'<path d="M{x1},{y1} L{x2},{y2}" stroke="#444" stroke-width="2" fill="none"{dash} '
            'marker-end="url(#piilab-arrow)"/>'
        )

    def polyline(points: list[tuple[float, float]]) -> str:
        d = " ".join(f"{'M' if i == 0 else 'L'}{x},{y}" for i, (x, y) in enumerate(points))
        return (
            f'<path d="{d}" stroke="#9a6b00" stroke-width="2" fill="none" stroke-dasharray="6 5" '
            'marker-end="url(#piilab-arrow)"/>'
        )

    # Solid arrows: the pipeline order.
    for i in range(len(PIPELINE) - 1):
        (x1, y1), (x2, y2) = positions[i], positions[i + 1]
        if y1 == y2 and x2 > x1:  # top row, rightwards
            parts.append(arrow(x1 + box_w, y1 + box_h / 2, x2 - 2, y2 + box_h / 2))
        elif y1 == y2:  # bottom row, leftwards
            parts.append(arrow(x1, y1 + box_h / 2, x2 + box_w + 2, y2 + box_h / 2))
        else:  # down from the end of the top row
            parts.append(arrow(x1 + box_w / 2, y1 + box_h, x2 + box_w / 2, y2 - 2))

    # Dashed: gold labels from the generated data to the evaluation.
    gx = columns[0] + box_w / 2
    parts.append(arrow(gx, top + box_h, gx, bottom - 2, dashed=True))
    parts.append(
        f'<text x="{gx + 8}" y="{(top + box_h + bottom) / 2 + 5}" font-size="13" fill="#444" '
        f"{font}>{html.escape(text['gold'])}</text>"
    )

    # The mapping: written by `mask`, read by `restore`, never handed downstream.
    key_x, key_y, key_w, key_h = columns[2], 286, box_w, 54
    mask_x, restore_x = positions[4][0], positions[6][0]
    key_mid = key_y + key_h / 2
    mask_mid, restore_mid = mask_x + box_w / 2, restore_x + box_w / 2
    below = bottom + box_h
    parts.append(polyline([(mask_mid, below), (mask_mid, key_mid), (key_x + key_w + 2, key_mid)]))
    parts.append(polyline([(key_x, key_mid), (restore_mid, key_mid), (restore_mid, below + 2)]))
    parts.append(
        f'<rect x="{key_x}" y="{key_y}" width="{key_w}" height="{key_h}" rx="8" '
        f'fill="{_KEY[0]}" stroke="{_KEY[1]}" stroke-width="2"/>'
        f'<text x="{key_x + key_w / 2}" y="{key_y + 22}" text-anchor="middle" font-size="14" '
        f'font-weight="bold" fill="#222" {font}>{html.escape(text["mapping"])}</text>'
        f'<text x="{key_x + key_w / 2}" y="{key_y + 42}" text-anchor="middle" font-size="12" '
        f'fill="#444" {font}>{html.escape(text["mapping_note"])}</text>'
    )

    # The stage boxes, drawn last so arrows end at their edges.
    for number, (stage, (x, y)) in enumerate(zip(PIPELINE, positions, strict=True), start=1):
        fill, stroke = _RAW if stage.raw_pii else _MASKED
        title = f"{number} · {stage.title[lang]}"
        size = min(16, int((box_w - 14) / _text_width(title)))  # shrink long (CJK) titles to fit
        parts.append(
            f'<g class="piilab-stage" data-stage="{stage.id}">'
            f'<rect x="{x}" y="{y}" width="{box_w}" height="{box_h}" rx="8" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="2"/>'
            f'<text x="{x + box_w / 2}" y="{y + 27}" text-anchor="middle" font-size="{size}" '
            f'font-weight="bold" fill="#222" {font}>{html.escape(title)}</text>'
            f'<text x="{x + box_w / 2}" y="{y + 50}" text-anchor="middle" font-size="12" '
            f'fill="#333" {mono}>{html.escape(stage.api)}</text>'
            "</g>"
        )

    # Legend.
    legend_y = 375
    for i, ((fill, stroke), label) in enumerate(
        (
            (_RAW, text["legend_raw"]),
            (_MASKED, text["legend_masked"]),
            (_KEY, text["legend_mapping"]),
        )
    ):
        x = 20 + i * 290
        parts.append(
            f'<rect x="{x}" y="{legend_y}" width="22" height="16" rx="3" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="2"/>'
            f'<text x="{x + 30}" y="{legend_y + 13}" font-size="14" fill="#222" {font}>'
            f"{html.escape(label)}</text>"
        )
    parts.append("</svg>")
    return SvgFigure("".join(parts), text["alt"])


def _text_width(text: str) -> float:
    """Rough width of `text` in ems: a CJK character is one em, anything else about 0.6."""
    return sum(1.0 if ord(char) > 0x2E80 else 0.6 for char in text)
