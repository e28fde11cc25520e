"""An answer's typed values write the JSON `pagewise ask --json` has always written; the
badge and the reading estimate are worded once for the CLI, the window and the exports."""
from __future__ import annotations

import json
import pickle

from app.core.answer.badge import Badge
from app.core.answer.citations import Citation
from app.core.answer.progress import DoesNotFit, ProgressEstimate, ReadingProgress
from app.core.answer.rerank import Choice
from app.core.answer.values import Answer, ContextInfo, EngineInfo, Timing, Usage
from app.core.failures import BadInput


def test_an_answer_writes_the_same_json_as_its_dicts_did():
    cite = Citation(1, "mnda.pdf", 2, "The parties agree to keep it confidential.", True, support="supports")
    answer = Answer("The parties.", [cite], "retrieval", False, raw="{}",
                    timing=Timing(ttft_s=0.412, total_s=1.5, estimated_ttft_s=None),
                    engine=EngineInfo("llamacpp", "smollm2", 8192, "llama.cpp · smollm2"),
                    usage=Usage(900, 120, 40),
                    context=ContextInfo(tokens=900, passages=3, budget_tokens=1720, turn=1,
                                        rerank=Choice(candidates=4, chosen=2, page=7, seconds=1.234, prompt_tokens=500)),
                    warnings=["w"])
    before = {"answer": "The parties.", "citations": [cite.to_dict()], "mode": "retrieval", "not_stated": False,
              "engine": {"name": "llamacpp", "model": "smollm2", "context": 8192, "summary": "llama.cpp · smollm2"},
              "timing": {"ttft_s": 0.412, "total_s": 1.5, "estimated_ttft_s": None},
              "usage": {"prompt_tokens": 900, "cached_tokens": 120, "completion_tokens": 40},
              "context": {"tokens": 900, "passages": 3, "budget_tokens": 1720, "turn": 1, "new_context": False,
                          "rerank": {"candidates": 4, "chosen": 2, "page": 7, "seconds": 1.23, "prompt_tokens": 500}},
              "warnings": ["w"]}
    assert json.dumps(answer.to_dict()) == json.dumps(before)          # keys, order and values
    bare = Answer("x", [], "whole-document", False).to_dict()          # built by hand: empty objects, as before
    assert (bare["engine"], bare["timing"], bare["usage"], bare["context"]) == ({}, {}, {}, {})
    assert "rerank" not in ContextInfo(1, 0, 2, 1).to_dict()
    assert ContextInfo(1, 0, 2, 1, rerank=Choice(skipped="no measured speed")).to_dict()["rerank"] == \
        {"skipped": "no measured speed"}


def test_a_reviews_timing_keeps_its_keys():
    assert Timing(total_s=3.0).to_dict() == {"total_s": 3.0}
    assert json.dumps(Timing(total_s=9.5, parts_s=(4.0, 5.5), budget_tokens=2000).to_dict()) == \
        json.dumps({"total_s": 9.5, "parts_s": [4.0, 5.5], "budget_tokens": 2000})
    assert Usage(900, 120, 40).read_tokens == 780


def test_one_badge_for_every_surface():
    found = Citation(1, "a.pdf", 7, "one two three four five", True, support="supports")
    off = Citation(1, "a.pdf", 7, "one two three four five", True, support="unclear")
    missing = Citation(1, "a.pdf", 7, "words nowhere in the document", False)
    assert Badge.of(found).text() == "verified"
    assert Badge.of(off).text() == "verified; does not obviously support the answer"
    assert Badge.of(off).text(with_support=False) == "verified"
    assert Badge.of(missing).text() == "UNVERIFIED"
    assert Badge.of(found).label() == "✓ quote found on p. 7" and Badge.of(missing).label().startswith("⚠ ")
    assert Badge.of(found).support_words() == "supports the answer"
    assert Badge.of(off).support_words() == Badge.of(missing).support_words() == "does not obviously support the answer"
    assert Badge.of(off.to_dict()) == Badge.of(off)                       # an answer's JSON, as exports get it
    assert Badge.of({"verified": True}).text() == "verified"             # an older stored answer: no support check


def test_the_estimate_counts_the_speed_from_the_first_slice():
    now = [0.0]
    estimate = ProgressEstimate("reading the passages", clock=lambda: now[0])
    first = estimate(0, 1000)                 # accepted
    now[0] = 0.1
    start = estimate(200, 1000)               # where reading starts: what the engine held took no time
    assert not first.measured and not start.measured and start.seconds_left is None
    assert start.line() == "reading the passages: 20%"
    now[0] = 2.1
    mid = estimate(600, 1000)                 # 400 tokens in 2 s: 400 left take 2 s
    assert mid.measured and mid.line() == "reading the passages: 60% · 2 s left"
    now[0] = 3.1
    assert estimate(1000, 1000).line() == "reading the passages: 100%"
    assert ReadingProgress("reading “a.pdf”", 45, 100, 6.2, True).line() == "reading “a.pdf”: 45% · 6 s left"


def test_documents_that_do_not_fit_say_how_much_would():
    exc = DoesNotFit(20000, 7792)
    assert isinstance(exc, BadInput) and round(exc.share, 2) == 0.39
    assert str(exc) == ("the document is 20,000 tokens and the context holds 7,792 for a prompt: about 39% of it "
                        "would fit, so questions about it use the best passages instead")
    again = pickle.loads(pickle.dumps(exc))
    assert (again.tokens, again.room, str(again)) == (20000, 7792, str(exc))
