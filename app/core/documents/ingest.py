"""One document from file to pages + chunks, without touching the library."""
from __future__ import annotations

import gc
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable

from app.core.documents.chunking import Piece, make_chunks
from app.core.documents.errors import NoTextLayer
from app.core.documents.pdf import (
    GARBAGE_LIMIT,
    RawFile,
    extract_pages,
    garbage_ratio,
    open_pdf,
)
from app.core.documents.structure import (
    detect_language,
    edge_keys,
    line_key,
    running_keys,
    strip_running,
)
from app.core.documents.types import Page


@dataclass
class Ingested:
    raw: RawFile
    title: str
    lang: str
    pages: list[Page]
    pieces: list[Piece]
    warnings: list[str] = field(default_factory=list)


def ingest(raw: RawFile, password: str | None = None,
           progress: Callable[[int, int], None] | None = None) -> Ingested:
    doc, warnings = open_pdf(raw, password)
    try:
        pages = extract_pages(doc, progress)
        meta_title = (doc.metadata or {}).get("title") or ""
    finally:
        doc.close()
    with _gc_paused():
        return _analyse(raw, pages, meta_title, warnings)


@contextmanager
def _gc_paused():
    """The structure pass makes ~10^5 small containers (lines, units) and no reference
    cycles, so the cyclic collector only walks the growing heap again and again (~20%
    of the pass on a 2,000-page PDF). Paused here only, not while MuPDF objects come
    and go; restored as it was."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _analyse(raw: RawFile, pages: list[Page], meta_title: str, warnings: list[str]) -> Ingested:
    """Garbled pages, running headers/footers, language, title and chunks."""
    name = raw.path.name
    garbled = {p.number for p in pages if garbage_ratio(p.text) > GARBAGE_LIMIT}
    usable = [p for p in pages if p.number not in garbled and p.text.strip()]
    if not usable:
        if garbled:
            raise NoTextLayer(f"{name}: the text layer is unreadable (fonts without a Unicode map)"
                              " — OCR is not available")
        raise NoTextLayer(f"{name} has no text layer (scanned?) — OCR is not available")
    if garbled:
        warnings.append(f"{len(garbled)} of {len(pages)} pages have an unreadable text layer "
                        f"({_ranges(sorted(garbled))}) and are not searchable")
    lines = [p.text.splitlines() if p.number not in garbled else [] for p in pages]
    edges = [edge_keys(page_lines) for page_lines in lines]
    keys = running_keys(lines, edges)
    # A page that is nothing but its "running" line (a 5-page "Hello world") keeps it.
    body = [strip_running(page_lines, keys, edge) or [l for l in page_lines if l.strip()]
            for page_lines, edge in zip(lines, edges)]
    return Ingested(raw=raw, title=_title(meta_title, lines, keys, raw), warnings=warnings,
                    lang=detect_language([p.text for p in usable]), pages=pages,
                    pieces=make_chunks(body))


_JUNK_TITLE = re.compile(r"^(untitled|microsoft word\b|document\d*$|\s*$)", re.I)


def _title(meta: str, lines: list[list[str]], keys: set[str], raw: RawFile) -> str:
    """Metadata title when meaningful, else the running header, else the first line."""
    if meta and not _JUNK_TITLE.match(meta):
        return meta.strip()
    for page_lines in lines:
        for line in page_lines:
            if line.strip() and (line_key(line) in keys) and re.search(r"[^\W\d_]{3}", line):
                return line.strip()
    first = next((l.strip() for pl in lines for l in pl if len(l.strip()) > 3), "")
    return first[:120] if first else raw.path.stem


def _ranges(numbers: list[int]) -> str:
    """[2, 3, 4, 7] → 'pp. 2-4, 7'."""
    spans: list[list[int]] = []
    for n in numbers:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return "pp. " + ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in spans)
