"""The engine as the app uses it: probe → plan → start (with the downgrade switch) → ask → stop."""
from __future__ import annotations

import logging
import threading
from typing import Callable

from app.core import paths
from app.core.answer import prompts, qa
from app.core.answer.reading_memory import ReadingMemory
from app.worker.errors import ServerError, WorkerDied, WorkerUnavailable

log = logging.getLogger(__name__)

StatusCallback = Callable[[str, str], None]


class EngineRuntime:
    def __init__(self, model_id: str | None = None, on_status: StatusCallback | None = None):
        self.model_id = model_id
        self.on_status = on_status
        self.plan = None
        self.client = None
        self.supervisor = None
        self.spec = None
        self.memory = ReadingMemory()
        self.switch = None
        self._lock = threading.Lock()

    def _status(self, state: str, detail: str) -> None:
        log.info("engine %s: %s", state, detail)
        if self.on_status:
            self.on_status(state, detail)

    def start(self) -> None:
        from app.core.models import catalogue as models
        from app.core.plan import hardware, planner
        from app.core.plan.history import PlanHistory
        from app.worker.downgrade import DowngradeSwitch

        hw = hardware.probe()
        cat = models.load_catalogue()
        history = PlanHistory()
        chosen = planner.make_plan(hw, cat, prefer_model=self.model_id, available=models.is_available,
                                   history=history)
        self._status("planning", planner.explain(chosen))
        self.switch = DowngradeSwitch(hw, cat, start_fn=self._launch, history=history,
                                      probe=hardware.probe, available=models.is_available,
                                      on_step=lambda text: self._status("downgrade", text))
        self.plan, self.supervisor = self.switch.start(chosen)
        self._status("ready", planner.explain(self.plan))

    def _launch(self, plan):
        from app.core.models import catalogue as models
        from app.worker.client import ChatClient
        from app.worker.engines import llamacpp, vllm
        from app.worker.supervisor import Supervisor

        spec_model = models.load_catalogue().get(plan.model_id)
        path = models.local_path(spec_model)
        if plan.engine == "vllm":
            spec = vllm.launch_spec(plan, path, served_name=plan.model_id)
        else:
            spec = llamacpp.launch_spec(path, n_ctx=plan.max_model_len, n_gpu_layers=plan.n_gpu_layers,
                                        model_name=plan.model_id)
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
            on_delta=None, cancel: threading.Event | None = None) -> qa.Answer:
        from app.core.plan import planner
        if self.client is None:
            raise WorkerUnavailable("the engine is not running")
        doc_ids = [r.doc_id for r in refs]
        with self._lock:     # one question at a time per engine: the worker serialises anyway
            try:
                answer = self._ask_once(library, refs, question, mode, on_delta, cancel)
            except (WorkerDied, ServerError) as exc:
                if self.plan.engine != "vllm" or self.switch is None:
                    raise
                # VRAM taken by another program, or the engine died: one rung down, then retry once
                self.plan, self.supervisor = self.switch.on_runtime_failure(exc)
                answer = self._ask_once(library, refs, question, mode, on_delta, cancel)
        model = self.plan.model_id
        usage = answer.usage
        self.memory.record_prefill(model, usage.get("prompt_tokens", 0) - usage.get("cached_tokens", 0),
                                   answer.timing.get("ttft_s", 0))
        if answer.mode == "whole-document":
            self.memory.mark_read(model, doc_ids)
        answer.engine = {"name": self.plan.engine, "model": model, "context": self.plan.max_model_len,
                         "summary": planner.explain(self.plan)}
        return answer

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

    def _ask_once(self, library, refs, question, mode, on_delta, cancel) -> qa.Answer:
        model, doc_ids = self.plan.model_id, [r.doc_id for r in refs]
        return qa.ask(library, refs, question, self.client, self.plan.max_model_len,
                      on_delta=on_delta, cancel=cancel, mode=mode,
                      prefill_tps=self.memory.prefill_tps(model),
                      cached=self.memory.was_read(model, doc_ids))

    def metrics(self) -> dict:
        try:
            return self.client.metrics() if self.client else {}
        except Exception:  # the gauge must never take the app down
            return {}

    def stop(self) -> None:
        if self.switch is not None:
            self.switch.stop()
        if self.supervisor is not None:
            self.supervisor.stop()
            self.supervisor = None
        self.client = None
