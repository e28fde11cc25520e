"""Status bar: VRAM gauge from an injected NVML reading (a 12 GB card we lack), the
no-GPU state with the RAM gauge, KV-cache share, colour thresholds, engine state and plan."""
from __future__ import annotations

import time

import pytest

from app.core.plan import hardware
from app.core.plan.hardware import GpuInfo

GB = 1 << 30      # as the gauges count


def card(used_gb: float, index: int = 0, total_gb: float = 12.0) -> GpuInfo:
    total, used = int(total_gb * GB), int(used_gb * GB)
    return GpuInfo(index, "NVIDIA GeForce RTX 3060", total, total - used, used, (8, 6))


class EngineWithMetrics:
    """Stands in for a running engine's /metrics only (the numbers a GPU engine would report)."""

    plan = None
    running = True

    def __init__(self, metrics: dict):
        self._metrics = metrics

    def start(self, *planned) -> None:
        pass

    def stop(self) -> None:
        pass

    def metrics(self) -> dict:
        return self._metrics


def service_with(metrics: dict):
    """The application's service over an engine that reports `metrics`."""
    from app.service import Assistant
    service = Assistant(runtime_factory=lambda on_status: EngineWithMetrics(metrics))
    service.start()
    return service


def poll(qtbot, poller):
    with qtbot.waitSignal(poller.sig_readings, timeout=5000) as got:
        poller.poll()
    return got.args[0]


@pytest.fixture
def bar(qtbot):
    from app.qt.status_bar import ReadingsPoller, StatusBar
    status = StatusBar()
    qtbot.addWidget(status)
    status.show()
    poller = ReadingsPoller(interval_ms=1000)
    poller.sig_readings.connect(status.update_readings)
    yield status, poller
    poller.stop()


def test_gauge_with_an_injected_12_gb_card(qtbot, bar, monkeypatch):
    status, poller = bar
    monkeypatch.setattr(hardware, "gpu_readings", lambda: [card(7.2)])
    poller.service = service_with({"vllm:kv_cache_usage_perc": 0.42})
    poll(qtbot, poller)
    assert [g.label for g in status.gauges] == ["GPU0"]
    gauge = status.gauges[0]
    assert gauge.text() == "GPU0 7.2/12.0 GB · KV 42%"
    assert gauge.level() == "ok"
    assert "NVIDIA GeForce RTX 3060" in gauge.toolTip() and "42%" in gauge.toolTip()
    assert status.gpu_note.text() == ""
    monkeypatch.setattr(hardware, "gpu_readings", lambda: [card(11.5)])
    poll(qtbot, poller)
    assert status.gauges[0].level() == "alarm"
    monkeypatch.setattr(hardware, "gpu_readings", lambda: [card(9.6)])
    poll(qtbot, poller)
    assert status.gauges[0].level() == "warn"


def test_one_gauge_per_gpu(qtbot, bar, monkeypatch):
    status, poller = bar
    monkeypatch.setattr(hardware, "gpu_readings", lambda: [card(3, 0), card(5, 1)])
    poll(qtbot, poller)
    assert [g.text() for g in status.gauges] == ["GPU0 3.0/12.0 GB", "GPU1 5.0/12.0 GB"]


def test_no_gpu_shows_ram_gauge(qtbot, bar, monkeypatch):
    status, poller = bar
    monkeypatch.setattr(hardware, "gpu_readings", lambda: [])
    readings = poll(qtbot, poller)
    assert status.gpu_note.text().startswith("no NVIDIA GPU")
    assert [g.label for g in status.gauges] == ["RAM"]
    total, _ = hardware._meminfo()
    assert status.gauges[0].total == total == readings.ram_total > 0
    assert 0 < status.gauges[0].used < total


def test_real_machine_reading_without_injection(qtbot, bar):
    """This machine has no NVIDIA GPU: the real NVML probe must say so, not fail."""
    status, poller = bar
    readings = poll(qtbot, poller)
    if readings.gpus:
        pytest.skip("this machine has a GPU")
    assert status.gpu_note.text().startswith("no NVIDIA GPU")


def test_engine_state_and_plan_line(qtbot, bar):
    status, _ = bar
    status.set_engine_state("loading", "reading the model file")
    assert "loading" in status.state_label.text() and status.state_label.toolTip() == "reading the model file"
    status.set_plan("no NVIDIA GPU → llama.cpp on CPU, 8K context", ["no GPU found by NVML", "8 GB RAM free"])
    assert "llama.cpp on CPU" in status.plan_label.text()
    assert "• no GPU found by NVML" in status.plan_label.toolTip()


def test_poller_refreshes_about_every_second(qtbot, bar, monkeypatch):
    status, poller = bar
    calls = []
    monkeypatch.setattr(hardware, "gpu_readings", lambda: calls.append(1) or [card(2)])
    began = time.monotonic()
    poller.start()                       # one reading at once, then one per timer tick
    qtbot.waitUntil(lambda: len(calls) >= 3, timeout=30_000)     # hang guard, not a speed claim
    elapsed = time.monotonic() - began
    assert poller._timer.isActive() and poller._timer.interval() == 1000
    assert len(calls) <= elapsed / 0.9 + 2, (len(calls), elapsed)   # never faster than the timer


def test_the_status_bar_says_what_waits_while_a_question_is_answered(qtbot):
    """Issue 31: the window shows the background work a question pauses (here a job waiting for
    its turn on another thread, as the search vectors do), and clears it after the answer."""
    import threading

    from app.core import cpu_work
    from app.qt.status_bar import StatusBar
    bar = StatusBar()
    qtbot.addWidget(bar)
    bar.show()
    with cpu_work.scheduler.foreground("answering"):
        job = threading.Thread(target=cpu_work.scheduler.checkpoint, args=("search vectors",))
        job.start()
        qtbot.waitUntil(lambda: "search vectors paused while answering" in bar.paused_label.text(),
                        timeout=5000)
        assert bar.paused_label.isVisible()
    job.join(timeout=5)
    qtbot.waitUntil(lambda: not bar.paused_label.isVisible(), timeout=5000)
