"""Screenshots of evidence-first answers in the real window on a real X server (issue 29):
docs/screenshots/evidence-en.png, evidence-zh.png, evidence-not-addressed.png.

    Xvfb :77 -screen 0 1600x1000x24 &
    DISPLAY=:77 QT_QPA_PLATFORM=xcb .venv/bin/python scripts/evidence_screenshots.py [NAME.png PDF QUESTION ...]

(with arguments: those shots, in threes, instead of the three above)

A fresh library (its own PAGEWISE_HOME), the real engine (the embedded model); each question
asked through the window, the screen photographed (ImageMagick `import -window root`) once the
model's answer is under the evidence.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHOTS = ROOT / "docs" / "screenshots"
CORPUS = Path(os.environ.get("PAGEWISE_CORPUS", ROOT.parent / "shared" / "corpus"))
SHOTS_TO_TAKE = [
    ("evidence-en.png", ROOT / "resources" / "samples" / "common-paper-mnda.pdf",
     "Which state's law governs this agreement?"),
    ("evidence-zh.png", CORPUS / "contracts-zh" / "labor-contract-law.pdf", "试用期最长不得超过几个月？"),
    ("evidence-not-addressed.png", ROOT / "resources" / "samples" / "common-paper-mnda.pdf",
     "What is the purchase price of the shares?"),
]


def wait(cond, timeout_s: float) -> None:
    """Process the window's events until `cond()` holds (TimeoutError past `timeout_s`)."""
    from PySide6.QtWidgets import QApplication
    deadline = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError("timed out")
        QApplication.processEvents()
        time.sleep(0.01)


def settle(seconds: float) -> None:
    """Process the window's events for `seconds` (a page rendered, a highlight drawn)."""
    end = time.monotonic() + seconds
    wait(lambda: time.monotonic() >= end, seconds + 1)


def main(argv: list[str]) -> None:
    shots = SHOTS_TO_TAKE
    if argv:
        if len(argv) % 3:
            raise SystemExit("give shots in threes: NAME.png PDF QUESTION")
        shots = [(argv[i], Path(argv[i + 1]).resolve(), argv[i + 2]) for i in range(0, len(argv), 3)]
    os.environ["PAGEWISE_HOME"] = tempfile.mkdtemp(prefix="pagewise-shots-")
    from PySide6.QtWidgets import QApplication

    from app.core.library import Library
    from app.qt.main_window import MainWindow
    QApplication.instance() or QApplication([])

    library = Library()
    win = MainWindow(library=library, start_engine=False)
    win.setGeometry(0, 0, 1600, 1000)
    win.show()
    ready, shown, answered = [], [], []
    win.engine.sig_ready.connect(ready.append)
    win.sig_evidence_shown.connect(lambda: shown.append(True))
    win.sig_answer_shown.connect(lambda: answered.append(True))
    win.engine.start()
    wait(lambda: bool(ready), 600)
    for name, path, question in shots:
        if win.pane_a.path != str(path):
            docs = []
            win.sig_documents_ready.connect(lambda: docs.append(True))
            win.open_path(str(path))
            wait(lambda: bool(docs) and win.chat.ask_button.isEnabled(), 600)
        shown.clear()
        answered.clear()
        win.ask(question)
        wait(lambda: bool(shown), 60)
        wait(lambda: bool(answered), 900)
        settle(2.0)                      # the page rendered, the highlight drawn
        out = SHOTS / name
        subprocess.run(["import", "-window", "root", str(out)], check=True, timeout=60)
        print(f"{out}: {question} → headline {win.chat.entries[-1].headline}, "
              f"evidence {'addressed' if win.chat.entries[-1].evidence.addressed else 'not addressed'}")
    win.close()
    library.close()


if __name__ == "__main__":
    main(sys.argv[1:])
