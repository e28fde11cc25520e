"""The engine as the app uses it: questions, readings and reviews scheduled over one Engine.

The Engine (app/worker/engine.py) owns what runs — plan, child process, client — and restarts it;
this runtime plans a start, measures the engine's speed, budgets each question by time, lets a
question pre-empt a background reading, and hands each attempt to the recovery loop.
"""
from __future__ import annotations

import contextlib
import functools
import logging
import threading
import time
from typing import Callable

from app.core import cpu_work
from app.core.answer import prompts, qa
from app.core.answer.conversation import Conversation
from app.core.answer.progress import DoesNotFit, WritingClock
from app.core.answer.reading_memory import ReadingMemory
from app.core.answer.refs import DocRef
from app.core.answer.values import EngineInfo
from app.worker import protocol, recovery
from app.worker.engine import Engine, Launcher
from app.worker.engines.base import EngineAdapter, LaunchOptions
from app.worker.engine_errors import WorkerUnavailable

log = logging.getLogger(__name__)

StatusCallback = Callable[[str, str], None]
CALIBRATION_TOKENS = 384    # a prompt's worth of filler read once per model and machine setting
CALIBRATION_WAIT_S = 90.0   # then the first question is budgeted by the context only (and measured)
LLAMA_STALL_S = EngineAdapter.FIXED_STALL_S   # our worker reports every ~second of reading: this long silent = hung
READING_JOB = "background reading"   # the CPU scheduler's name for it (the user reads it)
CALIBRATION_TEXT = ("The parties agree that the terms of this agreement apply to every order placed "
                    "under it, unless an order states otherwise in writing.")


def _saved_settings():
    """The settings as saved (the Assistant gives its own source; tests and benchmarks use this)."""
    from app.core import settings
    return settings.load()


def planner_line(plan) -> str:
    from app.core.plan import planner
    return planner.explain(plan)


