"""Screenshots of answers from a real instruction model in the real window, on a real X server:
each shot is a document and one or more questions asked in one conversation, photographed once
the last answer is under its evidence.

    Xvfb :77 -screen 0 1280x800x24 &
    DISPLAY=:77 QT_QPA_PLATFORM=xcb .venv/bin/python scripts/answer_screenshots.py --model qwen-coder-1.5b \\
        --shot answer-followup.png ../shared/corpus/contracts-en/bonterms-psa-v1.2.pdf "Q1" "Q2"

The model must be imported in the home used (PAGEWISE_HOME, or the default one):
`scripts/real_models.py --import`.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.evidence_screenshots import SHOTS, settle, wait  # noqa: E402


def parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="catalogue or imported model id (default: the default)")
    ap.add_argument("--shot", nargs="+", action="append", required=True, metavar="NAME DOC QUESTION",
                    help="PNG name under docs/screenshots, the PDF, then its questions")
    ap.add_argument("--size", default="1280x800")
    return ap.parse_args()


def main() -> None:
    args = parse()
    from PySide6.QtWidgets import QApplication

    from app.core.library import Library
    from app.qt.engine_controller import EngineController
    from app.qt.main_window import MainWindow
    from app.service import Assistant
    QApplication.instance() or QApplication([])
    library = Library()
    width, height = (int(v) for v in args.size.split("x"))
    engine = EngineController(service=Assistant(library, model_id=args.model))
    win = MainWindow(library=library, start_engine=False, engine=engine)
    win.setGeometry(0, 0, width, height)
    win.show()
    ready, shown, answered = [], [], []
    win.engine.sig_ready.connect(ready.append)
    win.sig_evidence_shown.connect(lambda: shown.append(True))
    win.sig_answer_shown.connect(lambda: answered.append(True))
    win.engine.start()
    wait(lambda: bool(ready), 900)
    for name, doc, *questions in args.shot:
        docs = []
        win.sig_documents_ready.connect(lambda: docs.append(True))
        win.open_path(str(Path(doc).resolve()))
        wait(lambda: bool(docs) and win.chat.ask_button.isEnabled(), 900)
        for question in questions:
            shown.clear()
            answered.clear()
            win.ask(question)
            wait(lambda: bool(answered), 1200)
            entry = win.chat.entries[-1]
            print(f"{name}: {question} → {entry.shown_as or entry.headline}: {entry.text[:120]!r}", flush=True)
        settle(2.0)
        out = SHOTS / name
        subprocess.run(["import", "-window", "root", str(out)], check=True, timeout=60)
        print(f"{out} (width {win.width()} px)", flush=True)
    win.close()
    library.close()


if __name__ == "__main__":
    main()
