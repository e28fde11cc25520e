"""Values that cross layers: pages, chunks, documents, search hits."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Page:
    number: int          # 1-based physical page index
    text: str            # full page text as PyMuPDF extracts it (what citations are checked against)
    width: float = 0.0
    height: float = 0.0


@dataclass(frozen=True)
class Chunk:
    ordinal: int         # position within its document
    page_start: int      # 1-based, inclusive
    page_end: int        # 1-based, inclusive
    section: str         # clause/section label it belongs to ("5.2", "第五条", "Article VII"), or ""
    text: str            # body text, running headers/footers removed


@dataclass(frozen=True)
class DocumentInfo:
    id: int
    sha256: str
    path: str
    title: str
    page_count: int
    lang: str            # "en", "zh" or "mixed"
    warnings: tuple[str, ...] = field(default_factory=tuple)
    last_path: str = ""  # where it was opened from most recently (path = where first added)


@dataclass(frozen=True)
class Hit:
    doc_id: int
    path: str
    page: int            # 1-based page the hit starts on
    score: float         # higher is better
    text: str
    section: str = ""
    page_end: int = 0
