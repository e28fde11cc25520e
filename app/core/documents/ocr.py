"""OCR for pages without a text layer: Tesseract (Debian's `tesseract-ocr`, English and
`chi_sim`) run as a subprocess, so it adds no Python dependency and opens no network
connection (onnxruntime-based engines phone home: issue 15.1).

The recognised lines are written back as an invisible text layer (render mode 3) on a
copy of the PDF (`searchable_copy`); the page text kept in the library is what MuPDF
extracts from that copy, so citations are checked against, and highlighted on, exactly
the text the viewer's copy holds.
"""
from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pymupdf

from app.core import cpu_work, paths
from app.core.textnorm import IDEOGRAPH_CLASS

DPI = 300               # Tesseract's sweet spot; a 150-dpi scan gains from the upsampling
MAX_PIXELS = 40_000_000   # an A3 page at 300 dpi is 17 M; larger pages are rendered coarser
MIN_DPI = 30
MIN_CONFIDENCE = 60     # mean word confidence below this: try the other language
LANGS = ("eng", "chi_sim")
TIMEOUT_S = 120         # one page; a hung tesseract must not hang ingestion
_CJK = f"[{IDEOGRAPH_CLASS}\u3000-\u303f\uff00-\uffef]"
_CJK_GAP = re.compile(f"(?<={_CJK}) +(?={_CJK})|(?<={_CJK}) +(?=[,.;:!?)])|(?<=[(]) +(?={_CJK})")
_LATIN = pymupdf.Font("helv")
_CHINESE: pymupdf.Font | None = None


class OcrFailed(Exception):
    """Tesseract missing a language or failing on a page (str: one line)."""


class PageUnreadable(OcrFailed):
    """One page could not be rendered (MuPDF's limits, a damaged image): that page is skipped."""


@dataclass(frozen=True)
class Line:
    text: str
    rect: pymupdf.Rect      # in the page's visible coordinates (points), as PyMuPDF uses them


@dataclass(frozen=True)
class PageText:
    number: int             # 1-based
    lines: tuple[Line, ...]
    lang: str               # the Tesseract language that won
    confidence: float       # mean word confidence, 0-100


def engine() -> str | None:
    return shutil.which("tesseract")


@functools.lru_cache(maxsize=1)
def languages() -> frozenset[str]:
    exe = engine()
    if not exe:
        return frozenset()
    out = subprocess.run([exe, "--list-langs"], capture_output=True, text=True, timeout=30)
    return frozenset(line.strip() for line in out.stdout.splitlines()[1:] if line.strip())


def available() -> bool:
    return "eng" in languages()


def needs_ocr(page: pymupdf.Page, text: str) -> bool:
    """No text at all, but the page shows an image (a scan), not a blank page."""
    if text.strip():
        return False
    try:
        return bool(page.get_images(full=False))
    except Exception:  # noqa: BLE001 - broken resources: nothing to read
        return False


def recognise(page: pymupdf.Page, langs: tuple[str, ...] = LANGS, first: str | None = None) -> PageText:
    """The page's lines as Tesseract reads them; the language tried first is `first`
    (the previous page's winner), the other only when confidence is low."""
    return read_render(render(page), langs, first)


@dataclass(frozen=True)
class Render:
    number: int             # 1-based
    png: bytes              # grey, at `dpi`
    dpi: int


def render(page: pymupdf.Page) -> Render:
    """The page as Tesseract reads it (MuPDF: on the calling thread only)."""
    dpi = render_dpi(page.rect)
    try:
        pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
        return Render(page.number + 1, pix.tobytes("png"), dpi)
    except Exception as exc:  # noqa: BLE001 - MuPDF's limits (FzErrorLimit) or a damaged image
        raise PageUnreadable(f"page {page.number + 1} could not be rendered: {exc}") from None


