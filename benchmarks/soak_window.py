"""The soak in ONE main window session (benchmarks/soak.py --via window): each question opens
its document(s) as a user does (Open; two side by side), asks through the question box's path
(MainWindow.ask), and waits for the answer on screen. Half-way the library panel removes the
document on screen and opening the file again adds it back; every `every` questions the worker is
killed with SIGKILL and the next question must still be answered."""
from __future__ import annotations

import os
import signal

import common
import soak_plan

ANSWER_WAIT_MS = 900_000     # a hang guard, not a speed claim: a hang is a failure


def _wait(app, signal_, timeout_ms: int, already=lambda: False) -> bool:
    """Run the event loop until `signal_` fires (True) or the time is up (False)."""
    from PySide6.QtCore import QEventLoop, QTimer
    if already():
        return True
    loop, fired = QEventLoop(), []
    def on_fire(*_):
        fired.append(True)
        loop.quit()
    signal_.connect(on_fire)
    QTimer.singleShot(timeout_ms, loop.quit)
    loop.exec()
    signal_.disconnect(on_fire)
    return bool(fired)


def _open(app, win, files) -> bool:
    names = sorted(str(f) for f in files)
    on_screen = sorted(i.last_path or i.path for i in win.on_screen_infos())
    if names == on_screen and not win.library_scope:
        return True
    from PySide6.QtCore import QTimer
    QTimer.singleShot(0, lambda: win.open_files([str(f) for f in files], compare=len(files) > 1)
                      if len(files) > 1 else (win.set_compare(False), win.open_path(str(files[0]))))
    return _wait(app, win.sig_documents_ready, 120_000)


def soak(asked: list[soak_plan.SoakQuestion], every: int) -> soak_plan.SoakResult:
    from PySide6.QtWidgets import QApplication

    from app.core.library import Library
    from app.qt import workers
    from app.qt.main_window import MainWindow

    app = QApplication.instance() or QApplication(["pagewise-soak"])
    result = soak_plan.SoakResult(f"window ({app.platformName()})", len(asked), every)
    lib = Library()
    win = MainWindow(library=lib, start_engine=False)
    win.library_panel.confirm = False          # the soak clicks "Remove" without the dialog
    win.resize(1280, 860)
    win.show()
    win.engine.start()
    if not _wait(app, win.engine.sig_ready, 300_000, lambda: win.engine.ready()):
        result.failures.append("the engine did not start")
        return _finish(app, win, lib, result)
    began = common.now()
    result.note_memory(0, os.getpid(), win.engine.runtime.engine.pid)
    for n, q in enumerate(asked, 1):
        if n == len(asked) // 2 + 1:
            result.readded = _remove_and_readd(app, win, q)
        if not _open(app, win, q.files):
            result.failures.append(f"q{n}: {q.files[0].name} did not open within 120 s")
            continue
        if not win.chat.ask_button.isEnabled():
            _wait(app, win.engine.sig_ready, 120_000, lambda: win.chat.ask_button.isEnabled())
        count = len(win.chat.entries)
        win.ask(q.question)
        if len(win.chat.entries) == count:
            result.failures.append(f"q{n}: the window did not take the question ({win.chat.status_text()})"
                                   if hasattr(win.chat, "status_text") else f"q{n}: the question was not taken")
            continue
        if not _wait(app, win.sig_answer_shown, ANSWER_WAIT_MS):
            result.failures.append(f"q{n}: no answer within {ANSWER_WAIT_MS // 1000} s")
            continue
        entry = win.chat.entries[-1]
        if entry.state != "done":
            result.failures.append(f"q{n} {q.files[0].name}: {entry.state}: {entry.text[:120] or entry.meta}")
        else:
            result.answered += 1
            result.verified += any(c.verified for c in entry.citations)
        if n % 10 == 0:
            print(f"  {n} asked, {result.answered} answered, {common.now() - began:.0f} s", flush=True)
        if n % every == 0 and n < len(asked):
            pid = win.engine.runtime.engine.pid
            result.note_memory(n, os.getpid(), pid)
            if pid:
                os.kill(pid, signal.SIGKILL)
                result.kills += 1
    result.note_memory(len(asked), os.getpid(), win.engine.runtime.engine.pid)
    result.seconds = common.now() - began
    result.restarts = len(win.engine.runtime.engine.recoveries)
    workers.wait_all(10_000)
    return _finish(app, win, lib, result)


def _remove_and_readd(app, win, q) -> tuple | None:
    """The library panel's Remove on the document on screen, then Open adds it again."""
    infos = win.on_screen_infos()
    if not infos:
        return None
    old = infos[0]
    win.library_panel.refresh()
    win.library_panel.select_ids([old.id])
    win.library_panel.remove_selected()
    path = old.last_path or old.path
    win.set_compare(False)
    from PySide6.QtCore import QTimer
    QTimer.singleShot(0, lambda: win.open_path(path))
    _wait(app, win.sig_documents_ready, 120_000)
    new = win.on_screen_infos()
    return old.id, new[0].id if new else None


def _finish(app, win, lib, result):
    from app.qt import error_dialog as errors
    win.close()
    errors.uninstall_hooks()
    app.processEvents()
    lib.close()
    return result
