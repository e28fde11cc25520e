"""How much of a question a sentence holds: the question's search terms found in it, each
weighted by how rare it is among the candidate sentences (a word every sentence has — "party",
"agreement" — tells little; the one word that picks the clause out tells most)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from app.core.search.evidence import term_present
from app.core.search.queries import parse_query
from app.core.search.tokens import index_text


@dataclass(frozen=True)
class Words:
    """A text as the term test reads it (built once per sentence)."""
    words: frozenset[str]
    prefixes: frozenset[str]
    plain: str

    @classmethod
    def of(cls, text: str) -> "Words":
        words = frozenset(index_text(text).casefold().split())
        return cls(words, frozenset(w[:5] for w in words), "".join(text.split()).casefold())

    def has(self, term: str) -> bool:
        return term_present(term, self.words, self.prefixes, self.plain)


def question_terms(question: str) -> list[str]:
    """The question's search terms (index form, casefolded), without backed-off roots."""
    return list(dict.fromkeys(t.casefold() for t in parse_query(question).terms if not t.endswith("*")))


class TermWeights:
    """Inverse document frequency of each question term over the candidate sentences."""

    def __init__(self, terms: list[str], texts: list[Words]):
        n = len(texts)
        self.terms = terms
        self.weight = {t: math.log((n + 1) / (0.5 + sum(1 for w in texts if w.has(t)))) + 0.1 for t in terms}
        self.total = sum(self.weight.values()) or 1.0

    def share(self, words: Words) -> float:
        """Weighted share (0..1) of the question's terms the text holds."""
        return sum(w for t, w in self.weight.items() if words.has(t)) / self.total
