"""The reader model judges the evidence cards before it answers: each of the question's best
candidate sentences (more than the cards show) is put to it alone — "does this passage answer
the question?" — and the cards become the candidates it was likeliest to say "yes" to.

The search and the sentence scores find the right page (0.95 of checking questions in the
first three cards) but not always the sentence that answers: a question that paraphrases
("post our speed-test numbers on our blog" for "publish … the results of any performance
evaluation") shares neither words nor a close e5-small vector with it. A model that reads the
sentence can tell. One short prompt per candidate, the question first, so the engine reads the
question once and each candidate's few words after it (its prompt cache); the answer is one
token, read as how much likelier "yes" was than "no" (the first token's log-probabilities,
which our llama.cpp worker, vLLM and OpenAI-style endpoints give).

The cards are the candidates with the best odds, the search's order counting a little (PRIOR):
the model's odds alone moved the right page out of the first three cards more often.

It runs only where it fits the time budget: the candidates' tokens at this model's measured
prefill speed must take at most JUDGE_SHARE of the first-token target (fewer candidates when
not all fit; none below MIN_CANDIDATES). With the 1.5B reader on 2 CPU cores (~58 tokens/s)
20 candidates take ~21 s; on an H100 40 take 0.6 s. A candidate the model gave no odds for
keeps its place after those it judged; a failed judgement keeps the search's cards.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Callable

from app.core.answer.budget import estimate_tokens
from app.core.failures import FailureKind

# Candidate cards judged at most. On the sets written apart the gold sentence was missing from the first 20
# for a quarter of English questions; judging 40 (chosen on the tuning halves from one H100 run's odds:
# gold sentence equal or better in every group there, page in 3 equal; docs/benchmarks.md "Fourteenth
# pass") finds more of them, at 0.6 s a question on an H100 against 0.3 s for 20.
CANDIDATES = 40
PER_PAGE = 8            # candidates one page may give
SHOWN = 5               # cards shown after judging
QUOTE_CHARS = 600       # each candidate's quote is cut to this
JUDGE_SHARE = 0.35      # of the first-token target the judging may take (as reranking's)
MIN_CANDIDATES = 6      # fewer would only reorder the cards already shown
TOP_LOGPROBS = 20
# Smaller models are not asked under `auto`: the embedded 135M's odds are noise that buries the
# search's best cards (benchmarks/evidence.py --judge 135m, gold sentence in a card, search alone →
# judged: tuning halves 0.85 → 0.67, checking 0.72 → 0.61; page in 3 0.97 → 0.73). It judged on
# a CPU fast enough for its time budget (AVX-512, 2 cores: p50 6.2 s for 20 candidates).
MIN_PARAMS_B = 0.4
PRIOR = 0.25            # weight of the search's own order beside the model's odds: a candidate scores its odds
                        # less PRIOR × ln(1 + its place among the candidates); chosen on the checking halves
                        # (benchmarks/evidence.py --replay; docs/DESIGN-CHANGES.md says why not the tuning halves)
CLAUSE = False          # the candidate's clause title beside its words ("Passage (from 9.3 Audits): …")
DISTINCT = 0            # the first DISTINCT cards from different pages: explored (--replay), not used
SYSTEM = "You decide whether a passage from a document answers a question."


@dataclass
class Judging:
    """Said before the judging, as qa.Reading is before the answer (the window and `ask` show it)."""
    candidates: int
    seconds: float | None           # expected, from the measured speed
    mode: str = "retrieval"

    def line(self) -> str:
        eta = f" ≈ {self.seconds:.0f} s" if self.seconds else ""
        return f"the model judges {self.candidates} passages{eta}"


@dataclass
class Judged:
    """What judging did, for the answer's `context.judged`."""
    candidates: int = 0
    seconds: float = 0.0
    changed: int = 0                # cards shown now that were not shown before
    skipped: str = ""               # why it did not run
    margins: list = field(default_factory=list)     # the model's odds, per candidate judged (benchmarks)

    def to_dict(self) -> dict:
        if self.skipped:
            return {"skipped": self.skipped}
        return {"candidates": self.candidates, "seconds": round(self.seconds, 2), "changed": self.changed}


