"""Issue 33.5: once the prompt is read, the answer's generation says how it goes (time, tokens
so far, speed) — the real llama.cpp worker, its reply streamed as JSON under the schema."""
from __future__ import annotations

import pytest

from app.core.answer import qa
from app.core.answer.conversation import Conversation
from app.core.answer.progress import WRITING, Writing
from tests.support.refs import refs_for

pytestmark = pytest.mark.slow


def test_generation_reports_elapsed_time_and_tokens(runtime, lib, corpus, monkeypatch):
    monkeypatch.setattr(qa, "ANSWER_TOKENS", 160)        # a few seconds of writing
    refs = refs_for(lib, corpus / "contracts-en" / "common-paper-mnda.pdf")
    events, read = [], []
    answer = runtime.ask(lib, refs, "How can the agreement be terminated?", conversation=Conversation(),
                         mode="retrieval", on_writing=events.append,
                         on_progress=lambda done, total: read.append((done, total)))
    assert events and all(isinstance(e, Writing) for e in events)
    assert events[0].tokens == 0 and read[-1][0] == read[-1][1]      # said as soon as the prompt is read
    assert [e.seconds for e in events] == sorted(e.seconds for e in events)
    assert [e.tokens for e in events] == sorted(e.tokens for e in events)
    assert events[-1].tokens > 1 and events[-1].tokens <= answer.usage.completion_tokens + 1
    if answer.timing.total_s - answer.timing.ttft_s > 2.5:           # a second of writing: told again
        assert len(events) >= 3
    assert events[-1].line().startswith(WRITING) and "tokens" in events[-1].line()
