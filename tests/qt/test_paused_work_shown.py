"""Issue 31: while a question is answered, the window's status bar says which background work
waits for it (a real search-vector job on a real document, paused by the CPU scheduler), and the
line goes once the answer is done. Screenshot: docs/screenshots/paused-while-answering.png."""
from __future__ import annotations

import threading
from pathlib import Path

from app.core import cpu_work
from app.core.library import table_pass
from tests.qt.conftest import open_and_wait
from tests.support.corpus import corpus_path
from tests.support.strict import require_dense

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def test_the_window_shows_the_search_vectors_paused_while_answering(qtbot, window, library):
    require_dense()
    info = open_and_wait(qtbot, window, corpus_path("contracts-en/bonterms-psa-v1.2.pdf"))
    bar = window.statusBar()
    # the window's own background job finds the tables first, then computes vectors
    qtbot.waitUntil(lambda: not table_pass.pending(library._con, library._lock, [info.id]), timeout=60000)
    job = threading.Thread(target=library.embed, args=([info.id],))
    with cpu_work.scheduler.foreground("answering"):          # what EngineRuntime.ask holds
        job.start()
        # the window's own job (table pass, then vectors) and this one both wait
        qtbot.waitUntil(lambda: "search vectors" in bar.paused_label.text(), timeout=20000)
        assert bar.paused_label.text().endswith("paused while answering")
        assert bar.paused_label.isVisible()
        SHOTS.mkdir(parents=True, exist_ok=True)
        window.grab().save(str(SHOTS / "paused-while-answering.png"))
    try:
        qtbot.waitUntil(lambda: not bar.paused_label.isVisible(), timeout=10000)
    finally:
        job.join(timeout=300)


def test_the_scheduler_s_line_crosses_threads_without_touching_qt_off_the_ui_thread(qtbot):
    """The scheduler calls its listeners on whatever thread changed it (an engine starting in a
    worker thread): the status bar's listener only stores the line, and the UI thread's timer
    shows it. A status bar destroyed meanwhile leaves a listener that still touches nothing."""
    from app.qt.status_bar import StatusBar
    bar = StatusBar()
    qtbot.addWidget(bar)
    bar.show()
    listeners = list(cpu_work.scheduler._listeners)
    mine = [f for f in listeners if getattr(f, "__self__", None) is bar._cpu_notes]
    assert len(mine) == 1
    thread = threading.Thread(target=mine[0], args=("search vectors paused while answering",))
    thread.start()
    thread.join()
    qtbot.waitUntil(lambda: bar.paused_label.text().endswith("paused while answering"), timeout=2000)
    notes = bar._cpu_notes
    bar.deleteLater()
    qtbot.wait(50)
    notes.put("later")              # a stale copy of the listener, called after the bar is gone
    assert notes.take() == "later"