def read_render(img: Render, langs: tuple[str, ...] = LANGS, first: str | None = None) -> PageText:
    """Tesseract on one render (any thread: it runs as a child process). With no language to
    try first, every language is read at once on its own core and the most confident wins
    (a Chinese scan read in English first took two passes a page until a page had won)."""
    to_pdf = pymupdf.Matrix(72 / img.dpi, 72 / img.dpi)   # pixels → the page's visible coordinates

    def page_text(lang: str, found) -> PageText:
        lines, conf = found
        return PageText(img.number, tuple(Line(t, r * to_pdf) for t, r in lines), lang, conf)
    if first not in langs:
        # all at once; the others stop as soon as the first language reads it confidently
        stop = threading.Event()
        with ThreadPoolExecutor(max_workers=len(langs)) as pool:
            futures = [pool.submit(_tesseract, img.png, lang, stop if n else None) for n, lang in enumerate(langs)]
            head = page_text(langs[0], futures[0].result())
            if head.confidence >= MIN_CONFIDENCE:
                stop.set()
                return head
            results = [head]
            for lang, future in zip(langs[1:], futures[1:]):
                with contextlib.suppress(_Stopped):
                    results.append(page_text(lang, future.result()))
        confident = [r for r in results if r.confidence >= MIN_CONFIDENCE]
        return (confident or sorted(results, key=lambda r: -r.confidence))[0]
    order = sorted(langs, key=lambda lang: lang != first)
    best: PageText | None = None
    for lang in order:
        found = page_text(lang, _tesseract(img.png, lang))
        if best is None or found.confidence > best.confidence:
            best = found
        if found.confidence >= MIN_CONFIDENCE:
            break
    assert best is not None
    return best


def _render_or_none(doc: pymupdf.Document, number: int) -> Render | None:
    """A page MuPDF cannot load (a cycle in the page tree) or render is skipped, not the document."""
    try:
        return render(doc.load_page(number - 1))
    except PageUnreadable:
        return None
    except Exception:  # noqa: BLE001 - MuPDF's own error classes for damaged trees
        return None


def render_dpi(rect: pymupdf.Rect) -> int:
    """DPI, lowered for a huge page so its render stays within MAX_PIXELS (a 10,000-px page at
    300 dpi was beyond MuPDF's limit and refused the document)."""
    inches = max(rect.width * rect.height, 1.0) / (72 * 72)
    return max(MIN_DPI, min(DPI, int((MAX_PIXELS / inches) ** 0.5)))


class _Stopped(Exception):
    """Another language already read the page confidently."""


