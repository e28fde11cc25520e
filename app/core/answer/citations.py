"""Quote ↔ page text matching and highlight rectangles.

A model's quote is checked against the text of the page it cites (normalised: ligatures,
hyphenation, whitespace, case). A quote found on another page of the same document is
re-pointed there; a near-verbatim quote (small slips) is replaced by the page's own words.
Anything else stays unverified: shown as such, never silently dropped or trusted.
A quote too short to mean anything on its own ("rent") is never verified (MIN_QUOTE_WORDS,
MIN_QUOTE_CJK): a one-word match says nothing about the claim.

Found on the page is not the same as supporting the answer, so a second, separate check
(`supports`, in app.core.answer.support) scores each verified quote against the answer
and the question; `with_support` fills Citation.support, and `checked` says in words what
was checked ("quote found on p. 7"), which is what the badge shows.
"""
from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass, field

from app.core.answer.injection import looks_like_instruction
from app.core.documents import tables
from app.core.documents.quote_boxes import quote_boxes
from app.core.textnorm import cjk_count, drop_cjk_spaces, join_hyphenation, normalize

NEAR_MATCH = 0.88      # SequenceMatcher ratio accepted as "the same words, small slips"
MIN_QUOTE_CHARS = 4
# Shortest quote that is verified at all: every gold quote of dev.jsonl has ≥ 6 words or
# ≥ 19 CJK characters, and the prompt asks for 5-40 words; 4 words / 8 CJK characters leave
# room for a short clause ("the fee is 1,850") and refuse "rent", "Section 5", "违约金".
MIN_QUOTE_WORDS = 4
MIN_QUOTE_CJK = 8
MAX_QUOTABLE = 1500    # more sentences than this: the quote stays a free string (checked afterwards)
QUOTE_WORDS = 40       # the prompt asks for 5-40 words: longer sentences are offered cut to this
QUOTE_CJK_CHARS = 80   # the same for Chinese (no spaces to count words by)


@dataclass(frozen=True)
class Citation:
    doc_id: int
    doc: str                  # the document's path as the user gave it
    page: int                 # 1-based
    quote: str
    verified: bool
    rects: tuple[tuple[float, float, float, float], ...] = field(default_factory=tuple)
    note: str = ""            # e.g. "page corrected from 3", "near-verbatim"
    support: str = "unclear"  # "supports" | "unclear" | "contradicts" (support.supports)

    @property
    def checked(self) -> str:
        """What was checked, in words: the badge text."""
        if self.verified:
            return f"quote found on p. {self.page}"
        if quote_too_short(self.quote):
            return "quote too short to check"
        return "quote not found in the document"

    def to_dict(self) -> dict:
        return {"doc": self.doc, "page": self.page, "quote": self.quote,
                "verified": self.verified, "checked": self.checked, "support": self.support,
                **({"note": self.note} if self.note else {})}


def quote_too_short(quote: str) -> bool:
    """Fewer than MIN_QUOTE_WORDS words and fewer than MIN_QUOTE_CJK CJK characters."""
    text = " ".join(quote.split())
    return len(text.split()) < MIN_QUOTE_WORDS and cjk_count(text) < MIN_QUOTE_CJK


def with_support(citations: list[Citation], answer: str, question: str) -> list[Citation]:
    """The citations with `support` set by the second check: whether each quote (verified
    ones only: an unverified quote supports nothing) backs the answer's claim."""
    from dataclasses import replace

    from app.core.answer.support import supports
    return [replace(c, support=supports(c.quote, answer, question) if c.verified else "unclear")
            for c in citations]


@dataclass(frozen=True)
class Match:
    page: int
    quote: str          # the words as they stand on the page (or the model's quote if exact)
    exact: bool
    cell: bool = False  # a table-cell quote: its row header, column header and value found


def _near_match(quote_n: str, page_n: str) -> str | None:
    """Best window of page text matching the quote with ratio ≥ NEAR_MATCH, or None."""
    if len(quote_n) < 12 or len(page_n) < len(quote_n) // 2:
        return None
    sm = difflib.SequenceMatcher(None, page_n, quote_n, autojunk=False)
    best, best_ratio = None, 0.0
    for block in sm.get_matching_blocks():
        if block.size < 6:
            continue
        start = max(0, block.a - block.b)
        window = page_n[start:start + len(quote_n)]
        ratio = difflib.SequenceMatcher(None, window, quote_n, autojunk=False).ratio()
        if ratio > best_ratio:
            best, best_ratio = _whole_words(page_n, start, start + len(quote_n)), ratio
    return best if best_ratio >= NEAR_MATCH else None


