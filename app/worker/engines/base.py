"""What every engine adapter answers: how to launch it, how to read its failures, how to talk to it.

The Engine (app/worker/engine.py) asks these questions and nothing else about an engine: no module
outside app/worker/engines compares engine names. Failure classification is a table of rules,
most specific first, read by one function.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from app.core.plan.types import EngineName, Plan
from app.worker import engine_errors as errors
from app.worker.client import STALL_S, ChatClient
from app.worker.launch import LaunchSpec


@dataclass(frozen=True)
class FailureRule:
    """One line of an engine's output that means a known failure. `make(line, match, lines)`
    builds the typed error from the last matching line (clean of the engine's log prefix)."""
    pattern: re.Pattern
    make: Callable[[str, re.Match, list[str]], errors.StartError]
    also: re.Pattern | None = None          # the whole output must match this too (e.g. "fp8")


def classify(rules: tuple[FailureRule, ...], lines: list[str],
             clean: Callable[[str], str] = lambda line: line.strip()[:300]) -> errors.StartError | None:
    """The first rule whose pattern occurs in `lines` (and whose `also` does) names the failure."""
    text = "\n".join(lines)
    for rule in rules:
        match = rule.pattern.search(text)
        if match is None or (rule.also is not None and not rule.also.search(text)):
            continue
        last = next(line for line in reversed(lines) if rule.pattern.search(line))
        return rule.make(clean(last), match, lines)
    return None


@dataclass(frozen=True)
class LaunchOptions:
    """What the runtime adds to a plan for one launch."""
    threads: int | None = None          # llama.cpp: the caller's or the setting's (None: the worker's choice)
    calibrate_tokens: int = 0           # measure prefill speed at start (0: already known)
    log_path: Path | None = None


class EngineAdapter:
    """The defaults are those of an engine that serves the OpenAI API and says nothing while it reads."""
    name: EngineName
    streams_reading = False     # sends a progress comment every slice it reads (our llama.cpp worker)
    cuts_passages = False       # takes a passage plan: behind it, drops lower-ranked passages (our worker)
    restores_kv = False         # keeps documents' KV state on disk and restores it on /tokenize
    measures_at_start = False   # measures its own prefill speed right after start (--calibrate-tokens)
    runs_locally = True         # a child process of ours (remote: a team's server)
    slow_restart = False        # a restart takes long enough that a llama.cpp stand-in answers meanwhile
    FIXED_STALL_S = 60.0        # for engines that stream while reading: this long silent = hung

    def launch_spec(self, plan: Plan, model_path: Path, options: LaunchOptions) -> LaunchSpec:
        raise NotImplementedError

    def client(self, spec: LaunchSpec, repeat_penalty: float) -> ChatClient:
        return ChatClient(spec.base_url, spec.api_key, spec.model_name, repeat_penalty=repeat_penalty)

    def warm(self, client: ChatClient) -> None:
        """Anything the engine builds on its first request of a kind, done right after start so
        that the first question does not pay for it (default: nothing)."""

    def repeat_penalty(self, catalogue_penalty: float) -> float:
        """The catalogue's repetition penalty as this engine should get it (1.0 = none)."""
        return 1.0

    def stall_s(self, reading_s: float | None) -> float | None:
        """How long a question may hear nothing: our worker speaks every ~second while it reads;
        other engines say nothing until the first token, so thrice the expected reading time."""
        if self.streams_reading:
            return self.FIXED_STALL_S
        return max(STALL_S, 3 * (reading_s or 0) + 30)

    def reading_stall_s(self) -> float | None:
        """The stall deadline of a background reading (None: the client's default)."""
        return self.FIXED_STALL_S if self.streams_reading else None

    def speed_key(self, plan: Plan, threads: int | None) -> str:
        """Prefill speed is remembered per model, engine and machine setting."""
        return f"{plan.model_id}@{plan.engine.value}"

    def on_gpu(self, plan: Plan) -> bool:
        return True
