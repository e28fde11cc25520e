"""The library panel: every document in the library (title, pages, language, added), a
filter, open, remove (with its history and cached state), and several documents chosen
for one question ("Ask these")."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.documents import listing
from app.qt import workers
from app.qt.error_dialog import show_error
from app.service import answers_under_way

ID_ROLE = Qt.ItemDataRole.UserRole
PATH_ROLE = Qt.ItemDataRole.UserRole + 1
COLUMNS = ["Title", "Pages", "Lang", "Added"]


class LibraryPanel(QWidget):
    sig_open = Signal(str)
    """Open this path in the viewer."""
    sig_scope = Signal(list)
    """Ask the next questions about these document ids ([] = back to the open documents)."""
    sig_removed = Signal(int)

    def __init__(self, library, parent=None, confirm: bool = True) -> None:
        super().__init__(parent, objectName="libraryPanel")
        self.library, self.confirm = library, confirm
        self.rows: list[dict] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(QLabel("Library", objectName="sectionTitle"))
        self.filter = QLineEdit(placeholderText="Filter by title, file or language", objectName="libraryFilter")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._apply_filter)
        layout.addWidget(self.filter)
        self.tree = QTreeWidget(objectName="libraryList")
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setRootIsDecorated(False)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setSortingEnabled(True)
        self.tree.sortByColumn(3, Qt.SortOrder.DescendingOrder)
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in (1, 2, 3):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.itemDoubleClicked.connect(lambda item, _col: self.sig_open.emit(item.data(0, PATH_ROLE)))
        self.tree.itemSelectionChanged.connect(self._selection_changed)
        layout.addWidget(self.tree, 1)
        buttons = QHBoxLayout()
        self.open_button = QPushButton("Open", objectName="libraryOpen")
        self.open_button.clicked.connect(self._open_selected)
        self.ask_button = QPushButton("Ask these", objectName="libraryAsk")
        self.ask_button.setToolTip("Ask the next questions about all the selected documents")
        self.ask_button.clicked.connect(lambda: self.sig_scope.emit(self.selected_ids()))
        self.remove_button = QPushButton("Remove", objectName="libraryRemove")
        self.remove_button.setToolTip("Forget the document, its questions and answers, and its cached state")
        self.remove_button.clicked.connect(self.remove_selected)
        for b in (self.open_button, self.ask_button, self.remove_button):
            buttons.addWidget(b)
        layout.addLayout(buttons)
        self.summary = QLabel("", objectName="librarySummary")
        layout.addWidget(self.summary)
        self.refresh()

    def refresh(self) -> None:
        selected = set(self.selected_ids())
        self.rows = listing.document_rows(self.library)
        self.tree.setSortingEnabled(False)
        self.tree.clear()
        for row in self.rows:
            item = QTreeWidgetItem([row["title"], str(row["pages"]), row["lang"], row["added"][:10]])
            item.setData(0, ID_ROLE, row["id"])
            item.setData(0, PATH_ROLE, row["path"])
            item.setData(1, Qt.ItemDataRole.DisplayRole, row["pages"])      # sorts as a number
            item.setToolTip(0, "\n".join([row["title"], row["path"], f"added {row['added']}", *row["warnings"]]))
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.tree.addTopLevelItem(item)
            item.setSelected(row["id"] in selected)
        self.tree.setSortingEnabled(True)
        self._apply_filter(self.filter.text())

    def items(self) -> list[QTreeWidgetItem]:
        return [self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount())]

    def visible_titles(self) -> list[str]:
        return [i.text(0) for i in self.items() if not i.isHidden()]

    def selected_ids(self) -> list[int]:
        return [i.data(0, ID_ROLE) for i in self.tree.selectedItems() if not i.isHidden()]

    def select_ids(self, ids: list[int]) -> None:
        for item in self.items():
            item.setSelected(item.data(0, ID_ROLE) in ids)

    def _apply_filter(self, text: str) -> None:
        words = text.lower().split()
        for item in self.items():
            hay = " ".join([item.text(0), item.text(2), str(item.data(0, PATH_ROLE))]).lower()
            item.setHidden(not all(w in hay for w in words))
        self._selection_changed()

    def _selection_changed(self) -> None:
        n, shown = len(self.selected_ids()), len(self.visible_titles())
        self.open_button.setEnabled(n == 1)
        self.remove_button.setEnabled(n >= 1)
        self.ask_button.setEnabled(n >= 1)
        pages = sum(r["pages"] for r in self.rows)
        docs = len(self.rows)
        said = f"{docs} document{'s' * (docs != 1)}, {pages:,} page{'s' * (pages != 1)}"
        if shown != len(self.rows):
            said += f"; {shown} shown"
        if n:
            said += f"; {n} selected"
        self.summary.setText(said)

    def _open_selected(self) -> None:
        picked = [i for i in self.tree.selectedItems() if not i.isHidden()]
        if picked:
            self.sig_open.emit(picked[0].data(0, PATH_ROLE))

    def remove_selected(self) -> None:
        ids = self.selected_ids()
        if not ids:
            return
        if self.confirm:
            names = "\n".join(r["title"] for r in self.rows if r["id"] in ids)
            answer = QMessageBox.question(self, "Remove from the library",
                                          f"Forget these documents, their questions and answers?\n\n{names}")
            if answer != QMessageBox.StandardButton.Yes:
                return
        for doc_id in ids:
            if answers_under_way(self.library, doc_id):
                self._remove_after_answer(doc_id)      # the window stays usable meanwhile
                continue
            listing.remove_document(self.library, doc_id)
            self.sig_removed.emit(doc_id)
        self.refresh()

    def _remove_after_answer(self, doc_id: int) -> None:
        """An answer is reading the document: it is removed when that answer is done (issue 32)."""
        self.remove_button.setEnabled(False)
        self.remove_button.setText("Removing after the answer…")

        def done(_):
            self.remove_button.setText("Remove")
            self.sig_removed.emit(doc_id)
            self.refresh()
        workers.run(lambda ctx: listing.remove_document(self.library, doc_id), on_done=done,
                    on_error=lambda exc: (self.remove_button.setText("Remove"), show_error(self, exc)))
