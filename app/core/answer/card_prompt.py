"""The evidence cards the user sees, as the passages the model reads: each card with its id and
the sentences around it on its page, widened a sentence at a time while the time budget holds.

The cards themselves are the floor: a prompt never carries less than every card's own sentence
(and the sentences either side of the best two), whatever the budget (the user was shown them; a reader given less answers from memory). Context
is what the budget adds: one sentence after and one before each card in turn, best card first,
up to its whole page. Cards whose context meets on one page become one passage holding both ids.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.answer.budget import estimate_tokens
from app.core.answer.conversation import Passage
from app.core.textnorm import cjk_count, drop_cjk_spaces, join_hyphenation, normalize

_SENTENCE_END = re.compile(r"(?<=[.;:!?])\s+(?=\S)|(?<=[。；！？])")
PASSAGE_OVERHEAD = 12        # the card's heading line, in tokens
FLOOR_CONTEXT_CARDS = 2      # the best cards keep a sentence either side (the best one two before) even
                             # on the smallest budget: a card's sentence often names its subject earlier
                             # ("the Test Period" is 15 days there), and the 1.5B model answered 30 without it
SHORT_WORDS, SHORT_CJK = 6, 12   # fewer words (CJK characters) than this: a heading, not a sentence
MATCH_CHARS = 30             # a sentence is the quote's when this much of one is in the other


@dataclass
class _Window:
    ids: list[str]
    quotes: list[str]
    doc: int
    page: int
    clause: str
    sentences: list[str]     # the page's sentences (just the quote when it was not found there)
    lo: int
    hi: int                  # sentences[lo:hi + 1] is the passage

    @property
    def text(self) -> str:
        part = self.sentences[self.lo:self.hi + 1]
        joiner = "" if part and cjk_count(part[0]) > len(part[0]) // 3 else " "
        return joiner.join(part)

    def passage(self) -> Passage:
        return Passage(self.doc, self.page, self.text, ids=tuple(self.ids), quotes=tuple(self.quotes),
                       clause=self.clause)

    def cost(self) -> int:
        return estimate_tokens(self.text) + PASSAGE_OVERHEAD


def page_sentences(text: str) -> list[str]:
    """A page as sentences (and clauses ended by ; or :), line wraps and hyphenation joined."""
    joined = drop_cjk_spaces(" ".join(join_hyphenation(text).split()))
    return [s.strip() for s in _SENTENCE_END.split(joined) if s.strip()]


def _span(sentences: list[str], quote: str) -> tuple[int, int] | None:
    """The first and last sentence the quote covers, or None when it is not on the page."""
    qn = normalize(quote)
    if not qn:
        return None
    normed = [normalize(s) for s in sentences]

    def holds(i: int, part: str) -> bool:
        s = normed[i]       # the quote's start in the sentence, or a whole sentence of the quote
        return part in s or (len(s) >= MATCH_CHARS and s[:MATCH_CHARS] in qn)

    lo = next((i for i in range(len(normed)) if holds(i, qn[:MATCH_CHARS])), None)
    if lo is None:
        return None
    # a quote begun in a piece the split set apart ("2.35." before "“SOW” means …") takes it in
    while lo > 0 and normed[lo - 1] and normed[lo - 1] in qn[:max(0, qn.find(normed[lo][:MATCH_CHARS]))]:
        lo -= 1
    hi = lo
    for i in range(lo, min(len(normed), lo + 12)):
        if qn[-MATCH_CHARS:] in normed[i] or (len(normed[i]) >= MATCH_CHARS and normed[i] in qn):
            hi = i
        if qn[-MATCH_CHARS:] in normed[i]:
            break
    return lo, hi


def _short(sentence: str) -> bool:
    """A heading or a label ("(b) Deemed Acceptance.", "第十九条"), not a sentence that says anything."""
    return len(sentence.split()) < SHORT_WORDS and cjk_count(sentence) < SHORT_CJK


def _widen(w: _Window, before: int) -> None:
    """`before` sentences that say something before the card and one after (the headings and
    labels on the way taken too)."""
    for _ in range(before):
        for _ in range(4):
            if w.lo == 0 or not _short(w.sentences[w.lo - 1]):
                break
            w.lo -= 1
        w.lo = max(0, w.lo - 1)
    for _ in range(4):
        if w.hi + 1 >= len(w.sentences) or not _short(w.sentences[w.hi + 1]):
            break
        w.hi += 1
    w.hi = min(len(w.sentences) - 1, w.hi + 1)


def card_window(card_id: str, card, page_text: str) -> _Window:
    sentences = page_sentences(page_text)
    span = _span(sentences, card.quote)
    if span is None:                         # a table cell's "row | column = value", a quote cut
        return _Window([card_id], [card.quote], card.number, card.page, card.clause, [card.quote], 0, 0)
    return _Window([card_id], [card.quote], card.number, card.page, card.clause, sentences, *span)


def _merge(windows: list[_Window]) -> list[_Window]:
    """Windows on one page that overlap or touch become one (the better one's place, both ids)."""
    out: list[_Window] = []
    for w in windows:
        into = next((o for o in out if (o.doc, o.page) == (w.doc, w.page) and o.sentences == w.sentences
                     and w.lo <= o.hi + 1 and o.lo <= w.hi + 1), None)
        if into is None:
            out.append(w)
            continue
        into.ids += w.ids
        into.quotes += w.quotes
        into.lo, into.hi = min(into.lo, w.lo), max(into.hi, w.hi)
    return out


def card_passages(cards: list[tuple[str, object]], page_text, budget: int, context: bool = True) -> list[Passage]:
    """The passages for `cards` ((id, EvidenceCard) best first), each card's sentence always and
    the sentences around it while the total stays within `budget` tokens. `page_text(card)`:
    the text of the card's page. `context=False`: the cards' own sentences only (the pages are
    in the prompt already)."""
    windows = _merge([card_window(card_id, card, page_text(card)) for card_id, card in cards])
    if not context:
        return [w.passage() for w in windows]
    for n, w in enumerate(windows[:FLOOR_CONTEXT_CARDS]):
        _widen(w, before=2 if n == 0 else 1)
    windows = _merge(windows)
    used = sum(w.cost() for w in windows)
    grown = True
    while grown:
        grown = False
        for w in windows:
            for step in ((0, 1), (-1, 0)):           # the sentence after first: the terms it sets out
                lo, hi = w.lo + step[0], w.hi + step[1]
                if lo < 0 or hi >= len(w.sentences):
                    continue
                added = estimate_tokens(w.sentences[lo if step[0] else hi]) + 1
                if used + added > budget:
                    continue
                w.lo, w.hi, used, grown = lo, hi, used + added, True
        windows = _merge(windows)
        used = sum(w.cost() for w in windows)
    return [w.passage() for w in windows]


