"""Question → context (whole documents if they fit, else retrieval) → model → verified answer:
the stages choose_context → build_prompt → generate → verify, composed by `ask`."""
from __future__ import annotations

import dataclasses

import json
import re
import threading
import time
from dataclasses import dataclass
from typing import Callable, Protocol

from app.core import textnorm
from app.core.answer import prompts
from app.core.answer.budget import (
    ANSWER_TOKENS,
    FOLLOW_UP_SHARE,
    TEMPLATE_MARGIN,
    estimate_tokens,
    prompt_room,
    reading_seconds,
    time_budget_tokens,
)
from app.core.answer import card_prompt, injection, question_check, verdict
from app.core.answer import rerank as reranking
from app.core.answer.evidence import judge as judging
from app.core.answer.evidence import rewrite as rewriting
from app.core.answer.citations import Citation, quotable, quote_too_short, with_support
from app.core.answer.citations import verify as verify_quote
from app.core.answer import passage_cut
from app.core.answer.conversation import Conversation, Passage, Turn
from app.core.answer.progress import Reading
from app.core.answer.refs import RETRIEVAL_PAGES, DocRef, ranked_hits  # noqa: F401 (qa.DocRef, qa.ranked_hits)
from app.core.answer.values import Answer, ContextInfo, Timing, Usage
from app.core.documents import tables
from app.core.failures import BadInput
from app.core.search import evidence as search_evidence


class ChatBackend(Protocol):
    """The engine as an answer uses it (app.worker's Engine and ChatClient are ones). `generate`
    passes `on_progress`, `stall_s` and `passage_plan` only when they are set."""

    def chat(self, messages: list[dict], json_schema: dict | None = None, max_tokens: int = 512,
             temperature: float = 0.0, on_delta: Callable[[str], None] | None = None,
             cancel: threading.Event | None = None, on_progress: Callable[[int, int], None] | None = None,
             stall_s: float | None = None, passage_plan: dict | None = None): ...

    def count_tokens(self, messages: list[dict]) -> int:
        """The prompt's tokens; NotImplementedError where the engine cannot count."""


def whole_context(library, refs: list[DocRef]) -> str:
    parts = []
    for ref in refs:
        info = library.get(ref.doc_id)
        parts.append(f"=== doc {ref.number}: {info.title or ref.label} ===")
        cells: dict[int, list[str]] = {}
        for chunk in library.chunks(ref.doc_id):
            if chunk.text.startswith(tables.MARKER):
                cells.setdefault(chunk.page_start, []).append(chunk.text)
        for page in library.pages(ref.doc_id):
            parts.append(f"[doc {ref.number}, p. {page.number}]\n{page.text.strip()}")
            # the page's tables again as cells with their headers: the running text above
            # flattens a table, so "Support, Annual" could not be read (or quoted) from it
            parts += [f"[doc {ref.number}, p. {page.number}]\n{text}" for text in cells.get(page.number, ())]
    return "\n\n".join(parts)


def pick_passages(library, ranked, budget: int, conv: Conversation | None = None,
                  at_least_one: bool = True) -> list[Passage]:
    """Passages in rank order while they fit `budget` tokens: a page whole when it fits, else
    the matching passage of it; the best one always (cut to the budget if it must be); those
    already in the conversation are skipped (they are in the context already)."""
    out, used = [], 0
    for ref, hit in ranked:
        if conv is not None and conv.has(ref.number, hit.page, hit.text.strip()):
            continue
        # a table hit stays cells with headers (its page's running text flattens the table)
        is_table = hit.text.startswith(tables.MARKER)
        page = "" if is_table else library.page_text(ref.doc_id, hit.page).strip()
        for text in (page, hit.text.strip()):
            cost = estimate_tokens(text) + 12
            if text and used + cost <= budget:
                out.append(Passage(ref.number, hit.page, text, best=at_least_one and not out))
                used += cost
                break
        else:
            if at_least_one and not out and not used:
                cut = hit.text.strip()[: max(200, int(budget * 3))]   # ~3 chars a token, conservative
                out.append(Passage(ref.number, hit.page, cut, best=True))
                used += estimate_tokens(cut)
    return out


def retrieval_context(library, refs: list[DocRef], question: str, budget: int) -> str:
    """The retrieved passages for a one-off question under `budget` tokens, as prompt text."""
    return "\n\n".join(p.block for p in pick_passages(library, ranked_hits(library, refs, question), budget))


