"""An answer and what it carries besides its text, as typed values: how long it took, what
the engine read, which prompt it was and what answered it.

`Answer.to_dict` is the contract of `pagewise ask --json` (README) and of the answers the
window keeps: its keys and the way optional ones are left out must not change. A value not
set (an answer built by hand, a review's answer) is written as `{}`, as before.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from app.core.answer.citations import Citation
from app.core.answer.rerank import Choice


@dataclass(frozen=True)
class Timing:
    """Seconds. A question has its first token (`ttft_s`) and the estimate said before it
    (`estimated_ttft_s`, None without a measured speed); a review has only its total, and
    when it ran by parts each part's seconds and the prompt budget every part was held to."""
    total_s: float
    ttft_s: float | None = None
    estimated_ttft_s: float | None = None
    parts_s: tuple[float, ...] | None = None
    budget_tokens: int | None = None

    def to_dict(self) -> dict:
        if self.ttft_s is not None:     # a question's: all three, the estimate null when unknown
            return {"ttft_s": self.ttft_s, "total_s": self.total_s, "estimated_ttft_s": self.estimated_ttft_s}
        out: dict = {"total_s": self.total_s}
        if self.parts_s is not None:
            out["parts_s"] = list(self.parts_s)
        if self.budget_tokens is not None:
            out["budget_tokens"] = self.budget_tokens
        return out


@dataclass(frozen=True)
class Usage:
    """Tokens, as the engine counted them: the prompt, of it what the engine held already, the reply."""
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0

    @property
    def read_tokens(self) -> int:
        """What the engine read for this prompt (the measured prefill speed's numerator)."""
        return self.prompt_tokens - self.cached_tokens

    def to_dict(self) -> dict:
        return {"prompt_tokens": self.prompt_tokens, "cached_tokens": self.cached_tokens,
                "completion_tokens": self.completion_tokens}


@dataclass(frozen=True)
class ContextInfo:
    """The prompt this answer was given: its tokens, the retrieved passages in the
    conversation (0 for whole documents), the time budget in tokens, the conversation's turn,
    whether a new context began (the old one no longer fitted) and the model's page choice."""
    tokens: int
    passages: int
    budget_tokens: int
    turn: int
    new_context: bool = False
    rerank: Choice | None = None      # only when reranking was asked for (ran or said why not)
    dropped: int = 0                  # passages sent but not read: the engine ran behind its plan
    judged: object | None = None      # evidence/judge.Judged, only when judging was asked for
    rewritten: object | None = None   # evidence/rewrite.Rewritten, only when rewriting was asked for

    def to_dict(self) -> dict:
        return {"tokens": self.tokens, "passages": self.passages, "budget_tokens": self.budget_tokens,
                "turn": self.turn, "new_context": self.new_context,
                **({"rerank": self.rerank.to_dict()} if self.rerank else {}),
                **({"dropped_passages": self.dropped} if self.dropped else {}),
                **({"judged": self.judged.to_dict()} if self.judged else {}),
                **({"rewritten": self.rewritten.to_dict()} if self.rewritten else {})}


@dataclass(frozen=True)
class EngineInfo:
    """What answered: the engine, the model, its context length and the plan in one line."""
    name: str
    model: str
    context: int
    summary: str

    def to_dict(self) -> dict:
        return {"name": self.name, "model": self.model, "context": self.context, "summary": self.summary}


@dataclass
class Answer:
    text: str
    citations: list[Citation]
    mode: str                     # "whole-document" | "retrieval" | a review's
    not_stated: bool
    timing: Timing | None = None
    engine: EngineInfo | None = None      # set by the runtime that asked
    raw: str = ""
    usage: Usage | None = None
    context: ContextInfo | None = None
    warnings: list[str] = field(default_factory=list)   # instruction-like text found; nothing convincing found
    evidence: object | None = None        # app.core.answer.evidence.Evidence: the cards shown first
    status: str = ""                      # "answer" | "not_backed" | "not_addressed" (app.core.answer.verdict);
                                          # "" for an answer built elsewhere: `supported` decides

    @property
    def state(self) -> str:
        """What the answer is shown as: "answer" (it leads), "not_backed" (the evidence leads,
        the model's text under it) or "not_addressed" (the documents do not appear to address it)."""
        if self.status:
            return self.status
        return "answer" if self.supported else "not_backed"

    @property
    def supported(self) -> bool:
        """The model's answer is backed by its citations: one verified quote supports it and
        none contradicts it (citations.with_support)."""
        verified = [c for c in self.citations if c.verified]
        return any(c.support == "supports" for c in verified) and not any(c.support == "contradicts" for c in verified)

    @property
    def headline(self) -> str:
        """What leads: "answer" (the model's, backed by its citations) or "evidence" (the
        cards; the model's summary is shown under them as not backed by these passages).
        Without evidence cards (a review's parts) the answer leads as before."""
        return "answer" if self.evidence is None or self.state == "answer" else "evidence"

    def to_dict(self) -> dict:
        return {**({"evidence": self.evidence.to_dict()} if self.evidence is not None else {}),
                "answer": self.text, "citations": [c.to_dict() for c in self.citations],
                "mode": self.mode, "not_stated": self.not_stated,
                **({"headline": self.headline, "supported": self.supported, "status": self.state}
                   if self.evidence is not None else {}),
                "engine": _dict(self.engine), "timing": _dict(self.timing), "usage": _dict(self.usage),
                "context": _dict(self.context), "warnings": self.warnings}


def _dict(value) -> dict:
    return value.to_dict() if value is not None else {}
