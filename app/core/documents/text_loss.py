"""Pages whose text vanished although the page draws text (a damaged content stream).

MuPDF repairs what it can and carries on quietly: a flipped byte in a compressed
content stream ends the stream there ("zlib error … treating as end of file"), and
the page's text stops with it — often all of it. The signs kept here, per page:
MuPDF's own warnings while the page's text was read, fonts in the page's resources,
text-showing operators (Tj, TJ, ', ") in its decoded content. A page without text,
fonts or text operators (a scan, a blank page) is not a loss.
"""
from __future__ import annotations

import re

import pymupdf

from app.core.documents.content_stream import MAX_DECODED, decoded_pieces

MAX_LISTED = 20     # page warnings listed one by one; the rest in one line
_TEXT_OPS = re.compile(rb"(?:T[jJ]|['\"])\s")


def reset() -> None:
    """Forget MuPDF's warnings so far (call before reading one page)."""
    pymupdf.TOOLS.mupdf_warnings(reset=True)


def check(page: pymupdf.Page | None, number: int, text: str) -> str | None:
    """A one-line warning when page `number` lost its text, else None. Call right after
    reading its text (MuPDF's warnings are collected between reset() and now)."""
    # "ignoring zlib error: incorrect data check": a bad checksum after intact data.
    warned = "\n".join(line for line in pymupdf.TOOLS.mupdf_warnings(reset=True).splitlines()
                       if line.strip() and not line.startswith("ignoring "))
    if page is None:
        return f"p. {number}: the page could not be read (damaged file?)"
    empty = not text.strip()
    if not warned and not empty:
        return None
    fonts = _has_fonts(page)
    if empty and (fonts or _draws_text(page)):
        return f"p. {number}: the page draws text but none could be extracted (damaged file?)"
    if warned and not empty:
        first = warned.splitlines()[0][:80]
        return f"p. {number}: the page's content is damaged ({first}); some of its text may be missing"
    return None


def summarise(losses: list[tuple[int, str]]) -> list[str]:
    """At most MAX_LISTED page lines, then one line for the rest."""
    lines = [line for _, line in losses]
    if len(lines) <= MAX_LISTED:
        return lines
    rest = [n for n, _ in losses[MAX_LISTED:]]
    return lines[:MAX_LISTED] + [f"{len(rest)} more pages lost text or are damaged "
                                  f"(pp. {', '.join(map(str, rest[:40]))}{'…' if len(rest) > 40 else ''})"]


def _has_fonts(page: pymupdf.Page) -> bool:
    try:
        return bool(page.get_fonts())
    except Exception:  # noqa: BLE001 - broken resources: no evidence either way
        return False


def _draws_text(page: pymupdf.Page) -> bool:
    """A text operator in the page's content, read in pieces up to MAX_DECODED: a blank page
    whose stream inflates to 1 GiB was decoded whole here (969 MB)."""
    decoded = 0
    try:
        for xref in page.get_contents():
            tail = b""                                 # an operator may straddle two pieces
            for piece in decoded_pieces(page.parent, xref):
                if piece is None:
                    break
                decoded += len(piece)
                if _TEXT_OPS.search(tail + piece):
                    return True
                if decoded > MAX_DECODED:
                    return False
                tail = piece[-2:]
    except Exception:  # noqa: BLE001
        return False
    return False
