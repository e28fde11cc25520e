"""Question → context (whole documents if they fit, else retrieval) → model → verified answer."""
from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

from app.core import textnorm
from app.core.answer import prompts
from app.core.answer.budget import (
    ANSWER_TOKENS,
    document_room,
    estimate_tokens,
    prompt_room,
)
from app.core.answer.citations import Citation, quotable, verify
from app.core.failures import BadInput

RETRIEVAL_PAGES = 6          # pages sent in retrieval mode (before the token budget trims them)
MAX_FIRST_WAIT_S = 25.0      # a whole-document first answer slower than this → retrieval


class ChatBackend(Protocol):
    def chat(self, messages: list[dict], json_schema: dict | None = None, max_tokens: int = 512,
             temperature: float = 0.0, on_delta: Callable[[str], None] | None = None,
             cancel: threading.Event | None = None): ...


@dataclass
class Answer:
    text: str
    citations: list[Citation]
    mode: str                     # "whole-document" | "retrieval"
    not_stated: bool
    timing: dict = field(default_factory=dict)
    engine: dict = field(default_factory=dict)
    raw: str = ""
    usage: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"answer": self.text, "citations": [c.to_dict() for c in self.citations],
                "mode": self.mode, "not_stated": self.not_stated,
                "engine": self.engine, "timing": self.timing}


@dataclass(frozen=True)
class DocRef:
    """A document as the question sees it: number in the prompt, id in the library, label shown."""
    number: int
    doc_id: int
    label: str                    # the path as the user gave it


def whole_context(library, refs: list[DocRef]) -> str:
    parts = []
    for ref in refs:
        info = library.get(ref.doc_id)
        parts.append(f"=== doc {ref.number}: {info.title or ref.label} ===")
        for page in library.pages(ref.doc_id):
            parts.append(f"[doc {ref.number}, p. {page.number}]\n{page.text.strip()}")
    return "\n\n".join(parts)


