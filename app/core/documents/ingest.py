"""One document from file to pages + chunks, without touching the library."""
from __future__ import annotations

import gc
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable

import pymupdf

from app.core import cpu_work
from app.core.documents import ocr, tables, text_loss
from app.core.documents.chunking import Piece, make_chunks
from app.core.documents.read_errors import Damaged, NoTextLayer
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
    table_pages: list[int] = field(default_factory=list)   # ruled pages left for the table pass


def ingest(raw: RawFile, password: str | None = None,
           progress: Callable[[int, int], None] | None = None,
           ocr_progress: Callable[[int, int], None] | None = None,
           tables_now: bool = True) -> Ingested:
    """`progress(done, total)` per page read; `ocr_progress` per page OCR'd (default:
    `progress` again, counting the OCR pages). Without `tables_now` the ruled pages are
    only listed (`table_pages`, ~1 ms a page) and their tables found later, in the
    background (app.core.library.table_pass): find_tables costs ~0.3 s a ruled page, 10×
    reading its text, and made a table-heavy file searchable at 0.07× bare PyMuPDF's speed."""
    doc, warnings = open_pdf(raw, password)
    try:
        losses: list[tuple[int, str]] = []
        pages = extract_pages(doc, progress, losses)
        warnings += text_loss.summarise(losses)
        pages = _ocr(doc, raw, pages, warnings, ocr_progress or progress)
        found = _tables(doc, pages) if tables_now else []
        ruled = [] if tables_now else ruled_pages(doc, pages)
        meta_title = (doc.metadata or {}).get("title") or ""
    finally:
        doc.close()
    with _gc_paused():
        result = _analyse(raw, pages, meta_title, warnings)
    # Extra chunks: the running-text chunks are unchanged (tables.py says why).
    result.pieces += tables.pieces(found, first_ordinal=len(result.pieces))
    result.table_pages = ruled
    return result


def ruled_pages(doc, pages: list[Page]) -> list[int]:
    """Pages with text that draw at least four lines or boxes (tables.path_ops, read from the
    content stream: ~1 ms a page); the table pass looks at their drawings."""
    out = []
    for p in pages:
        if p.text.strip() and (page := _page(doc, p.number)) is not None and tables.path_ops(page) >= 4:
            out.append(p.number)
    return out


def _page(doc, number: int):
    """Page `number` (1-based), or None when MuPDF cannot load it (a cycle in the page tree):
    that page is refused, not the document (extract_pages already said it was lost)."""
    try:
        return doc.load_page(number - 1)
    except Exception:  # noqa: BLE001 - MuPDF raises its own error classes for damaged trees
        return None


def _tables(doc, pages: list[Page]) -> list[tables.Table]:
    """Ruled tables of the pages with text, a page a turn of the CPU scheduler (a question
    asked meanwhile pre-empts the detection)."""
    found: list[tables.Table] = []
    for p in pages:
        if p.text.strip():
            with cpu_work.scheduler.turn("table detection"):
                page = _page(doc, p.number)
                found += tables.find(page) if page is not None else []
    return found


def _ocr(doc, raw: RawFile, pages: list[Page], warnings: list[str],
         progress: Callable[[int, int], None] | None) -> list[Page]:
    """Pages without a text layer that show an image get their text from OCR, read
    back from the searchable copy the viewer shows (ocr.make_searchable)."""
    need = [p.number for p in pages
            if not p.text.strip() and (page := _page(doc, p.number)) is not None and ocr.needs_ocr(page, p.text)]
    if not need:
        return pages
    if not ocr.available():
        warnings.append(f"{len(need)} of {len(pages)} pages have no text layer ({_ranges(need)}) and "
                        "OCR is not installed (apt-get install tesseract-ocr tesseract-ocr-chi-sim)")
        return pages
    try:
        copy, read = ocr.make_searchable(doc, need, raw.sha256, progress)
    except ocr.OcrFailed as exc:
        warnings.append(f"OCR failed, {_ranges(need)} not searchable: {exc}")
        return pages
    done = [r.number for r in read]
    with pymupdf.open(str(copy)) as searchable:
        texts = {n: searchable.load_page(n - 1).get_textpage(flags=pymupdf.TEXTFLAGS_TEXT).extractText()
                 for n in done}
    low = [r.number for r in read if r.confidence < ocr.MIN_CONFIDENCE]
    if done:
        warnings.append(f"{len(done)} of {len(pages)} pages read by OCR ({_ranges(done)}); "
                        "their text may have recognition errors"
                        + (f", {_ranges(low)} with low confidence" if low else ""))
    failed = [n for n in need if n not in texts]
    if failed:
        warnings.append(f"OCR could not read {_ranges(failed)} (a page too large or damaged); "
                        "not searchable")
    return [Page(p.number, texts[p.number], p.width, p.height) if p.number in texts else p
            for p in pages]


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
        if any("damaged file?" in w for w in warnings):
            raise Damaged(f"{name}: damaged PDF, the text of every page is lost")
        if refused := [w for w in warnings if ": not read: " in w]:
            raise Damaged(f"{name}: no page could be read within bounds ({refused[0]})")
        if garbled:
            raise NoTextLayer(f"{name}: the text layer is unreadable (fonts without a Unicode map)"
                              " — OCR is not available")
        if not any("OCR" in w for w in warnings):    # no page showed an image to read
            raise NoTextLayer(f"{name}: all {len(pages)} pages are blank (no text and no images)")
        if not ocr.available():
            raise NoTextLayer(f"{name} has no text layer (scanned?) — OCR is not installed "
                              "(apt-get install tesseract-ocr tesseract-ocr-chi-sim)")
        raise NoTextLayer(f"{name} has no text layer (scanned?) and OCR found no text in it")
    if garbled:
        warnings.append(f"{len(garbled)} of {len(pages)} pages have an unreadable text layer "
                        f"({_ranges(sorted(garbled))}) and are not searchable")
    lines = [p.text.splitlines() if p.number not in garbled else [] for p in pages]
    edges = [edge_keys(page_lines) for page_lines in lines]
    keys = running_keys(lines, edges)
    # A page that is nothing but its "running" line (a 5-page "Hello world") keeps it.
    body = [strip_running(page_lines, keys, edge) or [line for line in page_lines if line.strip()]
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
    first = next((line.strip() for pl in lines for line in pl if len(line.strip()) > 3), "")
    return first[:120] if first else _as_text(raw.path.stem)


def _as_text(name: str) -> str:
    """A file name that is not UTF-8 (lone surrogates in Python) with its odd bytes written \\xe9:
    stored and searched as text, it would fail to encode."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return os.fsencode(name).decode("utf-8", "backslashreplace")


def _ranges(numbers: list[int]) -> str:
    """[2, 3, 4, 7] → 'pp. 2-4, 7'."""
    spans: list[list[int]] = []
    for n in numbers:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return "pp. " + ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in spans)