def choose_mode(doc_tokens: int, room: int, time_budget: int, cached: bool) -> str:
    """Whole documents when they fit the context and either are read already (their KV state
    is kept) or fit the time budget; otherwise the best passages up to the budget."""
    if doc_tokens > room:
        return "retrieval"
    return "whole-document" if cached or doc_tokens <= time_budget else "retrieval"


_ANSWER_FIELD = re.compile(r'"answer"\s*:\s*"((?:[^"\\]|\\.)*)', re.S)
_CITATION_OBJ = re.compile(r'\{\s*"doc"\s*:[^{}]*\}', re.S)


def _salvage(text: str) -> tuple[str, list[dict]]:
    """A reply cut off at the token limit: keep the answer text and the complete citations.
    A review part's reply gives its quotes first and can be cut before its answer starts
    (a small model repeated one long quote until the reply ended): its quotes are kept."""
    m = _ANSWER_FIELD.search(text)
    if m:
        try:
            answer = json.loads(f'"{m.group(1)}"').strip() + " …"
        except json.JSONDecodeError:
            answer = m.group(1).strip() + " …"
        around = [text[:m.start()], text[m.end():]]     # citations before (a part's) or after
    elif text.lstrip().startswith("{") and _CITATION_OBJ.search(text):
        answer, around = "", [text]
    else:
        return text, []
    cites = []
    for obj in (o for piece in around for o in _CITATION_OBJ.findall(piece)):
        try:
            cites.append(json.loads(obj))
        except json.JSONDecodeError:
            continue
    return answer, [c for c in cites if isinstance(c, dict)]


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


def page_texts(library, doc_id: int, cache: dict[int, dict[int, str]]) -> dict[int, str]:
    """A document's page texts (number → text), read once into `cache` (doc id → them),
    which the caller shares between the steps that need them."""
    if doc_id not in cache:
        cache[doc_id] = {p.number: p.text for p in library.pages(doc_id)}
    return cache[doc_id]


def _verify_all(library, refs: list[DocRef], cites: list[dict],
                pages_cache: dict[int, dict[int, str]] | None = None) -> list[Citation]:
    """`pages_cache`: doc id → page texts, shared with the caller so the pages are read once."""
    by_number = {r.number: r for r in refs}
    pages_cache = {} if pages_cache is None else pages_cache

    def pages(ref: DocRef) -> dict[int, str]:
        return page_texts(library, ref.doc_id, pages_cache)

    out, seen = [], set()
    for c in cites:
        ref = by_number.get(_int(c.get("doc"), 1)) or refs[0]
        page, quote = _int(c.get("page"), 1), str(c.get("quote", ""))
        cit = verify_quote(ref.doc_id, ref.label, page, quote, pages(ref))
        for other in refs if not cit.verified else ():   # the words may be the other document's
            if other is not ref:
                moved = verify_quote(other.doc_id, other.label, page, quote, pages(other))
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
    """Exact prompt size from the engine's /tokenize, an estimate where the engine cannot count
    (NotImplementedError: a team server without it). Any other failure is the engine's and is
    raised: a dead engine must not be sized by an estimate and then asked anyway. No client (a
    prompt built with no engine, to be shown or measured): the estimate."""
    estimate = sum(estimate_tokens(m["content"]) for m in msgs) + 16
    if client is None:
        return estimate
    try:
        return int(client.count_tokens(msgs))
    except NotImplementedError:
        return estimate


def answer_schema(context: str, question: str, msgs: list[dict] | None = None,
                  prompt_tokens: int | None = None, cards: list[str] = ()) -> dict:
    """The JSON schema the reply is generated under: quotes from this context only (or, given
    `cards`, the ids of the question's evidence cards), the answer begun in the question's
    language and bounded in characters by what the token budget holds in it (the prompt's
    own characters per token when it is written in it)."""
    lang = textnorm.language(question)
    ratio = None
    if msgs and prompt_tokens and textnorm.language(context[:20000]) == lang:
        ratio = sum(len(m["content"]) for m in msgs) / prompt_tokens
    chars = prompts.answer_chars(lang, ANSWER_TOKENS, ratio)
    if cards:
        return prompts.card_schema(list(cards), chars, lang)
    return prompts.answer_schema(quotable(context), chars, lang)


