"""A page's content streams read in bounded pieces, and how much text a page could draw.

A content stream is stored deflated: a 1 MB file can inflate to 1 GiB. Decoding it whole (to look
for text operators, or for table rules) held all of it; letting MuPDF extract the text of a page
that draws one 52 MB string held ~100 bytes per character (5 GB). So: decode in pieces with a
budget, and measure the characters a page's strings hold before MuPDF is asked for its text.
"""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

import pymupdf

PIECE = 1 << 20
MAX_DECODED = 64 << 20     # a page whose content decodes past this is not read (a decompression bomb)
MAX_CHARS = 2_000_000      # characters a page's strings may hold: MuPDF keeps ~100 bytes for each
# In a content stream: an escape, a literal string's parentheses, a dictionary's or a hex string's angles.
_DELIMS = re.compile(rb"\\.|[()]|<<|>>|[<>]", re.S)
_DO = re.compile(rb"/[^\s/<>\[\]()]+\s+Do\b")


def decoded_pieces(doc: pymupdf.Document, xref: int):
    """A content stream decoded piece by piece (Flate, the usual filter, or none); a stream
    with another filter is decoded by MuPDF only when it is small (else one None: too big)."""
    kind, value = doc.xref_get_key(xref, "Filter")
    filters = value.strip("[]").split() if kind != "null" else []
    if filters in ([], ["/FlateDecode"]) and doc.xref_get_key(xref, "DecodeParms")[0] == "null":
        raw = doc.xref_stream_raw(xref) or b""
        if not filters:
            yield raw
            return
        inflate, pending = zlib.decompressobj(), raw
        while pending and not inflate.eof:
            try:
                piece = inflate.decompress(pending, PIECE)
            except zlib.error:             # damaged: MuPDF recovers what it can of it
                return
            pending = inflate.unconsumed_tail
            if not piece:
                return
            yield piece
        return
    if len(doc.xref_stream_raw(xref) or b"") <= PIECE // 16:
        yield doc.xref_stream(xref) or b""
    else:
        yield None


@dataclass
class Measure:
    decoded: int = 0         # bytes decoded (past the budget: stopped there)
    chars: int = 0           # bytes inside literal strings plus half the digits of hex strings
    draws: int = 0           # Do operators (each may draw a form again)

    @property
    def over(self) -> bool:
        return self.decoded > MAX_DECODED


def measure(doc: pymupdf.Document, xref: int, count_chars: bool = True) -> Measure:
    """Decode one stream within MAX_DECODED, counting its strings' characters and its Do operators."""
    out, depth, in_hex, start = Measure(), 0, False, 0
    for piece in decoded_pieces(doc, xref):
        if piece is None:
            out.decoded = MAX_DECODED + 1
            return out
        out.decoded += len(piece)
        if out.decoded > MAX_DECODED:
            return out
        out.draws += len(_DO.findall(piece)) if b"Do" in piece else 0
        if not count_chars:
            continue
        start = 0
        for m in _DELIMS.finditer(piece):
            token, at = m.group(), m.start()
            if depth:                                  # inside a literal string: only parentheses count
                if token == b"(":
                    depth += 1
                elif token == b")":
                    depth -= 1
                    if not depth:
                        out.chars += at - start
            elif in_hex:
                if token == b">":
                    out.chars += (at - start) // 2
                    in_hex = False
            elif token == b"(":
                depth, start = 1, at + 1
            elif token == b"<":
                in_hex, start = True, at + 1
        if depth:
            out.chars += len(piece) - start
        elif in_hex:
            out.chars += (len(piece) - start) // 2
    return out


def too_much(page: pymupdf.Page, forms_seen: dict[int, Measure] | None = None) -> str | None:
    """Why MuPDF must not be asked for this page's text (one line), or None. The page's own
    content counts, and each form it draws once per Do (a form drawing forms: theirs multiply).
    A bound at C speed first (each decoded byte one character); the strings are counted only
    past it. `forms_seen`: forms measured so far in this document (pages share them)."""
    forms_seen = {} if forms_seen is None else forms_seen
    doc = page.parent
    xrefs = list(page.get_contents())
    own = Measure()
    for xref in xrefs:
        seen = measure(doc, xref, count_chars=False)
        own.decoded, own.draws = own.decoded + seen.decoded, own.draws + seen.draws
        if own.over:
            return f"its drawing instructions decode to over {MAX_DECODED >> 20} MB (a decompression bomb?)"
    children: dict[int, set[int]] = {}            # invoker (0: the page) → the forms it draws
    for xref, _name, invoker, *_ in page.get_xobjects():
        if xref > 0 and doc.xref_get_key(xref, "Subtype")[1] == "/Form":
            children.setdefault(invoker, set()).add(xref)

    def quick(xref: int) -> Measure:
        if xref not in forms_seen:
            forms_seen[xref] = measure(doc, xref, count_chars=False)
        return forms_seen[xref]

    if sum(quick(x).decoded for kids in children.values() for x in kids) + own.decoded > MAX_DECODED:
        return f"its drawing instructions decode to over {MAX_DECODED >> 20} MB (a decompression bomb?)"
    if _drawn(own.decoded, own.draws, 0, children, lambda x: (quick(x).decoded, quick(x).draws)) <= MAX_CHARS:
        return None
    exact = {x: measure(doc, x) for kids in children.values() for x in kids}
    page_chars = page_draws = 0
    for xref in xrefs:
        seen = measure(doc, xref)
        page_chars, page_draws = page_chars + seen.chars, page_draws + seen.draws
    drawn = _drawn(page_chars, page_draws, 0, children, lambda x: (exact[x].chars, exact[x].draws))
    if drawn > MAX_CHARS:
        return f"it draws about {drawn:,} characters (over {MAX_CHARS:,})"
    return None


def _drawn(chars: int, draws: int, node: int, children: dict[int, set[int]], size, depth: int = 0) -> int:
    """Characters drawn by `node` (0: the page): its own, plus each Do drawing its largest form."""
    kids = children.get(node, ()) if depth < 8 else ()     # deeper nesting: counted as its own bytes
    largest = max((_drawn(*size(k), k, children, size, depth + 1) for k in kids if k != node), default=0)
    return chars + draws * largest