def _tesseract(png: bytes, lang: str, stop: threading.Event | None = None) -> tuple[list[tuple[str, pymupdf.Rect]], float]:
    exe = engine()
    if not exe:
        raise OcrFailed("Tesseract is not installed (apt-get install tesseract-ocr tesseract-ocr-chi-sim)")
    # One thread: pages are the parallel unit (with its default OpenMP threads, spinning on a busy
    # 2-core machine, Tesseract alone read a page 3.6× slower than with one thread).
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    with tempfile.NamedTemporaryFile(suffix=".png") as image:   # a file: stdin would be written while we wait
        image.write(png)
        image.flush()
        proc = subprocess.Popen([exe, image.name, "stdout", "-l", lang, "--psm", "3", "tsv"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        out, err = _wait(proc, stop)
    if proc.returncode != 0:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["failed"]
        raise OcrFailed(f"Tesseract ({lang}): {tail[0][:160]}")
    return _parse_tsv(out.decode("utf-8", "replace"))


def _wait(proc: subprocess.Popen, stop: threading.Event | None) -> tuple[bytes, bytes]:
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        try:
            return proc.communicate(timeout=0.1)
        except subprocess.TimeoutExpired:
            if (stop is not None and stop.is_set()) or time.monotonic() > deadline:
                proc.kill()
                proc.communicate()
                if stop is not None and stop.is_set():
                    raise _Stopped from None
                raise OcrFailed(f"Tesseract took more than {TIMEOUT_S} s on one page") from None


def _parse_tsv(tsv: str) -> tuple[list[tuple[str, pymupdf.Rect]], float]:
    """Words → lines (block, paragraph, line), each with its bounding box in pixels."""
    lines: dict[tuple[str, str, str], list[tuple[str, pymupdf.Rect]]] = {}
    confs: list[float] = []
    for row in tsv.splitlines()[1:]:
        cols = row.split("\t")
        if len(cols) < 12 or cols[0] != "5" or not cols[11].strip():
            continue
        left, top, width, height = map(int, cols[6:10])
        confs.append(float(cols[10]))
        lines.setdefault((cols[2], cols[3], cols[4]), []).append(
            (cols[11].strip(), pymupdf.Rect(left, top, left + width, top + height)))
    out = []
    for words in lines.values():
        rect = pymupdf.Rect(words[0][1])
        for _, r in words[1:]:
            rect |= r
        out.append((_CJK_GAP.sub("", " ".join(w for w, _ in words)), rect))
    return out, (sum(confs) / len(confs) if confs else 0.0)


def _font_for(text: str) -> pymupdf.Font:
    """Helvetica has Latin-1 only (“ ” would come back as ·); MuPDF's CJK font has the rest."""
    global _CHINESE
    if max(map(ord, text), default=0) > 0xFF:
        if _CHINESE is None:
            _CHINESE = pymupdf.Font("china-s")
        return _CHINESE
    return _LATIN


def write_text_layer(page: pymupdf.Page, lines: tuple[Line, ...]) -> None:
    """Invisible text (render mode 3), each line sized to span its box, so a search
    for a quote finds rectangles over the scanned words. A TextWriter lays glyphs with
    the font's own metrics (insert_text's CJK font advances Latin letters full-width)."""
    writer = pymupdf.TextWriter(page.rect)
    for line in lines:
        font = _font_for(line.text)
        width = font.text_length(line.text, fontsize=1)
        if width <= 0 or line.rect.is_empty:
            continue
        size = min(line.rect.width / width, line.rect.height * 1.2)
        baseline = pymupdf.Point(line.rect.x0, line.rect.y1 - 0.2 * line.rect.height)
        writer.append(baseline, line.text, font=font, fontsize=size)
    writer.write_text(page, render_mode=3)


def copy_path(sha256: str) -> Path:
    """Where the searchable copy of the document with this SHA-256 lives."""
    return paths.ocr_dir() / f"{sha256}.pdf"


def copied_from(path: str | Path) -> str | None:
    """The SHA-256 of the document whose searchable copy `path` is, or None: the copy is only
    a way of showing that document, never a document of its own (issue 33.2)."""
    path = Path(path)
    if not re.fullmatch(r"[0-9a-f]{64}\.pdf", path.name):
        return None
    try:
        inside = path.resolve().parent == paths.ocr_dir().resolve()
    except OSError:
        return None
    return path.stem if inside else None


def searchable_copy(sha256: str) -> Path | None:
    """The copy the viewer should show instead of the original, if OCR made one."""
    path = copy_path(sha256)
    return path if path.is_file() else None


def make_searchable(doc: pymupdf.Document, numbers: list[int], sha256: str,
                    progress: Callable[[int, int], None] | None = None) -> tuple[Path, list[PageText]]:
    """OCR pages `numbers` (1-based) of `doc`, write the copy with their text layers
    (atomically: a half-written copy is never shown) and return it with what was read."""
    read: list[PageText] = []
    last = None
    workers = max(1, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        # as many pages at once as there are cores (Tesseract one thread each), a group a turn of
        # the CPU scheduler: a question asked meanwhile waits at most one group
        for start in range(0, len(numbers), workers):
            group = numbers[start:start + workers]
            with cpu_work.scheduler.turn("OCR"):
                renders = [r for r in map(lambda n: _render_or_none(doc, n), group) if r is not None]
                found = []
                if last is None and renders:       # the first page decides the language
                    found.append(read_render(renders.pop(0)))
                    last = found[0].lang
                lang = last
                found += pool.map(lambda r: read_render(r, first=lang), renders)
            for page_text in found:
                write_text_layer(doc.load_page(page_text.number - 1), page_text.lines)
                read.append(page_text)
            if progress:                           # a page at a time, as the progress bar counts
                for done in range(start + 1, start + len(group) + 1):
                    progress(done, len(numbers))
    dest = copy_path(sha256)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_suffix(f".part{os.getpid()}")
    doc.save(str(part), garbage=1, deflate=True)
    paths.private_file(part, create=False)     # MuPDF writes 0644 under the usual umask
    os.replace(part, dest)
    return dest, read
