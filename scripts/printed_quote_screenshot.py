"""Screenshot of issue 33 defect 3's fix: the NDA p. 3 citation quoted as printed (“MNDA”) with
the highlight over the whole quote. Run under a real X server:

    DISPLAY=:81 QT_QPA_PLATFORM=xcb PAGEWISE_HOME=/tmp/shot .venv/bin/python scripts/printed_quote_screenshot.py OUT.png
"""
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = Path(os.environ.get("PAGEWISE_CORPUS", ROOT.parent / "shared" / "corpus"))
QUOTE = ('This Mutual Non-Disclosure Agreement (which incorporates these Standard Terms and the Cover Page '
         '(defined below)) ("MNDA") allows each party')     # as a model writes it: straight quotes


def main(out: str) -> None:
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from app.core.answer.citations import verify
    from app.core.library import Library
    from app.qt.main_window import MainWindow
    app = QApplication(sys.argv)
    lib = Library()
    win = MainWindow(library=lib, start_engine=False)
    win.resize(1400, 880)
    win.show()
    loop = QEventLoop()
    win.sig_documents_ready.connect(loop.quit)
    QTimer.singleShot(0, lambda: win.open_path(str(CORPUS / "contracts-en" / "common-paper-mnda.pdf")))
    QTimer.singleShot(60_000, loop.quit)
    loop.exec()
    info = win.docs[win.pane_a]
    pages = {n: lib.page_text(info.id, n) for n in range(1, info.page_count + 1)}
    win.citations.set_citations([verify(info.id, "doc 1", 3, QUOTE, pages)], {info.id: "common-paper-mnda.pdf"})
    QTimer.singleShot(300, lambda: win.citations.activate_citation(0))
    end = time.time() + 6
    while time.time() < end:
        app.processEvents()
        time.sleep(0.05)
    subprocess.run(["import", "-window", "root", out], check=True)
    win.close()
    lib.close()


if __name__ == "__main__":
    main(sys.argv[1])
