"""Screenshot for issue 33: a Chinese question in the 中文 interface, answered in the real window
with the real engine (the embedded model), photographed once the model's part is under the
evidence. Run under a real X server:

    Xvfb :82 -screen 0 1600x1000x24 &
    DISPLAY=:82 QT_QPA_PLATFORM=xcb .venv/bin/python scripts/chinese_answer_screenshot.py OUT.png [DOCUMENT QUESTION]

A fresh library (its own PAGEWISE_HOME), interface_language set to zh before the window opens.
Prints the headline and every English word left on screen (the walk of tests/qt/test_interface_language.py).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from evidence_screenshots import settle, wait  # noqa: E402  (scripts/: the same window driving)
CORPUS = Path(os.environ.get("PAGEWISE_CORPUS", ROOT.parent / "shared" / "corpus"))
DOCUMENT = CORPUS / "contracts-zh" / "electronic-signature-law.pdf"
QUESTION = "电子签名法什么时候开始施行？"


def main(out: str, document: Path = DOCUMENT, question: str = QUESTION) -> None:
    os.environ.setdefault("PAGEWISE_HOME", tempfile.mkdtemp(prefix="pagewise-shot-zh-"))
    from PySide6.QtWidgets import QApplication

    from app.core import settings
    from app.core.library import Library
    settings.set_value("interface_language", "zh")
    from app.qt.main_window import MainWindow
    from tests.support.interface_walk import report
    QApplication.instance() or QApplication([])

    library = Library()
    win = MainWindow(library=library, start_engine=False)
    win.setGeometry(0, 0, 1600, 1000)
    win.show()
    ready, docs, answered = [], [], []
    win.engine.sig_ready.connect(ready.append)
    win.sig_documents_ready.connect(lambda: docs.append(True))
    win.sig_answer_shown.connect(lambda: answered.append(True))
    win.engine.start()
    wait(lambda: bool(ready), 600)
    win.open_path(str(document))
    wait(lambda: bool(docs) and win.chat.ask_button.isEnabled(), 600)
    win.ask(question)
    wait(lambda: bool(answered), 900)
    settle(2.0)                                  # the page rendered, the highlight drawn
    subprocess.run(["import", "-window", "root", out], check=True, timeout=60)
    entry = win.chat.entries[-1]
    print(f"{out}: {question} → headline {entry.headline}; the model wrote: {entry.text!r}")
    print("English left on screen:", report(win) or "none")
    win.close()
    library.close()


if __name__ == "__main__":
    main(sys.argv[1], *([Path(sys.argv[2]), sys.argv[3]] if len(sys.argv) > 3 else []))
