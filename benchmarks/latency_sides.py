"""The two sides of benchmarks/latency.py: the app's path and llama-cpp-python in-process.

Both stay alive through a round so each pair (ours, in-process) of one kind is measured
back to back: on a shared machine the load changes within minutes, not within seconds.
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import common

_CHAT = re.compile(r"chat: prompt=(?P<prompt>\d+) cached=(?P<cached>\d+) \(disk (?P<disk>\d+)\) "
                   r"generated=\d+ prompt_s=(?P<prompt_s>[\d.]+)")


class _Recorder:
    """Wraps the engine's chat to keep the exact messages the app sent."""

    def __init__(self, engine):
        self.chat_of, self.sent = engine.chat, []
        engine.chat = self.chat

    def chat(self, messages, **kwargs):
        self.sent.append(messages)
        return self.chat_of(messages, **kwargs)


class Ours:
    """The app's path: EngineRuntime (worker child + disk KV state) and qa.ask."""

    def __init__(self, lib, refs):
        self.lib, self.refs, self.rt, self.sent = lib, refs, None, []
        self.prepared = None
        self.start_s: list[float] = []

    def start(self) -> None:
        from app.worker.runtime import EngineRuntime
        from app.service.planning import start_planned
        self.rt, began = EngineRuntime(), common.now()
        start_planned(self.rt)
        self.start_s.append(common.now() - began)
        self.recorder = _Recorder(self.rt.engine)

    def restart(self) -> None:
        self.stop()
        self.start()

    def reopen(self, typing_s: float) -> None:
        """What the window does once the document is open again, then the user's typing."""
        self.prepared = self.rt.prepare(self.lib, self.refs)
        time.sleep(typing_s)

    def stop(self) -> None:
        if self.rt is not None:
            self.sent += self.recorder.sent
            self.rt.stop()
            self.rt = None

    @staticmethod
    def worker_lines() -> list[dict]:
        """The worker's own account of each request (its log): prompt seconds = disk restore +
        evaluation + KV save, before the last prompt token and the first answer token."""
        from app.core import paths
        log = paths.log_dir() / "worker-llamacpp.log"
        text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
        return [{k: float(v) for k, v in _CHAT.search(line).groupdict().items()}
                for line in text.splitlines() if _CHAT.search(line)]

    @property
    def n_ctx(self) -> int:
        return self.rt.plan.max_model_len

    def ask(self, question: str) -> dict:
        """TTFT = call → first streamed piece; total = call → verified answer returned."""
        first: list[float] = []
        began = common.now()
        ans = self.rt.ask(self.lib, self.refs, question, mode="whole-document",
                          on_delta=lambda _d: first or first.append(common.now()))
        total = common.now() - began
        u = ans.usage
        return {"ttft_s": (first[0] - began) if first else total, "total_s": total, "mode": ans.mode,
                "prompt_tokens": u.prompt_tokens, "cached_tokens": u.cached_tokens,
                "completion_tokens": u.completion_tokens, "engine_ttft_s": ans.timing.ttft_s,
                "citations": len(ans.citations), "verified": sum(c.verified for c in ans.citations),
                "answer": ans.text[:200]}


def model_and_context():
    """The model file and context the app's own planner picks on this machine."""
    from app.core.models import catalogue as models
    from app.core.plan import hardware
    from app.core.plan import planner as plan
    cat = models.load_catalogue()
    chosen = plan.make_plan(hardware.probe(), cat, available=models.is_available)
    return models.local_path(cat.get(chosen.model_id)), chosen.max_model_len


class InProcess:
    """Llama.create_chat_completion in this process, same model, n_ctx and threads as the worker."""

    def __init__(self):
        import llama_cpp

        from app.worker.llama.server import physical_cores
        path, self.n_ctx = model_and_context()
        self.threads = physical_cores()
        began = common.now()
        self.llm = llama_cpp.Llama(str(path), n_ctx=self.n_ctx, n_gpu_layers=0, n_threads=self.threads,
                                   n_threads_batch=self.threads, verbose=False)
        self.load_s = common.now() - began

    def prompt_tokens(self, messages: list[dict]) -> int:
        from app.worker.llama.chat import ChatEngine
        return len(ChatEngine(self.llm).tokens_for(messages)[0])

    def ask(self, messages: list[dict], schema: dict) -> dict:
        """`schema`: the app's answer schema for this prompt (qa.answer_schema), as a grammar
        built the way the worker builds it."""
        from llama_cpp.llama_grammar import LlamaGrammar

        from app.core.answer import qa
        from app.worker.llama.chat import schema_to_gbnf
        grammar = LlamaGrammar.from_string(schema_to_gbnf(schema), verbose=False)  # before the clock, as the worker caches it
        first, pieces, began = None, [], common.now()
        for chunk in self.llm.create_chat_completion(
                messages=messages, grammar=grammar,
                max_tokens=qa.ANSWER_TOKENS, temperature=0.0, repeat_penalty=1.0, stream=True):
            delta = chunk["choices"][0]["delta"].get("content") or ""
            if delta:
                first = first or common.now()
                pieces.append(delta)
        total = common.now() - began
        return {"ttft_s": (first - began) if first else total, "total_s": total, "chunks": len(pieces),
                "prompt_tokens": self.prompt_tokens(messages), "answer": "".join(pieces)[:200]}

    def close(self) -> None:
        self.llm.close()


def first_pages(pdf: Path, n: int, folder: Path) -> Path:
    """A real corpus PDF cut to its first n pages (kept in a temp folder, never in the repo)."""
    import pymupdf
    out = Path(folder) / f"{pdf.stem}-first-{n}-pages.pdf"
    with pymupdf.open(pdf) as src, pymupdf.open() as dst:
        dst.insert_pdf(src, from_page=0, to_page=n - 1)
        dst.save(out)
    return out