def _whole_words(text: str, start: int, end: int) -> str:
    """text[start:end] widened to whole words: a window aligned on the quote's characters
    can start or end inside a word ("is agreement is the only …" for "This Agreement is
    the only …", seen in CI), which no reader would call the page's wording."""
    if not cjk_count(text[start:end]):
        while start > 0 and text[start - 1].isalnum():
            start -= 1
        while end < len(text) and text[end].isalnum():
            end += 1
    return text[start:end].strip()


# What `normalize` folds each plain character from, so a normalised quote finds the page's
# own characters again: curly quotes, dashes, and a word broken at a line end ("liabil-\nity").
_PRINTED_CLASS = {'"': "[\"\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb]",
                  "'": "['\u2018\u2019\u201a\u201b\u2032\u00b4]",
                  "-": "[-\u2010-\u2015\u2212\ufe58\ufe63\uff0d]"}
_SOFT_BREAK_IN_WORD = r"(?:-[ \t]*\n\s*|\u00ad)?"


def _printed_word(word: str) -> str:
    parts = []
    for prev, char in zip(" " + word, word):
        if prev.islower() and char.islower():
            parts.append(_SOFT_BREAK_IN_WORD)
        parts.append(_PRINTED_CLASS.get(char) or re.escape(char))
    return "".join(parts)


def _as_printed(window: str, page_text: str) -> str:
    """The page's own characters (case, curly quotes, dashes, spacing) for a normalised
    window, when its words can be found in order on the page; else the window. `normalize`
    casefolds and straightens quotes: a card must show neither (issue 33: a quote with
    “MNDA” was shown casefolded because straight quotes did not match the page's curly ones)."""
    words = window.split()
    if not words or cjk_count(window):
        return window
    found = re.search(r"\s+".join(_printed_word(w) for w in words), page_text, re.I)
    if not found:
        return window
    return " ".join(_SOFT_HYPHENATION.sub("", found.group()).split())


_SOFT_HYPHENATION = re.compile(r"(?<=[a-z])(?:-[ \t]*\n\s*|\u00ad)(?=[a-z])")


_PAGE_MARK = re.compile(r"^(?:\[doc \d+, p\. \d+\](?: \(best match\))?|=== doc \d+: .*===)$", re.M)
_SENTENCE_END = re.compile(r"(?<=[.;:!?])\s+|(?<=[。；！？])")


@functools.lru_cache(maxsize=4)      # follow-up questions send the same context
def quotable(context: str) -> tuple[str, ...]:
    """The sentences of a prompt's document text, as the model may quote them: page
    markers dropped, line wraps and hyphenation joined, long sentences cut to the quote
    length the prompt asks for. The answer schema offers exactly these as quotes, so a
    model (a small one especially) cannot misquote: every quote is the page's own words,
    and `verify` still checks the page. Empty when there are too many to list."""
    out: dict[str, None] = {}
    for block in _PAGE_MARK.split(context):
        if block.lstrip().startswith(tables.MARKER):
            # a table chunk: each cell line ("Fees | Annual = $12,000") is a quote of its own
            sentences = [" ".join(line.split()) for line in block.splitlines()[1:]]
        else:
            text = drop_cjk_spaces(" ".join(join_hyphenation(block).split()))
            sentences = _SENTENCE_END.split(text)
        for sentence in sentences:
            sentence = _cut(sentence.strip())
            long_enough = cjk_count(sentence) >= MIN_QUOTE_CJK or (
                len(sentence.split()) >= MIN_QUOTE_WORDS and len(sentence) >= 12)
            if long_enough and not looks_like_instruction(sentence):   # never offer an injection
                out[sentence] = None
                if len(out) > MAX_QUOTABLE:
                    return ()
    return tuple(out)


