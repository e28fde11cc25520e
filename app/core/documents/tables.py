"""Tables kept as structure: PyMuPDF `find_tables` → one line per cell that carries its
row and column headers ("Fees | Annual = $12,000"), as extra chunks beside the
running-text chunks (which stay as they are, so retrieval over them is unchanged).

`find_tables` costs ~1-2 s a page on a busy CPU, so it runs only on pages whose
drawings have at least two horizontal and two vertical rules (ruled tables; the only
kind the "lines" strategy finds): ~10 ms a page to check.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import pymupdf

from app.core.documents.chunking import MAX_SIZE, Piece
from app.core.documents.content_stream import decoded_pieces as _decoded_pieces
from app.core.documents.types import Chunk

pymupdf.no_recommend_layout()   # find_tables prints an advert on stdout (breaks --json)

MARKER = "[table]"
HEADER_CHARS = 40      # a longer "header" cell is prose, not a column name
HEADER_MARGIN = 36     # points around the ruled area searched with it (a header line above)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffd]")
_PATH_OPS = re.compile(rb"\s(?:re|l)\s")
MAX_CONTENT_BYTES = 16 << 20   # a page's content decoded beyond this is no table worth the memory
_CELL = re.compile(r"^(?P<labels>.+?) = (?P<value>.+)$")


@dataclass(frozen=True)
class Table:
    page: int                     # 1-based
    lines: tuple[str, ...]        # one per cell: "row | column = value"


def clean(cell: str | None) -> str:
    """PyMuPDF's cell text without control characters, on one line."""
    return " ".join(_CONTROL.sub(" ", cell or "").split())


def path_ops(page: pymupdf.Page, limit: int = 4) -> int:
    """How many line and rectangle operators the page's content holds (counting stops at
    `limit`); 0 when its content decodes to more than MAX_CONTENT_BYTES. Read in pieces from
    the compressed stream: a 1 MB file inflating to 1 GiB of spaces was decoded whole, twice
    (944 MB of memory), to find no table."""
    doc, found, decoded = page.parent, 0, 0
    for xref in page.get_contents():
        tail = b""                          # an operator may straddle two pieces
        for piece in _decoded_pieces(doc, xref):
            decoded += len(piece) if piece is not None else MAX_CONTENT_BYTES + 1
            if decoded > MAX_CONTENT_BYTES:
                return 0
            text = tail + piece
            found += sum(m.end() > len(tail) for m in _PATH_OPS.finditer(text))
            if found >= limit:
                return found
            tail = text[-3:]
    return found


def ruled_area(page: pymupdf.Page) -> pymupdf.Rect | None:
    """Where the page's rules lie (their bounding box), when there are at least two long
    horizontal and two vertical ones (or boxes); None otherwise."""
    try:
        if path_ops(page) < 4:
            return None
        drawings = page.get_drawings()
    except Exception:  # noqa: BLE001 - a damaged page has no table worth the risk
        return None
    across = down = 0
    xs: list[float] = []
    ys: list[float] = []
    for path in drawings:
        for item in path["items"]:
            if item[0] == "l":
                a, b = item[1], item[2]
                h = abs(a.y - b.y) < 1 and abs(a.x - b.x) > 20
                v = abs(a.x - b.x) < 1 and abs(a.y - b.y) > 8
                across, down = across + h, down + v
                if h or v:
                    xs += [a.x, b.x]
                    ys += [a.y, b.y]
            elif item[0] == "re":
                r = item[1]
                across += (r.width > 20) * (1 + (r.height > 8))
                down += (r.height > 8) * (1 + (r.width > 20))
                if r.width > 20 or r.height > 8:
                    xs += [r.x0, r.x1]
                    ys += [r.y0, r.y1]
    if across < 2 or down < 2:
        return None
    return pymupdf.Rect(min(xs), min(ys), max(xs), max(ys))


def find(page: pymupdf.Page) -> list[Table]:
    area = ruled_area(page)
    if area is None:
        return []
    # only the ruled part of the page (and a margin above it for a header PyMuPDF takes from
    # there): find_tables reads every character in its clip, which was ~0.5 s a page of prose
    clip = pymupdf.Rect(area.x0 - HEADER_MARGIN, area.y0 - HEADER_MARGIN,
                        area.x1 + HEADER_MARGIN, area.y1 + HEADER_MARGIN) & page.rect
    try:
        found = page.find_tables(clip=clip).tables
    except Exception:  # noqa: BLE001 - table detection is a bonus, never a failure
        return []
    out = []
    for table in found:
        lines = cell_lines(table.extract(), [clean(n) for n in table.header.names], table.header.external)
        if lines:
            out.append(Table(page.number + 1, tuple(lines)))
    return out


def cell_lines(rows: list[list[str | None]], header: list[str], external: bool) -> list[str]:
    """Rows of cells → "row header | column header = value" lines; a row whose only
    text is its first cell (a label or a section row) stays a line of its own."""
    body = [[clean(c) for c in row] for row in (rows if external else rows[1:])]
    # An "external" header is text PyMuPDF took from above the table: often a sentence.
    header = [h if len(h) <= HEADER_CHARS else "" for h in header]
    lines = []
    for row in body:
        if not any(row):
            continue
        label, values = row[0], row[1:]
        said = False
        for j, value in enumerate(values, start=1):
            if not value:
                continue
            column = header[j] if j < len(header) else ""
            names = [n for n in (label, column) if n]
            lines.append(f"{' | '.join(names)} = {value}" if names else value)
            said = True
        if not said and label:
            lines.append(label)
    return lines


def pieces(tables: list[Table], first_ordinal: int) -> list[Piece]:
    """Chunks of table lines (split at MAX_SIZE), each opening with the marker."""
    out: list[Piece] = []
    for table in tables:
        group: list[str] = []
        for line in table.lines + ("",):
            if group and (not line or sum(map(len, group)) + len(line) > MAX_SIZE):
                text = "\n".join([f"{MARKER} p. {table.page}", *group])
                chunk = Chunk(ordinal=first_ordinal + len(out), page_start=table.page,
                              page_end=table.page, section="", text=text)
                out.append(Piece(chunk, (), f"table p. {table.page}", ((table.page, 0),)))
                group = []
            if line:
                group.append(line)
    return out


def split_cell_quote(quote: str) -> tuple[list[str], str] | None:
    """"Fees | Annual = $12,000" → (["Fees", "Annual"], "$12,000"); None for other quotes."""
    m = _CELL.match(" ".join(quote.split()))
    if not m:
        return None
    return [p.strip() for p in m["labels"].split(" | ") if p.strip()], m["value"].strip()


def cell_rects(page: pymupdf.Page, quote: str) -> list[pymupdf.Rect]:
    """Where a table-cell quote's value lies: the occurrence of the value in the row of
    its row header and the column of its column header (when those are found)."""
    parts = split_cell_quote(quote)
    if parts is None:
        return []
    labels, value = parts
    hits = page.search_for(value)
    if not hits:
        return []
    row = page.search_for(labels[0]) if labels else []
    column = page.search_for(labels[1]) if len(labels) > 1 else []

    def fits(r: pymupdf.Rect) -> bool:
        in_row = not row or any(abs((h.y0 + h.y1) / 2 - (r.y0 + r.y1) / 2) < max(r.height, 12) * 3
                                or h.y0 - 2 <= r.y0 <= h.y1 + 40 for h in row)
        in_column = not column or any(h.x0 - 40 <= r.x0 <= h.x1 + 40 and h.y1 <= r.y1 for h in column)
        return in_row and in_column
    return [r for r in hits if fits(r)][:1] or hits[:1]