@dataclass(frozen=True)
class AskOptions:
    """How a question is asked, besides what about and of whom."""
    mode: str = "auto"                 # "auto" | "whole-document" | "retrieval"
    prefill_tps: float | None = None   # this model's measured reading speed (tokens/s)
    cached: bool = False               # the documents were read whole before (the engine kept them)
    target_s: float | None = None      # the first-token target: × prefill_tps = the prompt budget
    rerank: bool = False               # the model first picks the best of retrieval's pages
    judge: str = "off"                 # the model judges the candidate cards before it answers (evidence/judge.py):
                                       # "auto" when it fits the time budget, "on" always, "off"
    rewrite: str = "off"               # the model words the question as the document would and the search looks
                                       # for that too (evidence/rewrite.py): "auto" | "on" | "off"
    decode_tps: float | None = None    # this model's measured writing speed (tokens/s)
    stall_s: float | None = None       # the backend's stall deadline while it reads
    cut_passages: bool = False         # the engine takes a passage plan (our llama.cpp worker): behind
                                       # plan it drops lower-ranked passages so the first token stays on time


@dataclass(frozen=True)
class Listeners:
    """Who hears about a question as it goes, and what stops it."""
    on_delta: Callable[[str], None] | None = None            # each piece of the reply
    on_reading: Callable[[Reading | reranking.Choosing | judging.Judging], None] | None = None   # before each read
    on_progress: Callable[[int, int], None] | None = None    # (read, total) while the engine reads
    cancel: threading.Event | None = None


@dataclass(frozen=True)
class ContextPlan:
    """The first stage's outcome: the conversation is set to its mode (whole documents or
    retrieval); this says what the prompt may hold and what retrieval chose."""
    room: int                          # prompt tokens the context holds
    budget: int                        # prompt tokens the first-token target allows
    new_context: bool                  # the conversation had to begin again
    ranked: list | None = None         # retrieval's (reranked) pages, when reranking ran
    choice: reranking.Choice | None = None


@dataclass(frozen=True)
class Prompt:
    """The second stage's outcome: what the engine is sent."""
    messages: list[dict]
    passages: list[Passage]            # the passages this turn adds
    tokens: int                        # the whole prompt
    ranked: list                       # retrieval's pages (reused for the warnings)
    schema: dict                       # the reply's JSON schema
    reading: Reading                   # said before the engine reads
    cards: list[str] = ()              # the evidence card ids this question reads and may cite


@dataclass(frozen=True)
class Reply:
    """The third stage's outcome: the model's reply as it came."""
    raw: str
    ttft_s: float
    usage: Usage
    started: float                     # perf_counter when the request went out
    cut: str = ""                      # the engine ended the reply early, and why (its text is kept)
    fewer: str = ""                    # the engine read fewer passages than sent, and why
    dropped: int = 0                   # how many


@dataclass(frozen=True)
class Question:
    """What is asked and of what: the question, its documents, the engine's context, the
    conversation it follows up (None: a fresh one) and the evidence cards already shown."""
    library: object
    refs: list[DocRef]
    text: str
    context_tokens: int
    conversation: Conversation | None = None
    evidence: object | None = None


