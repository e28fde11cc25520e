"""Evidence cards: the sentences of the best pages that answer a question, quoted as printed,
found from the search alone (no model) and shown before any model reads anything."""
from app.core.answer.evidence.cards import Evidence, EvidenceCard, find_evidence

__all__ = ["Evidence", "EvidenceCard", "find_evidence"]
