"""Issue 31.2 with the real llama.cpp worker: the plan overshoots (the remembered prefill speed
is far above what this machine reads at), the worker measures its speed on the first slices,
drops the lower-ranked passages at a passage boundary, still answers the question, and the
answer says it read fewer passages and why. The conversation records only what was read: a
follow-up finds that prompt in the engine's memory. TTFT ÷ budget: benchmarks/under_load.py."""
from __future__ import annotations

import pytest

from app.core import settings
from app.core.answer import qa
from app.core.answer.conversation import Conversation
from app.worker.runtime import EngineRuntime
from app.service.planning import start_planned
from tests.support.refs import refs_for

pytestmark = pytest.mark.slow

OVERSHOOT_TPS = 50_000.0      # the remembered speed: far above any CPU, so the plan fills the context


def test_a_reading_behind_its_plan_drops_the_lower_ranked_passages(lib, corpus, monkeypatch):
    monkeypatch.setattr(qa, "ANSWER_TOKENS", 24)
    settings.save(settings.Settings(first_token_budget_s=2.0))
    refs = refs_for(lib, corpus / "contracts-en" / "bonterms-psa-v1.2.pdf")
    conv, progress = Conversation(), []
    rt = EngineRuntime(threads=1)
    start_planned(rt)
    try:
        rt.memory.set_prefill(rt.speed_key(), OVERSHOOT_TPS)
        first = rt.ask(lib, refs, "Which law governs the agreement?", conversation=conv, mode="retrieval",
                       on_progress=lambda d, t: progress.append((d, t)))
        rt.memory.set_prefill(rt.speed_key(), OVERSHOOT_TPS)     # the answer's own reading corrected it
        follow = rt.ask(lib, refs, "Who pays the fees?", conversation=conv, mode="retrieval")
    finally:
        rt.stop()
    sent = first.context.passages + first.context.dropped
    assert first.context.dropped > 0 and first.context.passages >= 1, first.context
    line = first.warnings[0]
    assert line.startswith(f"Read {first.context.passages} of {sent} passages: the machine was slower than planned")
    assert "tok/s measured vs 50000 planned" in line
    assert first.text.strip()                                      # the question was still answered
    assert first.usage.prompt_tokens < progress[0][1]              # the prompt read is shorter than sent
    assert len(conv.turns[0].passages) == first.context.passages   # the dropped ones are not recorded as read
    assert follow.usage.cached_tokens >= first.usage.prompt_tokens - 8   # that prompt is the conversation's prefix
