"""Open and validate a PDF, then extract its pages (one pass, no per-word work)."""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pymupdf

from app.core.documents import content_stream, text_loss
from app.core.documents.read_errors import (
    Damaged,
    EmptyFile,
    FileMissing,
    NotAPdf,
    PasswordRequired,
    WrongPassword,
)
from app.core.documents.types import Page

# MuPDF prints repair chatter on stderr; we report problems ourselves.
pymupdf.TOOLS.mupdf_display_errors(False)
pymupdf.TOOLS.mupdf_display_warnings(False)

_MAGIC = [(b"PK\x03\x04", "a ZIP/Office file (e.g. .docx)"), (b"\x89PNG", "a PNG image"),
          (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"),
          (b"II*\x00", "a TIFF image"), (b"MM\x00*", "a TIFF image"),
          (b"{\\rtf", "an RTF document"), (b"\xd0\xcf\x11\xe0", "an old Office document")]
GARBAGE_LIMIT = 0.2   # share of unusable characters above which a page is unreadable


@dataclass
class RawFile:
    path: Path
    sha256: str
    size: int


_ESCAPED_BYTE = re.compile(rb"\\x([89a-f][0-9a-f])")     # only bytes that UTF-8 can leave undecoded


def on_disk(path: str | Path) -> Path:
    """The file `path` names. The library stores a name that is not UTF-8 with its odd bytes
    written \\xe9 (SQLite text is UTF-8); such a stored path, opened as it reads, named no file,
    so when it does not exist its \\xNN are read back as the name's own bytes."""
    p = Path(path).expanduser()
    text = str(p)
    if "\\x" not in text or p.exists():
        return p
    try:
        raw = _ESCAPED_BYTE.sub(lambda m: bytes([int(m.group(1), 16)]), text.encode("utf-8"))
    except UnicodeEncodeError:              # already the name's bytes (lone surrogates)
        return p
    try:
        raw.decode("utf-8")
        return p          # valid UTF-8 would never have been written \\xNN: not our form, no other file
    except UnicodeDecodeError:
        pass
    real = Path(os.fsdecode(raw))
    return real if real.exists() else p


def read_file(path: str | Path) -> RawFile:
    """Check the file and hash it, streaming (a 500 MB scan is never held in memory)."""
    p = on_disk(path).resolve()
    if p.is_dir():
        raise NotAPdf(f"{path}: is a folder, not a PDF")
    if p.exists() and not p.is_file():    # a FIFO would hang the read, /dev/zero never end it
        raise NotAPdf(f"{path}: not a regular file (a pipe, socket or device), not a PDF")
    if not p.is_file():
        raise FileMissing(f"{path}: file not found")     # the path as the user typed it
    digest = hashlib.sha256()
    try:
        with p.open("rb") as f:
            head = f.read(1024)
            digest.update(head)
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
            size = f.tell()
    except OSError as exc:
        raise FileMissing(f"{p.name}: cannot be read ({exc.strerror or exc})") from None
    if not head:
        raise EmptyFile(f"{p.name}: the file is empty (0 bytes)")
    # Trust the content, not the extension: MuPDF would open a renamed .docx.
    if b"%PDF-" not in head:
        kind = next((k for magic, k in _MAGIC if head.startswith(magic)), None)
        raise NotAPdf(f"{p.name}: not a PDF ({kind or 'no %PDF header'})")
    return RawFile(p, digest.hexdigest(), size)


def open_path(path: Path) -> pymupdf.Document:
    """pymupdf.open for any file name: MuPDF takes names as UTF-8, so a name that is not UTF-8
    (Latin-1 bytes, kept by Python as lone surrogates) named another file. Such a file is opened
    by its descriptor's /proc path on Linux, else read into memory."""
    path = on_disk(path)
    try:
        str(path).encode("utf-8")
        return pymupdf.open(str(path), filetype="pdf")
    except UnicodeEncodeError:
        pass
    fd = os.open(path, os.O_RDONLY)
    try:
        if os.path.isdir("/proc/self/fd"):
            return pymupdf.open(f"/proc/self/fd/{fd}", filetype="pdf")    # MuPDF opens its own copy
        with os.fdopen(os.dup(fd), "rb") as fh:
            return pymupdf.open(stream=fh.read(), filetype="pdf")
    finally:
        os.close(fd)


def open_pdf(raw: RawFile, password: str | None = None) -> tuple[pymupdf.Document, list[str]]:
    """MuPDF document plus warnings; raises a DocumentError for what cannot be read."""
    name = raw.path.name
    try:
        doc = open_path(raw.path)
    except Exception as exc:  # MuPDF raises several types for broken files
        raise Damaged(f"{name}: damaged PDF, cannot be opened ({_one_line(exc)})") from None
    warnings: list[str] = []
    if doc.needs_pass:
        if password is None:
            raise PasswordRequired(f"{name} is encrypted: give its password with --password")
        if not authenticate(doc, password):
            raise WrongPassword(f"{name}: wrong password")
    elif _restricted(doc):
        warnings.append("restricted by its owner (printing/copying limited); text read for search only")
    if doc.page_count == 0:
        raise Damaged(f"{name}: damaged PDF (truncated?), no readable pages")
    if doc.is_repaired:
        warnings.append("repaired: content may be incomplete")
    return doc, warnings


def authenticate(doc: pymupdf.Document, password: str) -> bool:
    """MuPDF takes the password as UTF-8 text. Bytes that are not UTF-8 (a Latin-1 terminal; Python
    keeps them as lone surrogates) made it raise TypeError: they are tried as Latin-1 text, which
    is what the older PDF encryptions hash (PDFDocEncoding is close to Latin-1)."""
    try:
        password.encode("utf-8")
    except UnicodeEncodeError:
        password = password.encode("utf-8", "surrogateescape").decode("latin-1")
    try:
        return bool(doc.authenticate(password))
    except (TypeError, ValueError, RuntimeError):
        return False


def _restricted(doc: pymupdf.Document) -> bool:
    full = pymupdf.PDF_PERM_PRINT | pymupdf.PDF_PERM_COPY | pymupdf.PDF_PERM_MODIFY
    return bool(doc.is_pdf and (doc.metadata or {}).get("encryption")
                and (doc.permissions & full) != full)


def extract_pages(doc: pymupdf.Document,
                  progress: Callable[[int, int], None] | None = None,
                  losses: list[tuple[int, str]] | None = None) -> list[Page]:
    """Text of every page exactly as MuPDF gives it (citations are checked against it).

    Plain `get_text()` keeps the content-stream order, which reads two-column layouts
    column by column; `sort=True` would interleave table cells and break quotes.
    `get_textpage(flags=TEXTFLAGS_TEXT).extractText()` is what `get_text()` does for
    plain text, without the wrapper's option handling (~3% of the extraction time).
    `losses` collects (page, warning) for pages whose text vanished (text_loss).
    """
    pages, total, forms_seen = [], doc.page_count, {}
    for i in range(total):
        text_loss.reset()
        too_much = None
        try:
            page = doc.load_page(i)
            rect = page.rect
            too_much = content_stream.too_much(page, forms_seen)   # measured first: MuPDF's extraction is unbounded
            text = "" if too_much else page.get_textpage(flags=pymupdf.TEXTFLAGS_TEXT).extractText()
        except Exception:  # one broken page must not lose the others
            page, text, rect = None, "", pymupdf.Rect()
        if too_much:
            if losses is not None:
                losses.append((i + 1, f"p. {i + 1}: not read: {too_much}"))
            text_loss.reset()
        elif losses is not None and (lost := text_loss.check(page, i + 1, text)):
            losses.append((i + 1, lost))
        pages.append(Page(number=i + 1, text=text, width=rect.width, height=rect.height))
        if progress:
            progress(i + 1, total)
    return pages


_BAD_CHARS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f\ue000-\uf8ff\ufffd\ud800-\udfff]+")


def garbage_ratio(text: str) -> float:
    """Share of visible characters that no font mapped to real text (control codes,
    private-use glyphs, U+FFFD) — what a font without a ToUnicode map produces.
    Counted at C speed (no per-character Python loop): str.split() drops the same
    whitespace as regex \\s, and bad characters are found by runs."""
    bad = sum(map(len, _BAD_CHARS.findall(text)))
    if not bad:                 # most pages: no need to count the visible characters
        return 0.0
    visible = len("".join(text.split()))
    return bad / visible if visible > 0 else 0.0


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:160] or type(exc).__name__
