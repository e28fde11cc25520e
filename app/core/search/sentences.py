"""A page's text → its sentences as printed, each with the clause heading it sits under.

Line wraps and hyphenation are joined (a quote is one line of words), a clause heading line
("9. Governing Law and Jurisdiction. This MNDA …", "第十条 …") starts a new block and names
the clause of what follows, and sentences end at . ? ! (before a capital, a digit or a
quote) and at 。！？；. A sentence longer than a card can show is cut at its semicolons,
then into windows of words, each still a verbatim run of the page."""
from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.documents.structure import after_label, heading_of
from app.core.textnorm import cjk_count, drop_cjk_spaces, join_hyphenation

MAX_WORDS = 60          # longer sentences are cut (a card shows a sentence or two, not a clause)
WINDOW_WORDS = 45
MAX_CJK = 110
WINDOW_CJK = 80
_END_EN = re.compile(r"(?<=[A-Za-z\)\]”\"'’%][.?!])\s+(?=[\"“(\[A-Z0-9])")
_END_ZH = re.compile(r"(?<=[。！？；])")
_SEMI = re.compile(r"(?<=;)\s+|(?<=；)")


@dataclass(frozen=True)
class Sentence:
    text: str         # the page's words, whitespace collapsed
    clause: str       # "9. Governing Law and Jurisdiction", "第十条", or "" (none found yet)
    heading: bool     # the sentence is the clause's own heading ("9. Governing Law and Jurisdiction.")


def clause_name(line: str) -> str:
    """The heading a line starts with, as shown on a card: number and title."""
    h = heading_of(line)
    if h is None:
        return ""
    label = f"Section {h.label}" if re.fullmatch(r"\d+(\.\d+)*", h.label) else h.label
    return f"{label} {h.title}".strip() if h.title else label


_SUB_LABELS = re.compile(r"(?:\([^)]*\)|（[^）]*）)+$")


def clause_after(clause: str, line: str) -> str:
    """The clause in force from `line` on: a clause heading names it; a sub-item ("(a)",
    "（一）") is named within the clause it sits in ("Section 14.1(a) Subscription Terms"),
    never alone; "" when the line heads nothing."""
    h = heading_of(line)
    if h is None:
        return ""
    if h.level < 3 or not clause:
        return clause_name(line)
    base, _ = _number(clause)
    return " ".join([base + h.label] + clause.split(" ")[len(base.split(" ")):])


# A chart's axis glyphs ('!" #" $!"') hold no word: not a sentence.
_WORDLIKE = re.compile(r"[^\W\d_]{2}|[\u4e00-\u9fff]")
_LONE_LABEL = re.compile(r"^\s*\(([a-z]|[ivx]{1,4}|\d{1,2})\)\s*$")
_CAPTION = re.compile(r"^\s*(?:Figure|Fig\.|Table)\s+\d+[.:]")


def _figure_lines(lines: list[str]) -> tuple[set[int], set[int]]:
    """(a figure's panel labels, its caption's first line): "(a)" "(b)" "(c)" on lines of their own,
    then "Figure 6. …". Panel labels are not sub-clauses and join no sentence; a caption starts
    its own. A contract's lone "(a)" is followed by the item's text, so it stays a sub-clause."""
    text = [i for i, line in enumerate(lines) if line.strip()]
    panels, captions = set(), {i for i in text if _CAPTION.match(lines[i])}
    for k, i in enumerate(text):
        if _LONE_LABEL.match(lines[i]):
            j = k + 1
            while j < len(text) and _LONE_LABEL.match(lines[text[j]]):
                j += 1
            if j < len(text) and text[j] in captions:
                panels.update(text[k:j])
    return panels, captions


def _blocks(page_text: str, clause: str) -> list[tuple[str, str, str]]:
    """(clause, heading line's start or "", text) per block of lines under one heading."""
    blocks, lines, head = [], [], ""
    page_lines = join_hyphenation(page_text).splitlines()
    panels, captions = _figure_lines(page_lines)
    for n, line in enumerate(page_lines):
        if n in panels:
            continue
        if n in captions and lines:
            blocks.append((clause, head, _join(lines)))
            head, lines = "", []
        name = clause_after(clause, line)
        if name and line.strip():
            if lines:
                blocks.append((clause, head, _join(lines)))
            clause, head, lines = name, line.strip(), []
        if line.strip():
            lines.append(line.strip())
    if lines:
        blocks.append((clause, head, _join(lines)))
    return blocks


def _join(lines: list[str]) -> str:
    return drop_cjk_spaces(" ".join(" ".join(lines).split()))


def _pieces(sentence: str) -> list[str]:
    """A sentence short enough for a card, or its pieces: at semicolons, then windows."""
    chinese = cjk_count(sentence) > len(sentence) // 3
    if (cjk_count(sentence) if chinese else len(sentence.split())) <= (MAX_CJK if chinese else MAX_WORDS):
        return [sentence]
    parts = [p for p in _SEMI.split(sentence) if p.strip()]
    if len(parts) == 1:
        return _windows(sentence, chinese)
    return [w for p in parts for w in _pieces(p)]


