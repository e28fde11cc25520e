"""Whether the documents appear to address the question: one public score (`Evidence.support`,
0..1) and its threshold (`Evidence.addressed`), from three signals of the evidence itself —
  words    the best card's share of the question's key terms (rare ones weigh more),
  passages the search's evidence check (share of the question's terms in its best passages),
  meaning  the best sentence's cosine with the question (sentence vectors), which alone
           counts when question and document are in different languages (no shared words).
The answer may add the reader model's own "not stated" on top; this is the evidence's part."""
from __future__ import annotations

from app.core import textnorm
from app.core.search import evidence as search_evidence

# Weights and threshold chosen on the tuning halves (benchmarks/evidence.py --signal).
WORDS, PASSAGES, MEANING = 0.4, 0.3, 0.3
COS_LOW, COS_HIGH = 0.78, 0.9      # the best sentence's cosine mapped to 0..1 between these
THRESHOLD = 0.2


def meaning_score(best_cos) -> float:
    if best_cos is None:
        return 0.0
    return min(1.0, max(0.0, (best_cos - COS_LOW) / (COS_HIGH - COS_LOW)))


def features(ranked: list, question: str, cards: list, best_cos) -> dict:
    """The signals, each 0..1 (`cross`: question and best card in different languages)."""
    hits = [h for _, h in ranked]
    lang = textnorm.language(question)
    cross = bool(cards) and textnorm.language(cards[0].quote) != lang
    passages = search_evidence.coverage(question, [h.text for h in hits[:search_evidence.TOP]]) if hits else 0.0
    return {"words": max((c.share for c in cards), default=0.0), "passages": passages,
            "meaning": meaning_score(best_cos), "cross": cross, "has_vectors": best_cos is not None}


def combine(f: dict) -> float:
    if f["cross"]:               # no shared words: the meaning alone (nothing to judge by without it)
        return f["meaning"] if f["has_vectors"] else 1.0
    if not f["has_vectors"]:     # words alone: rescaled so the one threshold serves both
        return (WORDS * f["words"] + PASSAGES * f["passages"]) / (WORDS + PASSAGES)
    return WORDS * f["words"] + PASSAGES * f["passages"] + MEANING * f["meaning"]


def addressed_signal(ranked: list, question: str, cards: list, best_cos) -> tuple[float, bool]:
    """(support 0..1, addressed): no cards, or support under THRESHOLD, is "not addressed"."""
    if not ranked or not cards:
        return 0.0, False
    support = combine(features(ranked, question, cards, best_cos))
    return support, support >= THRESHOLD
