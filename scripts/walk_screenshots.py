"""A walk through the real window on a real X server, as its users would take it: a lawyer (a
question the contract does not answer, one it does, Compare clauses, a Contract review), a
researcher (a paper), an English question on a Chinese law, the 中文 interface (a Chinese law), a hobbyist (the sample NDA, an
off-topic question) and bad files. Each step is photographed to docs/screenshots/walk-*.png.

    Xvfb :78 -screen 0 1280x800x24 &
    DISPLAY=:78 QT_QPA_PLATFORM=xcb .venv/bin/python scripts/walk_screenshots.py [--model ID]

Checked as it goes, and printed: no entry leads with a green ANSWER unless one of its citations
supports it; the window's width never changes (a long answer, a background reading, long status
lines) on the 1280×800 screen.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.evidence_screenshots import CORPUS, SHOTS, settle, wait  # noqa: E402

ANSWER_S = 1500


class Walk:
    def __init__(self, win) -> None:
        self.win = win
        self.widths: set[int] = set()
        self.problems: list[str] = []
        self.answered: list[bool] = []
        win.sig_answer_shown.connect(lambda: self.answered.append(True))

    def pump(self, cond, timeout_s: float) -> None:
        """Events processed until `cond()`, the window's width watched all along; widgets let go
        (deleteLater) are deleted as the app's own event loop would (processEvents alone does not)."""
        from PySide6.QtCore import QCoreApplication, QEvent

        def watched():
            QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
            self.widths.add(self.win.width())
            return cond()
        wait(watched, timeout_s)

    def open(self, path: Path, compare_with: Path | None = None) -> None:
        docs = []
        slot = lambda: docs.append(True)  # noqa: E731 - disconnected below
        self.win.sig_documents_ready.connect(slot)
        if compare_with is not None:
            self.win.open_files([str(path), str(compare_with)], compare=True)
        else:
            self.win.set_compare(False)
            self.win.open_path(str(path))
        self.pump(lambda: bool(docs), 600)
        self.win.sig_documents_ready.disconnect(slot)
        settle(1.0)

    def ask(self, question: str) -> None:
        self.pump(lambda: self.win.chat.ask_button.isEnabled(), 900)
        self.answered.clear()
        self.win.ask(question)
        self.pump(lambda: bool(self.answered), ANSWER_S)
        self.check()

    def review(self) -> None:
        self.pump(lambda: self.win.chat.ask_button.isEnabled(), 900)
        self.answered.clear()
        self.win.review("review_contract", "Contract review")
        self.pump(lambda: bool(self.answered), ANSWER_S * 2)
        self.check()

    def compare(self, topics: str) -> None:
        self.pump(lambda: self.win.chat.ask_button.isEnabled(), 900)
        self.answered.clear()
        self.win.compare.start(topics)
        self.pump(lambda: bool(self.answered), ANSWER_S)
        self.check()

    def check(self) -> None:
        entry = self.win.chat.entries[-1]
        supports = [getattr(c, "support", "") for c in entry.citations]
        print(f"  {entry.question[:60]!r}: {entry.state}, {entry.shown_as or entry.headline}, "
              f"citations {supports}, {entry.meta.splitlines()[0] if entry.meta else ''}", flush=True)
        if entry.state == "done" and entry.headline == "answer" and entry.text.strip() \
                and "supports" not in supports:
            self.problems.append(f"green answer without a supporting citation: {entry.question}")

    def shot(self, name: str, seconds: float = 2.0, model_part: bool = False) -> None:
        """The screen as it is; `model_part`: a second shot ("…-model.png") with the transcript
        at its end, where the model's part sits under the cards."""
        self.pump(lambda: True, 1)
        settle(seconds)
        self._take(name)
        if model_part:
            bar = self.win.chat.transcript.verticalScrollBar()
            bar.setValue(bar.maximum())
            settle(0.5)
            self._take(name.replace(".png", "-model.png"))

    def _take(self, name: str) -> None:
        self.pump(lambda: True, 1)
        self.widths.add(self.win.width())
        out = SHOTS / name
        subprocess.run(["import", "-window", "root", str(out)], check=True, timeout=60)
        print(f"{out} (window {self.win.width()}×{self.win.height()})", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None)
    ap.add_argument("--only", nargs="*", default=None, help="steps: lawyer researcher across chinese hobbyist bad")
    args = ap.parse_args()
    os.environ.setdefault("PAGEWISE_HOME", tempfile.mkdtemp(prefix="pagewise-walk-"))
    from PySide6.QtWidgets import QApplication, QMessageBox

    from app.core.library import Library
    from app.qt import interface_language
    from app.qt.engine_controller import EngineController
    from app.qt.main_window import MainWindow
    from app.service import Assistant
    QApplication.instance() or QApplication([])
    library = Library()
    engine = EngineController(service=Assistant(library, model_id=args.model))
    win = MainWindow(library=library, start_engine=False, engine=engine)
    win.setGeometry(0, 0, 1280, 800)
    win.show()
    walk = Walk(win)
    ready = []
    win.engine.sig_ready.connect(ready.append)
    win.engine.start()
    walk.pump(lambda: bool(ready), 900)
    steps = set(args.only or ["lawyer", "researcher", "across", "chinese", "hobbyist", "bad"])
    en = CORPUS / "contracts-en"

    if "lawyer" in steps:
        walk.open(en / "common-paper-csa.pdf")
        walk.ask("Can the provider be required to carry cyber insurance?")
        walk.shot("walk-lawyer-not-addressed.png", model_part=True)
        walk.ask("How long can a recipient keep confidential information after termination?")
        walk.shot("walk-lawyer-retention.png", model_part=True)
        walk.open(en / "common-paper-mnda.pdf")
        walk.review()
        walk.shot("walk-lawyer-review.png", model_part=True)
        walk.open(en / "common-paper-csa.pdf", en / "common-paper-software-license.pdf")
        walk.compare("termination, governing law")
        walk.shot("walk-lawyer-compare.png", model_part=True)
    if "researcher" in steps:
        walk.open(CORPUS / "papers" / "tracemonkey-pldi-09.pdf")
        walk.ask("What speedup does tracing give over the baseline interpreter?")
        walk.shot("walk-researcher-answer.png", model_part=True)
    if "across" in steps:      # the cards read a Chinese law for an English question; a list's lead-in with its item
        walk.open(CORPUS / "contracts-zh" / "electronic-signature-law.pdf")
        walk.ask("Which kinds of documents cannot be signed electronically, for example about inheritance?")
        walk.shot("walk-across-languages.png", model_part=True)
    if "hobbyist" in steps:
        walk.open(ROOT / "resources" / "samples" / "common-paper-mnda.pdf")
        walk.ask("Can I tell my lawyer about the confidential information?")
        walk.shot("walk-hobbyist-answer.png", model_part=True)
        walk.ask("What is a good chocolate-cake recipe?")
        walk.shot("walk-hobbyist-off-topic.png", model_part=True)
    if "bad" in steps:
        for name in ("truncated.pdf", "not-a-pdf-docx.pdf"):
            shown = len(win.chat.entries)
            win.open_path(str(CORPUS / "bad" / name))
            walk.pump(lambda: any(isinstance(w, QMessageBox) and w.isVisible() for w in QApplication.topLevelWidgets()),
                      120)
            walk.shot(f"walk-bad-{Path(name).stem}.png", 1.0)
            for w in QApplication.topLevelWidgets():
                if isinstance(w, QMessageBox) and w.isVisible():
                    w.close()
            if len(win.chat.entries) != shown or win.pane_a.path is None:
                walk.problems.append(f"{name}: what was open was not kept")
    if "chinese" in steps:
        from app.core import settings
        settings.set_value("interface_language", "zh")
        interface_language.apply("zh")
        walk.open(CORPUS / "contracts-zh" / "labor-contract-law.pdf")
        walk.ask("试用期最长不得超过几个月？")
        walk.shot("walk-chinese-answer.png", model_part=True)
    print(f"window widths seen: {sorted(walk.widths)}", flush=True)
    print("problems: " + ("; ".join(walk.problems) or "none"), flush=True)
    win.close()
    library.close()


if __name__ == "__main__":
    main()
