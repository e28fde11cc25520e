"""The engine as the app uses it: probe → plan → start (with the downgrade switch) → ask → stop."""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
from typing import Callable

from app.core import paths
from app.core.answer import prompts, qa
from app.core.answer.conversation import Conversation
from app.core.answer.progress import DoesNotFit
from app.core.answer.reading_memory import ReadingMemory
from app.core.answer.values import EngineInfo
from app.worker.client import STALL_S
from app.worker.errors import WorkerUnavailable

log = logging.getLogger(__name__)

StatusCallback = Callable[[str, str], None]
CALIBRATION_TOKENS = 384    # a prompt's worth of filler read once per model and machine setting
CALIBRATION_WAIT_S = 90.0   # then the first question is budgeted by the context only (and measured)
LLAMA_STALL_S = 60.0         # our worker reports every ~second of reading: this long silent = hung
CALIBRATION_TEXT = ("The parties agree that the terms of this agreement apply to every order placed "
                    "under it, unless an order states otherwise in writing.")


def planner_line(plan) -> str:
    from app.core.plan import planner
    return planner.explain(plan)


class _StallAware:
    """The client, with the stall deadline qa's reading estimate set for this question."""

    def __init__(self, client, stall: dict):
        self._client, self._stall = client, stall

    def chat(self, *args, **kwargs):
        if "s" in self._stall:
            kwargs["stall_s"] = self._stall["s"]
        return self._client.chat(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._client, name)


