"""The start page: what the window shows while no document is open.

Recent documents and the library (click to open), "Open a PDF…", the bundled sample contract,
which engine and model answer (in plain words), and — while the embedded 135M test model is the
one in use — a notice that real work needs a real model, with a way to get one.
"""
from __future__ import annotations

import importlib
import importlib.util
import logging
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.core.documents.pdf import on_disk

log = logging.getLogger("pagewise.gui")

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "samples" / "common-paper-mnda.pdf"
MODEL_MANAGER = "app.qt.model_manager"     # the model manager's module (a colleague's; may be absent)
PATH_ROLE = Qt.ItemDataRole.UserRole
STARTING = ("planning", "launching", "loading", "downgrade")   # EngineRuntime's states before ready


def embedded_chat_model():
    """The catalogue's embedded chat model (the 135M test model shipped in a wheel), or None."""
    try:
        from app.core.models import catalogue
        return next((m for m in catalogue.load_catalogue().with_role("chat") if m.source == "embedded"), None)
    except Exception as exc:  # noqa: BLE001 - a broken catalogue must not blank the start page
        log.warning("start page: catalogue: %s", exc)
        return None


def model_name(model_id: str) -> str:
    try:
        from app.core.models import catalogue
        return catalogue.load_catalogue().get(model_id).name
    except Exception:  # noqa: BLE001 - an imported or remote model has no catalogue entry
        return model_id


def engine_words(plan) -> str:
    """'Answers come from SmolLM2 135M Instruct (Q4_1, embedded), run by llama.cpp on this
    computer's processor (CPU), reading up to 8K tokens at once.'"""
    from app.core.plan.types import EngineName
    engine = plan.engine.label
    if plan.engine is EngineName.REMOTE:
        where = f"on the server at {plan.base_url}"
    elif plan.engine is EngineName.VLLM or plan.n_gpu_layers:
        where = f"on the graphics card ({plan.hardware or 'GPU'})"
    else:
        where = "on this computer's processor (CPU)"
    tokens = plan.max_model_len
    reach = f", reading up to {tokens // 1024}K tokens at once" if tokens >= 1024 else ""
    return f"Answers come from {model_name(plan.model_id)}, run by {engine} {where}{reach}."


def model_manager_opener():
    """A callable(parent) that opens the model manager, or None when app/qt/model_manager.py is
    not there (or offers none of the names below)."""
    try:
        if importlib.util.find_spec(MODEL_MANAGER) is None:
            return None
        module = importlib.import_module(MODEL_MANAGER)
    except Exception as exc:  # noqa: BLE001 - a broken model manager leaves the button disabled
        log.warning("start page: %s: %s", MODEL_MANAGER, exc)
        return None
    for name in ("open_model_manager", "show_model_manager"):
        if callable(getattr(module, name, None)):
            return getattr(module, name)
    for name in ("ModelManagerDialog", "ModelManager"):
        cls = getattr(module, name, None)
        if cls is not None:
            def open_dialog(parent, cls=cls):
                dialog = cls(parent)
                dialog.open() if hasattr(dialog, "open") else dialog.show()
                return dialog
            return open_dialog
    return None


