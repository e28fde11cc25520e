"""The model manager: the catalogue with what each model needs, what it is good for, how soon its
first answer comes here (measured or estimated) and whether this machine runs it; the model to
get, with one click to download it (also from the start page's test-model banner); downloads with a progress bar and Cancel (resumed on the next Download), import of a GGUF file
or AWQ folder, remove, and "Use this model" (the engine restarts under a new plan)."""
from __future__ import annotations

import threading

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from app.failure_messages import describe
from app.qt import workers
from app.qt.screen_fit import resize_within_screen

COLUMNS = ("Model", "Good for", "First answer here", "Download", "Needs", "On this machine", "Installed")


def measured_speeds() -> dict[str, float]:
    """Model id → prefill tokens/s the engine measured on this machine (the app's memory)."""
    from app.core.answer.reading_memory import ReadingMemory
    from app.core.plan.advice import measured_speeds as by_model
    try:
        return by_model(ReadingMemory().steady_tps())
    except Exception:  # noqa: BLE001 - no memory yet: every figure is an estimate
        return {}


def advice_rows(hw=None) -> tuple[list[dict], str | None]:
    """The catalogue's chat models with the planner's verdict and the advice, and the id to get."""
    from app.core.plan.catalogue_fit import table
    rows, best = table(hw, measured=measured_speeds())
    return [r for r in rows if r["role"] == "chat"], best


def _download(ctx, spec_id: str, cancel: threading.Event):
    from app.core import settings
    from app.core.models import catalogue, download
    spec = catalogue.load_catalogue().get(spec_id)
    try:
        token = settings.get_secret("hub_token")
    except settings.NoKeyring:
        token = None
    return download.pull(spec, token=token, on_progress=ctx.emit, cancel=cancel)


def _import(ctx, path: str):
    from app.core.models import importer
    return importer.import_model(path)


def use_model(controller, model_id: str) -> None:
    """Restart the engine with `model_id` preferred: the planner makes a new plan and says why.
    The controller's conversations stay (they are kept per document set)."""
    controller.use_model(model_id)


