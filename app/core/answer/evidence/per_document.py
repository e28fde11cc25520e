"""What the cards read from a whole document, computed once per document content and kept for
the last few documents: its sentences (split once), and what each reader derives from them
(definitions.py: its definitions; across.py: its sentences' words in English)."""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Generic, TypeVar

from app.core.search.page_text import PageText

T = TypeVar("T")
KEPT = 8        # documents kept between questions


class PerDocument(Generic[T]):
    """A value per document, keyed by its SHA-256 (the same file has the same pages), the
    `KEPT` most recently read kept."""

    def __init__(self, kept: int = KEPT):
        self._kept: OrderedDict[str, T] = OrderedDict()
        self._size = kept
        self._lock = threading.Lock()

    def get(self, info, compute: Callable[[], T]) -> T:
        with self._lock:
            if info.sha256 in self._kept:
                self._kept.move_to_end(info.sha256)
                return self._kept[info.sha256]
        value = compute()
        with self._lock:
            self._kept[info.sha256] = value
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return value


_sentences: PerDocument[list[tuple[int, str]]] = PerDocument()


def sentences(library, info) -> list[tuple[int, str]]:
    """(page, text) of every sentence of the document that is not a heading, in order."""
    def split() -> list[tuple[int, str]]:
        reader = PageText(lambda p: library.page_text(info.id, p), info.page_count)
        return [(p, s.text) for p in range(1, info.page_count + 1) for s in reader.sentences(p) if not s.heading]
    return _sentences.get(info, split)
