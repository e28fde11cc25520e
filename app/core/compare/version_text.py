"""A version of a contract as its clauses: every word with its page and PyMuPDF's own rectangle,
running headers and footers dropped, cut where a clause number opens a line ("12.2.", "Section 5",
"第五条"). What the redline aligns and diffs; the rectangles are what the window lights up."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.core.documents.structure import edge_keys, heading_of, running_keys, short_title
from app.core.textnorm import CJK_CLASS, drop_cjk_spaces, nfkc

Rect = tuple[float, float, float, float]
# A clause's number, as its first words, never compared as body text (a renumbered clause
# is not a changed one): "12.2.", "Section", "5", "Article", "VII", "第五条".
_NUMBER = re.compile(r"(?i)\s*(?:(?:section|clause|article|§)\s*)?(?:第\s*[零〇一二三四五六七八九十百千万两\d]+\s*条"
                     r"|\d+(?:\.\d+)*\.?|[ivxlcdm]+\.?)")
_CJK = re.compile(f"[{CJK_CLASS}]")
_CJK_PIECE = re.compile(f"[{CJK_CLASS}]|[^{CJK_CLASS}\\s]+")
# curly quotes and dashes as plain ones (what a re-typed clause has instead)
_PLAIN = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2010": "-",
                        "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-"})
_DEFINED = re.compile(r"^[\"“]([^\"”]{1,60})[\"”]")


@dataclass(frozen=True)
class Word:
    text: str            # as printed (a word broken at a line end joined: "Third-" + "Party")
    norm: str            # what is compared (norm_word): no ligatures, plain quotes, no hyphens
    page: int            # 1-based
    rects: tuple[Rect, ...]


@dataclass
class Clause:
    key: str             # "12.2" ("" for what comes before the first number)
    label: str           # as printed: "12.2", "Section 5", "第五条"
    title: str           # "Consequential Damages Waiver", the defined term of a definition, or ""
    words: list[Word] = field(default_factory=list)    # the body, the number's own words left out

    @property
    def pages(self) -> list[int]:
        return sorted({w.page for w in self.words})

    @property
    def page(self) -> int:
        return self.words[0].page if self.words else 0

    @property
    def text(self) -> str:
        return joined(self.words)

    @property
    def norms(self) -> list[str]:
        return [w.norm for w in self.words]

    def name(self) -> str:
        """ "12.2 Consequential Damages Waiver" (what the change list calls it)."""
        return " ".join(p for p in (self.label or "(opening)", self.title) if p)


def joined(words: list[Word]) -> str:
    """Words as read: spaces between them, none between Chinese characters."""
    return drop_cjk_spaces(" ".join(w.text for w in words))


def norm_word(text: str) -> str:
    """NFKC (no ligatures), plain quotes and dashes, and no hyphens: a line end splits
    "know-how" or "Third-Party" in one layout and not in the other, and a hyphen that stays
    or goes at a line end cannot be told from one typed or deleted."""
    plain = nfkc(text).translate(_PLAIN)
    return plain.replace("-", "") or plain


def open_version(path, password: str | None = None) -> list[Clause]:
    """A PDF file's clauses; the typed one-line errors of ingestion for a file that cannot be
    read, and for one without a text layer (a scan: nothing to compare until it is OCRed)."""
    from app.core.documents.read_errors import NoTextLayer
    from app.core.documents.pdf import open_pdf, read_file
    raw = read_file(path)
    doc, _ = open_pdf(raw, password)
    with doc:
        clauses = read_version(doc)
    if not any(c.words for c in clauses):
        raise NoTextLayer(f"{raw.path.name} has no text layer (scanned?): nothing to compare")
    return clauses


def read_version(doc) -> list[Clause]:
    """An open pymupdf.Document → its clauses in reading order."""
    pages = [_page_lines(page) for page in doc]
    texts = [[" ".join(w[4] for w in line) for line in lines] for lines in pages]
    edges = [edge_keys(t) for t in texts]
    running = running_keys(texts, edges)
    clauses = [Clause("", "", "")]
    last: tuple[int, ...] = ()
    for number, (lines, line_texts, edge) in enumerate(zip(pages, texts, edges), start=1):
        drop = {i for i, k in edge.items() if k in running}
        for i, (line, text) in enumerate(zip(lines, line_texts)):
            if i in drop:
                continue
            heading = heading_of(text)
            if heading is not None and heading.level <= 2 and _follows(heading.key, last):
                last = _numbers(heading.key) or last
                clauses.append(Clause(heading.key, heading.label, heading.title))
                _add_words(clauses[-1], line, number)
                _drop_number(clauses[-1], text)
            else:
                _add_words(clauses[-1], line, number)
    for clause in clauses[1:]:        # the opening (title, parties) goes by no name of its own
        clause.title = _title(clause.text, clause.title)
    return [c for c in clauses if c.words or c.key]


def _page_lines(page) -> list[list[tuple]]:
    """The page's words grouped in lines, in the order MuPDF reads them."""
    lines: dict[tuple[int, int], list[tuple]] = {}
    for w in page.get_text("words"):
        lines.setdefault((w[5], w[6]), []).append(w)
    return list(lines.values())