class QuestionLine:
    """The engine as one question's chat backend: once qa says how long the prompt should take
    to read, the stall deadline follows it (the adapter's rule: our worker speaks while it
    reads; other engines are silent until the first token)."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.reading_s: float | None = None

    def chat(self, *args, **kwargs):
        if self.reading_s is not None:
            kwargs["stall_s"] = self.engine.adapter.stall_s(self.reading_s)
        return self.engine.chat(*args, **kwargs)

    def count_tokens(self, messages: list[dict]) -> int:
        return self.engine.count_tokens(messages)


WRITING_EVERY_S = 1.0      # a Writing event at most this often while tokens come


def _writing_told(on_writing, on_delta, on_progress):
    """on_delta and on_progress that also tell `on_writing` how the answer's generation goes:
    once the prompt is read (the phase begins), then with the tokens as they come. The reply
    is JSON under a schema, and before this nothing moved between "100 %" and the answer."""
    clock, said = WritingClock(), [-WRITING_EVERY_S]

    def tell(force: bool = False) -> None:
        now = clock.now()
        if now is not None and (force or now.seconds - said[0] >= WRITING_EVERY_S):
            said[0] = now.seconds
            on_writing(now)

    def delta(text: str) -> None:
        clock.token()
        tell(clock.tokens == 1)
        if on_delta:
            on_delta(text)

    def progress(read: int, total: int) -> None:
        if on_progress:
            on_progress(read, total)
        if total and read >= total:
            clock.begin()
            tell(True)
    return delta, progress


class EngineRuntime:
    def __init__(self, on_status: StatusCallback | None = None, threads: int | None = None,
                 launcher: Launcher | None = None, settings: Callable[[], object] | None = None):
        self.on_status = on_status
        self._settings = settings or _saved_settings
        self.engine = Engine(on_status=self._status, launcher=launcher)
        self.engine.on_installed = self.calibrate     # a stand-in's speed, so its first prompt fits the time budget
        self.memory = ReadingMemory()
        self._params_b: dict[str, float | None] = {}   # model id → parameters (rewrites(), judges())
        self.threads = threads

    @property
    def plan(self):
        """The plan that runs (the Engine's; None before start)."""
        return self.engine.plan

    @property
    def running(self) -> bool:
        return self.engine.running

    def _status(self, state: str, detail: str) -> None:
        if self.on_status:
            self.on_status(state, detail)

    def start(self, plan, switch_for=None, connected=None) -> None:
        """Start `plan` (made by the caller: app.service.planning), stepping down the ladder when
        a start fails and `switch_for(launch, on_step)` gives the switch that does; then measure
        this model's speed here once. `connected`: a team server's client (nothing starts here)."""
        if connected is not None:
            self.engine.start(plan, connected=connected)
            self.engine.status("ready", planner_line(plan))
            return
        switch = None
        if switch_for is not None:
            switch = switch_for(self.engine.launch, lambda text: self.engine.status("downgrade", text))
        self.engine.status("planning", planner_line(plan))
        with self._measuring(plan):
            running = self.engine.start(plan, switch, options_for=self._launch_options)
            self.engine.status("ready", planner_line(running))
            self.calibrate()

    def _measuring(self, plan):
        """While this engine's speed is measured (the first start of a model on this machine),
        the search-vector thread waits: sharing the cores it made the measurement many times
        too slow, and every prompt budget after it too small. Nothing to wait for otherwise."""
        from app.core.search import dense
        return contextlib.nullcontext() if self.memory.prefill_tps(self._speed_key_for(plan)) else dense.paused()

    def _launch_options(self, plan) -> LaunchOptions:
        from app.worker.engines import adapter_for
        known = self.memory.prefill_tps(self._speed_key_for(plan))
        measures = adapter_for(plan.engine).measures_at_start
        return LaunchOptions(threads=self._threads(),
                             calibrate_tokens=CALIBRATION_TOKENS if measures and not known else 0)

    def ask(self, library, refs: list[DocRef], question: str, mode: str = "auto",
            on_delta=None, cancel: threading.Event | None = None,
            conversation: Conversation | None = None, on_reading=None, on_progress=None,
            evidence=None, on_writing=None) -> qa.Answer:
        """One question; with `conversation`, a follow-up in it (append-only context).
        `evidence`: the cards already shown (find_evidence): the prompt starts with them.
        `on_reading(qa.Reading)` before the engine reads, `on_progress(read, total)` while it
        does, `on_writing(Writing)` once it is read and about every second of the answer's
        generation (time, tokens so far). A background reading in progress is pre-empted and
        resumes afterwards."""
        self._require()
        doc_ids = [r.doc_id for r in refs]
        extra = {"conversation": conversation, "on_reading": on_reading, "on_progress": on_progress,
                 "evidence": evidence, "on_writing": on_writing}
        with self._question_first():   # one question at a time per engine: the worker serialises anyway
            # a dead or hung engine is restarted (same plan, fresh port) and the question asked
            # once more; a failed request is reported as it is and restarts nothing
            answer = recovery.ask(self.engine, functools.partial(self._ask_once, library, refs, question, mode,
                                                                 on_delta, **extra), cancel)
            # still holding the engine: a background reading that resumes must already see
            # that this answer read the documents whole (it would read them all again)
            self.memory.record_prefill(self.speed_key(), answer.usage.read_tokens, answer.timing.ttft_s)
            self.memory.record_decode(self.speed_key(), answer.usage.completion_tokens,
                                      answer.timing.total_s - (answer.timing.ttft_s or answer.timing.total_s))
            if answer.mode == "whole-document":
                self.memory.mark_read(self.plan.model_id, doc_ids)
        answer.engine = self.engine_info()
        return answer

    def engine_info(self) -> EngineInfo:
        """What answered, as an answer carries it (`engine` in --json, the window's meta line)."""
        plan = self.plan
        return EngineInfo(plan.engine.value, plan.model_id, plan.max_model_len, planner_line(plan))

    def review(self, library, refs: list[DocRef], template: str, on_part=None,
               cancel: threading.Event | None = None, **options):
        """A whole-document task (app.core.answer.review.Review): map-reduce over page groups
        when the documents do not fit, each step within a question's first-token budget at
        this machine's measured speed. Pre-empts a background reading as a question does.
        `options`: review.review's group_pages / force_parts."""
        from app.core.answer import review
        self._require()
        with self._question_first():
            return review.review(library, refs, template, self.engine, self.plan.max_model_len,
                                 on_part=on_part, cancel=cancel,
                                 prefill_tps=self.memory.budget_tps(self.speed_key()),
                                 target_s=self.target_s(), **options)

    def prepare(self, library, refs: list[DocRef]) -> bool:
        """Warm the engine for documents just opened: when the llama.cpp worker has read them
        whole before, their KV state is on disk, and sizing the whole-document prompt
        (/tokenize) makes the worker restore it now, while the user types, instead of when
        the first question after a restart arrives (~40 ms of a 0.4 s answer start on 2
        cores for a 5K-token contract). Returns whether a restore was asked for; skipped
        while a question runs (that one restores for itself)."""
        if not self.engine.running or not self.engine.adapter.restores_kv:
            return False
        if not self.memory.was_read(self.plan.model_id, [r.doc_id for r in refs]):
            return False
        with cpu_work.scheduler.engine_if_free(self.engine) as free:
            if free:
                msgs = prompts.messages(qa.whole_context(library, refs), "", whole=True)
                self.engine.count_tokens(msgs)
        return free

    def _ask_once(self, library, refs, question, mode, on_delta, cancel, conversation=None,
                  on_reading=None, on_progress=None, evidence=None, on_writing=None) -> qa.Answer:
        model, doc_ids = self.plan.model_id, [r.doc_id for r in refs]
        line = QuestionLine(self.engine)
        if on_writing is not None:       # each attempt writes from its start (a retry streams anew)
            on_delta, on_progress = _writing_told(on_writing, on_delta, on_progress)

        def reading(r: qa.Reading) -> None:
            line.reading_s = getattr(r, "seconds", None) or 0.0
            if on_reading:
                on_reading(r)

        options = qa.AskOptions(mode=mode, prefill_tps=self.memory.budget_tps(self.speed_key()),
                                cached=self.memory.was_read(model, doc_ids), target_s=self.target_s(),
                                rerank=self.reranks(), cut_passages=self.engine.adapter.cuts_passages,
                                judge=self.judges(), rewrite=self.rewrites(),
                                decode_tps=self.memory.decode_tps(self.speed_key()))
        return qa.ask(qa.Question(library, refs, question, self.plan.max_model_len, conversation, evidence),
                      line, options, qa.Listeners(on_delta, reading, on_progress, cancel))

    def rewrites(self) -> str:
        """qa.ask's `rewrite`: the setting, where `auto` leaves out models too small to word a
        clause (rewrite.MIN_PARAMS_B: the embedded 135M echoes the instruction instead)."""
        from app.core.answer.evidence import rewrite
        return self._unless_too_small(self._settings().rewrite_question, rewrite.MIN_PARAMS_B)

    def judges(self) -> str:
        """qa.ask's `judge`: the setting, where `auto` leaves out models too small to judge a
        passage (judge.MIN_PARAMS_B: the embedded 135M's odds bury the search's best cards)."""
        from app.core.answer.evidence import judge
        return self._unless_too_small(self._settings().judge_cards, judge.MIN_PARAMS_B)

    def _unless_too_small(self, chosen: str, min_params_b: float) -> str:
        """`chosen`, or "off" when it is `auto` and the model has fewer than `min_params_b` billion
        parameters (a model the catalogue cannot size is asked as any other)."""
        if chosen != "auto":
            return chosen
        from app.core.models.catalogue import load_catalogue
        model = self.plan.model_id
        if model not in self._params_b:    # read once per model, not on every question
            try:
                self._params_b[model] = load_catalogue().get(model).params_b
            except Exception:  # noqa: BLE001 - a model the catalogue cannot size is asked as any other
                self._params_b[model] = None
        params = self._params_b[model]
        return "off" if params and params < min_params_b else chosen

    def reranks(self) -> bool:
        """Whether the model first picks the best retrieved page (qa.ask's `rerank`): the
        setting, off unless the user turns it on (the models measured, 135M and 1.5B, chose
        worse than retrieval's order: app/core/answer/rerank.py)."""
        return self._settings().rerank == "on"

    # --- time budget ------------------------------------------------------------------------------
    def speed_key(self) -> str:
        """Prefill speed is remembered per model, engine and machine setting (threads, GPU layers)."""
        return self._speed_key_for(self.plan)

    def _speed_key_for(self, plan) -> str:
        from app.worker.engines import adapter_for
        return adapter_for(plan.engine).speed_key(plan, self._threads())

    def _threads(self) -> int | None:
        """Threads for llama.cpp: the caller's, else the setting (0 = the worker's own choice)."""
        if self.threads:
            return self.threads
        return self._settings().threads or None

    def target_s(self) -> float:
        """The first-token target: the CPU's or the GPU's setting."""
        return self._settings().first_token_budget(self.engine.adapter.on_gpu(self.plan))

    def calibrate(self) -> float | None:
        """This model's prefill speed here, measured once, so even the first question is
        budgeted by time (later answers refine it). Our worker measured it at start, before
        restoring any document (--calibrate-tokens); other engines get a ~400-token prompt."""
        key = self.speed_key()
        if not self.engine.running or self.memory.prefill_tps(key):
            return self.memory.prefill_tps(key)
        measured = self._measured_at_start() if self.engine.adapter.measures_at_start else self._measure_now()
        if measured:
            self.memory.set_prefill(key, measured)
            self.engine.status("ready", f"{planner_line(self.plan)}; reads {measured:,.0f} prompt tokens/s")
        return self.memory.prefill_tps(key)

    def _measured_at_start(self) -> float | None:
        """Our worker measures right after it starts listening and says so in /metrics."""
        deadline = time.monotonic() + CALIBRATION_WAIT_S
        while time.monotonic() < deadline and self.engine.running:
            measured = self.engine.metrics().get(protocol.PREFILL_TOKENS_PER_S, 0)
            if measured:
                return measured
            time.sleep(0.1)
        log.warning("prefill speed not measured within %.0f s; the first answer measures it", CALIBRATION_WAIT_S)
        return None

    def _measure_now(self) -> float | None:
        """A ~400-token prompt and one token back: its time to the first token is the speed."""
        filler = " ".join(CALIBRATION_TEXT for _ in range(12))
        msgs = [{"role": "system", "content": prompts.template("system")}, {"role": "user", "content": filler}]
        try:
            result = self.engine.chat(msgs, max_tokens=1)
        except Exception as exc:  # noqa: BLE001 - only a measurement: the budget falls back to the context
            log.warning("prefill calibration failed: %s", exc)
            return None
        tokens = result.prompt_tokens - result.cached_tokens
        return tokens / result.ttft_s if tokens > 0 and result.ttft_s > 0 else None

    # --- background reading ---------------------------------------------------------------------
    def _question_first(self):
        """A question takes the engine before a background reading, and the cores before all the
        app's background work: the scheduler (app.core.cpu_work) cuts a reading at its next slice
        (its KV state so far is kept on disk), search vectors, OCR and table detection stop at
        their next batch or page, and all of it resumes once the question is done."""
        return cpu_work.scheduler.question(self.engine, "answering")

    def read(self, library, refs: list[DocRef], on_progress=None,
             cancel: threading.Event | None = None) -> dict:
        """Read whole documents ahead of the questions and keep their KV state (the worker's
        disk store): once read, questions about them are answered whole-document at once.
        Yields to any question asked meanwhile. Returns tokens, seconds and cached, or raises
        DoesNotFit (a BadInput) when the documents do not fit the context (saying how much would)."""
        self._require()
        model, doc_ids = self.plan.model_id, [r.doc_id for r in refs]
        msgs = prompts.messages(qa.whole_context(library, refs), "", whole=True)
        tokens = self.engine.count_tokens(msgs)
        room = qa.prompt_room(self.plan.max_model_len)
        if tokens > room:
            raise DoesNotFit(tokens, room)
        if self.memory.was_read(model, doc_ids):
            return {"tokens": tokens, "seconds": 0.0, "cached": True, "already": True}
        began = time.perf_counter()
        while True:
            if cancel is not None and cancel.is_set():
                from app.worker.engine_errors import Cancelled
                raise Cancelled("reading cancelled")
            # one turn of the scheduler per attempt, holding the engine: no question, search
            # vectors or OCR beside it; its `cut` is set the moment a question or more urgent
            # work (a document being opened) waits, or the user stops it (a linked Cancel)
            with cpu_work.scheduler.turn(READING_JOB, cancel, engine=self.engine) as unit:
                if self.memory.was_read(model, doc_ids):   # a question read them whole: nothing left
                    break
                if unit.cut.is_set():
                    continue
                try:
                    self.engine.chat(msgs, max_tokens=1, cancel=unit.cut, on_progress=on_progress,
                                     stall_s=self.engine.adapter.reading_stall_s())
                    break
                except Exception:  # noqa: BLE001 - pre-empted (or cancelled): try again after
                    if not unit.cut.is_set():
                        raise
        seconds = time.perf_counter() - began
        self.memory.mark_read(model, doc_ids)
        return {"tokens": tokens, "seconds": round(seconds, 2), "cached": True}

    def metrics(self) -> dict:
        return self.engine.metrics()

    def _require(self) -> None:
        if not self.engine.running:
            raise WorkerUnavailable("the engine is not running")

    def stop(self) -> None:
        self.engine.stop()