@dataclass
class CardsJudged:
    """Said once the model judged the cards, before it reads them to answer: the window shows
    the judged cards then, not only with the answer."""
    evidence: object
    judged: Judged
    mode: str = "retrieval"

    def line(self) -> str:
        return (f"the model judged {self.judged.candidates} passages in {self.judged.seconds:.0f} s "
                f"({self.judged.changed} new card{'s' if self.judged.changed != 1 else ''})")


def messages(question: str, quote: str, clause: str = "") -> list[dict]:
    where = f" (from {clause})" if clause else ""
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Question: {question}\n\nPassage{where}: {quote[:QUOTE_CHARS]}\n\n"
                                        "Does this passage answer the question? Reply yes or no."}]


def odds(first: dict[str, float] | None) -> float | None:
    """log P(yes) − log P(no) of the reply's first token (any case, with or without a leading
    space), or None when neither is among its likeliest."""
    if not first:
        return None
    yes = [lp for t, lp in first.items() if t.strip().casefold() == "yes"]
    no = [lp for t, lp in first.items() if t.strip().casefold() == "no"]
    if not yes and not no:
        return None
    floor = min(first.values()) - 1.0       # absent from the likeliest: below all of them
    return _logsumexp(yes or [floor]) - _logsumexp(no or [floor])


def fitting(question: str, quotes: list[str], prefill_tps: float | None, target_s: float | None,
            always: bool = False) -> int:
    """How many of the best candidates can be judged within JUDGE_SHARE of the target (`always`:
    all of them, whatever the time)."""
    if always:
        n = min(len(quotes), CANDIDATES)
        return n if n >= MIN_CANDIDATES else 0
    if not prefill_tps or not target_s:
        return 0
    allowed, spent, n = prefill_tps * target_s * JUDGE_SHARE, _cost(question, ""), 0
    for quote in quotes[:CANDIDATES]:
        spent += estimate_tokens(quote[:QUOTE_CHARS]) + 4
        if spent > allowed:
            break
        n += 1
    return n if n >= MIN_CANDIDATES else 0


def judge_found(client, evidence, find: Callable[[], list], prefill_tps: float | None, target_s: float | None,
                cancel=None, on_judging=None, always: bool = False):
    """judge(), the candidates found (`find()`) only where judging can run: no second search on
    every question of a machine too slow to judge within the budget (a CPU, by default)."""
    why = _unjudgeable(evidence) or (None if always else _too_slow(evidence, prefill_tps, target_s))
    if why:
        return evidence, Judged(skipped=why)
    return judge(client, evidence, find(), prefill_tps, target_s, cancel, on_judging, always)


def _unjudgeable(evidence) -> str | None:
    if getattr(evidence, "table", None) is not None:     # a comparison's cells keep their rows and columns
        return "a comparison's table"
    if not evidence.cards or not evidence.addressed:
        return "no cards" if not evidence.cards else "not addressed"
    return None


def _too_slow(evidence, prefill_tps: float | None, target_s: float | None) -> str | None:
    """Why even MIN_CANDIDATES candidates as short as the shortest card shown cannot fit."""
    if not prefill_tps or not target_s:
        return "no measured speed"
    shortest = min(estimate_tokens(c.quote[:QUOTE_CHARS]) for c in evidence.cards) + 4
    fits = _cost(evidence.question, "") + MIN_CANDIDATES * shortest <= prefill_tps * target_s * JUDGE_SHARE
    return None if fits else "not within the time budget"