def ask(request: Question, client: ChatBackend, options: AskOptions = AskOptions(),
        listen: Listeners = Listeners()) -> Answer:
    """Answer one question; with `request.conversation`, as a follow-up in that conversation (its
    context grows append-only, so the engine reuses what it read). `options` say how (see
    AskOptions; `target_s` × `prefill_tps` is the prompt budget, the time to the first token the
    user waits; `rerank`: the model first picks the best of retrieval's pages when that fits the
    time budget); `listen` who hears the question's progress and what stops it.

    Four stages: choose the context → build the prompt → generate → verify."""
    library, refs, question, context_tokens = request.library, request.refs, request.text, request.context_tokens
    evidence = request.evidence
    if not question.strip():
        raise BadInput("the question is empty")
    question_check.check(question)    # the window's questions too, not only the CLI's (issue 32.12)
    asked = time.perf_counter()
    conv = request.conversation if request.conversation is not None else Conversation()
    # the caller (app.service) holds the documents' locks: a removal waits for this answer
    card_judgement = rewritten = None
    if options.rewrite in ("auto", "on") and evidence is not None and not conv.turns:
        evidence, rewritten = rewriting.rewrite_found(
            client, library, refs, evidence, options.prefill_tps, options.decode_tps, options.target_s,
            listen.cancel, on_rewriting=listen.on_reading, always=options.rewrite == "on")
        if rewritten.text and listen.on_reading:
            listen.on_reading(rewriting.CardsFound(evidence, rewritten))
        if rewritten.seconds and options.target_s:     # the rewriting took part of the user's wait
            options = dataclasses.replace(options, target_s=max(options.target_s - rewritten.seconds, 0.1))
    if options.judge in ("auto", "on") and evidence is not None:
        evidence, card_judgement = judging.judge_found(
            client, evidence, lambda: judging.candidates(library, refs, evidence), options.prefill_tps,
            options.target_s, listen.cancel, on_judging=listen.on_reading, always=options.judge == "on")
        if card_judgement.candidates and listen.on_reading:
            listen.on_reading(judging.CardsJudged(evidence, card_judgement))
        if card_judgement.seconds and options.target_s:     # the judging took part of the user's wait
            options = dataclasses.replace(options, target_s=max(options.target_s - card_judgement.seconds, 0.1))
    plan = choose_context(library, refs, question, client, context_tokens, conv, options, listen, evidence)
    prompt = build_prompt(library, refs, question, client, conv, plan, options, evidence)
    if listen.on_reading:
        listen.on_reading(prompt.reading)
    reply = generate(client, question, conv, prompt, options, listen, asked)
    return verify(library, refs, question, conv, prompt, reply, evidence, card_judgement, rewritten)


def choose_context(library, refs: list[DocRef], question: str, client: ChatBackend, context_tokens: int,
                   conv: Conversation, options: AskOptions, listen: Listeners = Listeners(),
                   evidence=None) -> ContextPlan:
    """Whole documents or retrieval, set on the conversation: whole when asked for, or (auto)
    when read already or within the time budget; a retrieval conversation moves to whole
    documents once they are read (cheap then). Reranking, when asked for, runs here and
    takes its time out of the budget. `evidence`: the cards shown; retrieval takes their
    pages first (the prompt starts with what the user already sees)."""
    doc_ids = [r.doc_id for r in refs]
    mode, cached, prefill_tps = options.mode, options.cached, options.prefill_tps
    room = prompt_room(context_tokens)
    budget = time_budget_tokens(options.target_s, prefill_tps, context_tokens)
    new_context = False
    if tuple(doc_ids) != conv.doc_ids:
        conv.begin(doc_ids, "", budget)
    want_whole = False
    if mode == "whole-document" or (mode == "auto" and conv.mode != "whole-document"
                                     and (cached or not conv.turns)):
        whole = whole_context(library, refs)
        tokens = count_tokens(client, prompts.messages(whole, question, whole=True))
        want_whole = tokens <= room if mode == "whole-document" else \
            choose_mode(tokens, room, budget if prefill_tps else room, cached) == "whole-document"
    if want_whole and conv.mode != "whole-document":
        _go_whole(conv, doc_ids, budget, whole)      # its exchanges stay: no new context
    elif mode == "retrieval" and conv.mode == "whole-document" or conv.mode == "":
        new_context = bool(conv.turns)
        conv.begin(doc_ids, "retrieval", budget)
    ranked = evidence.ranked if evidence is not None and evidence.ranked else None
    choice = None
    if options.rerank and conv.mode == "retrieval" and not conv.turns:
        ranked, choice = reranking.rerank(client, question, ranked or ranked_hits(library, refs, question),
                                          prefill_tps, options.target_s, listen.cancel,
                                          on_choosing=listen.on_reading)
        if choice.seconds and options.target_s:   # the choice took part of the user's wait
            budget = time_budget_tokens(max(options.target_s - choice.seconds, 0.1), prefill_tps, context_tokens)
    return ContextPlan(room, budget, new_context, ranked, choice)


def _go_whole(conv: Conversation, doc_ids: list[int], budget: int, whole: str) -> None:
    """The documents were read whole meanwhile (the background reading finished after the
    first question): the conversation goes on over the whole documents with its questions and
    replies kept (their passages are in the documents now). It used to begin a new context
    there, so a follow-up on a 5-page NDA forgot the question before it (issue 33.6)."""
    earlier, restarts = [Turn([], t.question, t.reply) for t in conv.turns], conv.restarts
    conv.begin(doc_ids, "whole-document", budget, whole_text=whole)
    conv.turns, conv.restarts = earlier, restarts


