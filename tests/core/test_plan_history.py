"""One squeeze does not lower the plan for good: the history expires, and tries the higher plan
first when clearly more memory is free than when the start failed (the planner's own table of
cards; hardware injected as dataclasses, the history a real file)."""
from __future__ import annotations

import json
import time

import pytest

from app.core.models.catalogue import load_catalogue
from app.core.plan import planner as P
from app.core.plan.hardware import GpuInfo, Hardware
from app.core.plan.plan_history import HISTORY_DAYS, PlanHistory

MiB, GiB = 1 << 20, 1 << 30
RTX4090 = ("NVIDIA GeForce RTX 4090", 24564)


def card(used_gib: float) -> Hardware:
    name, mib = RTX4090
    used = int(used_gib * GiB)
    return Hardware((GpuInfo(0, name, mib * MiB, mib * MiB - used, used, (8, 9)),), 64 * GiB, 58 * GiB, 16,
                    ("avx2",))


@pytest.fixture
def cat():
    return load_catalogue()


def squeezed(cat, history, held_gib=9.0):
    """A start while another program held `held_gib`: what it started with is remembered."""
    busy = card(held_gib)
    free_plan = P.make_plan(card(0.3), cat)
    worked = P.make_plan(busy, cat)
    assert worked.gpu_memory_utilization < free_plan.gpu_memory_utilization
    history.record(busy, free_plan.model_id, worked, free_bytes=busy.gpus[0].free_bytes)
    return free_plan, worked


def test_the_whole_card_free_again_tries_the_higher_utilisation_first(cat, tmp_path):
    history = PlanHistory(tmp_path / "h.json")
    free_plan, worked = squeezed(cat, history)
    again = P.make_plan(card(0.3), cat, history=history)
    assert again.gpu_memory_utilization == free_plan.gpu_memory_utilization == pytest.approx(0.92)
    line = again.reasons[-1]
    assert line.startswith(f"history: last start here used {worked.model_id} "
                           f"{worked.gpu_memory_utilization:.2f} / ")
    assert "will try 0.92 first because 24 GiB are free (only 15 GiB were then)" in line


def test_as_little_free_as_at_the_failure_keeps_what_worked(cat, tmp_path):
    history = PlanHistory(tmp_path / "h.json")
    free_plan, worked = squeezed(cat, history)
    hw = card(8.5)                                   # half a GiB more than then: not "free again"
    decision = history.decide(free_plan, hw, cat)
    assert decision.action == "remembered" and "remembered: starting there" in decision.line
    assert decision.plan.model_id == worked.model_id
    assert decision.plan.gpu_memory_utilization <= worked.gpu_memory_utilization


def test_an_old_entry_without_a_free_reading_is_tried_higher(cat, tmp_path):
    """An entry written before the free reading was kept: tried higher whenever the plan now is."""
    path = tmp_path / "h.json"
    history = PlanHistory(path)
    free_plan, _ = squeezed(cat, history)
    data = json.loads(path.read_text())
    entry = data["models"][free_plan.model_id]
    entry["plan"]["gpu_memory_utilization"] = 0.45
    del entry["free_bytes"], entry["at"]
    path.write_text(json.dumps(data))
    decision = history.decide(P.make_plan(card(0.3), cat), card(0.3), cat)
    assert decision.action == "reprobe" and decision.plan.gpu_memory_utilization == pytest.approx(0.92)


def test_history_expires(cat, tmp_path):
    path = tmp_path / "h.json"
    history = PlanHistory(path)
    free_plan, worked = squeezed(cat, history)
    busy = card(9.0)
    assert history.decide(free_plan, busy, cat).action == "remembered"
    later = time.time() + (HISTORY_DAYS + 1) * 86400
    decision = history.decide(free_plan, busy, cat, now=later)
    assert decision.action == "expired" and decision.plan == free_plan
    assert f"over {HISTORY_DAYS} days ago: planned afresh" in decision.line
    # an entry written before "at" was kept ages by its "when"
    data = json.loads(path.read_text())
    entry = data["models"][free_plan.model_id]
    del entry["at"]
    entry["when"] = time.strftime("%Y-%m-%d %H:%M", time.localtime(time.time() - (HISTORY_DAYS + 2) * 86400))
    path.write_text(json.dumps(data))
    assert history.decide(free_plan, busy, cat).action == "expired"
