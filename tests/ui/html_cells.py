"""Reading the numbers off a page: the cells (``data-col``) of the rows a ``data-*``
attribute names, as the page shows them."""

from __future__ import annotations

from html.parser import HTMLParser


class _Cells(HTMLParser):
    def __init__(self, row_attr: str) -> None:
        super().__init__(convert_charrefs=True)
        self.row_attr = row_attr
        self.rows: dict[str, dict[str, str]] = {}
        self._row: dict[str, str] | None = None
        self._col: str | None = None
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "tr" and self.row_attr in found:
            self._row = self.rows.setdefault(str(found[self.row_attr]), {})
        elif tag == "td" and self._row is not None and "data-col" in found:
            self._col = str(found["data-col"])
            self._row[self._col] = ""
            self._depth = 0
        elif self._col is not None:
            self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr":
            self._row = None
        elif self._col is not None:
            if tag == "td" and self._depth == 0:
                self._col = None
            else:
                self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._row is not None and self._col is not None:
            self._row[self._col] += data


def cells(html: str, row_attr: str) -> dict[str, dict[str, str]]:
    """``{row's attribute value: {data-col: text}}`` of the page's rows with ``row_attr``
    (e.g. ``data-commit``), texts stripped."""
    parser = _Cells(row_attr)
    parser.feed(html)
    return {k: {c: " ".join(t.split()) for c, t in v.items()} for k, v in parser.rows.items()}