class StartPage(QWidget):
    sig_open_path = Signal(str)
    """Open this PDF (a recent one, a library one, or the sample)."""
    sig_open_dialog = Signal()
    """The user asked to choose a PDF."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent, objectName="startPage")
        self._embedded = embedded_chat_model()
        self._build()
        self.set_engine_state("planning", "")

    def _build(self) -> None:
        column = QWidget(objectName="startColumn")
        column.setMaximumWidth(760)
        layout = QVBoxLayout(column)
        layout.setSpacing(10)
        title = QLabel("Pagewise", objectName="startTitle")
        title.setStyleSheet("font-size: 24px; font-weight: 600; margin-top: 24px;")
        layout.addWidget(title)
        layout.addWidget(QLabel("Ask your PDFs questions. Every answer cites its page, and nothing "
                                "leaves this computer.", wordWrap=True))
        buttons = QHBoxLayout()
        self.open_button = QPushButton("Open a PDF…", objectName="primary", default=True)
        self.open_button.setToolTip("Ctrl+O, or drop a PDF on the window")
        self.open_button.clicked.connect(self.sig_open_dialog.emit)
        self.sample_button = QPushButton("Open the sample contract")
        self.sample_button.setToolTip(f"A mutual non-disclosure agreement to try questions on ({SAMPLE.name})")
        self.sample_button.setEnabled(SAMPLE.is_file())
        self.sample_button.clicked.connect(lambda: self.sig_open_path.emit(str(SAMPLE)))
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.sample_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        layout.addWidget(self._test_model_notice())
        self.engine_label = QLabel("", objectName="startEngine", wordWrap=True)
        layout.addWidget(self.engine_label)
        self.recent = self._list("Recent documents", layout, "Documents you open appear here.")
        self.library = self._list("Library", layout, "The library is empty: open a PDF to add it.")
        layout.addStretch(1)
        centre = QWidget()
        row = QHBoxLayout(centre)
        row.addStretch(1)
        row.addWidget(column, 8)
        row.addStretch(1)
        scroll = QScrollArea(widgetResizable=True, frameShape=QFrame.Shape.NoFrame)
        scroll.setWidget(centre)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)

    def _test_model_notice(self) -> QFrame:
        box = QFrame(objectName="testModelNotice", frameShape=QFrame.Shape.StyledPanel)
        box.setStyleSheet("#testModelNotice { background: #fff4d6; border: 1px solid #e0b84f; border-radius: 6px; }")
        size = f"{self._embedded.params_b * 1000:.0f}M" if self._embedded else "135M"
        text = QLabel(f"<b>This is a small test model ({size}).</b> It is built in so Pagewise works "
                      "straight away, but its answers are often wrong or cite the wrong page: "
                      "real work needs a real model.", wordWrap=True)
        self.get_model_button = QPushButton("Get a model…")
        opener = model_manager_opener()
        self.get_model_button.setEnabled(opener is not None)
        if opener is None:
            self.get_model_button.setToolTip("The model manager is not in this version: "
                                             "run `pagewise models list` and `pagewise models pull ID`")
        else:
            self.get_model_button.clicked.connect(lambda: opener(self.window()))
        column = QVBoxLayout(box)         # the text across the banner, the buttons under it
        column.addWidget(text)
        row = QHBoxLayout()
        from app.qt.model_manager import recommended_button   # issue 33: one click to the model to get
        self.download_button = recommended_button(box)
        if self.download_button is not None:
            row.addWidget(self.download_button)
        row.addWidget(self.get_model_button)
        row.addStretch(1)
        column.addLayout(row)
        self.test_model_notice = box
        box.setVisible(self._embedded is not None)   # until the plan says which model answers
        return box

    def _list(self, title: str, layout: QVBoxLayout, empty: str) -> QListWidget:
        layout.addWidget(QLabel(title, objectName="sectionTitle"))
        items = QListWidget(objectName=title.lower().replace(" ", "_"))
        items.setProperty("empty_text", empty)
        items.setMinimumHeight(90)
        items.setMaximumHeight(200)
        items.setWordWrap(True)          # long titles wrap in a narrow window instead of scrolling sideways
        items.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        items.itemActivated.connect(self._on_item)
        items.itemClicked.connect(self._on_item)
        layout.addWidget(items)
        return items

    def _on_item(self, item: QListWidgetItem) -> None:
        path = item.data(PATH_ROLE)
        if path and on_disk(path).is_file():
            self.sig_open_path.emit(path)

    # -- contents -------------------------------------------------------------
    def set_recent(self, paths: list[str]) -> None:
        self._fill(self.recent, [(Path(p).name, p) for p in paths])

    def set_library(self, docs: list) -> None:
        """`docs`: DocumentInfo from Library.documents(); opened from where they were last opened."""
        rows = []
        for info in docs:
            path = info.last_path or info.path
            title = info.title if info.title and info.title != Path(path).stem else Path(path).name
            pages = f"{info.page_count} page{'s' * (info.page_count != 1)}"
            rows.append((f"{title} — {pages}", path))
        self._fill(self.library, rows)

    def _fill(self, widget: QListWidget, rows: list[tuple[str, str]]) -> None:
        widget.clear()
        for text, path in rows:
            exists = on_disk(path).is_file()      # a name that is not UTF-8 is stored as \xe9 text
            item = QListWidgetItem(text if exists else f"{text}  (moved or deleted)")
            item.setToolTip(path)
            item.setData(PATH_ROLE, path)
            if not exists:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
            widget.addItem(item)
        if not rows:
            item = QListWidgetItem(widget.property("empty_text"))
            item.setFlags(Qt.ItemFlag.NoItemFlags)
            widget.addItem(item)

    def set_engine_state(self, state: str, detail: str) -> None:
        if state == "failed":
            self.engine_label.setText(f"The answer engine did not start: {detail}")
            self._plan_shown = False
        elif state in STARTING:
            self.engine_label.setText("Starting the answer engine…")
            self._plan_shown = False
        elif state == "ready" and not getattr(self, "_plan_shown", False):
            self.engine_label.setText("The answer engine is running.")   # which model: sig_ready's plan
        # other states (calibrated, restarted, …) leave the line as it is

    def set_plan(self, plan) -> None:
        """The engine is ready with `plan`: say what answers; the notice only for the test model."""
        self.engine_label.setText(engine_words(plan))
        self._plan_shown = True
        self.test_model_notice.setVisible(self._embedded is not None and plan.model_id == self._embedded.id)

    def showing_test_model_notice(self) -> bool:
        return not self.test_model_notice.isHidden()