def build_prompt(library, refs: list[DocRef], question: str, client: ChatBackend, conv: Conversation,
                 plan: ContextPlan, options: AskOptions, evidence=None) -> Prompt:
    """This turn's messages within the plan's budget (a new context when the conversation no
    longer fits), the reply's schema, and what the engine will read anew. With `evidence`
    (cards shown), the question reads its own cards, follow-ups included."""
    new_context = plan.new_context
    cards = evidence.cards if evidence is not None else []

    def build(ranked):
        if cards:
            msgs, new, used, ids = _build_cards(library, question, client, conv, plan.room, plan.budget, cards)
            return msgs, new, used, ranked or [], ids
        return (*_build(library, refs, question, client, conv, plan.room, plan.budget, ranked), [])

    msgs, new, used, ranked, ids = build(plan.ranked)
    if used > plan.room:                 # the conversation no longer fits: a new context
        new_context = True
        conv.begin([r.doc_id for r in refs], conv.mode, plan.budget, whole_text=conv.whole_text)
        msgs, new, used, ranked, ids = build(ranked)
    fresh = max(0, used - conv.cached_tokens_estimate()) if conv.turns else (0 if options.cached else used)
    if conv.recaps(ids):                 # a fresh prompt: only the system prompt is shared with the last
        fresh = max(0, used - count_tokens(client, msgs[:1]))
    if conv.mode == "whole-document" and options.cached and not conv.last_prompt_tokens:   # holds the read
        fresh = max(0, used - count_tokens(client, prompts.messages(conv.whole_text, "", whole=True)))
    reading = Reading(conv.mode, used, fresh, len(new) if conv.mode == "retrieval" else len(refs),
                      plan.budget, reading_seconds(fresh, options.prefill_tps), new_context, plan.choice)
    context = "\n\n".join(p.block for p in new) if ids else conv.context_text(new)
    schema = answer_schema(context, question, msgs, used, ids)
    return Prompt(msgs, new, used, ranked, schema, reading, ids)


def generate(client: ChatBackend, question: str, conv: Conversation, prompt: Prompt, options: AskOptions,
             listen: Listeners = Listeners(), asked: float | None = None) -> Reply:
    """The model's reply under the schema, streamed to `listen.on_delta`; the turn joins the
    conversation (its context grows by it) with the passages the engine read: an engine that
    takes a passage plan drops the lower-ranked ones when it reads slower than planned
    (`asked`: when the question came, the start of the first-token target)."""
    start = time.perf_counter()
    plan = None
    if options.cut_passages and options.target_s and conv.mode == "retrieval" and not prompt.cards:
        left = options.target_s - (start - (asked or start))
        plan = passage_cut.request_plan(conv, question, prompt.passages, prompt.messages, left)
    result = client.chat(prompt.messages, json_schema=prompt.schema, max_tokens=ANSWER_TOKENS,
                         on_delta=listen.on_delta, cancel=listen.cancel,
                         **_optional(on_progress=listen.on_progress, stall_s=options.stall_s, passage_plan=plan))
    outcome = getattr(result, "passages", None) if plan else None
    read = passage_cut.kept(prompt.passages, outcome)
    conv.add(read, question, result.text, result.prompt_tokens or prompt.tokens, result.completion_tokens,
             cards=prompt.cards)
    usage = Usage(result.prompt_tokens, result.cached_tokens, result.completion_tokens)
    return Reply(result.text, result.ttft_s, usage, start, getattr(result, "cut", ""),
                 passage_cut.warning(outcome, options.prefill_tps), len(prompt.passages) - len(read))