class EngineRuntime:
    def __init__(self, model_id: str | None = None, on_status: StatusCallback | None = None,
                 threads: int | None = None):
        self.model_id = model_id
        self.on_status = on_status
        self.plan = None
        self.client = None
        self.supervisor = None
        self.spec = None
        self.memory = ReadingMemory()
        self.switch = None
        self._lock = threading.Lock()
        self.threads = threads
        self._waiting_lock = threading.Lock()
        self._questions_waiting = 0
        self._preempt = threading.Event()        # set while a question waits for or holds the engine
        self._questions_done = threading.Event()
        self._questions_done.set()

    def _status(self, state: str, detail: str) -> None:
        log.info("engine %s: %s", state, detail)
        if self.on_status:
            self.on_status(state, detail)

    def start(self) -> None:
        from app.core.models import catalogue as models
        from app.core.plan import hardware, planner
        from app.core.plan.history import PlanHistory
        from app.worker import remote
        from app.worker.downgrade import DowngradeSwitch

        endpoint = remote.endpoint_from_settings()
        if endpoint is not None:     # a team's server (settings engine = remote): nothing to start here
            self.client, served_context = remote.connect(endpoint.base_url, endpoint.model)
            if served_context:
                endpoint = dataclasses.replace(endpoint, context=min(endpoint.context, served_context))
            self.plan = planner.make_plan(None, models.load_catalogue(), remote=endpoint)
            self.supervisor = self.switch = None
            self._status("ready", planner.explain(self.plan))
            return
        hw = hardware.probe()
        cat = models.load_catalogue()
        history = PlanHistory()
        chosen = planner.make_plan(hw, cat, prefer_model=self.model_id, available=models.is_available,
                                   history=history)
        chosen = remote.capped(chosen)      # the user's context cap (settings context_cap)
        self._status("planning", planner.explain(chosen))
        self.switch = DowngradeSwitch(hw, cat, start_fn=self._launch, history=history,
                                      probe=hardware.probe, available=models.is_available,
                                      on_step=lambda text: self._status("downgrade", text))
        with self._measuring(chosen):
            self.plan, self.supervisor = self.switch.start(chosen)
            self._status("ready", planner.explain(self.plan))
            self.calibrate()

    def _measuring(self, plan):
        """While this engine's speed is measured (the first start of a model on this machine),
        the search-vector thread waits: sharing the cores it made the measurement many times
        too slow, and every prompt budget after it too small. Nothing to wait for otherwise."""
        from app.core.search import dense
        return contextlib.nullcontext() if self.memory.prefill_tps(self._speed_key_for(plan)) else dense.paused()

    def _launch(self, plan):
        from app.core.models import catalogue as models
        from app.worker.client import ChatClient
        from app.worker.engines import llamacpp, vllm
        from app.worker.supervisor import Supervisor

        if plan.engine == "remote":  # a restart after the team's server failed: connect again
            from app.worker import remote
            self.client, _ = remote.connect(plan.base_url, plan.model_id)
            return None
        spec_model = models.load_catalogue().get(plan.model_id)
        path = models.local_path(spec_model)
        if plan.engine == "vllm":
            spec = vllm.launch_spec(plan, path, served_name=plan.model_id)
        else:
            spec = llamacpp.launch_spec(path, n_ctx=plan.max_model_len, n_gpu_layers=plan.n_gpu_layers,
                                        model_name=plan.model_id, threads=self._threads(),
                                        calibrate_tokens=0 if self.memory.prefill_tps(self._speed_key_for(plan))
                                        else CALIBRATION_TOKENS)
        self._status("launching", f"{plan.engine} with {plan.model_id}")
        sup = Supervisor(spec, log_path=paths.log_dir() / f"worker-{plan.engine}.log",
                         on_status=lambda st, detail: self._status(st.name.lower(), detail))
        sup.start()
        self.spec = spec
        # vLLM's repetition_penalty also counts the prompt's tokens: it would push a model away
        # from the document's own words, so the catalogue's penalty goes to llama.cpp only
        penalty = spec_model.repeat_penalty if plan.engine == "llamacpp" else 1.0
        self.client = ChatClient(spec.base_url, spec.api_key, spec.model_name, repeat_penalty=penalty)
        return sup

    def ask(self, library, refs: list[qa.DocRef], question: str, mode: str = "auto",
            on_delta=None, cancel: threading.Event | None = None,
            conversation: Conversation | None = None, on_reading=None, on_progress=None) -> qa.Answer:
        """One question; with `conversation`, a follow-up in it (append-only context).
        `on_reading(qa.Reading)` before the engine reads, `on_progress(read, total)` while it
        does. A background reading in progress is pre-empted and resumes afterwards."""
        if self.client is None:
            raise WorkerUnavailable("the engine is not running")
        doc_ids = [r.doc_id for r in refs]
        extra = {"conversation": conversation, "on_reading": on_reading, "on_progress": on_progress}
        with self._question_first():   # one question at a time per engine: the worker serialises anyway
            from app.worker.recovery import Recovery
            # a dead or hung engine is restarted (same plan, fresh port) and the question asked
            # once more; a failed request is reported as it is and restarts nothing
            answer = Recovery.of(self).ask(
                lambda cut: self._ask_once(library, refs, question, mode, on_delta, cut, **extra), cancel)
        model = self.plan.model_id
        self.memory.record_prefill(self.speed_key(), answer.usage.read_tokens, answer.timing.ttft_s)
        if answer.mode == "whole-document":
            self.memory.mark_read(model, doc_ids)
        answer.engine = self.engine_info()
        return answer

    def engine_info(self) -> EngineInfo:
        """What answered, as an answer carries it (`engine` in --json, the window's meta line)."""
        return EngineInfo(self.plan.engine, self.plan.model_id, self.plan.max_model_len, planner_line(self.plan))

    def review(self, library, refs: list[qa.DocRef], template: str, on_part=None,
               cancel: threading.Event | None = None, **options):
        """A whole-document task (app.core.answer.review.Review): map-reduce over page groups
        when the documents do not fit, each step within a question's first-token budget at
        this machine's measured speed. Pre-empts a background reading as a question does.
        `options`: review.review's group_pages / force_parts."""
        from app.core.answer import review
        if self.client is None:
            raise WorkerUnavailable("the engine is not running")
        with self._question_first():
            return review.review(library, refs, template, self.client, self.plan.max_model_len,
                                 on_part=on_part, cancel=cancel,
                                 prefill_tps=self.memory.prefill_tps(self.speed_key()),
                                 target_s=self.target_s(), **options)

    def prepare(self, library, refs: list[qa.DocRef]) -> bool:
        """Warm the engine for documents just opened: when the llama.cpp worker has read them
        whole before, their KV state is on disk, and sizing the whole-document prompt
        (/tokenize) makes the worker restore it now, while the user types, instead of when
        the first question after a restart arrives (~40 ms of a 0.4 s answer start on 2
        cores for a 5K-token contract). Returns whether a restore was asked for; skipped
        while a question runs (that one restores for itself)."""
        if self.client is None or self.plan is None or self.plan.engine != "llamacpp":
            return False
        if not self.memory.was_read(self.plan.model_id, [r.doc_id for r in refs]):
            return False
        if not self._lock.acquire(blocking=False):
            return False
        try:
            msgs = prompts.messages(qa.whole_context(library, refs), "", whole=True)
            self.client.count_tokens(msgs)
        finally:
            self._lock.release()
        return True

    def _ask_once(self, library, refs, question, mode, on_delta, cancel, conversation=None,
                  on_reading=None, on_progress=None) -> qa.Answer:
        model, doc_ids = self.plan.model_id, [r.doc_id for r in refs]
        tps = self.memory.prefill_tps(self.speed_key())
        stall = {}

        def reading(r: qa.Reading) -> None:
            # our worker sends a progress comment every ~second; other engines send nothing
            # while they read, so their stall deadline is the expected reading time, thrice
            if self.plan.engine != "llamacpp":
                stall["s"] = max(STALL_S, 3 * (r.seconds or 0) + 30)
            if on_reading:
                on_reading(r)

        return qa.ask(library, refs, question, _StallAware(self.client, stall), self.plan.max_model_len,
                      on_delta=on_delta, cancel=cancel, mode=mode, prefill_tps=tps,
                      cached=self.memory.was_read(model, doc_ids), conversation=conversation,
                      target_s=self.target_s(), on_reading=reading, on_progress=on_progress,
                      stall_s=LLAMA_STALL_S if self.plan.engine == "llamacpp" else None,
                      rerank=self.reranks())

    def reranks(self) -> bool:
        """Whether the model first picks the best retrieved page (qa.ask's `rerank`): the
        setting, off unless the user turns it on (the models measured, 135M and 1.5B, chose
        worse than retrieval's order: app/core/answer/rerank.py)."""
        from app.core import settings
        return settings.load().rerank == "on"

    # --- time budget ------------------------------------------------------------------------------
    def speed_key(self) -> str:
        """Prefill speed is remembered per model, engine and machine setting (threads, GPU layers)."""
        return self._speed_key_for(self.plan)

    def _speed_key_for(self, plan) -> str:
        if plan.engine == "llamacpp":
            return f"{plan.model_id}@llamacpp/t{self._threads() or 'auto'}/gpu{plan.n_gpu_layers}"
        return f"{plan.model_id}@{plan.engine}"

    def _threads(self) -> int | None:
        """Threads for llama.cpp: the caller's, else the setting (0 = the worker's own choice)."""
        if self.threads:
            return self.threads
        from app.core import settings
        return settings.load().threads or None

    def target_s(self) -> float:
        """The first-token target: the CPU's or the GPU's setting."""
        from app.core import settings
        on_gpu = self.plan.engine != "llamacpp" or bool(self.plan.n_gpu_layers)
        return settings.load().first_token_budget(on_gpu)

    def calibrate(self) -> float | None:
        """This model's prefill speed here, measured once, so even the first question is
        budgeted by time (later answers refine it). Our worker measured it at start, before
        restoring any document (--calibrate-tokens); other engines get a ~400-token prompt."""
        key = self.speed_key()
        if self.client is None or self.memory.prefill_tps(key):
            return self.memory.prefill_tps(key)
        if self.plan.engine == "llamacpp":      # the worker measures right after it starts listening
            deadline, measured = time.monotonic() + CALIBRATION_WAIT_S, 0
            while not measured and time.monotonic() < deadline and self.client is not None:
                measured = self.metrics().get("pagewise_prefill_calibrated_tokens_per_second", 0)
                if not measured:
                    time.sleep(0.1)
            if measured:
                self.memory.set_prefill(key, measured)
                self._status("ready", f"{planner_line(self.plan)}; reads {measured:,.0f} prompt tokens/s")
                return measured
            log.warning("prefill speed not measured within %.0f s; the first answer measures it", CALIBRATION_WAIT_S)
            return None
        filler = " ".join(CALIBRATION_TEXT for _ in range(12))
        msgs = [{"role": "system", "content": prompts.template("system")}, {"role": "user", "content": filler}]
        try:
            result = self.client.chat(msgs, max_tokens=1)
        except Exception as exc:  # noqa: BLE001 - only a measurement: the budget falls back to the context
            log.warning("prefill calibration failed: %s", exc)
            return None
        tokens = result.prompt_tokens - result.cached_tokens
        if tokens > 0 and result.ttft_s > 0:
            self.memory.set_prefill(key, tokens / result.ttft_s)
            self._status("ready", f"{planner_line(self.plan)}; reads {tokens / result.ttft_s:,.0f} prompt tokens/s")
        return self.memory.prefill_tps(key)

    # --- background reading ---------------------------------------------------------------------
    @contextlib.contextmanager
    def _question_first(self):
        """A question takes the engine before a background reading: the reading is cut at its
        next slice (its KV state so far is kept on disk) and resumes once the question is done."""
        with self._waiting_lock:
            self._questions_waiting += 1
            self._preempt.set()
            self._questions_done.clear()
        try:
            with self._lock:
                yield
        finally:
            with self._waiting_lock:
                self._questions_waiting -= 1
                if not self._questions_waiting:
                    self._preempt.clear()
                    self._questions_done.set()

    def read(self, library, refs: list[qa.DocRef], on_progress=None,
             cancel: threading.Event | None = None) -> dict:
        """Read whole documents ahead of the questions and keep their KV state (the worker's
        disk store): once read, questions about them are answered whole-document at once.
        Yields to any question asked meanwhile. Returns tokens, seconds and cached, or raises
        DoesNotFit (a BadInput) when the documents do not fit the context (saying how much would)."""
        if self.client is None:
            raise WorkerUnavailable("the engine is not running")
        model, doc_ids = self.plan.model_id, [r.doc_id for r in refs]
        msgs = prompts.messages(qa.whole_context(library, refs), "", whole=True)
        tokens = self.client.count_tokens(msgs)
        room = qa.prompt_room(self.plan.max_model_len)
        if tokens > room:
            raise DoesNotFit(tokens, room)
        if self.memory.was_read(model, doc_ids):
            return {"tokens": tokens, "seconds": 0.0, "cached": True, "already": True}
        began = time.perf_counter()
        while True:
            if cancel is not None and cancel.is_set():
                from app.worker.errors import Cancelled
                raise Cancelled("reading cancelled")
            self._questions_done.wait()             # a question first
            cut = threading.Event()
            with self._lock:
                if self._preempt.is_set():
                    continue
                watcher = threading.Thread(target=self._cut_when, args=(cut, cancel), daemon=True)
                watcher.start()
                try:
                    self.client.chat(msgs, max_tokens=1, cancel=cut, on_progress=on_progress,
                                     stall_s=LLAMA_STALL_S if self.plan.engine == "llamacpp" else None)
                    break
                except Exception as exc:  # noqa: BLE001 - pre-empted (or cancelled): try again after
                    if not cut.is_set():
                        raise
                finally:
                    cut.set()
        seconds = time.perf_counter() - began
        self.memory.mark_read(model, doc_ids)
        return {"tokens": tokens, "seconds": round(seconds, 2), "cached": True}

    def _cut_when(self, cut: threading.Event, cancel: threading.Event | None) -> None:
        """Cut the background reading when a question or the user pre-empts it; ends as soon
        as the reading does (it sets `cut` too)."""
        while not cut.wait(0.05):
            if self._preempt.is_set() or (cancel is not None and cancel.is_set()):
                cut.set()

    def metrics(self) -> dict:
        try:
            return self.client.metrics() if self.client else {}
        except Exception:  # the gauge must never take the app down
            return {}

    def stop(self) -> None:
        from app.worker import recovery
        recovery.stop(self)              # a restart under way must not outlive the runtime
        if self.switch is not None:
            self.switch.stop()
        if self.supervisor is not None:
            self.supervisor.stop()
            self.supervisor = None
        self.client = None
