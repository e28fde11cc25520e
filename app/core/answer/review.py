"""Whole-document tasks (review templates, summary) by map-reduce when the documents do
not fit the context: page groups (~5 pages) → short notes, each with verified page-cited
quotes → one answer over the notes that keeps their citations, and says it was
assembled from parts. Documents that fit are answered in one pass (qa.ask).

Uses the same client interface, schema, reply parsing and citation verification as
qa.ask, so a part's citations are checked against the real pages like any answer's.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from app.core.answer import prompts, qa
from app.core.answer.budget import ANSWER_TOKENS, TEMPLATE_MARGIN, reading_seconds, time_budget_tokens
from app.core.answer.citations import Citation
from app.core.answer.values import Timing
from app.core.failures import BadInput

GROUP_PAGES = 5          # pages per part (the seeds' 5-page segments)
TEMPLATES = {"contract": "review_contract", "deadlines": "review_dates", "risks": "review_risks",
             "summary": "review_summary"}
NOTHING = {"en": "Nothing in these pages for this task.", "zh": "这些页面中没有与此任务相关的内容。"}
NOTE_TASK = {"en": "Read only these pages. Write short notes for this task, each point with "
                   "its page, quoting the pages word for word. If these pages have nothing for it, "
                   "answer exactly: " + NOTHING["en"] + "\n{task}",
             "zh": "只阅读这些页面。为下列任务写简短的笔记，每一点注明页码，并逐字引用原文。"
                   "如果这些页面与任务无关，请只回答：" + NOTHING["zh"] + "\n{task}"}
REDUCE_TASK = {"en": "The notes below were taken part by part from a document too long to read "
                     "at once. Using only them, answer this task, keeping the page of every point:\n{task}",
               "zh": "下面的笔记是从一份太长而无法一次读完的文件中逐部分摘录的。只根据这些笔记完成下列任务，"
                     "保留每一点的页码：\n{task}"}
ASSEMBLED = {"en": "Assembled from {n} parts (pages {pages}), read one after another.",
             "zh": "本答复由 {n} 个部分（第 {pages} 页）逐一阅读后汇总而成。"}


class ReviewCancelled(Exception):
    """The user stopped the review (the parts read so far are dropped)."""


@dataclass
class Part:
    number: int
    doc: qa.DocRef
    first_page: int
    last_page: int
    notes: str = ""
    citations: list[Citation] = field(default_factory=list)
    nothing: bool = False             # the part said it has nothing for the task
    seconds: float = 0.0
    tokens: int = 0                   # its prompt, as the engine counts it
    expected_s: float | None = None   # its reading time at the measured prefill speed

    @property
    def span(self) -> str:
        """"3" or "3-5": its pages."""
        return str(self.first_page) if self.first_page == self.last_page else f"{self.first_page}-{self.last_page}"

    @property
    def pages_label(self) -> str:
        return ("p. " if self.first_page == self.last_page else "pp. ") + self.span

    def to_dict(self) -> dict:
        return {"part": self.number, "doc": self.doc.label, "pages": [self.first_page, self.last_page],
                "notes": self.notes, "nothing_for_task": self.nothing, "citations": [c.to_dict() for c in self.citations],
                "seconds": round(self.seconds, 2), "prompt_tokens": self.tokens,
                "expected_reading_s": self.expected_s}


@dataclass
class Review:
    template: str
    text: str
    citations: list[Citation]
    parts: list[Part]                 # empty when the documents fit in one pass
    assembled: bool
    timing: Timing | None = None

    def as_answer(self) -> qa.Answer:
        """The review as the window shows any answer: text, verified citations, a mode line."""
        mode = f"review in {len(self.parts)} parts" if self.assembled else "review, whole document"
        return qa.Answer(self.text, self.citations, mode, not_stated=False, timing=self.timing)

    def to_dict(self) -> dict:
        return {"template": self.template, "answer": self.text, "assembled_from_parts": self.assembled,
                "citations": [c.to_dict() for c in self.citations],
                "parts": [p.to_dict() for p in self.parts], "timing": self.timing.to_dict() if self.timing else {}}


def template_for(prompt_key: str) -> str | None:
    """"review_dates" (a resources/prompts file) → "deadlines"; None for other prompts."""
    return next((name for name, key in TEMPLATES.items() if key == prompt_key), None)


def task_text(template: str, lang: str) -> str:
    if template not in TEMPLATES:
        raise BadInput(f"unknown review template {template!r} (one of: {', '.join(TEMPLATES)})")
    lang = "zh" if lang == "zh" else "en"
    return prompts.template(f"{TEMPLATES[template]}_{lang}")


def review(library, refs: list[qa.DocRef], template: str, client: qa.ChatBackend, context_tokens: int,
           on_part: Callable[[int, int, Part], None] | None = None,
           cancel: threading.Event | None = None, group_pages: int = GROUP_PAGES,
           force_parts: bool = False, prefill_tps: float | None = None,
           target_s: float | None = None) -> Review:
    """Run `template` over the documents; `on_part(k, n, part)` before part k of n is
    read; `force_parts` maps and reduces even when everything would fit.

    Every step keeps the first-token budget of a question (`target_s` × the measured
    `prefill_tps`): a part holds at most that many prompt tokens (fewer pages when they
    are long), so each step answers as soon as a question would and progress moves."""
    lang = _language(library, refs)
    task = task_text(template, lang)
    start = time.perf_counter()
    room = time_budget_tokens(target_s, prefill_tps, context_tokens)
    if not force_parts:
        whole = qa.whole_context(library, refs)
        if qa.count_tokens(client, prompts.messages(whole, task, whole=True)) <= room:
            answer = qa.ask(qa.Question(library, refs, task, context_tokens), client,
                            qa.AskOptions(mode="whole-document"), qa.Listeners(cancel=cancel))
            return Review(template, answer.text, answer.citations, [], False,
                          Timing(total_s=round(time.perf_counter() - start, 2)))
    note_task = NOTE_TASK[lang].format(task=task)
    texts: dict[int, dict[int, str]] = {}       # doc id → page texts, read once for every step
    parts = plan_parts(library, refs, client, room, note_task, group_pages, texts)
    for part in parts:
        if cancel is not None and cancel.is_set():
            raise ReviewCancelled("the review was stopped")
        part.expected_s = reading_seconds(part.tokens, prefill_tps)
        if on_part:
            on_part(part.number, len(parts), part)
        _read_part(library, part, client, note_task, lang, cancel, texts)
    return _reduce(library, refs, template, task, lang, parts, client, room, cancel, start)


def plan_parts(library, refs: list[qa.DocRef], client, room: int, note_task: str,
               group_pages: int = GROUP_PAGES, texts: dict | None = None) -> list[Part]:
    """Page groups of `group_pages`, fewer where a group's pages do not fit the context.
    `texts`: doc id → page texts, filled here (shared with the steps that follow)."""
    texts = {} if texts is None else texts
    parts: list[Part] = []
    for ref in refs:
        count = library.get(ref.doc_id).page_count
        first = 1
        while first <= count:
            size = group_pages
            while True:
                last = min(count, first + size - 1)
                part = Part(len(parts) + 1, ref, first, last)
                msgs = prompts.messages(_part_context(library, part, texts), note_task, whole=True)
                part.tokens = qa.count_tokens(client, msgs)
                if size == 1 or part.tokens <= room:
                    break
                size = max(1, size // 2)
            parts.append(part)
            first = last + 1
    return parts


def _part_context(library, part: Part, texts: dict[int, dict[int, str]]) -> str:
    info = library.get(part.doc.doc_id)
    pages = qa.page_texts(library, part.doc.doc_id, texts)
    body = [f"[doc {part.doc.number}, p. {n}]\n{pages[n].strip()}"
            for n in range(part.first_page, part.last_page + 1) if n in pages]
    return "\n\n".join([f"=== doc {part.doc.number}: {info.title or part.doc.label} (pages {part.first_page}-"
                        f"{part.last_page} of {info.page_count}) ==="] + body)


def part_schema(context: str, note_task: str, part: Part, lang: str) -> dict:
    """A part's reply either cites its own pages (at least one quote, from its pages, with
    one of its page numbers, chosen before its notes) or says, in fixed words, that it has
    nothing for the task.
    Without this a small model wrote notes with no citation for half the parts, or cited
    a page number outside the part, which could not be kept. Quotes come first (both engines
    generate properties in the order given): a small model's notes ran into a loop of
    figures and used the reply's tokens before its quotes."""
    base = qa.answer_schema(context, note_task)
    props = base["properties"]
    props["answer"].pop("pattern", None)     # notes as before: lists numbered "1." in either language
    item = props["citations"]["items"]
    cited_item = {**item, "properties": {**item["properties"], "doc": {"enum": [part.doc.number]},
                                         "page": {"enum": list(range(part.first_page, part.last_page + 1))}}}
    cited = {**base, "properties": {"citations": {**props["citations"], "items": cited_item, "minItems": 1},
                                    "answer": props["answer"]}}
    nothing = {**base, "properties": {"citations": {"type": "array", "maxItems": 0, "items": {"type": "string"}},
                                      "answer": {"enum": [NOTHING[lang]]}}}
    return {"anyOf": [cited, nothing]}


