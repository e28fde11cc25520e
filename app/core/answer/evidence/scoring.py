"""How much of a question a sentence holds: the question's search terms found in it, each
weighted by how rare it is among the candidate sentences (a word every sentence has — "party",
"agreement" — tells little; the one word that picks the clause out tells most)."""
from __future__ import annotations

import math

from app.core.search.evidence import Words
from app.core.search.queries import parse_query


def question_terms(question: str) -> list[str]:
    """The question's search terms (index form, casefolded), without backed-off roots."""
    return list(dict.fromkeys(t.casefold() for t in parse_query(question).terms if not t.endswith("*")))


class TermWeights:
    """Inverse document frequency of each question term over the candidate sentences."""

    def __init__(self, terms: list[str], texts: list[Words]):
        n = len(texts)
        self.terms = terms
        self.weight = {t: math.log((n + 1) / (0.5 + sum(1 for w in texts if w.has(t)))) + 0.1 for t in terms}
        self.aliases: list[tuple[list[str], frozenset[str], float]] = []
        self.total = sum(self.weight.values()) or 1.0

    def alias(self, terms: list[str], stands_for: frozenset[str], factor: float) -> None:
        """A text holding all of `terms` (a defined term: "updates") counts as holding the question
        terms `stands_for` (those its definition holds: "maintenance", "releases"), at `factor`."""
        self.aliases.append((terms, stands_for, factor))

    def share(self, words: Words) -> float:
        """Weighted share (0..1) of the question's terms the text holds (or holds through an alias)."""
        held = {t: 1.0 for t in self.weight if words.has(t)}
        for terms, stands_for, factor in self.aliases:
            if all(words.has(t) for t in terms):
                for t in stands_for:
                    held[t] = max(held.get(t, 0.0), factor)
        return sum(self.weight[t] * f for t, f in held.items()) / self.total
