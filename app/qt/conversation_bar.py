"""The conversations about the documents asked (issue 33): a short list above the transcript,
the most recently used first, and "New conversation"."""
from __future__ import annotations

import time

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

ROWS = 3      # rows shown before the list scrolls: the transcript keeps the room


def label(conv, now: float | None = None) -> str:
    """'Who are the parties? · 3 questions · 10:04' (a date instead of the hour before today)."""
    when = time.localtime(conv.last_at)
    today = time.localtime(time.time() if now is None else now)[:3] == when[:3]
    stamp = time.strftime("%H:%M" if today else "%d %b %H:%M", when)
    if not conv.exchanges:
        return f"New conversation · {stamp}"
    question = " ".join(conv.first_question.split())
    question = question if len(question) <= 60 else question[:59] + "…"
    count = f"{conv.exchanges} question{'s' if conv.exchanges != 1 else ''}"
    return f"{question} · {count} · {stamp}"


class ConversationBar(QWidget):
    sig_chosen = Signal(int)
    """The user picked a conversation from the list: its library id."""
    sig_new = Signal()
    """The user wants a new, empty conversation."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.list = QListWidget(objectName="conversationList")
        self.list.setToolTip("Conversations about the documents asked; pick one to see it again")
        self.list.itemClicked.connect(self._on_item)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideMiddle)     # the question's start, the hour
        self.list.setUniformItemSizes(True)
        self.new_button = QPushButton("New conversation", objectName="newConversation")
        self.new_button.setToolTip("Start an empty conversation: the next question carries nothing of the others")
        self.new_button.clicked.connect(self.sig_new.emit)
        self.title = QLabel("Conversations", objectName="conversationTitle")
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.title, 1)
        top.addWidget(self.new_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 4)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.list)
        self.set_conversations([], None)

    def set_conversations(self, conversations: list, current: int | None) -> None:
        """Show these conversations (ConversationSummary), `current` selected."""
        self.list.blockSignals(True)
        self.list.clear()
        for conv in conversations:
            item = QListWidgetItem(label(conv))
            item.setData(Qt.ItemDataRole.UserRole, conv.id)
            item.setToolTip(conv.first_question or "Nothing asked yet")
            self.list.addItem(item)
            if conv.id == current:
                self.list.setCurrentItem(item)
        self.list.blockSignals(False)
        rows = max(1, min(ROWS, len(conversations)))
        row = self.list.fontMetrics().lineSpacing() + 6      # sizeHintForRow is 0 before the list is shown
        self.list.setFixedHeight(row * rows + 2 * self.list.frameWidth() + 2)
        self.list.setVisible(bool(conversations))
        self.title.setText(f"Conversations ({len(conversations)})" if conversations else "Conversations")

    def ids(self) -> list[int]:
        return [self.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.list.count())]

    def current(self) -> int | None:
        item = self.list.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    def set_enabled(self, enabled: bool) -> None:
        """Not while an answer is being written: it belongs to the conversation it was asked in."""
        self.list.setEnabled(enabled)
        self.new_button.setEnabled(enabled)

    def _on_item(self, item: QListWidgetItem) -> None:
        self.sig_chosen.emit(item.data(Qt.ItemDataRole.UserRole))