def _read_part(library, part: Part, client, note_task: str, lang: str, cancel,
               texts: dict[int, dict[int, str]]) -> None:
    context = _part_context(library, part, texts)
    msgs = prompts.messages(context, note_task, whole=True)
    schema = part_schema(context, note_task, part, lang)
    began = time.perf_counter()
    result = client.chat(msgs, json_schema=schema, max_tokens=ANSWER_TOKENS, cancel=cancel)
    text, cites = qa.parse_reply(result.text)
    part.nothing = text.strip() == NOTHING[lang]
    part.citations = part_citations(library, part, cites, texts)
    part.notes = "" if part.nothing else text
    part.seconds = time.perf_counter() - began


def part_citations(library, part: Part, cites: list[dict],
                   texts: dict[int, dict[int, str]] | None = None) -> list[Citation]:
    """A part's verified citations. Only its own pages can be cited from it, so a quote is
    looked for on them alone: a standard sentence repeated elsewhere in the bundle (another
    agreement of the same family) was otherwise "found" on an earlier page and dropped."""
    pages = qa.page_texts(library, part.doc.doc_id, {} if texts is None else texts)
    own = {n: t for n, t in pages.items() if part.first_page <= n <= part.last_page}
    return [c for c in qa._verify_all(library, [part.doc], cites, {part.doc.doc_id: own})
            if c.verified and part.first_page <= c.page <= part.last_page]


