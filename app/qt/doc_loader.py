"""Open a PDF into a pane: display it at once, index it in the background, ask for a
password when needed, and turn failures into one readable message.

Two things happen side by side for each opening: the pane's render thread opens the
file for display, and a job runs `Library.add` (validation, text, chunks, index) with
per-page progress. Whichever learns first that a password is needed asks for it.
Once the document is indexed (and can be asked), a second job computes its search
vectors in the background, with its own progress bar; questions asked meanwhile use
BM25 plus the vectors made so far.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.core.documents.read_errors import (
    DocumentError,
    NoTextLayer,
    PasswordRequired,
    WrongPassword,
)
from app.core import settings
from app.qt import workers
from app.qt.dialogs import PasswordDialog
from app.qt.pdf_render import PasswordNeeded


log = logging.getLogger("pagewise.gui")


@dataclass
class _Opening:
    path: str
    password: str | None
    shown: bool = False           # the pane displays the document
    render_error: Exception | None = None
    ingest_done: bool = False
    info: object = None           # DocumentInfo once indexed
    ingest_error: Exception | None = None


def original_path(library, path: str) -> str:
    """The file to open for `path`: the scanned original when `path` is our OCR copy of a
    library document (a session, recent list or library row written before issue 33.2 held
    the copy), so the document keeps its name, notice, row and conversation."""
    from pathlib import Path

    from app.core.documents import ocr
    sha = ocr.copied_from(path)
    if sha is None:
        return path
    for info in library.documents():
        if info.sha256 == sha:
            for candidate in (info.last_path, info.path):
                if candidate and Path(candidate).is_file() and ocr.copied_from(candidate) is None:
                    return candidate
    return path     # the original is gone: the copy is shown, indexed as the original's row


def _check(ctx, path: str, password: str | None) -> None:
    """Raise the one-line DocumentError of a file that is no readable PDF; a password still
    to be asked for is not a failure here (the opening asks for it)."""
    from app.core.documents.pdf import open_pdf, read_file

    try:
        doc, _ = open_pdf(read_file(path), password)
    except (PasswordRequired, WrongPassword):
        return
    doc.close()


def _index(ctx, library, path: str, password: str | None):
    # searchable first; its tables are found by the background pass before its vectors (_embed)
    return library.add(path, password=password, progress=ctx.progress, tables_later=True)


def _embed(ctx, library, doc_id: int):
    from app.core.search.dense import Cancelled
    try:
        return library.embed([doc_id], progress=ctx.progress, cancelled=ctx.cancel_event.is_set)
    except Cancelled:
        return 0


def _key(path: str) -> str:
    return str(Path(path).resolve())


def remembered_password(path: str) -> str | None:
    """The password kept in the OS keyring for this file, when the user has remembering on."""
    try:
        return settings.remembered_pdf_password(_key(path))
    except Exception as exc:  # noqa: BLE001 - a keyring that fails costs only the prompt
        log.info("remembered PDF password not read: %s", exc)
        return None


def remember_password(path: str, password: str) -> None:
    """Keep a password that opened the file in the OS keyring (only when the setting says so)."""
    try:
        settings.remember_pdf_password(_key(path), password)
    except Exception as exc:  # noqa: BLE001 - not kept: the next opening asks again
        log.info("PDF password not remembered: %s", exc)


class DocumentLoader(QObject):
    sig_indexed = Signal(object, object)
    """A pane's document is in the library: pane, DocumentInfo."""
    sig_unsearchable = Signal(object, str)
    """The pane shows the document but it cannot be asked (no text layer): pane, message."""
    sig_failed = Signal(object, str, object)
    """Opening failed (already shown to the user): pane, path, exception."""
    sig_refused = Signal(str, object)
    """The file cannot be opened at all (shown to the user; the pane kept its document): path, exception."""
    sig_password_asked = Signal(object)
    """A password dialog opened (tests drive it): PasswordDialog."""
    sig_vectors_done = Signal(object, int)
    """A document's search vectors are computed: pane, how many passages were embedded."""

    def __init__(self, library, window) -> None:
        super().__init__(window)
        self.library, self.window = library, window
        self.passwords: dict[str, str] = {}     # this session only; never written to disk here
        self._openings: dict[object, _Opening] = {}
        self.dialog: PasswordDialog | None = None
        self._embedding: dict[object, object] = {}   # pane → running vectors Job

    def open(self, pane, path: str, password: str | None = None, on_accepted=None) -> None:
        """Check the file first: one that cannot be opened leaves the pane's document and its
        conversation as they were; `on_accepted()` runs once it is known to open."""
        if password is None:
            password = self.passwords.get(path) or remembered_password(path)

        def accepted(_) -> None:
            if on_accepted is not None:
                on_accepted()
            self._open_checked(pane, path, password)
        workers.run(_check, path, password, on_done=accepted, on_error=lambda exc: self._refuse(path, exc))

    def _refuse(self, path: str, exc: Exception) -> None:
        from app.qt.error_dialog import show_error

        show_error(self.window, exc, "Cannot open document")
        self.sig_refused.emit(path, exc)

    def _open_checked(self, pane, path: str, password: str | None) -> None:
        self._stop_vectors(pane)      # the pane's previous document no longer matters
        state = _Opening(path, password)
        self._openings[pane] = state
        if not getattr(pane, "_loader_connected", False):
            pane.sig_opened.connect(lambda p, n, pane=pane: self._on_shown(pane, p))
            pane.sig_failed.connect(lambda p, exc, pane=pane: self._on_render_failed(pane, p, exc))
            pane._loader_connected = True
        pane.open(path, password)
        pane.set_progress(0, 1)
        workers.run(_index, self.library, path, password,
                    on_done=lambda info: self._on_indexed(pane, state, info),
                    on_error=lambda exc: self._on_index_failed(pane, state, exc),
                    on_progress=lambda d, t: self._on_progress(pane, state, d, t))

    def _current(self, pane, state: _Opening | None = None, path: str | None = None) -> _Opening | None:
        now = self._openings.get(pane)
        if now is None or (state is not None and now is not state) or (path and now.path != path):
            return None    # a newer opening replaced this one
        return now

    # -- display --------------------------------------------------------------
    def _on_shown(self, pane, path: str) -> None:
        state = self._current(pane, path=path)
        if state:
            state.shown = True
            self._settle(pane, state)

    def _on_render_failed(self, pane, path: str, exc: Exception) -> None:
        state = self._current(pane, path=path)
        if state:
            state.render_error = exc
            self._settle(pane, state)

    # -- indexing -------------------------------------------------------------
    def _on_progress(self, pane, state: _Opening, done: int, total: int) -> None:
        if self._current(pane, state):
            pane.set_progress(done, total)

    def _on_indexed(self, pane, state: _Opening, info) -> None:
        if self._current(pane, state):
            state.ingest_done, state.info = True, info
            self._settle(pane, state)

    def _on_index_failed(self, pane, state: _Opening, exc: Exception) -> None:
        if self._current(pane, state):
            state.ingest_done, state.ingest_error = True, exc
            self._settle(pane, state)

    # -- outcome --------------------------------------------------------------
    def _settle(self, pane, state: _Opening) -> None:
        """Decide once enough is known: ask a password, report, or announce success."""
        if self._needs_password(state):
            return self._ask_password(pane, state)
        if not state.ingest_done or not (state.shown or state.render_error):
            return
        pane.set_progress(0, 0)
        self._openings.pop(pane, None)
        if state.password:
            self.passwords[state.path] = state.password
            if state.ingest_error is None and state.render_error is None:
                remember_password(state.path, state.password)
        error = state.ingest_error
        if isinstance(error, NoTextLayer) and state.shown:
            self.sig_unsearchable.emit(pane, str(error))
        elif error is not None or state.render_error is not None:
            self._fail(pane, state, error or state.render_error)
        else:
            self.sig_indexed.emit(pane, state.info)
            self._start_vectors(pane, state.info)

    # -- search vectors -------------------------------------------------------
    def _start_vectors(self, pane, info) -> None:
        self._stop_vectors(pane)
        if not self.library.unembedded([info.id]):
            return
        job = workers.run(_embed, self.library, info.id,
                          on_done=lambda n: self._vectors_done(pane, job, n),
                          on_error=lambda exc: self._vectors_done(pane, job, 0),
                          on_progress=lambda d, t: self._vectors_progress(pane, job, d, t))
        self._embedding[pane] = job

    def _vectors_progress(self, pane, job, done: int, total: int) -> None:
        if self._embedding.get(pane) is job and pane not in self._openings:
            pane.set_progress(done, total, "Search vectors", "passage")

    def _vectors_done(self, pane, job, count: int) -> None:
        if self._embedding.get(pane) is job:
            del self._embedding[pane]
            if pane not in self._openings:
                pane.set_progress(0, 0)
            self.sig_vectors_done.emit(pane, count)

    def _stop_vectors(self, pane) -> None:
        job = self._embedding.pop(pane, None)
        if job is not None:
            job.cancel()

    def shutdown(self) -> None:
        """Stop background vector jobs (their finished batches are already stored)."""
        for pane in list(self._embedding):
            self._stop_vectors(pane)

    @staticmethod
    def _needs_password(state: _Opening) -> bool:
        return any(isinstance(e, (PasswordRequired, WrongPassword, PasswordNeeded))
                   for e in (state.ingest_error, state.render_error))

    def _ask_password(self, pane, state: _Opening) -> None:
        self._openings.pop(pane, None)
        pane.set_progress(0, 0)
        pane.close_document()
        self.dialog = PasswordDialog(state.path, wrong=bool(state.password), parent=self.window)
        self.dialog.sig_password.connect(lambda path, pw: self.open(pane, path, pw))
        self.dialog.rejected.connect(lambda: self.sig_failed.emit(
            pane, state.path, PasswordRequired(f"{state.path}: no password given")))
        self.dialog.open()
        self.sig_password_asked.emit(self.dialog)

    def _fail(self, pane, state: _Opening, exc: Exception) -> None:
        from app.qt.error_dialog import show_error

        pane.close_document()
        if not isinstance(exc, DocumentError) and state.render_error is exc:
            exc = DocumentError(str(exc))   # a display failure is a document problem too
        show_error(self.window, exc, "Cannot open document")
        self.sig_failed.emit(pane, state.path, exc)