def verify(library, refs: list[DocRef], question: str, conv: Conversation, prompt: Prompt,
           reply: Reply, evidence=None, card_judgement=None, rewritten=None) -> Answer:
    """The reply parsed, its citations checked against the pages (and for support), the
    warnings the user must see, and the answer's figures; `evidence`: the cards shown first,
    carried by the answer (and their "not addressed" is the warning's)."""
    text, cites = parse_reply(reply.raw)
    if len(text) >= prompts.answer_bound(prompt.schema) and not text.endswith("…"):
        text += " …"                              # the schema's bound closed it mid-sentence
    pages: dict[int, dict[int, str]] = {}
    if prompt.cards:                              # card ids → the cards' quotes, checked like any quote
        cites = verdict.cited_cards(cites, conv.card_refs(), prompt.cards)
    citations = with_support(_verify_all(library, refs, cites, pages), text, question)
    warnings = _warnings(library, refs, question, conv, pages, prompt.ranked, evidence)
    judged = verdict.judge(text, citations, question, evidence, verdict.abstains(text),
                           lambda: _context_sentences(library, refs, conv, prompt, pages))
    text, citations, status = judged.text, judged.citations, judged.status
    warnings[:0] = judged.warnings
    if status == verdict.NOT_ADDRESSED and evidence is not None and evidence.addressed:
        named = ", ".join(f"p. {c.page}" for c in evidence.cards[:3]) or "none"
        warnings.append(f"The model found no answer in the closest passages ({named}), which the search "
                        "found on this question's topic: read them.")
    if reply.cut:
        warnings.insert(0, f"The engine stopped the reply early ({reply.cut}); this is what it wrote until then.")
    if reply.fewer:
        warnings.insert(0, reply.fewer)
    if (missed := prompts.language_missed(question, text)):     # issue 33: said, in the question's language
        warnings.insert(0, missed)
    reading = prompt.reading
    return Answer(text=text, citations=citations, mode=conv.mode, warnings=warnings, evidence=evidence,
                  not_stated=is_not_stated(text, citations), raw=reply.raw, status=status,
                  timing=Timing(ttft_s=round(reply.ttft_s, 3), total_s=round(time.perf_counter() - reply.started, 3),
                                estimated_ttft_s=reading.seconds),
                  usage=reply.usage,
                  context=ContextInfo(tokens=reply.usage.prompt_tokens if reply.dropped else prompt.tokens,
                                      passages=len(conv.passages()) if conv.mode == "retrieval" else 0,
                                      budget_tokens=reading.budget_tokens, turn=len(conv.turns),
                                      new_context=reading.new_context, rerank=reading.choice,
                                      dropped=reply.dropped, judged=card_judgement,
                                      rewritten=rewritten))


def _warnings(library, refs, question: str, conv: Conversation,
              pages: dict[int, dict[int, str]], ranked: list | None = None, evidence=None) -> list[str]:
    """What the user must know besides the answer: instruction-like text in the documents
    (treated as evidence, never obeyed), and retrieval that found nothing convincing.
    `pages`: the page texts citation checking read (read here only for documents it skipped);
    `ranked`: the retrieval's hits (one document's are its search, best first, reused)."""
    out = []
    findings = []
    for ref in refs:
        findings += injection.scan_pages(ref.doc_id, page_texts(library, ref.doc_id, pages))
    line = injection.warning(findings, {r.doc_id: r.label for r in refs})
    if line:
        out.append(line)
    if evidence is not None:        # the cards' own verdict, decided before the model ran
        closest = None if evidence.addressed else [c.page for c in evidence.cards]
    elif conv.mode == "retrieval":
        hits = [h for _, h in ranked] if ranked and len(refs) == 1 else \
            library.search(question, doc_ids=[r.doc_id for r in refs], k=5)
        convincing = search_evidence.convincing(hits, textnorm.language(question), question)
        closest = None if convincing else [h.page for h in hits]
    else:
        closest = None
    if closest is not None:
        pages_named = ", ".join(f"p. {p}" for p in closest[:3]) or "none"
        out.append(f"The document does not appear to address this (closest passages: {pages_named}); "
                   "check the answer against the pages.")
    return out


def _optional(**kwargs) -> dict:
    """Keyword arguments a backend takes only when they are set (test doubles need not)."""
    return {k: v for k, v in kwargs.items() if v is not None}


def _context_sentences(library, refs: list[DocRef], conv: Conversation, prompt: Prompt,
                       pages: dict[int, dict[int, str]]) -> list[Citation]:
    """The sentences the model read around this question's cards (its card passages, new or
    already in the context), each checked against its page: what a right answer that cited the
    wrong card may be rescued by."""
    by_number = {r.number: r for r in refs}
    ids = set(prompt.cards)
    out = []
    for passage in conv.passages():
        ref = by_number.get(passage.doc)
        if ref is None or not ids & set(passage.ids):
            continue
        for sentence in card_prompt.page_sentences(passage.text):
            if quote_too_short(sentence):
                continue
            cit = verify_quote(ref.doc_id, ref.label, passage.page, sentence, page_texts(library, ref.doc_id, pages))
            if cit.verified:
                out.append(cit)
    return out


