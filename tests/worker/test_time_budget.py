"""Issue 14 with the real llama.cpp worker: prompt progress while the engine reads, prefill
speed measured at start, follow-ups that reuse the cache (also after a restart), background
reading that a question pre-empts, and the whole document answered once read.

Mechanics, not timings: the figures (TTFT against the budget, on 2 threads and 1) are printed
by benchmarks/time_budget.py."""
from __future__ import annotations

import threading
import time

import pytest

from app.core.answer import qa
from app.core.answer.conversation import Conversation
from app.core.failures import BadInput
from app.worker.runtime import EngineRuntime
from app.service.planning import start_planned
from tests.support.refs import refs_for

pytestmark = pytest.mark.slow


def test_speed_is_measured_at_start_and_the_prompt_fits_the_time_budget(runtime, lib, corpus):
    tps = runtime.memory.prefill_tps(runtime.speed_key())
    assert tps and tps > 1                              # measured by the worker at start
    refs = refs_for(lib, corpus / "contracts-en" / "bonterms-psa-v1.2.pdf")
    said, progress = [], []
    answer = runtime.ask(lib, refs, "Can either party terminate for convenience?",
                         on_reading=said.append, on_progress=lambda d, t: progress.append((d, t)))
    budget = answer.context.budget_tokens
    assert budget == qa.time_budget_tokens(runtime.target_s(), tps, runtime.plan.max_model_len)
    assert answer.mode == "retrieval" and answer.context.passages >= 1
    assert answer.usage.prompt_tokens <= budget + 200          # the passages fit; template and question on top
    assert said and said[0].seconds is not None and "passages" in said[0].line()
    assert progress and progress[-1][0] == progress[-1][1]          # read to the end, reported on the way


def test_follow_up_shares_the_prefix_and_survives_a_restart(lib, corpus, monkeypatch):
    monkeypatch.setattr(qa, "ANSWER_TOKENS", 24)
    from app.core import settings
    settings.save(settings.Settings(first_token_budget_s=30))     # a budget above the disk store's minimum
    refs = refs_for(lib, corpus / "contracts-en" / "bonterms-psa-v1.2.pdf")
    conv = Conversation()
    rt = EngineRuntime(threads=2)
    start_planned(rt)
    try:
        first = rt.ask(lib, refs, "How can the agreement be terminated?", conversation=conv, mode="retrieval")
        follow = rt.ask(lib, refs, "Which law governs the agreement?", conversation=conv, mode="retrieval")
    finally:
        rt.stop()
    assert follow.usage.cached_tokens >= 0.7 * follow.usage.prompt_tokens
    assert follow.usage.cached_tokens >= first.usage.prompt_tokens - 8
    rt = EngineRuntime(threads=2)
    start_planned(rt)
    try:
        again = rt.ask(lib, refs, "Who pays the fees?", conversation=conv, mode="retrieval")
    finally:
        rt.stop()
    assert again.context.turn == 3 and not again.context.new_context
    assert again.usage.cached_tokens >= 0.7 * again.usage.prompt_tokens     # restored from disk


def test_background_reading_yields_to_a_question_and_then_answers_whole(runtime, lib, corpus):
    read_refs = refs_for(lib, corpus / "contracts-en" / "common-paper-partnership.pdf")
    other = refs_for(lib, corpus / "contracts-en" / "common-paper-mnda.pdf")
    progress, result, errors = [], {}, []

    def read():
        try:
            result.update(runtime.read(lib, read_refs, on_progress=lambda d, t: progress.append((d, t))))
        except Exception as exc:  # noqa: BLE001 - the test reports it
            errors.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    deadline = time.monotonic() + 120
    while (not progress or progress[-1][0] < 700) and time.monotonic() < deadline:
        time.sleep(0.05)                                 # read enough to be worth keeping on disk
    assert progress and progress[-1][0] >= 700, f"the reading did not get going: {progress[-3:]}"
    answer = runtime.ask(lib, other, "Who are the parties?", mode="retrieval")    # pre-empts the reading
    assert answer.text
    asked_at = time.monotonic()
    reader.join(600)
    assert not errors and result.get("cached") and result["tokens"] > 1000
    assert progress[-1][0] == progress[-1][1]
    # it resumed where it was cut: the resumed request's first slice starts where the cut one
    # stopped (the accepted-prompt report, 0 of N, comes first in every request)
    cuts = [i for i in range(1, len(progress)) if progress[i][0] < progress[i - 1][0]]
    assert cuts, "the question did not pre-empt the reading"
    for i in cuts:
        assert progress[i + 1][0] >= 512, progress[i - 1:i + 2]
    assert time.monotonic() >= asked_at
    whole = runtime.ask(lib, read_refs, "What does each partner agree to do?")
    assert whole.mode == "whole-document"
    assert whole.usage.cached_tokens >= 0.9 * whole.usage.prompt_tokens


def test_a_document_larger_than_the_context_is_not_read_and_says_how_much_fits(lib, corpus, tmp_path):
    import pymupdf
    big = tmp_path / "big.pdf"
    with pymupdf.open() as out:
        for name in ("common-paper-csa.pdf", "common-paper-software-license.pdf", "bonterms-psa-v1.2.pdf"):
            with pymupdf.open(corpus / "contracts-en" / name) as src:
                out.insert_pdf(src)
        out.save(big)
    rt = EngineRuntime(threads=2)
    start_planned(rt)
    try:
        with pytest.raises(BadInput, match=r"about \d+% of it would fit"):
            rt.read(lib, refs_for(lib, big))
    finally:
        rt.stop()