def _windows(text: str, chinese: bool) -> list[str]:
    if chinese:
        step = WINDOW_CJK * 2 // 3
        return [text[i:i + WINDOW_CJK] for i in range(0, max(1, len(text) - WINDOW_CJK // 3), step)]
    words = text.split(" ")
    step = WINDOW_WORDS * 2 // 3
    return [" ".join(words[i:i + WINDOW_WORDS]) for i in range(0, max(1, len(words) - WINDOW_WORDS // 3), step)]


def page_sentences(page_text: str, clause: str = "") -> list[Sentence]:
    """The page's sentences in order; `clause`: the heading in force where the page begins
    (the last one of an earlier page)."""
    out = []
    for name, head, text in _blocks(page_text, clause):
        parts = [p for s in _END_ZH.split(text) for p in _END_EN.split(s) if p.strip()]
        for i, part in enumerate(parts):
            is_heading = i == 0 and bool(head) and _only_heading(part, name, head)
            out += [Sentence(piece.strip(), name, is_heading) for piece in _pieces(part.strip())
                    if _WORDLIKE.search(piece)]
    return out


def _only_heading(part: str, name: str, head: str) -> bool:
    """The block's first sentence is no more than its heading ("9. Governing Law and Jurisdiction.").
    An untitled heading (第十条, a sub-item "（一）", "(a)") starts its body on the same line: a short
    item ("（一）配偶；", "(a) patient data;") is content, and only the bare label is a heading."""
    h = heading_of(head)
    if h is not None and not h.title:
        rest = after_label(part)
        return rest is not None and not _WORDLIKE.search(rest)
    if _STATES.search(part):    # "1.19. “Specified Notice Period” is 48 hours.": a clause of one sentence
        return False
    return len(part.split()) <= len(name.split()) + 2 and cjk_count(part) <= cjk_count(name) + 4


# A clause title names a topic ("Governing Law and Jurisdiction", "Fees and payment terms"); a short
# numbered clause that says something has a verb of its own, in lower case.
_STATES = re.compile(r"\b(?:is|are|means|mean|has|have|will|shall|may|must|forms|applies|includes|survives)\b")


def last_clause(page_text: str) -> str:
    """The last clause heading on a page ("" when it has none): in force on the next page."""
    found = ""
    lines = page_text.splitlines()
    panels, _ = _figure_lines(lines)
    for n, line in enumerate(lines):
        found = (clause_after(found, line) if n not in panels else "") or found
    return found


_NUMBER = re.compile(r"^(?:(?:Section|Article|Clause)\s+)?(?:[\dA-Z]{1,3}(?:\.\d+)*\.?(?=[\s(（]|$))?"
                     r"(?:\([^)]*\)|（[^）]*）)*\s*")
_CN_ARTICLE = re.compile(r"^第[^条章节]{1,8}[条章节](?:（[^）]*）)*\s*")


def clause_title(clause: str) -> str:
    """The words of a clause's name without its number: "Section 4.1(a) Service Levels" →
    "Service Levels"; "第十八条" → "" (Chinese articles have no titles)."""
    rest = _CN_ARTICLE.sub("", clause)
    return _NUMBER.sub("", rest, count=1).strip() if rest == clause else rest.strip()


def _number(clause: str) -> tuple[str, bool]:
    """(the clause's number without sub-item labels, whether it names a sub-item)."""
    words = clause.split(" ")
    n = 2 if words[0] in ("Section", "Article") and len(words) > 1 else 1
    number = " ".join(words[:n])
    base = _SUB_LABELS.sub("", number)
    return base, base != number


def lead_in(sentences: list[Sentence], i: int) -> int | None:
    """The index of the sentence introducing sentence i's list ("…不适用下列文书：" before "（一）…"):
    the nearest earlier sentence of the parent clause, past sibling items, when it ends with a colon."""
    base, item = _number(sentences[i].clause)
    if not item:
        return None
    for j in range(i - 1, max(-1, i - 12), -1):
        other, other_item = _number(sentences[j].clause)
        if other != base:
            return None
        if not other_item:
            return j if sentences[j].text.rstrip().endswith((":", "：")) else None
    return None


def items_of(sentences: list[Sentence], i: int) -> list[int]:
    """The indices of the list items sentence i introduces (none unless it ends with a colon)."""
    out = []
    for j in range(i + 1, len(sentences)):
        if lead_in(sentences, j) != i:
            break
        out.append(j)
    return out


def in_context(sentences: list[Sentence], i: int) -> str:
    """Sentence i as its meaning is read (its sentence vector's text): its clause's title and,
    for a list item, the sentence introducing the list, before its own words — "（一）配偶；"
    means nothing alone, "Service Levels: … 99.9% of the time" says what it is about."""
    s = sentences[i]
    title = clause_title(s.clause)
    if title and title.casefold() in s.text.casefold():
        title = ""
    lead = lead_in(sentences, i)
    return " ".join(p for p in (title, sentences[lead].text if lead is not None else "", s.text) if p)