def _card_ids(conv: Conversation, cards: list, resend: bool = False) -> tuple[list[tuple[str, object]], list[str]]:
    """Ids for this question's cards: one already in the context keeps its id (it is not sent
    again, unless `resend`: a recapped follow-up's fresh prompt carries all of its cards), a
    new one gets the next ("E6" after five). Returns (the cards to send with their ids, every
    id of this question's cards, best first)."""
    number = conv.next_card_number()
    new, ids, send = [], [], []
    for card in cards:
        card_id = conv.card_id(card.number, card.page, card.quote) or \
            next((i for i, c in new if (c.number, c.page, c.quote) == (card.number, card.page, card.quote)), None)
        if card_id is None:
            card_id, number = f"E{number}", number + 1
            new.append((card_id, card))
        if card_id not in ids:
            ids.append(card_id)
            if resend or (card_id, card) in new:
                send.append((card_id, card))
    return send, ids


def _build_cards(library, question, client, conv: Conversation, room: int, budget: int, cards: list):
    """This turn's messages when the question has evidence cards: its cards, each with the
    sentences around it as far as the budget goes, never less than the cards themselves. A
    retrieval follow-up is a fresh prompt (Conversation.recaps) with all of its cards and a
    first question's budget; whole documents need the new cards only (the pages are there)."""
    recap = conv.recaps(cards)
    new, ids = _card_ids(conv, cards, resend=recap)
    texts: dict[tuple[int, int], str] = {}

    def page_text(card) -> str:
        key = (card.doc_id, card.page)
        if key not in texts:
            texts[key] = library.page_text(card.doc_id, card.page)
        return texts[key]

    if conv.mode == "whole-document":
        limit = 0                        # the pages are in the context: the cards point into them
    elif recap:                          # a fresh prompt: the first question's budget, less the recap
        limit = min(budget, room) - estimate_tokens(prompts.template("system") + question + conv.recap(question)) \
            - TEMPLATE_MARGIN
    elif conv.turns:
        first = min(conv.first_budget, conv.first_prompt_tokens or conv.first_budget)
        limit = int(first * FOLLOW_UP_SHARE) - estimate_tokens(question + conv.turns[-1].reply) - TEMPLATE_MARGIN
    else:
        limit = min(budget, room) - estimate_tokens(prompts.template("system") + question) - TEMPLATE_MARGIN
    passages = card_prompt.card_passages(new, page_text, max(limit, 0), context=conv.mode != "whole-document")
    msgs = conv.messages(question, passages, ids)
    used = count_tokens(client, msgs)
    if used > room and limit > 0:        # the context first, never the cards
        passages = card_prompt.card_passages(new, page_text, 0)
        msgs = conv.messages(question, passages, ids)
        used = count_tokens(client, msgs)
    return msgs, passages, used, ids


def _build(library, refs, question, client, conv: Conversation, room: int, budget: int, ranked=None):
    """This turn's messages: whole documents (first turn) or the passages it adds, then the
    question. A first question's passages shrink until the exact count fits the context.
    `ranked`: retrieval's (reranked) pages when the caller has them."""
    if conv.mode == "whole-document":
        msgs = conv.messages(question, [])
        return msgs, [], count_tokens(client, msgs), []
    ranked = ranked if ranked is not None else ranked_hits(library, refs, question)
    if conv.turns:                       # a follow-up appends a share of the first question's prompt
        first = min(conv.first_budget, conv.first_prompt_tokens or conv.first_budget)
        share = int(first * FOLLOW_UP_SHARE)
        allowance = share - estimate_tokens(question + conv.turns[-1].reply) - TEMPLATE_MARGIN
        new = pick_passages(library, ranked, max(0, allowance), conv, at_least_one=False)
        if not new and allowance < share and ranked and not conv.has(
                ranked[0][0].number, ranked[0][1].page, ranked[0][1].text.strip()):
            new = pick_passages(library, ranked[:1], share, conv, at_least_one=False)  # the best one, if it fits
        msgs = conv.messages(question, new)
        return msgs, new, count_tokens(client, msgs), ranked
    limit = min(budget, room) - estimate_tokens(prompts.template("system") + question) - TEMPLATE_MARGIN
    for _ in range(6):
        new = pick_passages(library, ranked, max(limit, 64))
        msgs = conv.messages(question, new)
        used = count_tokens(client, msgs)
        if used <= room:
            break
        limit = int(limit * room / used) - 64
    return msgs, new, used, ranked
