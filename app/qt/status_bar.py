"""Status bar: engine state, the plan in one line (reasons in the tooltip), memory gauges.

Readings (NVML, RAM, the engine's /metrics) are taken on a worker thread about once a
second, never on the UI thread: an HTTP call to a busy engine can take a while.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QStatusBar, QWidget

from app.qt import workers
from app.qt.fitted_label import FittedLabel
from app.qt.interface_language import tr
from app.qt.gauges import GB, MemoryGauge

STATE_COLOURS = {"ready": "#3a9d5d", "failed": "#d64541", "dead": "#d64541",
                 "notresponding": "#d99a1e", "downgrade": "#d99a1e", "stopped": "#888888"}
BUSY_COLOUR = "#5b7fd6"     # planning, launching, loading: on its way


@dataclass
class Readings:
    gpus: list = field(default_factory=list)        # app.core.plan.hardware.GpuInfo
    ram_total: int = 0
    ram_available: int = 0
    metrics: dict = field(default_factory=dict)     # the engine's own numbers


def take_readings(ctx, service) -> Readings:
    """One sample; looked up through the module so tests can inject a GPU we lack."""
    from app.core.plan import hardware
    total, available = hardware._meminfo()
    metrics = service.engine_readings() if service is not None else {}
    return Readings(list(hardware.gpu_readings()), total, available, metrics)


class ReadingsPoller(QObject):
    sig_readings = Signal(object)
    """A new Readings sample."""

    def __init__(self, interval_ms: int = 1000, parent=None) -> None:
        super().__init__(parent)
        self.service = None        # app.service.Assistant: its engine's readings
        self._job = None
        self._timer = QTimer(self, interval=interval_ms, timeout=self.poll)

    def start(self) -> None:
        self.poll()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def poll(self) -> None:
        if self._job is not None and not self._job.finished:
            return    # a slow sample is still running: skip rather than pile up
        self._job = workers.run(take_readings, self.service, on_done=self.sig_readings.emit,
                                on_error=lambda exc: None)


class _CpuWorkNotes:
    """The CPU scheduler's latest line ("search vectors paused while answering"), put from any
    thread and taken by the UI thread's timer: nothing Qt is touched off the UI thread (a signal
    emitted from the scheduler's thread on a status bar being destroyed crashed the process)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._line: str | None = None

    def put(self, text: str) -> None:
        with self._lock:
            self._line = text

    def take(self) -> str | None:
        with self._lock:
            line, self._line = self._line, None
        return line


CPU_NOTES_MS = 150          # how often the UI thread reads the scheduler's latest line


ACTIVITY_WIDTH = 360        # px for "reading “…”: 45% · 6 s left"


