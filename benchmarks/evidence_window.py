"""Evidence in the window (issue 29): time from Ask to the evidence block painted, while the
window's own engine (the real runtime, the embedded model) is busy reading.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/evidence_window.py [--rounds N]

The real MainWindow on a fresh library (its own PAGEWISE_HOME): the sample contract and a
Chinese corpus law (contracts-zh/pipl.pdf) opened as a user opens them (indexed on open), 10
English and 10 Chinese questions asked through the Ask path (`MainWindow.ask`). Meanwhile a
thread keeps the engine reading: whole-document prompts (the background reading's prompt,
a fresh nonce each time so nothing comes from the prompt cache) sent to the running engine
one after another. Measured per question: Ask → the `sig_evidence_shown` slot has run and the
transcript repainted (`repaint()` paints synchronously), p50/p95; then the answer is stopped
and the next question asked. Also printed: the same questions with the engine idle.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

SAMPLE = common.ROOT / "resources" / "samples" / "common-paper-mnda.pdf"
ZH_DOC = common.CORPUS / "contracts-zh" / "pipl.pdf"
EN = ["Which state's law governs this agreement?", "Who are the parties?",
      "How long do the confidentiality obligations last?", "What is the term of this MNDA?",
      "Can the Receiving Party disclose Confidential Information to its employees?",
      "What must be done with Confidential Information when the agreement ends?",
      "Is either party obliged to proceed with a transaction?",
      "Which courts have jurisdiction over disputes?", "What counts as Confidential Information?",
      "Can a party assign this agreement?"]
ZH = ["个人信息保护法对情节严重的违法处理个人信息行为，最高可以处以多少罚款？",
      "App要处理十二岁儿童的个人信息，需要取得谁的同意？", "个人信息保护影响评估报告需要保存多长时间？",
      "个人信息保护法中“去标识化”和“匿名化”有什么区别？", "个人信息处理者向境外提供个人信息应当具备哪些条件？",
      "什么是敏感个人信息？", "个人有权撤回同意吗？", "处理个人信息应当遵循哪些原则？",
      "国家机关处理个人信息有什么特别规定？", "本法自什么时候起施行？"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Reader(threading.Thread):
    """The engine kept busy reading a whole document, as the app's background reading does
    (EngineRuntime.read: under the runtime's lock, cut when a question comes, resumed when it
    is done), over and over: a fresh nonce each time, so nothing comes from the prompt cache."""

    def __init__(self, runtime, library, refs):
        super().__init__(daemon=True)
        from app.core.answer import prompts, qa
        self.runtime, self.stop_event, self.requests, self.cut, self.errors = runtime, threading.Event(), 0, 0, 0
        self.in_flight = threading.Event()      # a reading request is with the engine
        self.messages = prompts.messages(qa.whole_context(library, refs), "", whole=True)
        self.tokens = runtime.engine.count_tokens(self.messages)

    def run(self) -> None:
        rt = self.runtime
        while not self.stop_event.is_set():
            rt._questions_done.wait(0.5)             # a question first
            if not rt._questions_done.is_set():
                continue
            cut = threading.Event()
            with rt._lock:
                if rt._preempt.is_set():
                    continue
                with rt._cut_when_asked(cut, self.stop_event):
                    nonce = {"role": "system", "content": f"reading {time.perf_counter_ns()}"}
                    self.in_flight.set()
                    try:
                        rt.engine.chat([nonce] + self.messages, max_tokens=1, cancel=cut,
                                       stall_s=rt.engine.adapter.reading_stall_s())
                        self.requests += 1
                    except Exception as exc:  # noqa: BLE001 - pre-empted by a question: read again after it
                        if cut.is_set():
                            self.cut += 1
                        else:        # e.g. the engine restarting after a stopped answer: read again
                            self.errors += 1
                            print(f"  (reading failed: {exc})", file=sys.stderr, flush=True)
                            time.sleep(1)
                    finally:
                        self.in_flight.clear()


def ask_and_time(qtbot_wait, win, question: str) -> float:
    """Ask through the window; ms from Ask until the evidence block is painted."""
    painted: list[float] = []

    def on_shown() -> None:
        win.chat.transcript.viewport().repaint()
        painted.append(time.perf_counter())

    win.sig_evidence_shown.connect(on_shown)
    try:
        started = time.perf_counter()
        win.ask(question)
        qtbot_wait(lambda: bool(painted), 30)
    finally:
        win.sig_evidence_shown.disconnect(on_shown)
    ms = (painted[0] - started) * 1000
    answered: list[bool] = []
    win.sig_answer_shown.connect(lambda: answered.append(True))
    win.engine.stop_answer()
    qtbot_wait(lambda: bool(answered), 300)
    return ms


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=1, help="times each question is asked")
    args = ap.parse_args()
    home = tempfile.mkdtemp(prefix="pagewise-evwin-")
    os.environ["PAGEWISE_HOME"] = home
    from PySide6.QtWidgets import QApplication

    from app.core.answer.refs import DocRef
    from app.core.library import Library
    from app.qt.main_window import MainWindow
    app = QApplication.instance() or QApplication([])

    def wait(cond, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while not cond():
            if time.monotonic() > deadline:
                raise TimeoutError("timed out")
            app.processEvents()
            time.sleep(0.002)

    library = Library()
    busy_doc = library.add(SAMPLE)            # what the engine reads (it fits the context)
    win = MainWindow(library=library, start_engine=False)
    win.resize(1400, 900)
    win.show()
    ready = []
    win.engine.sig_ready.connect(lambda plan: ready.append(plan))
    t0 = time.perf_counter()
    win.engine.start()
    wait(lambda: bool(ready), 600)
    print(f"engine ready in {time.perf_counter() - t0:.1f} s: {ready[0].engine.value} {ready[0].model_id}")
    results: dict[tuple[str, str], list[float]] = {}
    for lang, path, questions in (("en", SAMPLE, EN), ("zh", ZH_DOC, ZH)):
        docs = []
        win.sig_documents_ready.connect(lambda: docs.append(True))
        t0 = time.perf_counter()
        win.open_path(str(path))
        wait(lambda: bool(docs) and win.chat.ask_button.isEnabled(), 600)
        print(f"{path.name}: opened and indexed in {time.perf_counter() - t0:.1f} s")
        wait(lambda: False if time.perf_counter() - t0 < 5 else True, 10)   # the user reads, types
        for state in ("idle", "busy"):
            reader = None
            if state == "busy":
                reader = Reader(win.engine.runtime, library, [DocRef(1, busy_doc.id, str(SAMPLE))])
                reader.start()
                print(f"  the engine reads {SAMPLE.name} whole ({reader.tokens} tokens) again and again")
                time.sleep(3)              # the engine is reading
            for _ in range(args.rounds):
                for q in questions:
                    if reader is not None:       # ask while the engine is reading
                        wait(reader.in_flight.is_set, 60)
                        time.sleep(0.3)
                    t0 = time.perf_counter()
                    ms = ask_and_time(wait, win, q)
                    print(f"  {state} {ms:7.0f} ms  (stopped after {time.perf_counter() - t0:.1f} s)  {q}", flush=True)
                    results.setdefault((lang, state), []).append(ms)
            if reader is not None:
                reader.stop_event.set()
                reader.join(120)
                print(f"  busy: {reader.requests} whole-document readings completed, {reader.cut} cut by questions, {reader.errors} failed")
    print("\nAsk → evidence block painted in the window (ms), engine idle vs busy reading")
    print(f"{'':6}{'n':>4}{'idle p50':>10}{'idle p95':>10}{'busy p50':>10}{'busy p95':>10}{'busy/idle p50':>15}")
    for lang in ("en", "zh", "all"):
        idle = [v for (la, st), vs in results.items() if st == "idle" and lang in (la, "all") for v in vs]
        busy = [v for (la, st), vs in results.items() if st == "busy" and lang in (la, "all") for v in vs]
        print(f"{lang:6}{len(busy):>4}{percentile(idle, .5):>10.0f}{percentile(idle, .95):>10.0f}"
              f"{percentile(busy, .5):>10.0f}{percentile(busy, .95):>10.0f}"
              f"{common.ratio(percentile(busy, .5), percentile(idle, .5)):>15.2f}")
    win.close()
    library.close()


if __name__ == "__main__":
    main()
