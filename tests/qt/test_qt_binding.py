"""Guards against a broken Qt binding: PySide6 6.12.0 loses a reference to True on every
Signal.emit, and on Python < 3.12 the app then dies with "bool_dealloc" after a few
hundred signals (one streamed answer). Pin PySide6-Essentials != 6.12.0."""
from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    sig = Signal(object)


def test_signal_emit_keeps_reference_counts():
    emitter = _Emitter()
    emitter.sig.connect(lambda value: None)
    before = sys.getrefcount(True), sys.getrefcount(False)
    for _ in range(50):
        emitter.sig.emit("x")
    after = sys.getrefcount(True), sys.getrefcount(False)
    assert after[0] >= before[0] - 2 and after[1] >= before[1] - 2, (
        f"this PySide6 build leaks references to bool on emit ({before} → {after})")
