"""Evidence first in the window (issue 29): the cards on screen while the engine is still busy,
a card's click → its page with the quote highlighted, an answer its citations do not back
never the headline.

The engine is the real EngineRuntime, the question goes through the real answer pipeline;
only the model is the fake OpenAI server (tests/support/fake_server.py: it echoes the
question, so its answer cites nothing), and the fault injected is its reply held back until
the test lets it go (an engine busy reading)."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl

from app.core.answer.citations import highlight_rects
from app.core.answer.evidence.wording import NOT_ADDRESSED
from tests.qt.conftest import open_and_wait, wait_settled
from tests.support.fake_server import fake_spec

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "samples" / "common-paper-mnda.pdf"
LAW = "Which state's law governs this agreement?"


@pytest.fixture
def held(qtbot, window):
    """The window with an engine whose replies wait for `release` (set it to let them go)."""
    from app.core.models import catalogue as models
    from app.core.plan import hardware
    from app.core.plan import planner
    from app.qt.engine_controller import EngineController
    from app.worker.runtime import EngineRuntime
    from app.worker.supervisor import Supervisor

    release, servers = threading.Event(), []

    def launch(plan, options, on_status):
        servers.append(Supervisor(fake_spec()))
        servers[-1].start()
        return servers[-1]

    def runtime(on_status):
        rt = EngineRuntime(on_status=on_status, launcher=launch)
        plan = planner.make_plan(hardware.probe(), models.load_catalogue(), available=models.is_available)
        rt.start = lambda *planned: rt.engine.start(plan)      # this plan, whatever the machine's
        chat = rt.engine.chat

        def busy_chat(*args, **kwargs):      # the fault: the engine answers only once released
            release.wait(120)
            return chat(*args, **kwargs)
        rt.engine.chat = busy_chat
        return rt

    engine = EngineController(runtime_factory=runtime, parent=window)
    window.engine = engine
    window._connect_engine()
    with qtbot.waitSignal(engine.sig_ready, timeout=60_000):
        engine.start()
    window.release = release
    yield window
    release.set()
    for server in servers:
        server.stop()


def test_evidence_is_shown_while_the_engine_is_busy_and_a_card_click_highlights_its_page(qtbot, held):
    win = held
    open_and_wait(qtbot, win, SAMPLE)
    with qtbot.waitSignal(win.sig_evidence_shown, timeout=30_000):
        win.ask(LAW)
    entry = win.chat.entries[-1]
    assert entry.state == "streaming" and entry.text == ""       # the model has not answered
    evidence = entry.evidence
    assert evidence is not None and evidence.addressed and evidence.cards
    shown = win.chat.transcript.toPlainText()
    assert "EVIDENCE" in shown and "[E1]" in shown
    first = evidence.cards[0]
    assert first.quote in " ".join(shown.split()) or first.quote[:40] in shown
    assert "governed by" in first.quote      # the governing-law clause leads
    assert [c.page for c in win.citations.evidence()] == [c.page for c in evidence.cards]
    # the first card is shown on its page at once; a click on another: its page, its quote highlighted
    qtbot.waitUntil(lambda: win.pane_a.view.current_page() == first.page, timeout=10_000)
    other = next(n for n, c in enumerate(evidence.cards) if c.page != first.page)
    card = evidence.cards[other]
    win.chat.transcript.anchorClicked.emit(QUrl(f"evidence:0:{other}"))
    qtbot.waitUntil(lambda: win.pane_a.view.current_page() == card.page, timeout=10_000)
    wait_settled(qtbot, win.pane_a)
    want = highlight_rects(str(SAMPLE), card.page, card.quote)
    assert want
    qtbot.waitUntil(lambda: win.pane_a.view.highlights() == {card.page: want}, timeout=10_000)
    with qtbot.waitSignal(win.sig_answer_shown, timeout=60_000):
        win.release.set()


def test_an_answer_its_citations_do_not_back_is_shown_under_the_evidence_never_as_the_answer(qtbot, held):
    win = held
    open_and_wait(qtbot, win, SAMPLE)
    with qtbot.waitSignal(win.sig_evidence_shown, timeout=30_000):
        win.ask(LAW)
    with qtbot.waitSignal(win.sig_answer_shown, timeout=60_000):
        win.release.set()
    entry = win.chat.entries[-1]
    assert entry.state == "done", entry.meta
    # the fake engine echoes its prompt: it cites nothing, and an echo of the instructions is
    # never shown (verdict.ECHO_WARNING), so only the evidence remains
    assert entry.headline == "evidence" and entry.text == ""
    assert any("repeated its instructions" in w for w in entry.data.get("warnings", []))
    shown = win.chat.transcript.toPlainText()
    assert shown.index("EVIDENCE") < shown.index("[E1]") and "echo:" not in shown
    assert "ANSWER" not in shown
    # the evidence stays selected: the document shows the first card's page, not the model's
    assert win.citations.current == 0 and win.citations.cards[0].is_evidence
    # reopened from the library, the stored answer is shown the same way
    open_and_wait(qtbot, win, SAMPLE)
    again = win.chat.transcript.toPlainText()
    assert "[E1]" in again and "echo:" not in again and "ANSWER" not in again


def test_a_question_the_document_does_not_address_says_so_above_the_nearest_passages(qtbot, held):
    win = held
    open_and_wait(qtbot, win, SAMPLE)
    with qtbot.waitSignal(win.sig_evidence_shown, timeout=30_000):
        win.ask("What is the purchase price of the shares?")
    entry = win.chat.entries[-1]
    assert entry.evidence is not None and not entry.evidence.addressed
    shown = win.chat.transcript.toPlainText()
    assert NOT_ADDRESSED in shown and shown.index(NOT_ADDRESSED) < shown.index("[E1]")
    with qtbot.waitSignal(win.sig_answer_shown, timeout=60_000):
        win.release.set()
