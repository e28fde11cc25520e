"""The reader writes the sentence the document would hold, and the search looks for it too.

A question that paraphrases ("if we pull the plug halfway through a project, do we keep the
half-finished work?") or asks in the other language shares few words with the clause that
answers it ("deliver to Customer all Deliverables (in whatever state of completion)"), and the
e5-small vectors do not always bridge the gap, so the search misses the page. The reader model
knows how contracts and laws are worded: asked for "the one sentence this document most likely
contains that answers the question", in the document's language, it writes something closer to
the clause (the hypothetical-document idea of HyDE, Gao et al. 2022); the 1.5B measured mostly
restates the question in the document's language, which helps most across languages. The search then runs on
the question with that sentence; the cards still rank the pages' sentences against the user's
own question, and whether the documents address it at all stays the question's own search's
verdict — the model's sentence is a guess, and for a question the document does not answer it
writes one that would.

It runs only where it fits the time budget: its prompt at this model's measured prefill speed
and its reply at its measured writing speed must take at most REWRITE_SHARE of the first-token
target. On a GPU that is well under a second; on 2 CPU cores the 0.5B takes ~2.3 s (it runs), the
1.5B ~5 s measured and ~8 s estimated (it does not, unless the setting is "on").
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace

from app.core.answer.budget import estimate_tokens
from app.core.failures import FailureKind

MAX_TOKENS = 48         # one sentence
REWRITE_SHARE = 0.6     # of the first-token target the rewriting may take
DECODE_RATIO = 8.0      # without a measured writing speed: prefill speed ÷ this (the 1.5B on 2 CPU cores: ~60 vs ~7.4)
TITLE_WORDS = 12
# Smaller models are not asked under `auto`: the embedded 135M writes back the instruction ("The
# document most likely contains the sentence …") rather than a clause; the 0.5B and 1.5B word one.
MIN_PARAMS_B = 0.4


@dataclass
class Rewriting:
    """Said before the model writes (the window and `ask` show it)."""
    seconds: float | None
    mode: str = "retrieval"

    def line(self) -> str:
        eta = f" ≈ {self.seconds:.0f} s" if self.seconds else ""
        return f"the model words the question as the document would{eta}"


@dataclass
class Rewritten:
    """What rewriting did, for the answer's `context.rewritten`."""
    text: str = ""
    seconds: float = 0.0
    changed: int = 0                # cards shown now that were not shown before
    skipped: str = ""

    def to_dict(self) -> dict:
        if self.skipped:
            return {"skipped": self.skipped}
        return {"text": self.text, "seconds": round(self.seconds, 2), "changed": self.changed}


@dataclass
class CardsFound:
    """Said once the search found the cards again with the model's wording, before judging or
    answering: the window shows them then."""
    evidence: object
    rewritten: Rewritten
    mode: str = "retrieval"

    def line(self) -> str:
        return (f"found again with the model's wording in {self.rewritten.seconds:.0f} s "
                f"({self.rewritten.changed} new card{'s' if self.rewritten.changed != 1 else ''})")


def messages(question: str, title: str, chinese: bool) -> list[dict]:
    language = "Chinese" if chinese else "English"
    return [{"role": "user", "content":
             f"Document: {title}\nQuestion: {question}\n\n"
             f"Write, in {language}, the one sentence this document most likely contains that answers the "
             f"question, in the formal wording of the document itself. Write only that sentence."}]


def title_of(library, doc_id: int) -> str:
    """The document's title, or its first words when it has none."""
    info = library.get(doc_id)
    if info.title:
        return info.title
    return " ".join(library.page_text(doc_id, 1).split()[:TITLE_WORDS])


def expected_s(question: str, title: str, prefill_tps: float | None, decode_tps: float | None) -> float | None:
    if not prefill_tps:
        return None
    prompt = sum(estimate_tokens(m["content"]) for m in messages(question, title, False)) + 16
    return prompt / prefill_tps + MAX_TOKENS / (decode_tps or prefill_tps / DECODE_RATIO)


def rewrite_found(client, library, refs: list, evidence, prefill_tps: float | None, decode_tps: float | None,
                  target_s: float | None, cancel=None, on_rewriting=None, always: bool = False):
    """(the evidence found again with the model's sentence, Rewritten); the evidence as it was
    when rewriting cannot run or fails. Single-document questions only: a comparison's cards
    keep their table, and one sentence cannot be worded as each of several documents would."""
    if evidence is None or not evidence.cards or len(refs) != 1 or getattr(evidence, "table", None) is not None:
        return evidence, Rewritten(skipped="not a single document's cards")
    info = library.get(refs[0].doc_id)
    title = title_of(library, refs[0].doc_id)
    seconds = expected_s(evidence.question, title, prefill_tps, decode_tps)
    if not always:
        if seconds is None or not target_s:
            return evidence, Rewritten(skipped="no measured speed")
        if seconds > REWRITE_SHARE * target_s:
            return evidence, Rewritten(skipped="not within the time budget")
    if on_rewriting:
        on_rewriting(Rewriting(round(seconds, 1) if seconds else None))
    start = time.perf_counter()
    try:
        result = client.chat(messages(evidence.question, title, info.lang == "zh"), max_tokens=MAX_TOKENS,
                             **({"cancel": cancel} if cancel is not None else {}))
    except Exception as exc:
        if isinstance(getattr(exc, "kind", None), FailureKind) and exc.kind.ends_the_request:
            raise
        return evidence, Rewritten(skipped=f"no usable sentence ({type(exc).__name__})")
    text = " ".join((result.text or "").split())
    if not text:
        return evidence, Rewritten(skipped="the model wrote nothing")
    found = found_with(library, refs, evidence, text)
    before = {(c.doc_id, c.page, c.quote) for c in evidence.cards}
    changed = sum((c.doc_id, c.page, c.quote) not in before for c in found.cards)
    return found, Rewritten(text=text, seconds=time.perf_counter() - start, changed=changed)


def found_with(library, refs: list, evidence, sentence: str):
    """The cards for the question over the pages the search finds for the question with
    `sentence`; the documents' "not addressed" verdict stays the question's own."""
    from app.core.answer.evidence.cards import find_evidence
    from app.core.answer.refs import ranked_hits
    ranked = ranked_hits(library, refs, f"{evidence.question} {sentence}")
    found = find_evidence(library, refs, evidence.question, ranked=ranked)
    return replace(found, addressed=evidence.addressed, support=evidence.support, ms=evidence.ms,
                   rewritten=sentence)