class WholeLabel(FittedLabel):
    """A short note shown whole or not at all (in its tooltip then): squeezed by a narrow
    status bar, a note cut to its first letter ("n", "没") says nothing."""

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        """Its whole text's width: given where there is room, never asked for where there is not."""
        return QSize(self.fontMetrics().horizontalAdvance(self._full) + 4, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(0, super().minimumSizeHint().height())

    def _fit(self) -> None:
        fits = self.fontMetrics().horizontalAdvance(self._full) <= self.width()
        QLabel.setText(self, self._full if fits else "")   # the shown text; `_full` stays
        self.setToolTip("" if fits else self._full)


class StatusBar(QStatusBar):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.state_label = QLabel(objectName="engineState")
        self.plan_label = QLabel(objectName="planLine")
        self.plan_label.setMaximumWidth(520)
        self.gpu_note = WholeLabel("", objectName="gpuNote")
        self._gauge_box = QWidget()
        self._gauge_layout = QHBoxLayout(self._gauge_box)
        self._gauge_layout.setContentsMargins(0, 0, 0, 0)
        self.gauges: list[MemoryGauge] = []
        self.activity_label = QLabel("", objectName="activity")   # "reading the contract: 45%"
        self.activity_label.setMaximumWidth(ACTIVITY_WIDTH + 20)
        self.answer_label = QLabel("", objectName="answerProgress")   # "writing the answer · 14 s · …"
        self.answer_label.setMaximumWidth(ACTIVITY_WIDTH + 20)
        # its usual line whole: the bar's other labels must not squeeze it to "… · 20 toke"
        self.answer_label.setMinimumWidth(min(ACTIVITY_WIDTH, self.answer_label.fontMetrics().horizontalAdvance(
            "writing the answer · 888 s · 8,888 tokens (88.8/s)") + 8))
        self.answer_label.setVisible(False)
        self.paused_label = QLabel("", objectName="pausedWork")   # what waits while a question runs
        self.paused_label.setVisible(False)
        # Labels never ask for their text's width: the window's width is the screen's to set,
        # and the lines are elided to what is left (whole in their tooltips).
        for label in (self.activity_label, self.paused_label, self.plan_label):
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            label.setMinimumWidth(24)
        self.addWidget(self.state_label)
        self.addWidget(self.answer_label)
        self.addWidget(self.activity_label, 1)   # a share of the room: with none, Qt overlapped it with the plan line
        self.addWidget(self.paused_label, 1)
        self.addWidget(self.plan_label, 1)
        self.addPermanentWidget(self.gpu_note)
        self.addPermanentWidget(self._gauge_box)
        self.set_engine_state("stopped", "the engine starts when the app opens")
        from app.core import cpu_work
        self._cpu_notes = _CpuWorkNotes()
        unsubscribe = cpu_work.scheduler.subscribe(self._cpu_notes.put)
        self.destroyed.connect(lambda *_: unsubscribe())
        self._cpu_timer = QTimer(self, interval=CPU_NOTES_MS, timeout=self._show_cpu_notes)
        self._cpu_timer.start()

    def _show_cpu_notes(self) -> None:
        line = self._cpu_notes.take()
        if line is not None:
            self.set_paused_work(line)

    def set_paused_work(self, text: str) -> None:
        """"search vectors paused while answering" while a question holds the machine."""
        self.paused_label.setText(self.paused_label.fontMetrics().elidedText(
            text, Qt.TextElideMode.ElideRight, ACTIVITY_WIDTH))
        self.paused_label.setToolTip(text + "\n" + "The app's background work waits while a question is answered, "
                                     "so the answer has the processor to itself; it resumes after.")
        self.paused_label.setVisible(bool(text))

    def set_engine_state(self, state: str, detail: str) -> None:
        self.state = state
        colour = STATE_COLOURS.get(state, BUSY_COLOUR)
        self.state_label.setText(f"<span style='color:{colour}'>●</span> Engine: {state}")
        self.state_label.setToolTip(detail)

    def set_activity(self, text: str) -> None:
        """Background work in a few words (elided; the whole line in the tooltip): the status
        bar must never push the window wider."""
        _set_elided(self.activity_label, text)

    def set_answer_progress(self, text: str) -> None:
        """The running question: "writing the answer · 14 s · 96 tokens (6.9/s)", ticking; "" when done."""
        _set_elided(self.answer_label, text)

    def set_plan(self, summary: str, reasons: list[str] | tuple[str, ...] = ()) -> None:
        metrics = self.plan_label.fontMetrics()
        # translated before it is cut: a cut sentence matches nothing in the catalogue
        self.plan_label.setText(metrics.elidedText(tr(summary), Qt.TextElideMode.ElideRight,
                                                   self.plan_label.maximumWidth()))
        tip = summary + ("".join(f"\n• {r}" for r in reasons) if reasons else "")
        self.plan_label.setToolTip(tr(tip))

    def update_readings(self, readings: Readings) -> None:
        kv = readings.metrics.get("kv_cache_share")
        kv_bytes = readings.metrics.get("kv_cache_bytes")
        if readings.gpus:
            self.gpu_note.setText("")
            self._ensure_gauges([f"GPU{g.index}" for g in readings.gpus])
            for gauge, gpu in zip(self.gauges, readings.gpus):
                share = kv_bytes / len(readings.gpus) if kv_bytes else None  # tensor parallel splits KV evenly
                gauge.set_reading(gpu.used_bytes, gpu.total_bytes, share, kv,
                                  tr(self._gpu_tip(gpu, kv, share)))
        else:
            self.gpu_note.setText(tr("no NVIDIA GPU · CPU mode"))   # set every second: never English between walks
            self._ensure_gauges(["RAM"])
            used = readings.ram_total - readings.ram_available
            self.gauges[0].set_reading(used, readings.ram_total, kv_bytes, kv,
                                       tr(f"System RAM in use: {used / GB:.1f} of {readings.ram_total / GB:.1f} GB"
                                          + (f"\nEngine KV cache: {kv_bytes / GB:.2f} GB" if kv_bytes else "")))

    @staticmethod
    def _gpu_tip(gpu, kv: float | None, kv_bytes: float | None) -> str:
        lines = [f"GPU {gpu.index}: {gpu.name}",
                 f"VRAM used {gpu.used_bytes / GB:.1f} of {gpu.total_bytes / GB:.1f} GB "
                 f"({gpu.free_bytes / GB:.1f} GB free)"]
        if kv is not None:
            lines.append(f"Engine KV cache in use: {kv:.0%} of its pool")
        if kv_bytes:
            lines.append(f"Engine KV cache: {kv_bytes / GB:.2f} GB")
        return "\n".join(lines)

    def _ensure_gauges(self, labels: list[str]) -> None:
        if [g.label for g in self.gauges] == labels:
            return
        for gauge in self.gauges:
            gauge.deleteLater()
        self.gauges = [MemoryGauge(label) for label in labels]
        for gauge in self.gauges:
            self._gauge_layout.addWidget(gauge)


def _set_elided(label: QLabel, text: str) -> None:
    """A line that fits its label (cut with "…"), the whole of it in the tooltip; hidden when empty."""
    text = tr(text)        # before it is cut: a cut sentence matches nothing in the catalogue
    label.setText(label.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, ACTIVITY_WIDTH))
    label.setToolTip(text)
    label.setVisible(bool(text))
