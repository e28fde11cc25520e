"""Issue 33.6 and 32.18: a follow-up keeps its context, and a restart finds the prompt it read
on disk instead of reading it again (the real llama.cpp worker, a real child process)."""
from __future__ import annotations

import pytest

from app.core.answer.conversation import Conversation
from app.worker.runtime import EngineRuntime
from app.service.planning import start_planned
from tests.support.refs import refs_for

pytestmark = pytest.mark.slow

QUESTION = "How can the agreement be terminated?"


@pytest.fixture
def nda(lib, corpus):
    return refs_for(lib, corpus / "contracts-en" / "common-paper-mnda.pdf")   # 5 pages


def _fresh_runtime(monkeypatch) -> EngineRuntime:
    from app.core.answer import qa
    from app.worker.engines import llamacpp
    monkeypatch.setattr(qa, "ANSWER_TOKENS", 24)       # mechanics: short answers keep it quick
    # No passage cut: behind plan (a busy CI machine) the worker drops lower-ranked passages, so
    # one answer's prompt would be shorter than the other's by timing alone (seen in CI: 2,381
    # vs 2,515 tokens). The cut has its own test (test_budget_follows_the_machine.py).
    monkeypatch.setattr(llamacpp.LlamaCppAdapter, "cuts_passages", False)
    rt = EngineRuntime(threads=2)
    start_planned(rt)
    return rt


def test_a_restart_restores_the_read_prompt_instead_of_reading_it_again(monkeypatch, lib, nda):
    """The same question after a restart (the app reopened): its prompt comes back from the
    worker's disk store. It was read again: the first answer's measured speed changed the
    prompt's budget, so the passages picked, and the stored prompt no longer matched."""
    from app.core import settings
    # a budget above the disk store's minimum (kv_store.MIN_TOKENS): at the default 10 s an idle
    # machine's prompt held 487 tokens, too short to be worth a file, and nothing came back
    settings.save(settings.Settings(first_token_budget_s=30))
    rt = _fresh_runtime(monkeypatch)
    try:
        before = rt.ask(lib, nda, QUESTION, conversation=Conversation(), mode="retrieval")
    finally:
        rt.stop()
    rt = _fresh_runtime(monkeypatch)                    # a new worker process: nothing in memory
    try:
        after = rt.ask(lib, nda, QUESTION, conversation=Conversation(), mode="retrieval")
        other = rt.ask(lib, nda, "Which law governs the agreement?", conversation=Conversation(),
                       mode="retrieval")
    finally:
        rt.stop()
    # a real prompt (its size follows the measured speed: ~450 tokens of cards on a loaded 2-core machine)
    assert before.usage.read_tokens > 200
    assert after.usage.prompt_tokens == before.usage.prompt_tokens
    assert after.usage.read_tokens <= 0.05 * before.usage.read_tokens, (before.usage, after.usage)
    # another question is read from where it differs, never answered from the stored prompt
    assert other.usage.read_tokens > 10 and other.usage.cached_tokens < other.usage.prompt_tokens


def test_a_follow_up_after_the_document_was_read_keeps_the_conversation(monkeypatch, lib, nda):
    """The first question came before the background reading finished (passages); the
    follow-up, once the document is read, goes on over the whole document with the first
    exchange kept. It began a new context and forgot the first question."""
    rt = _fresh_runtime(monkeypatch)
    try:
        rt.memory.set_prefill(rt.speed_key(), 20.0)     # a slow machine: the first question gets passages
        conv = Conversation()
        first = rt.ask(lib, nda, QUESTION, conversation=conv)
        assert first.mode == "retrieval"
        rt.read(lib, nda)                               # what the window does in the background
        second = rt.ask(lib, nda, "And how much notice is needed?", conversation=conv)
    finally:
        rt.stop()
    assert second.mode == "whole-document"
    assert not second.context.new_context and conv.restarts == 0
    assert second.context.turn == 2 and conv.turns[0].question == QUESTION
    # the document came from the reading's KV state: only the exchanges and the question are read
    assert second.usage.cached_tokens > 0.8 * second.usage.prompt_tokens, second.usage
