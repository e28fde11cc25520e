"""One document's pages as the evidence reads them, the same at index time (sentence vectors)
and at question time (cards): running headers and footers removed (found on a sample of pages:
"Page 3 of 12 · Common Paper …" would join the sentence it interrupts), and the clause in
force where a page begins."""
from __future__ import annotations

from typing import Callable

from app.core.documents.structure import edge_keys, running_keys, strip_running
from app.core.search.sentences import Sentence, last_clause, page_sentences

LOOK_BACK = 3           # earlier pages searched for the clause a page begins in
SAMPLE_PAGES = 40       # pages read to find a document's running headers and footers


class PageText:
    def __init__(self, read: Callable[[int], str], count: int):
        self._read, self.count = read, count
        self._text: dict[int, str] = {}
        self._raw: dict[int, str] = {}
        step = max(1, count // SAMPLE_PAGES)
        sample = [self.raw(p).splitlines() for p in range(1, count + 1, step)]
        self.running = running_keys(sample)

    def raw(self, page: int) -> str:
        """The page as stored (what quotes are checked against), read once."""
        if page not in self._raw:
            self._raw[page] = self._read(page)
        return self._raw[page]

    def text(self, page: int) -> str:
        """The page without its running headers and footers."""
        if page not in self._text:
            lines = self.raw(page).splitlines()
            self._text[page] = "\n".join(strip_running(lines, self.running, edge_keys(lines)) or lines)
        return self._text[page]

    def clause_before(self, page: int) -> str:
        for earlier in range(page - 1, max(0, page - 1 - LOOK_BACK), -1):
            found = last_clause(self.text(earlier))
            if found:
                return found
        return ""

    def sentences(self, page: int) -> list[Sentence]:
        return page_sentences(self.text(page), self.clause_before(page))
