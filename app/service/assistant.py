"""The Assistant: Pagewise's work as both front-ends ask for it.

It owns the engine's runtime (started and stopped here), finds a question's evidence, holds the
documents' locks while an answer reads them (the one place that takes them), keeps each
document set's conversation, stores finished exchanges in the library and tells its listeners
what the engine does. The command line and the window call it and show what it returns.
"""
from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future
from functools import lru_cache
from typing import Callable, Iterator

from app.core import cpu_work
from app.core.answer.conversation import Conversation
from app.core.documents import doc_locks
from app.service.events import EngineState, PlanChanged, plan_summary
from app.service.following import LibraryChanged, follow_library

log = logging.getLogger(__name__)

Listener = Callable[[object], None]


def answers_under_way(library, doc_id: int) -> bool:
    """Whether an answer (in any process) is reading this document now: its removal would wait."""
    return doc_locks.answers_under_way(library.get(doc_id).sha256)


class Assistant:
    """Ask, read, review and compare over one library with one engine.

    `model_id`: the model preferred (the planner's choice otherwise); `threads`: llama.cpp's
    threads (the setting otherwise); `runtime_factory(on_status)`: builds the engine runtime
    (tests give one with a fixed plan)."""

    def __init__(self, library=None, model_id: str | None = None, threads: int | None = None,
                 runtime_factory: Callable | None = None):
        self.library = library
        self.model_id = model_id
        self.threads = threads
        self._factory = runtime_factory
        self._runtime = None
        self._listeners: list[Listener] = []
        self._conversations: dict[tuple, Conversation] = {}   # per document set: the append-only context

    # --- listeners ------------------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> None:
        """`listener(event)` for each EngineState and PlanChanged (from the engine's threads)."""
        self._listeners.append(listener)

    def _tell(self, event) -> None:
        for listener in list(self._listeners):
            listener(event)

    def _status(self, state: str, detail: str) -> None:
        self._tell(EngineState(state, detail))

    # --- the engine -----------------------------------------------------------------------------
    def _new_runtime(self):
        if self._factory is not None:
            return self._factory(self._status)
        from app.core import settings
        from app.worker.runtime import EngineRuntime
        return EngineRuntime(on_status=self._status, threads=self.threads, settings=settings.load)

    def start(self, closing: threading.Event | None = None):
        """Plan for this machine and start the engine (probe → plan → launch → measure); the
        plan that runs. `closing` set meanwhile (a window closed while it loaded): stopped again."""
        from app.service.planning import plan_start
        if self._runtime is None:
            self._runtime = self._new_runtime()
        start = plan_start(self.model_id)
        self._runtime.start(start.plan, start.switch_for, start.connected)
        if closing is not None and closing.is_set():
            self.stop()
            raise RuntimeError("the window closed while the engine was starting")
        plan = self.plan
        line, reasons = plan_summary(plan)
        self._tell(PlanChanged(plan, line, tuple(reasons)))
        return plan

    def stop(self) -> None:
        runtime, self._runtime = self._runtime, None
        if runtime is not None:
            try:
                runtime.stop()
            finally:
                self._tell(PlanChanged(None))

    def use_model(self, model_id: str | None, closing: threading.Event | None = None):
        """Restart the engine with `model_id` preferred: the planner makes a new plan and says why.
        The conversations stay (they are kept per document set)."""
        self.stop()
        self.model_id = model_id
        return self.start(closing)

    @property
    def started(self) -> bool:
        """A runtime exists (starting or running)."""
        return self._runtime is not None

    @property
    def running(self) -> bool:
        return self._runtime is not None and self._runtime.running

    @property
    def plan(self):
        """The plan that runs now (a restart may have stepped down since the start); None when stopped."""
        return getattr(self._runtime, "plan", None)

    def context_tokens(self) -> int:
        return int(getattr(self.plan, "max_model_len", 0) or 0)

    def engine_info(self):
        return self._runtime.engine_info()

    @property
    def runtime(self):
        """The engine runtime this service drives (None when stopped): for tests and diagnostics."""
        return self._runtime

    def metrics(self) -> dict:
        """The engine's raw /metrics, by the engine's own names."""
        return dict(self._runtime.metrics() or {}) if self._runtime is not None else {}

    def engine_readings(self) -> dict:
        """The engine's numbers as a window shows them: its raw metrics plus `kv_cache_share`
        (0..1, any engine) and `kv_cache_bytes` (where the engine reports cells: our worker)."""
        from app.worker import protocol
        from app.worker.client import kv_cache_usage
        metrics = self.metrics()
        share = kv_cache_usage(metrics)
        if share is not None:
            metrics["kv_cache_share"] = share
        cells, plan = metrics.get(protocol.KV_CACHE_USED_CELLS), self.plan
        per_token = _kv_per_token(getattr(plan, "model_id", "")) if cells is not None and plan is not None else 0
        if per_token:
            metrics["kv_cache_bytes"] = cells * per_token
        return metrics

    def _require(self):
        if self._runtime is None:
            from app.worker.engine_errors import WorkerUnavailable
            raise WorkerUnavailable("the engine is not running")
        return self._runtime

    # --- evidence -------------------------------------------------------------------------------
    def evidence(self, refs, question: str, started: float | None = None):
        """The question's evidence cards from the search alone (never behind the engine). The
        search is foreground work: background jobs wait for it, the question's answer does not."""
        from app.core.answer.evidence import find_evidence
        with cpu_work.scheduler.foreground("finding the evidence", cpu_work.Kind.EVIDENCE):
            return find_evidence(self.library, refs, question, started=started)

    def warm_evidence(self, refs) -> None:
        """One evidence search over documents just opened, in their own words: the first
        question would otherwise pay the search's one-off set-up (a segmenter's dictionary).
        Not foreground work: nobody waits for it, so it cuts no background reading."""
        from app.core.answer.evidence import find_evidence
        from app.core.answer.evidence import across
        for ref in refs:        # its words as a question in the other language reads them (dictionary)
            across.warm(self.library, self.library.get(ref.doc_id))
        words = " ".join(self.library.page_text(refs[0].doc_id, 1).split())[:60]
        if words:
            find_evidence(self.library, refs, words)

    # --- conversations --------------------------------------------------------------------------
    @property
    def conversations(self) -> dict[tuple, Conversation]:
        """The engine's contexts held, per sorted document-id set."""
        return self._conversations

    def conversation(self, refs) -> Conversation:
        """This document set's conversation, as it was left (also after a restart)."""
        from app.core.answer import conversation as conversations
        key = tuple(sorted(r.doc_id for r in refs))
        if key not in self._conversations:
            self._conversations[key] = conversations.load(list(key), getattr(self.plan, "model_id", ""))
        return self._conversations[key]

    def bind_conversation(self, key: tuple[int, ...], conversation_id: int) -> None:
        """The engine's context for this document set is the stored conversation's (kept on disk
        per conversation): switching conversations switches the context."""
        from app.core.answer import conversation as conversations
        held = self._conversations.get(key)
        if held is None or held.thread != conversation_id:
            self._conversations[key] = conversations.load(list(key), getattr(self.plan, "model_id", ""),
                                                          thread=conversation_id)

    def save_conversation(self, conv: Conversation) -> None:
        from app.core.answer import conversation as conversations
        try:
            conversations.save(conv, getattr(self.plan, "model_id", ""))
        except OSError as exc:  # only a speed-up for the next session
            log.info("conversation not kept: %s", exc)

    def store_exchange(self, doc_ids: list[int], question: str, answer_json: str,
                       conversation: int | None = None) -> int | None:
        """A finished answer into its documents' history (the library's transcript)."""
        return self.library.add_exchange(doc_ids, question, answer_json, conversation=conversation)

    # --- asking ---------------------------------------------------------------------------------
    def ask(self, refs, question: str, *, mode: str = "auto", conversation: Conversation | None = None,
            evidence=None, on_delta=None, on_reading=None, on_progress=None, on_writing=None,
            cancel: threading.Event | None = None):
        """One question (a follow-up in `conversation`), holding its documents against a
        removal while it is answered: a document removed just before raises DocumentGone.
        `evidence`: the cards shown, or a Future of them (their search still running): the
        prompt starts with them; None: found here."""
        runtime = self._require()
        if isinstance(evidence, Future):
            # the search alone, well under the engine's reading; the question holds the machine
            # from now on, so a background reading stops at its next slice instead of slowing it
            with cpu_work.scheduler.foreground("answering"):
                evidence = evidence.result()
        with doc_locks.in_use(self.library, [r.doc_id for r in refs]):
            if evidence is None:
                evidence = self.evidence(refs, question)
            return runtime.ask(self.library, refs, question, mode=mode, on_delta=on_delta, cancel=cancel,
                               conversation=conversation, on_reading=on_reading, on_progress=on_progress,
                               evidence=evidence, on_writing=on_writing)

    def ask_series(self, given: list, questions: list[str], *, mode: str = "auto", first_evidence=None,
                   on_evidence: Callable | None = None, new_line: Callable | None = None, on_delta=None,
                   tell: Callable[[LibraryChanged], None] | None = None) -> Iterator:
        """Questions one after the other in one conversation over `given` (info, ref) pairs,
        following the library between them (another process may remove a document, or add it
        back); each answer is stored in the library's history and yielded. `first_evidence`:
        the first question's cards, already shown. `on_evidence(question, evidence, n, total)`
        for each later one; `new_line()`: a progress line per question (reading, progress,
        writing, done)."""
        infos = [info for info, _ in given]
        refs = [ref for _, ref in given]
        conv = Conversation()
        for n, question in enumerate(questions, 1):
            for attempt in (1, 2):
                if n > 1 or attempt > 1:
                    infos, refs, conv = follow_library(self.library, given, conv, [i.id for i in infos], tell)
                line = new_line() if new_line else None
                evidence = first_evidence if n == 1 and attempt == 1 else None
                try:
                    with doc_locks.in_use(self.library, [i.id for i in infos]):
                        if evidence is None:
                            evidence = self.evidence(refs, question)
                            if on_evidence:
                                on_evidence(question, evidence, n, len(questions))
                        answer = self._require().ask(self.library, refs, question, mode=mode, on_delta=on_delta,
                                                     conversation=conv, evidence=evidence,
                                                     on_reading=line.reading if line else None,
                                                     on_progress=line.progress if line else None,
                                                     on_writing=line.writing if line else None)
                    break
                except doc_locks.DocumentGone:
                    if attempt == 2:
                        raise
            if line:
                line.done()
            yield answer
            self.store_exchange([i.id for i in infos], question, _stored_json(answer.to_dict()))

    def prepare(self, refs) -> bool:
        """Let the engine restore what it kept of these documents while the user types."""
        if self._runtime is None:
            return False
        return self._runtime.prepare(self.library, refs)

    def read(self, refs, on_progress=None, cancel: threading.Event | None = None) -> dict:
        """Read whole documents ahead of the questions (their KV state is kept); yields to questions."""
        return self._require().read(self.library, refs, on_progress=on_progress, cancel=cancel)

    def review(self, refs, template: str, on_part=None, cancel: threading.Event | None = None,
               group_pages: int | None = None, force_parts: bool | None = None):
        """A whole-document task by map-reduce over page groups (app.core.answer.review)."""
        options = {k: v for k, v in (("group_pages", group_pages), ("force_parts", force_parts)) if v is not None}
        return self._require().review(self.library, refs, template, on_part=on_part, cancel=cancel, **options)

    def review_stored(self, infos, refs, template: str, on_part=None, **options) -> dict:
        """A review as the command line keeps it: its result with what answered it, stored in
        the documents' history."""
        result = self.review(refs, template, on_part=on_part, **options)
        data = {**result.to_dict(), "engine": self.engine_info().to_dict()}
        self.store_exchange([i.id for i in infos], f"[review: {template}]", _stored_json(data))
        return result, data

    def review_answer(self, refs, template: str, on_part=None, cancel: threading.Event | None = None):
        """A review shown like any answer, with what answered it."""
        answer = self.review(refs, template, on_part=on_part, cancel=cancel).as_answer()
        answer.engine = self.engine_info()
        return answer

    # --- comparing ------------------------------------------------------------------------------
    def compare(self, refs, topics=None, started: float | None = None):
        """Each topic's best clause of each document, from the search alone (no model)."""
        from app.core.compare import compare_clauses, parse_topics
        if topics is None or isinstance(topics, str):
            topics = parse_topics(topics)
        return compare_clauses(self.library, refs, topics,
                               started=time.perf_counter() if started is None else started)

    def compare_summary(self, refs, table) -> dict | None:
        """The model's summary row of a comparison, kept only when its citations back it."""
        from app.core.compare.summary import model_prompt, model_row
        answer = self.ask(refs, model_prompt(table), mode="retrieval", evidence=table.evidence())
        return model_row(answer)


@lru_cache(maxsize=8)
def _kv_per_token(model_id: str) -> int:
    try:
        from app.core.models import catalogue as models
        return models.load_catalogue().get(model_id).kv_bytes_per_token()
    except Exception:  # noqa: BLE001 - a gauge detail, never an error
        return 0


def _stored_json(data: dict) -> str:
    """An answer as the library's history keeps it (one line of JSON)."""
    import json
    return json.dumps(data, ensure_ascii=False)