def _cut(sentence: str) -> str:
    if cjk_count(sentence) > len(sentence) // 2:
        return sentence[:QUOTE_CJK_CHARS]
    words = sentence.split(" ")
    return " ".join(words[:QUOTE_WORDS])


def locate(quote: str, page: int, pages: dict[int, str]) -> Match | None:
    """Find the quote on the cited page, else on its neighbours, else anywhere in the document."""
    quote_n = normalize(quote)
    if len(quote_n) < MIN_QUOTE_CHARS or quote_too_short(quote_n):
        return None
    order = [page, page - 1, page + 1] + [p for p in sorted(pages) if abs(p - page) > 1]
    normed = {p: normalize(pages[p]) for p in order if p in pages}
    for p, text in normed.items():
        at = text.find(quote_n)
        if at >= 0:
            whole = _whole_words(text, at, at + len(quote_n))
            # shown as printed: the page's whole words, its case and its quote marks
            printed = _as_printed(whole, pages[p])
            return Match(p, quote if printed == whole == quote_n else printed, True)
    for p in [q for q in (page, page - 1, page + 1) if q in normed]:
        window = _near_match(quote_n, normed[p])
        if window:
            return Match(p, _as_printed(window, pages[p]), False)
    cell = tables.split_cell_quote(quote)
    if cell is not None:
        # "row | column = value" is the index's form of a cell, not the page's running text:
        # every part must stand on the page (the value on its own, not inside a longer number)
        labels, value = cell
        for p in [q for q in order if q in normed]:
            text = normed[p]
            if all(normalize(label) in text for label in labels) and _stands_alone(normalize(value), text):
                return Match(p, quote, True, cell=True)
    return None


def _stands_alone(value: str, text: str) -> bool:
    """`value` occurs in `text` not as part of a longer number or word ("$1,000" in "$11,000" no)."""
    return bool(value) and re.search(rf"(?<![\w.,]){re.escape(value)}(?![\w]|[.,]\d)", text) is not None


def verify(doc_id: int, doc: str, page: int, quote: str, pages: dict[int, str]) -> Citation:
    """Turn a model's (doc, page, quote) into a Citation with verified set honestly."""
    match = locate(quote, page, pages)
    if match is None:
        return Citation(doc_id, doc, page, quote, False)
    note = ["table cell: row, column and value found"] if match.cell else []
    if match.page != page:
        note.append(f"page corrected from {page}")
    if not match.exact:
        note.append("near-verbatim: page wording shown")
    return Citation(doc_id, doc, match.page, match.quote, True, note="; ".join(note))


def highlight_rects(pdf_path: str, page: int, quote: str, password: str | None = None
                    ) -> list[tuple[float, float, float, float]]:
    """Rectangles (PDF points, unrotated page space) covering the quote on that page."""
    from app.core.documents.pdf import authenticate, open_path    # names that are not UTF-8; such passwords

    with open_path(pdf_path) as doc:
        if doc.needs_pass and not authenticate(doc, password or ""):
            return []
        pg = doc[page - 1]
        rects = tables.cell_rects(pg, quote) if tables.split_cell_quote(quote) else []
        if rects:
            return [(r.x0, r.y0, r.x1, r.y1) for r in rects]
        boxes = quote_boxes(pg, quote)
        if boxes:
            return boxes
        # the page's own characters: search_for does not fold “curly” into "straight"
        # quotes, and a run of words with one mismatched quote mark was left unlit
        quote = _as_printed(normalize(quote), pg.get_text())
        rects = pg.search_for(quote) or _search_in_pieces(pg, quote)
        return [(r.x0, r.y0, r.x1, r.y1) for r in rects]


def _search_in_pieces(pg, quote: str) -> list:
    """Quotes that cross hyphenated line ends or odd spacing: search shorter runs of words."""
    words = quote.split()
    if len(words) <= 3:          # Chinese has no spaces: split by length instead
        words = [quote[i:i + 8] for i in range(0, len(quote), 8)]
        return [r for piece in words if len(piece) >= 2 for r in pg.search_for(piece)][:40]
    rects, step = [], 4
    for i in range(0, len(words), step):
        piece = " ".join(words[i:i + step])
        if len(piece) >= 6:
            rects += pg.search_for(piece)
    return rects[:40]