def _notes_context(parts: list[Part]) -> str:
    blocks = []
    for part in parts:
        quotes = "\n".join(f'[doc {part.doc.number}, p. {c.page}] "{c.quote}"' for c in part.citations)
        blocks.append(f"[part {part.number}: doc {part.doc.number}, pp. {part.first_page}-{part.last_page}]\n"
                      f"{part.notes.strip() or ('' if quotes else '(nothing for this task)')}"
                      + (f"\n{quotes}" if quotes else ""))
    return "\n\n".join(blocks)


def _reduce(library, refs, template: str, task: str, lang: str, parts: list[Part], client,
            room: int, cancel, start: float) -> Review:
    question = REDUCE_TASK[lang].format(task=task)
    context = _notes_context(parts)
    msgs = prompts.messages(context, question, whole=True)
    while qa.count_tokens(client, msgs) > room - TEMPLATE_MARGIN and len(context) > 2000:
        context = context[: int(len(context) * 0.8)]     # notes too long: the last ones shortened
        msgs = prompts.messages(context, question, whole=True)
    if cancel is not None and cancel.is_set():
        raise ReviewCancelled("the review was stopped")
    result = client.chat(msgs, json_schema=qa.answer_schema(context, question), max_tokens=ANSWER_TOKENS,
                         cancel=cancel)
    text, cites = qa.parse_reply(result.text)
    final = [c for c in qa._verify_all(library, refs, cites) if c.verified]
    # Every part's verified citations are kept, after those the final pass chose.
    seen = {(c.doc_id, c.page, c.quote) for c in final}
    for part in parts:
        for c in part.citations:
            if (c.doc_id, c.page, c.quote) not in seen:
                seen.add((c.doc_id, c.page, c.quote))
                final.append(c)
    spans = ", ".join(p.span for p in parts)
    note = ASSEMBLED[lang].format(n=len(parts), pages=spans)
    return Review(template, f"{text.strip()}\n\n{note}".strip(), final, parts, True,
                  Timing(total_s=round(time.perf_counter() - start, 2),
                         parts_s=tuple(round(p.seconds, 2) for p in parts), budget_tokens=room))


def _language(library, refs: list[qa.DocRef]) -> str:
    return "zh" if {library.get(r.doc_id).lang for r in refs} == {"zh"} else "en"
