"""The documents a question goes to, as removable chips above the question box, and a warning
when the page on screen is not among them (issue 33: a scope that silently stuck misled)."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget


class ScopeChips(QWidget):
    sig_remove = Signal(int)
    """Stop asking this document (its id)."""
    sig_ask_on_screen = Signal()
    """Ask the documents on screen instead."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent, objectName="scopeChips")
        self.row = QHBoxLayout()
        self.row.setContentsMargins(0, 0, 0, 0)
        self.warning = QLabel("", objectName="scopeWarning", wordWrap=True)
        self.warning.setStyleSheet("color: #b9770e")
        self.warning.linkActivated.connect(lambda _link: self.sig_ask_on_screen.emit())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(self.row)
        layout.addWidget(self.warning)
        self.chips: dict[int, QPushButton] = {}
        self.set_scope([], [])

    def set_scope(self, asked: list[tuple[int, str]], on_screen: list[tuple[int, str]],
                  removable: bool = True) -> None:
        """`asked` and `on_screen`: (doc id, file name); `removable`: chips carry an ×."""
        while self.row.count():
            item = self.row.takeAt(0)
            if item.widget():
                item.widget().deleteLater()
        self.chips = {}
        if asked:
            self.row.addWidget(QLabel("Asking:", objectName="scopeLabel"))
        for doc_id, name in asked:
            chip = QPushButton(f"{name}  ×" if removable else name, objectName="scopeChip", flat=not removable)
            chip.setToolTip(f"Stop asking {name}" if removable else name)
            chip.setEnabled(removable)
            chip.clicked.connect(lambda _=False, d=doc_id: self.sig_remove.emit(d))
            self.row.addWidget(chip)
            self.chips[doc_id] = chip
        self.row.addStretch(1)
        asked_ids = {d for d, _ in asked}
        missing = [name for d, name in on_screen if d not in asked_ids]
        self.warning.setText("" if not (asked and missing) else
                             f"⚠ The page on screen ({', '.join(missing)}) is not among the documents asked. "
                             "<a href='on-screen'>Ask it instead</a>")
        self.warning.setVisible(bool(self.warning.text()))

    def names(self) -> list[str]:
        return [chip.text().removesuffix("  ×") for chip in self.chips.values()]
