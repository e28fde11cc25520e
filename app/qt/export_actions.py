"""Copy and export of the last answer, or of the whole conversation on screen, with citations
(File menu): Markdown, PDF memo.
The formatting is app/core/answer/export_formats.py; here: the menu, the file dialog (named after the
document asked, in the last folder an answer was exported to), the clipboard."""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import QFileDialog

from app.core.answer import export_formats as formats
from app.qt import interface_language
from app.qt.error_dialog import show_error

SAVED_MS = 10_000       # how long the status bar says where an export went


class AnswerExport:
    """Keeps the last answer shown (question, answer dict) and offers it to keep."""

    def __init__(self, window) -> None:
        self.window = window
        self.last: tuple[str, dict] | None = None
        self.documents: list[str] = []          # the file names the last answer is about
        window.engine.sig_answer.connect(self._on_answer)
        menu = _file_menu(window)
        first = menu.actions()[-2] if len(menu.actions()) >= 2 else None   # before "Quit"
        self.actions = []
        for label, slot, name in (("&Copy answer with citations", self.copy, "copy_answer"),
                                  ("Export answer as &Markdown…", self.save_markdown, "export_markdown"),
                                  ("Export answer as PDF &memo…", self.save_pdf, "export_pdf"),
                                  ("Export conversation as Mar&kdown…", self.save_conversation_markdown,
                                   "export_conversation_markdown"),
                                  ("Export conversation as PDF mem&o…", self.save_conversation_pdf,
                                   "export_conversation_pdf")):
            action = QAction(label, window)
            action.triggered.connect(slot)
            action.setEnabled(False)
            menu.insertAction(first, action) if first else menu.addAction(action)
            window.actions_by_name[name] = action
            self.actions.append(action)
        self.actions, self.whole = self.actions[:3], self.actions[3:]   # the last answer; the conversation
        menu.aboutToShow.connect(self.sync_actions)

    def sync_actions(self) -> None:
        """The conversation's exports whenever one is on screen (restored ones too)."""
        for action in self.whole:
            action.setEnabled(bool(self.conversation()))

    def _on_answer(self, question: str, answer) -> None:
        self.documents = [Path(i.last_path or i.path).name for i in self.window.doc_infos()]
        self.set_answer(question, answer.to_dict() if hasattr(answer, "to_dict") else dict(answer))

    def set_answer(self, question: str, answer: dict) -> None:
        self.last = (question, answer)
        for action in self.actions:
            action.setEnabled(True)

    def markdown(self) -> str:
        return formats.to_markdown(*self.last) if self.last else ""

    def copy(self) -> None:
        if self.last:
            QGuiApplication.clipboard().setText(self.markdown())

    def save_markdown(self, path: str | None = None) -> Path | None:
        if not self.last:
            return None
        return self._save(path, "Markdown (*.md)", ".md", "answer", "The answer was not saved",
                          lambda target: _write_text(target, self.markdown()))

    def save_pdf(self, path: str | None = None) -> Path | None:
        if not self.last:
            return None
        return self._save(path, "PDF (*.pdf)", ".pdf", "answer", "The memo was not saved",
                          lambda target: formats.to_pdf(*self.last, target))

    # -- the whole conversation ------------------------------------------------------
    def conversation(self) -> list[tuple[str, dict, float | None]]:
        """Every answered question on screen, in order: (question, answer dict, when)."""
        return [(e.question, e.data, e.when) for e in self.window.chat.entries
                if e.state == "done" and e.data is not None]

    def conversation_title(self) -> str:
        names = [Path(i.last_path or i.path).name for i in self.window.doc_infos()] or self.documents
        return "Conversation about " + (" and ".join(names[:3]) or "the documents")

    def conversation_markdown(self) -> str:
        return formats.conversation_markdown(self.conversation_title(), self.conversation())

    def save_conversation_markdown(self, path: str | None = None) -> Path | None:
        if not self.conversation():
            return None
        return self._save(path, "Markdown (*.md)", ".md", "conversation", "The conversation was not saved",
                          lambda target: _write_text(target, self.conversation_markdown()))

    def save_conversation_pdf(self, path: str | None = None) -> Path | None:
        if not self.conversation():
            return None
        return self._save(path, "PDF (*.pdf)", ".pdf", "conversation", "The memo was not saved",
                          lambda target: formats.conversation_pdf(self.conversation_title(), self.conversation(),
                                                                  target))

    def _save(self, path: str | None, kind: str, suffix: str, what: str, failed: str,
              write: Callable[[Path], Path]) -> Path | None:
        """Every export: the given path or the save dialog's, written by `write`, the folder
        remembered for next time; a failure is one line to the user, never a traceback."""
        target = path or self._ask_path(kind, suffix, what)
        if not target:
            return None
        try:
            saved = write(Path(target))
        except Exception as exc:  # noqa: BLE001 - one line to the user, never a traceback
            show_error(self.window, exc, failed)
            return None
        self._remember_folder(target)
        # said where it went: a save dialog closing says nothing by itself
        self.window.statusBar().showMessage(interface_language.tr(f"Saved {saved.name} in {saved.parent}"),
                                            SAVED_MS)
        return saved

    def default_path(self, suffix: str, what: str = "answer") -> Path:
        """Where the save dialog starts: the last folder exported to (else the document's own
        folder, else home), named after the documents asked ("common-paper-mnda answer.md")."""
        folder = self.window.settings.value("export/folder", "")
        if not (folder and Path(folder).is_dir()):
            infos = self.window.doc_infos()
            folder = str(Path(infos[0].last_path or infos[0].path).parent) if infos else str(Path.home())
            folder = folder if Path(folder).is_dir() else str(Path.home())
        names = self.documents or [Path(i.last_path or i.path).name for i in self.window.doc_infos()]
        stems = " + ".join(Path(name).stem for name in names[:3]) or "Pagewise"
        name = re.sub(r'[\\/:*?"<>|]+', " ", f"{stems} {what}").strip()
        return Path(folder) / f"{name}{suffix}"

    def _remember_folder(self, target: str) -> None:
        self.window.settings.setValue("export/folder", str(Path(target).resolve().parent))

    def _ask_path(self, kind: str, suffix: str, what: str = "answer") -> str:
        path, _ = QFileDialog.getSaveFileName(self.window, f"Export {what}", str(self.default_path(suffix, what)), kind)
        if path and not path.endswith(suffix):
            path += suffix
        return path


def _write_text(target: Path, text: str) -> Path:
    target.write_text(text, encoding="utf-8")
    return target


def _file_menu(window):
    for action in window.menuBar().actions():
        if action.text().replace("&", "") == "File":
            return action.menu()
    return window.menuBar().addMenu("&File")


def install(window) -> AnswerExport:
    return AnswerExport(window)