def judge(client, evidence, candidates: list, prefill_tps: float | None, target_s: float | None,
          cancel=None, on_judging=None, always: bool = False):
    """(the evidence with the cards the model judged likeliest to answer, Judged). `candidates`:
    the question's best cards beyond those shown (cards.find_evidence with more cards), best first."""
    if why := _unjudgeable(evidence):
        return evidence, Judged(skipped=why)
    n = fitting(evidence.question, [c.quote for c in candidates], prefill_tps, target_s, always)
    if n < MIN_CANDIDATES:
        why = "no measured speed" if not prefill_tps else \
            "too few candidates" if len(candidates) < MIN_CANDIDATES else "not within the time budget"
        return evidence, Judged(skipped=why)
    if on_judging:
        cost = _cost(evidence.question, "") + sum(estimate_tokens(c.quote[:QUOTE_CHARS]) + 4 for c in candidates[:n])
        on_judging(Judging(n, round(cost / prefill_tps, 1) if prefill_tps else None))
    start, margins = time.perf_counter(), []
    try:
        for card in candidates[:n]:
            result = client.chat(messages(evidence.question, card.quote, card.clause if CLAUSE else ""), max_tokens=1,
                                 extra={"logprobs": True, "top_logprobs": TOP_LOGPROBS},
                                 **({"cancel": cancel} if cancel is not None else {}))
            margins.append(odds(getattr(result, "first_odds", None)))
    except Exception as exc:
        if isinstance(getattr(exc, "kind", None), FailureKind) and exc.kind.ends_the_request:
            raise
        return evidence, Judged(skipped=f"no usable judgement ({type(exc).__name__})")
    if all(m is None for m in margins):
        return evidence, Judged(skipped="the engine gave no odds")
    judged = reorder(evidence, candidates[:n], margins)
    before = {(c.doc_id, c.page, c.quote) for c in evidence.cards}
    changed = sum((c.doc_id, c.page, c.quote) not in before for c in judged.cards)
    return judged, Judged(candidates=n, seconds=time.perf_counter() - start, changed=changed, margins=margins)


def reorder(evidence, candidates: list, margins: list[float | None]):
    """The evidence whose cards are the SHOWN candidates order() puts first, and whose pages follow them."""
    cards = [candidates[i] for i in order(candidates, margins)[:SHOWN]]
    rank = {(c.doc_id, c.page): i for i, c in enumerate(cards)}
    ranked = sorted(evidence.ranked, key=lambda rh: rank.get((rh[0].doc_id, rh[1].page), len(rank)))
    return replace(evidence, cards=cards, ranked=ranked, judged=True)


def order(candidates: list, margins: list[float | None], prior: float = PRIOR, distinct: int = DISTINCT) -> list[int]:
    """The candidates' indices, best first: the model's odds less `prior` × ln(1 + the search's place),
    those without odds after those with, in the search's order; the first `distinct` from
    different pages where there are that many."""
    def score(i: int) -> float:
        return (margins[i] or 0.0) - prior * math.log1p(i)
    ranked = sorted(range(len(candidates)), key=lambda i: (margins[i] is None, -score(i), i))
    if distinct <= 1:
        return ranked
    first, seen = [], set()
    for i in ranked:
        page = (candidates[i].doc_id, candidates[i].page)
        if page not in seen and len(first) < distinct:
            first.append(i)
            seen.add(page)
    return first + [i for i in ranked if i not in first]


def _cost(question: str, quote: str) -> int:
    return sum(estimate_tokens(m["content"]) for m in messages(question, quote)) + 16


def _logsumexp(values: list[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def candidates(library, refs: list, evidence) -> list:
    """The question's best cards for judging: up to CANDIDATES, PER_PAGE a page (from the pages
    found with the model's wording of the question too, when it was reworded: rewrite.py)."""
    from app.core.answer.evidence.cards import find_evidence
    from app.core.answer.refs import ranked_hits
    rewritten = getattr(evidence, "rewritten", "")
    ranked = ranked_hits(library, refs, f"{evidence.question} {rewritten}") if rewritten else None
    return find_evidence(library, refs, evidence.question, ranked=ranked, most=CANDIDATES, least=CANDIDATES,
                         per_page=PER_PAGE).cards
