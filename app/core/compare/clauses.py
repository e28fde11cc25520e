"""The comparison table from the search alone: for each topic and each document, the best
clause — the evidence cards' machinery (find_evidence) run per document on the topic's words,
then the card whose clause heading names the topic preferred over one that only mentions it,
a definition ("“Fees” means …") ranked below the clause that uses the term, and the sentence
granting the topic's right ("either party may terminate") above its aftermath ("Effect of
Termination")."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from app.core.answer.citations import verify as verify_quote
from app.core.answer.evidence import Evidence, EvidenceCard, find_evidence
from app.core.answer.refs import DocRef
from app.core.compare.topics import Topic, short_question

# Chosen on half of the benchmark's questions, confirmed on the other half
# (benchmarks/compare_clauses.py prints both halves).
HEADING_BONUS = 0.8        # the card's clause heading (or its opening words) names the topic
DEFINITION_PENALTY = 0.4   # the card is a definition of a term, not the clause itself
MIN_SHARE = 0.1            # a best card holding less of the topic's words: "not found"
GRANT_BONUS = 0.5          # the sentence grants the topic's right ("either party may terminate")
AFTERMATH_PENALTY = 0.5    # the clause is about what follows ("Effect of Termination"), not the right
_DEFINITION = re.compile(r"^\s*(?:\d+(?:\.\d+)*\.?\s*)?[“\"][^”\"]{1,60}[”\"]\s+(?:means|has the meaning|shall mean)"
                         r"|^[^，。]{1,20}是指")


@dataclass(frozen=True)
class Cell:
    """One document's clause on one topic (card None: the search found nothing on it)."""
    topic: Topic
    ref: DocRef
    card: EvidenceCard | None
    verified: bool = False

    def to_dict(self) -> dict:
        c = self.card
        return {"doc": self.ref.label, "found": c is not None, "clause": c.clause if c else "",
                "quote": c.quote if c else "", "page": c.page if c else None, "verified": self.verified}


@dataclass
class ClauseTable:
    topics: list[Topic]
    refs: list[DocRef]
    rows: list[list[Cell]]        # per topic, per document
    ms: float                     # request → table
    lang: str = "en"
    ranked: list = field(default_factory=list, repr=False)   # the chosen pages' search hits, first

    @property
    def question(self) -> str:
        return short_question(self.topics, self.lang)

    def cards(self) -> list[EvidenceCard]:
        """The table's quotes in reading order (row by row): the window's evidence cards."""
        return [cell.card for row in self.rows for cell in row if cell.card is not None]

    def evidence(self) -> "TableEvidence":
        """The table as evidence: what the citation panel lists and the model's prompt starts with."""
        return TableEvidence(self.question, self.cards(), bool(self.cards()), self.ms, self.ranked, self)

    def to_dict(self) -> dict:
        return {"question": self.question, "ms": round(self.ms, 1),
                "topics": [{"topic": t.label(self.lang), "documents": [c.to_dict() for c in row]}
                           for t, row in zip(self.topics, self.rows)]}


@dataclass(frozen=True)
class TableEvidence(Evidence):
    """Evidence whose cards are a comparison table's cells (the window draws the table)."""
    table: ClauseTable | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        return {**super().to_dict(), "table": self.table.to_dict() if self.table else None}


def compare_clauses(library, refs: list[DocRef], topics: list[Topic], started: float | None = None) -> ClauseTable:
    """Each topic's best clause in each document, verified on its page; `started`: when asked."""
    started = time.perf_counter() if started is None else started
    langs = {ref.doc_id: library.get(ref.doc_id).lang for ref in refs}
    rows, chosen, rest = [], [], []
    for topic in topics:
        row = []
        for ref in refs:
            evidence = find_evidence(library, [ref], topic.query(langs[ref.doc_id]))
            card = best_clause(topic, evidence.cards)
            row.append(Cell(topic, ref, card, card is not None and _verified(library, card)))
            for pair in evidence.ranked:
                hit_page = (pair[0].doc_id, pair[1].page)
                (chosen if card is not None and hit_page == (card.doc_id, card.page) else rest).append(pair)
        rows.append(row)
    lang = "zh" if langs and all(v == "zh" for v in langs.values()) else "en"
    ranked = _unique(chosen + rest)
    return ClauseTable(topics, refs, rows, (time.perf_counter() - started) * 1000, lang, ranked)


def best_clause(topic: Topic, cards: list[EvidenceCard], heading_bonus: float | None = None,
                definition_penalty: float | None = None, min_share: float | None = None) -> EvidenceCard | None:
    """The card that is the topic's clause: its heading naming the topic counts, a definition
    counts against; None when even the best holds too little of the topic's words."""
    bonus = HEADING_BONUS if heading_bonus is None else heading_bonus
    penalty = DEFINITION_PENALTY if definition_penalty is None else definition_penalty
    floor = MIN_SHARE if min_share is None else min_share
    usable = [c for c in cards if c.share >= floor]
    if not usable:
        return None
    return max(usable, key=lambda c: c.score + bonus * names_topic(topic, c) - penalty * is_definition(c.quote)
               + GRANT_BONUS * grants(topic, c) - AFTERMATH_PENALTY * is_aftermath(topic, c))


def grants(topic: Topic, card: EvidenceCard) -> bool:
    """The quote grants the topic's right: the clause a reader comparing it wants."""
    return bool(topic.grant) and re.search(topic.grant, card.quote, re.I) is not None


def is_aftermath(topic: Topic, card: EvidenceCard) -> bool:
    """The clause (its heading, or its opening words) is about what follows the topic: its
    consequences, not the right itself."""
    return bool(topic.aftermath) and re.search(topic.aftermath, f"{card.clause} {card.quote[:60]}", re.I) is not None


def names_topic(topic: Topic, card: EvidenceCard) -> bool:
    """The clause's heading (or the quote's opening words, where headings run into the text:
    "22.2. Governing Law and Courts. The …") names the topic."""
    head = f"{card.clause} {card.quote[:40]}".casefold()
    return any(word in head for word in topic.heading)


def is_definition(quote: str) -> bool:
    return bool(_DEFINITION.search(quote))


def _verified(library, card: EvidenceCard) -> bool:
    """Checked again on the page as stored: the table says so only when the quote is there."""
    page = library.page_text(card.doc_id, card.page)
    return verify_quote(card.doc_id, card.doc, card.page, card.quote, {card.page: page}).verified


def _unique(pairs: list) -> list:
    seen, out = set(), []
    for ref, hit in pairs:
        if (ref.doc_id, hit.page) not in seen:
            seen.add((ref.doc_id, hit.page))
            out.append((ref, hit))
    return out