def _drop_number(clause: Clause, line: str) -> None:
    """The clause's first words less its number ("12.2.", "Section 5", the 第五条 of a Chinese
    line, whose characters are words of their own)."""
    m = _NUMBER.match(line)
    left = len("".join(m.group().split())) if m else 0
    while left > 0 and clause.words and len(clause.words[0].text) <= left:
        left -= len(clause.words.pop(0).text)


def _add_words(clause: Clause, line: list[tuple], page: int) -> None:
    words = clause.words
    for n, (x0, y0, x1, y1, text, *_) in enumerate(line):
        prev = words[-1] if words else None
        # a word broken at the previous line's end ("Third-" / "Party"): one word, two rectangles
        if n == 0 and prev and prev.page == page and re.search(r"[^\W\d]-$", prev.text) and text[:1].isalpha():
            whole = prev.text + text
            words[-1] = Word(whole, norm_word(whole), page, prev.rects + ((x0, y0, x1, y1),))
        elif _CJK.search(text):
            words += _characters(text, (x0, y0, x1, y1), page)
        else:
            words.append(Word(text, norm_word(text), page, ((x0, y0, x1, y1),)))


def _characters(text: str, rect: Rect, page: int) -> list[Word]:
    """Chinese has no spaces: a "word" is a whole run of text, so each Chinese character is
    compared on its own (a run of other characters, "2007", stays one word); its rectangle
    its share of the run's width (CJK characters are all as wide)."""
    x0, y0, x1, y1 = rect
    step = (x1 - x0) / len(text)
    return [Word(m.group(), norm_word(m.group()), page, ((x0 + m.start() * step, y0, x0 + m.end() * step, y1),))
            for m in _CJK_PIECE.finditer(text) if not m.group().isspace()]


def _numbers(key: str) -> tuple[int, ...]:
    parts = key.split(".")
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) else ()


def _follows(key: str, last: tuple[int, ...]) -> bool:
    """A dotted number may open a clause only where it could come next: after 12.1, 12.2 or 13
    but not 17.5 (a cross-reference "Section 17.5 (Order of Precedence)" wrapped to a line's
    start). Numbers of other kinds (第五条, Article VII) are taken as found."""
    nums = _numbers(key)
    if not nums or not last:
        return True
    if nums <= last:
        return False
    if nums[0] == last[0]:
        common = 0
        while common < min(len(nums), len(last)) and nums[common] == last[common]:
            common += 1
        nxt = nums[common] if common < len(nums) else 0
        prev = last[common] if common < len(last) else 0
        return nxt - prev <= 3
    return nums[0] - last[0] <= 2 and all(n <= 3 for n in nums[1:])


def _title(text: str, heading: str = "") -> str:
    """A clause's name: a definition's term ("“Action” means …" → "Action"), else the heading's
    own words ("11. Insurance" on a line of its own), else its first words up to a stop
    ("Payment. Customer will …" → "Payment")."""
    m = _DEFINED.match(text)
    if m:
        return m.group(1)
    return heading or short_title(text[:100])