def retrieval_context(library, refs: list[DocRef], question: str, budget: int) -> str:
    """Best pages for the question, each document getting its share (comparisons need both)."""
    per_doc = max(2, RETRIEVAL_PAGES // len(refs))
    ranked = []
    for ref in refs:
        hits = library.search(question, doc_ids=[ref.doc_id], k=per_doc)
        ranked += [(i, ref, h) for i, h in enumerate(hits)]
    ranked.sort(key=lambda t: (t[0], -t[2].score))      # interleave documents by rank
    parts, used = [], 0
    for _, ref, hit in ranked:
        text = library.page_text(ref.doc_id, hit.page).strip()
        block = f"[doc {ref.number}, p. {hit.page}]\n{text}"
        cost = estimate_tokens(block)
        if used + cost > budget:
            continue
        parts.append(block)
        used += cost
    return "\n\n".join(parts)


def choose_mode(doc_tokens: int, budget: int, prefill_tps: float | None, cached: bool) -> str:
    """Whole document when it fits and the first answer will not keep the user waiting."""
    if doc_tokens > budget:
        return "retrieval"
    if cached or not prefill_tps:
        return "whole-document"
    return "whole-document" if doc_tokens / prefill_tps <= MAX_FIRST_WAIT_S else "retrieval"


_ANSWER_FIELD = re.compile(r'"answer"\s*:\s*"((?:[^"\\]|\\.)*)', re.S)
_CITATION_OBJ = re.compile(r'\{\s*"doc"\s*:[^{}]*\}', re.S)


def _salvage(text: str) -> tuple[str, list[dict]]:
    """A reply cut off at the token limit: keep the answer text and the complete citations."""
    m = _ANSWER_FIELD.search(text)
    if not m:
        return text, []
    try:
        answer = json.loads(f'"{m.group(1)}"')
    except json.JSONDecodeError:
        answer = m.group(1)
    cites = []
    for obj in _CITATION_OBJ.findall(text[m.end():]):
        try:
            cites.append(json.loads(obj))
        except json.JSONDecodeError:
            continue
    return answer.strip() + " …", [c for c in cites if isinstance(c, dict)]


def parse_reply(raw: str) -> tuple[str, list[dict]]:
    """The model's JSON; a reply cut short is salvaged; anything else is an answer without citations."""
    text = raw.strip()
    match = re.search(r"\{.*\}", text, re.S)
    try:
        data = json.loads(match.group(0) if match else text)
    except (json.JSONDecodeError, AttributeError):
        return _salvage(text)
    if not isinstance(data, dict):
        return text, []
    cites = [c for c in data.get("citations") or [] if isinstance(c, dict)]
    return without_repeats(str(data.get("answer", "")).strip()), cites


def without_repeats(text: str) -> str:
    """The answer with a sentence said again dropped and a looping end ("1.1.1.1…") cut to
    one copy (a small model's loop, which the worker ends at its second or third copy:
    app/worker/loop_guard.py); unchanged when nothing repeats."""
    text = textnorm.without_looping_tail(text)
    said = textnorm.sentences(text)
    kept: list[str] = []
    for s in said:
        if not textnorm.is_repeat(s, kept):
            kept.append(s)
    if len(kept) == len(said):
        return text
    joiner = "" if all(k[-1] in textnorm.CJK_ENDS for k in kept[:-1]) else " "
    return joiner.join(kept)


def _verify_all(library, refs: list[DocRef], cites: list[dict]) -> list[Citation]:
    by_number = {r.number: r for r in refs}
    pages_cache: dict[int, dict[int, str]] = {}

    def pages(ref: DocRef) -> dict[int, str]:
        if ref.doc_id not in pages_cache:
            pages_cache[ref.doc_id] = {p.number: p.text for p in library.pages(ref.doc_id)}
        return pages_cache[ref.doc_id]

    out, seen = [], set()
    for c in cites:
        ref = by_number.get(_int(c.get("doc"), 1)) or refs[0]
        page, quote = _int(c.get("page"), 1), str(c.get("quote", ""))
        cit = verify(ref.doc_id, ref.label, page, quote, pages(ref))
        for other in refs if not cit.verified else ():   # the words may be the other document's
            if other is not ref:
                moved = verify(other.doc_id, other.label, page, quote, pages(other))
                if moved.verified:
                    note = "; ".join(filter(None, [f"document corrected from {ref.number}", moved.note]))
                    cit = Citation(moved.doc_id, moved.doc, moved.page, moved.quote, True, note=note)
                    break
        key = (cit.doc_id, cit.page, cit.quote)
        if cit.quote.strip() and key not in seen:
            seen.add(key)
            out.append(cit)
    return out


def _int(value, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def is_not_stated(text: str, citations: list[Citation]) -> bool:
    low = text.lower()
    said = any(p in low for p in ("does not say", "not stated", "没有规定", "未规定", "没有说明"))
    return said or (not text.strip() and not citations)


def count_tokens(client, msgs: list[dict]) -> int:
    """Exact prompt size from the engine's /tokenize when it has one, else an estimate."""
    try:
        return int(client.count_tokens(msgs))
    except Exception:  # remote endpoints may lack /tokenize
        return sum(estimate_tokens(m["content"]) for m in msgs) + 16


def _retrieval_messages(library, refs, question, client, context_tokens: int) -> tuple[list[dict], str, int]:
    """Retrieved pages under the budget; shrink until the exact count fits (CJK costs vary).
    Returns the messages, the context they carry and their token count."""
    room, budget = prompt_room(context_tokens), document_room(context_tokens, question)
    for _ in range(6):
        context = retrieval_context(library, refs, question, budget)
        msgs = prompts.messages(context, question, whole=False)
        used = count_tokens(client, msgs)
        if used <= room:
            break
        budget = int(budget * room / used) - 64
    return msgs, context, used


def answer_schema(context: str, question: str, msgs: list[dict] | None = None,
                  prompt_tokens: int | None = None) -> dict:
    """The JSON schema the reply is generated under: quotes from this context only, the
    answer bounded in characters by what the token budget holds in the question's language
    (the prompt's own characters per token when it is written in that language)."""
    lang = textnorm.language(question)
    ratio = None
    if msgs and prompt_tokens and textnorm.language(context[:20000]) == lang:
        ratio = sum(len(m["content"]) for m in msgs) / prompt_tokens
    return prompts.answer_schema(quotable(context), prompts.answer_chars(lang, ANSWER_TOKENS, ratio))


def ask(library, refs: list[DocRef], question: str, client: ChatBackend, context_tokens: int,
        on_delta: Callable[[str], None] | None = None, cancel: threading.Event | None = None,
        mode: str = "auto", prefill_tps: float | None = None, cached: bool = False) -> Answer:
    if not question.strip():
        raise BadInput("the question is empty")
    room = prompt_room(context_tokens)
    msgs = None
    if mode != "retrieval":
        context = whole_context(library, refs)
        msgs = prompts.messages(context, question, whole=True)
        tokens = count_tokens(client, msgs)
        if mode == "auto":
            mode = choose_mode(tokens, room, prefill_tps, cached)
        elif tokens > room:
            mode = "retrieval"
    if mode == "retrieval":
        msgs, context, tokens = _retrieval_messages(library, refs, question, client, context_tokens)
    start = time.perf_counter()
    schema = answer_schema(context, question, msgs, tokens)
    result = client.chat(msgs, json_schema=schema, max_tokens=ANSWER_TOKENS, on_delta=on_delta, cancel=cancel)
    text, cites = parse_reply(result.text)
    if len(text) >= prompts.answer_bound(schema) and not text.endswith("…"):
        text += " …"                              # the schema's bound closed it mid-sentence
    citations = _verify_all(library, refs, cites)
    return Answer(text=text, citations=citations, mode=mode,
                  not_stated=is_not_stated(text, citations), raw=result.text,
                  timing={"ttft_s": round(result.ttft_s, 3), "total_s": round(time.perf_counter() - start, 3)},
                  usage={"prompt_tokens": result.prompt_tokens, "cached_tokens": result.cached_tokens,
                         "completion_tokens": result.completion_tokens})