class ModelManager(QDialog):
    sig_changed = Signal()
    """A model was downloaded, imported or removed."""

    def __init__(self, controller=None, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Models")
        resize_within_screen(self, 1280, 480)
        self.controller = controller
        self._job = None
        self._cancel = threading.Event()
        self.rows: list[dict] = []
        self.best: str | None = None

        self.summary = QLabel(wordWrap=True)
        self.btn_get_recommended = QPushButton("Download", objectName="downloadRecommended",
                                               clicked=self.download_recommended)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for col in range(2, len(COLUMNS)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.table.itemSelectionChanged.connect(self._update_buttons)

        self.progress = QProgressBar(visible=False)
        self.status = QLabel(wordWrap=True)
        self.btn_download = QPushButton("Download", clicked=self.download)
        self.btn_cancel = QPushButton("Cancel download", clicked=self.cancel, visible=False)
        self.btn_import_file = QPushButton("Import GGUF file…", clicked=self.import_file)
        self.btn_import_folder = QPushButton("Import AWQ folder…", clicked=self.import_folder)
        self.btn_remove = QPushButton("Remove", clicked=self.remove)
        self.btn_use = QPushButton("Use this model", clicked=self.use)
        self.btn_close = QPushButton("Close", clicked=self.close)

        buttons = QHBoxLayout()
        for b in (self.btn_download, self.btn_cancel, self.btn_import_file, self.btn_import_folder,
                  self.btn_remove):
            buttons.addWidget(b)
        buttons.addStretch(1)
        buttons.addWidget(self.btn_use)
        buttons.addWidget(self.btn_close)
        layout = QVBoxLayout(self)
        advice = QHBoxLayout()
        advice.addWidget(self.summary, 1)
        advice.addWidget(self.btn_get_recommended)
        layout.addLayout(advice)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addLayout(buttons)
        self.refresh()

    # --- the table ----------------------------------------------------------------------------
    def refresh(self) -> None:
        from app.core.plan import hardware
        hw = hardware.probe()
        self.rows, self.best = advice_rows(hw)
        self.table.setRowCount(len(self.rows))
        current = getattr(getattr(self.controller, "plan", None), "model_id", None)
        for n, r in enumerate(self.rows):
            name = r["name"] + ("  — recommended" if r["recommended"] else "") + ("  — in use" if r["id"] == current else "")
            first = (f"{r['first_answer_s']:.0f} s" if r["first_answer_s"] < 120 else f"{r['first_answer_s'] / 60:.0f} min") \
                if r["first_answer_s"] is not None else "—"
            cells = (name, r["good_for"], first + (f" ({r['speed']})" if r["speed"] else ""), f"{r['size_gb']:.2f} GB",
                     f"{r['memory_gb']:.1f} GB {r['memory_where']}", r["fits_words"], "yes" if r["installed"] else "—")
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, r["id"])
                item.setToolTip(text if col == 1 else "")
                if col == 5 and not r["fits"]:
                    item.setForeground(Qt.GlobalColor.darkRed)
                self.table.setItem(n, col, item)
        pick = self.recommended()
        advice = f"Recommended here: <b>{pick['name']}</b> — {pick['timing']}" if pick else ""
        self.summary.setText(f"This machine: {hardware.describe(hw)}<br>{advice}")
        self.btn_get_recommended.setVisible(bool(pick) and not pick["installed"] and pick["source"] == "hf")
        self.btn_get_recommended.setText(f"Download {pick['name']}" if pick else "")
        self._update_buttons()

    def recommended(self) -> dict | None:
        return next((r for r in self.rows if r["id"] == self.best), None)

    def download_recommended(self) -> None:
        """One click: the recommended model selected and its download started."""
        if self.best:
            self.select(self.best)
            self.download()

    def selected(self) -> dict | None:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        return self.rows[rows[0].row()] if rows else None

    def select(self, model_id: str) -> None:
        for n, r in enumerate(self.rows):
            if r["id"] == model_id:
                self.table.selectRow(n)

    def _update_buttons(self) -> None:
        row, busy = self.selected(), self._job is not None and not self._job.finished
        self.btn_download.setEnabled(bool(row) and not busy and row["source"] == "hf" and not row["installed"])
        self.btn_remove.setEnabled(bool(row) and not busy and row["installed"] and row["source"] != "embedded")
        self.btn_get_recommended.setEnabled(not busy)
        self.btn_use.setEnabled(bool(row) and row["installed"] and row["fits"] and self.controller is not None)
        for b in (self.btn_import_file, self.btn_import_folder):
            b.setEnabled(not busy)

    # --- actions ------------------------------------------------------------------------------
    def download(self) -> None:
        row = self.selected()
        if row is None:
            return
        self._cancel = threading.Event()
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)
        self.btn_cancel.setVisible(True)
        self.status.setText(f"Downloading {row['name']}…")
        self._job = workers.run(_download, row["id"], self._cancel, on_message=self._on_progress,
                                on_done=lambda path: self._finished(f"{row['name']}: downloaded and verified"),
                                on_error=self._failed)
        self._update_buttons()

    def _on_progress(self, p) -> None:
        if p.total:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * p.done / p.total))
        self.status.setText(p.line())

    def cancel(self) -> None:
        self._cancel.set()

    def import_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import a GGUF model", "", "GGUF models (*.gguf)")
        if path:
            self.import_path(path)

    def import_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Import an AWQ model folder")
        if path:
            self.import_path(path)

    def import_path(self, path: str) -> None:
        self.status.setText(f"Checking and copying {path}…")
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)
        self._job = workers.run(_import, path, on_error=self._failed,
                                on_done=lambda spec: self._finished(f"imported {spec.id}: {spec.format}, "
                                                                    f"{spec.size_gb:.2f} GB", spec.id))
        self._update_buttons()

    def remove(self) -> None:
        from app.core.models import catalogue
        row = self.selected()
        if row is None:
            return
        try:
            catalogue.remove(catalogue.load_catalogue().get(row["id"]))
        except Exception as exc:  # noqa: BLE001 - one line in the dialog
            self.status.setText(describe(exc))
            return
        self._finished(f"removed {row['name']}")

    def use(self) -> None:
        row = self.selected()
        if row is None or self.controller is None:
            return
        use_model(self.controller, row["id"])
        self.status.setText(f"Restarting the engine with {row['name']}…")

    def _finished(self, text: str, select: str | None = None) -> None:
        self.progress.setVisible(False)
        self.btn_cancel.setVisible(False)
        self.refresh()
        if select:
            self.select(select)
        self.status.setText(text)
        self.sig_changed.emit()

    def _failed(self, exc: BaseException) -> None:
        self.progress.setVisible(False)
        self.btn_cancel.setVisible(False)
        self.status.setText(describe(exc))
        self._update_buttons()


def open_model_manager(parent, download: bool = False) -> ModelManager:
    """The manager over the window's engine (the start page's "Get a model…"); with `download`,
    the recommended model's download starts at once (the banner's one click)."""
    window = parent.window() if parent is not None else None
    dialog = ModelManager(getattr(window, "engine", None), window)
    dialog.open()
    if download:
        dialog.download_recommended()
    return dialog


def recommended_button(parent) -> QPushButton | None:
    """For the test-model banner: "Download Qwen2.5 3B … — about 20 s to a first answer here
    (estimated)", one click to start it; None when nothing better than the test model runs here
    or the recommended model is already installed."""
    try:
        rows, best = advice_rows()
    except Exception:  # noqa: BLE001 - the banner keeps its "Get a model…" button
        return None
    pick = next((r for r in rows if r["id"] == best), None)
    if pick is None or pick["installed"] or pick["source"] != "hf":
        return None
    button = QPushButton(f"Download {pick['name']}\n{pick['timing']}", objectName="bannerDownload")
    button.setToolTip(pick["good_for"])
    button.clicked.connect(lambda: open_model_manager(button, download=True))
    return button


def install(window) -> None:
    """The window's Engine menu: the model manager and the settings dialog."""
    from app.qt.settings_dialog import SettingsDialog
    menu = window.menuBar().addMenu("&Engine")

    def models() -> None:
        ModelManager(window.engine, window).exec()

    def prefs() -> None:
        SettingsDialog(window).exec()
    window.actions_by_name["models"] = menu.addAction("&Models…", models)
    window.actions_by_name["settings"] = menu.addAction("&Settings…", prefs)
