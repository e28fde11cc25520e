"""Whether the documents appear to address the question: one public score (`Evidence.support`,
0..1) and its threshold (`Evidence.addressed`), from three signals of the evidence itself —
  words    the best card's share of the question's key terms (rare ones weigh more),
  passages the search's evidence check (share of the question's terms in its best passages),
  meaning  the best sentence's cosine with the question (sentence vectors), which alone
           counts when question and document are in different languages (no shared words),
and one check of the question's shape: a question asking for a value ("what percentage",
"how many days", "which state's law", "多少") whose card about it holds none, or none of the kind
it asks for (figures.py), loses VALUE_MISSING of its score.
The answer may add the reader model's own "not stated" on top; this is the evidence's part."""
from __future__ import annotations

import re

from app.core import textnorm
from app.core.search import evidence as search_evidence

from .figures import value_missing

# Weights and threshold chosen on the tuning halves (benchmarks/evidence.py --signal: most
# unanswerable caught while refusing at most 2 % of the answerable, widest margin): tuning 3/6
# caught, 0/66 refused; checking 0/5 caught, 0/57 refused; third set 6/16 caught, 3/66 refused
# (the figure-kind check, figures._KINDS, brought tuning 1/6 → 3/6, third 1/16 → 6/16; the same weights
# and threshold stayed best). The evidence alone does not tell these
# near misses (a figure the agreement never sets, on the page about that very topic) from
# answerable paraphrases: their best sentences are as close in meaning (cosine 0.83-0.95) and hold
# as many of the question's words. Allowing 5 % refused on the tuning halves caught 2/6 there but
# refused 6/57 on the checking halves, so the signal stays cautious and the reader's "not stated"
# does the rest.
WORDS, PASSAGES, MEANING = 0.0, 0.7, 0.3
COS_LOW, COS_HIGH = 0.78, 0.9      # the best sentence's cosine mapped to 0..1 between these
# Across languages e5's cosines run lower (an English question's best Chinese sentence: 0.78-0.85
# on the tuning halves, against 0.83-0.95 within a language).
CROSS_LOW, CROSS_HIGH = 0.75, 0.85
THRESHOLD = 0.15
VALUE_MISSING = 1.0
# Without sentence vectors (a document just opened, every `pagewise ask` on a new library: the vectors
# come minutes later) the best card's share of the question's key terms, and the search's evidence
# check scaled by PASSAGES_ALONE. Chosen on the tuning halves with no vectors (benchmarks/evidence.py
# --no-dense, docs/benchmarks.md "Twelfth pass"): at 0.1 and 1.0 they refused 12/92 answerable there
# and 49/265 on the confirming sets for 3 more caught of 129; at 0.02 and 0.25, 1/92 and 19/265.
WORDS_ALONE = 0.02
PASSAGES_ALONE = 0.25
# The figure check reads the best card only (its score without the figure bonus): a near miss's
# other cards often hold a figure of another clause on the same topic ("30 days" of a cure period
# for a question on non-renewal notice). Chosen on the tuning halves with the sixth set's
# (benchmarks/evidence.py --set addressed.TOP_CARDS=N, docs/benchmarks.md "Not addressed, tenth pass"):
# 3 cards caught 6/21 unanswerable, refused 1/92 answerable; 1 card 15/21, 1/92.
TOP_CARDS = 1
# Across languages without vectors the cards come by the dictionary's glosses, and their order says
# little of which is about the question: the check reads them all (tuning halves with no vectors:
# refused 1/92 → 0/92, caught 16/21 unchanged; docs/benchmarks.md "Twelfth pass").
def meaning_score(best_cos, cross: bool = False) -> float:
    if best_cos is None:
        return 0.0
    low, high = (CROSS_LOW, CROSS_HIGH) if cross else (COS_LOW, COS_HIGH)
    return min(1.0, max(0.0, (best_cos - low) / (high - low)))


def features(ranked: list, question: str, cards: list, best_cos) -> dict:
    """The signals, each 0..1 (`cross`: question and best card in different languages)."""
    hits = [h for _, h in ranked]
    lang = textnorm.language(question)
    cross = bool(cards) and textnorm.language(cards[0].quote) != lang
    passages = search_evidence.coverage(question, [h.text for h in hits[:search_evidence.TOP]]) if hits else 0.0
    return {"words": max((c.share for c in cards), default=0.0), "passages": passages,
            "meaning": meaning_score(best_cos, cross), "cross": cross, "has_vectors": best_cos is not None,
            "value_missing": value_missing(question, _about(cards, len(cards) if cross and best_cos is None else TOP_CARDS)),
            "lang": lang}


def _unshaped(cards: list) -> list:
    """The cards as ranked without the bonus for holding a figure (shapes.py): that bonus brings
    any sentence with a figure up, and the check is whether the sentences about the question hold one."""
    return sorted(cards, key=lambda c: -_plain(c))


def _about(cards: list, top: int = TOP_CARDS) -> list[str]:
    """The quotes of the best `top` cards, ranked without their figure bonus, each with the
    cards of its page that carry on its sentence (a list's next item: "… control means (i) …, or"
    then "(ii) ownership of fifty percent (50%) or more …")."""
    best = _unshaped(cards)[:top]
    return [c.quote for c in best] + [c.quote for b in best if _open(b.quote) for c in cards
                                      if c not in best and (c.doc_id, c.page) == (b.doc_id, b.page)
                                      and _CARRIES_ON.match(c.quote)]


# A sentence cut before its end (a list's item, a clause before its colon), and a card that
# carries one on: a list item's mark or a lower-case start.
_ENDED = re.compile(r"[.。;；!！?？)）\]”\"']\s*$")
_CARRIES_ON = re.compile(r"\s*(\(([ivx]+|[a-z]|\d+)\)|（[一二三四五六七八九十]+）|[a-z])")


def _open(quote: str) -> bool:
    return not _ENDED.search(quote)


def _plain(card) -> float:
    return card.score - getattr(card, "shape", 0.0)


def combine(f: dict) -> float:
    return _base(f) * (1.0 - VALUE_MISSING * f.get("value_missing", False))


def _base(f: dict) -> float:
    if f["cross"]:               # no shared words: the meaning alone (nothing to judge by without it)
        return f["meaning"] if f["has_vectors"] else 1.0
    if not f["has_vectors"]:     # words alone: the earlier rule, scaled so THRESHOLD marks it
        need = PASSAGES_ALONE * search_evidence.MIN_COVERAGE.get(f["lang"], search_evidence.MIN_COVERAGE["en"])
        return min(1.0, THRESHOLD * min(f["passages"] / need, f["words"] / WORDS_ALONE))
    return WORDS * f["words"] + PASSAGES * f["passages"] + MEANING * f["meaning"]


def addressed_signal(ranked: list, question: str, cards: list, best_cos) -> tuple[float, bool, bool]:
    """(support 0..1, addressed, no figure): no cards, or support under THRESHOLD, is "not
    addressed"; "no figure" when only the figure check made it so (the passages are on the
    question's topic and set no figure, period or place for it: the user is told that)."""
    if not ranked or not cards:
        return 0.0, False, False
    f = features(ranked, question, cards, best_cos)
    support = combine(f)
    return support, support >= THRESHOLD, support < THRESHOLD <= _base(f) and f["value_missing"]
