"""Small dialogs. They are opened with open() (window-modal, not a nested event loop),
so rendering and streaming carry on behind them and tests can drive them."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QLineEdit, QVBoxLayout


class PasswordDialog(QDialog):
    sig_password = Signal(str, str)
    """The user entered a password: path, password."""

    def __init__(self, path: str, wrong: bool = False, parent=None) -> None:
        super().__init__(parent, objectName="passwordDialog")
        self.path = path
        self.setWindowTitle("Password needed")
        message = (f"The password for “{Path(path).name}” is wrong. Try again:" if wrong
                   else f"“{Path(path).name}” is protected. Enter its password to open it:")
        self.message = QLabel(message, wordWrap=True)
        self.field = QLineEdit(echoMode=QLineEdit.EchoMode.Password, objectName="passwordField")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.message)
        layout.addWidget(self.field)
        layout.addWidget(buttons)
        self.accepted.connect(lambda: self.sig_password.emit(self.path, self.field.text()))
        self.setMinimumWidth(380)
