"""Tables that a chapter computes, shown as real tables in the book, Jupyter, Colab and the browser.

A Markdown string built from ``| a | b |`` rows is not a table everywhere: the book's Markdown
renderer for outputs leaves it as one paragraph of pipes. `Table` is displayed by its HTML form
(``_repr_html_``) wherever HTML is shown, and by an aligned plain-text form elsewhere (a
terminal, nbval's comparison of outputs). It needs only the standard library, so it also works
in Pyodide, where pandas is not available offline.

>>> Table(["label", "values"], [["EMAIL", 3], ["PHONE", 12]])
label  values
-----  ------
EMAIL       3
PHONE      12
"""

from __future__ import annotations

import html
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

from piilab.errors import PiilabError


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)



class TableError(PiilabError):
    """A table whose rows do not match its columns."""

class Table:
    """A computed table: `columns` (header labels) and `rows` (sequences of cells).

    Numbers are right-aligned and floats shown with `digits` decimals; a cell wrapped in
    backticks (```EMAIL```) is shown as code. `caption` is shown above the HTML table.
    """

    def __init__(self, columns: Sequence[str], rows: Iterable[Sequence[Any]], *,
                 caption: str | None = None, digits: int = 3) -> None:
        self.columns = [str(c) for c in columns]
        self.rows = [list(row) for row in rows]
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise TableError(f"row {i} has {len(row)} cells, expected "
                                 f"{len(self.columns)}")
        self.caption = caption
        self.digits = digits

    def _text(self, value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.{self.digits}f}"
        return str(value)

    def _numeric_columns(self) -> list[bool]:
        return [bool(self.rows) and all(_is_number(row[j]) for row in self.rows)
                for j in range(len(self.columns))]

    def __repr__(self) -> str:
        cells = [self.columns] + [[self._text(v).strip("`") for v in row] for row in self.rows]
        widths = [max(len(row[j]) for row in cells) for j in range(len(self.columns))]
        numeric = self._numeric_columns()

        def line(row: list[str]) -> str:
            return "  ".join(cell.rjust(w) if num else cell.ljust(w)
                             for cell, w, num in zip(row, widths, numeric, strict=True)).rstrip()

        rule = "  ".join("-" * w for w in widths)
        return "\n".join([line(cells[0]), rule, *(line(row) for row in cells[1:])])

    def _cell_html(self, value: Any, tag: str, numeric: bool) -> str:
        text = self._text(value)
        if text.startswith("`") and text.endswith("`") and len(text) > 1:
            inner = f"<code>{html.escape(text[1:-1])}</code>"
        else:
            inner = html.escape(text)
        style = ' style="text-align: right"' if numeric else ""
        return f"<{tag}{style}>{inner}</{tag}>"

    def _repr_html_(self) -> str:
        numeric = self._numeric_columns()
        head = "".join(self._cell_html(c, "th", num)
                       for c, num in zip(self.columns, numeric, strict=True))
        body = "".join(
            "<tr>" + "".join(self._cell_html(v, "td", num)
                             for v, num in zip(row, numeric, strict=True)) + "</tr>"
            for row in self.rows)
        caption = f"<caption>{html.escape(self.caption)}</caption>" if self.caption else ""
        return (f'<table class="piilab-table">{caption}<thead><tr>{head}</tr></thead>'
                f"<tbody>{body}</tbody></table>")
