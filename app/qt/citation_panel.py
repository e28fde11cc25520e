"""The citations of the current answer: document, page, quote and a verified badge.

Clicking a card (or moving with next/previous) emits sig_citation_activated; the main
window turns that into "jump to the page and highlight the quoted words".
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.core.answer.badge import NOT_SUPPORTS, SUPPORTS, Badge  # noqa: F401 - the card's words, also read from here

SUPPORT_TIPS = {
    "supports": "The quote shares the answer's figures and words.",
    "unclear": "The quote may be on topic, but its words do not show the answer's claim: read the page.",
    "contradicts": "The quote's figures or its negation differ from the answer's: read the page.",
}


class CitationCard(QFrame):
    sig_clicked = Signal(int)
    """This card (its index) was clicked."""

    def __init__(self, index: int, citation, doc_label: str, parent=None, number: str = "") -> None:
        """`number`: "E1" for an evidence card (the search's sentence: its support of an
        answer is not the question), else the citation's own number."""
        super().__init__(parent, objectName="citationCard")
        self.index, self.citation, self.is_evidence = index, citation, number.startswith("E")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setProperty("selected", False)
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        # wrapped, never wider than the panel: a long file name must not scroll the cards sideways
        where = QLabel(f"<b>[{number or index + 1}]</b> {doc_label} · p. {citation.page}", objectName="citationWhere",
                       wordWrap=True)
        badge = Badge.of(citation)      # what was checked, in words (citations.py)
        self.badge = QLabel(badge.label(), objectName="badge", wordWrap=True)
        self.badge.setProperty("kind", "verified" if badge.verified else "unverified")
        self.badge.setToolTip("The quoted words are on this page (not yet a judgement of the answer)."
                              if badge.verified else "The quote was not found in the document: check it yourself.")
        head.addWidget(where, 1)
        head.addWidget(self.badge)
        # A second, separate check: does the quote back the answer's claim (support.py)?
        self.support = QLabel(badge.support_words(), objectName="citationSupport", wordWrap=True)
        self.support.setProperty("kind", "supports" if badge.supports else "unclear")
        self.support.setToolTip(SUPPORT_TIPS.get(badge.support if badge.verified else "unclear", ""))
        if self.is_evidence:
            self.support.setText("evidence: the search's sentence, as printed")
            self.support.setProperty("kind", "supports")
            self.support.setToolTip("Found before the model read anything; quoted from the page.")
        quote = QLabel(f"\u201c{citation.quote}\u201d", objectName="citationQuote", wordWrap=True)
        quote.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(3)
        layout.addLayout(head)
        layout.addWidget(quote)
        layout.addWidget(self.support)
        note = getattr(citation, "note", "")
        if note:
            layout.addWidget(QLabel(note, objectName="citationNote", wordWrap=True))

    def set_selected(self, selected: bool) -> None:
        self.setProperty("selected", selected)
        self.style().unpolish(self)
        self.style().polish(self)

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt override
        if event.button() == Qt.MouseButton.LeftButton:
            self.sig_clicked.emit(self.index)
        super().mousePressEvent(event)


class CitationPanel(QScrollArea):
    sig_citation_activated = Signal(object)
    """A citation was chosen (click, keyboard or answer marker): app.core.answer.citations.Citation."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._pending_reveal = None
        self.verticalScrollBar().rangeChanged.connect(lambda *_: self._reveal())
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)   # cards wrap to its width
        self.setFrameShape(QFrame.Shape.NoFrame)
        self._body = QWidget(objectName="citationBody")
        self._layout = QVBoxLayout(self._body)
        self._layout.setContentsMargins(4, 4, 4, 4)
        self._layout.setSpacing(6)
        self._empty = QLabel("Citations appear here after an answer.", objectName="placeholder", wordWrap=True)
        self.setWidget(self._body)
        self.cards: list[CitationCard] = []
        self.current = -1
        self.set_citations([])

    def set_citations(self, citations, labels: dict[int, str] | None = None, evidence=()) -> None:
        """Show these citations, after the `evidence` cards' (EvidenceCard, as [E1], [E2], …);
        `labels` maps doc_id → a short document name."""
        for card in self.cards:
            card.hide()              # gone now, not at the next turn of the event loop
            card.deleteLater()
        while self._layout.count():
            self._layout.takeAt(0)
        self.cards, self.current = [], -1
        shown = [(f"E{n}", card.citation()) for n, card in enumerate(evidence, 1)]
        shown += [("", citation) for citation in citations]
        for index, (number, citation) in enumerate(shown):
            label = (labels or {}).get(citation.doc_id) or Path(citation.doc).name
            card = CitationCard(index, citation, label, number=number)
            card.sig_clicked.connect(self.activate)
            self.cards.append(card)
            self._layout.addWidget(card)
        self._layout.insertWidget(0, self._empty)
        self._empty.setVisible(not self.cards)
        self._layout.addStretch(1)

    def citations(self) -> list:
        """The model's citations shown (not the evidence cards)."""
        return [card.citation for card in self.cards if not card.is_evidence]

    def evidence(self) -> list:
        """The evidence cards shown, as citations."""
        return [card.citation for card in self.cards if card.is_evidence]

    def activate_citation(self, index: int) -> None:
        """The model's citation `index` (after the evidence cards)."""
        self.activate(index + len(self.evidence()))

    def activate(self, index: int) -> None:
        """Select the card at `index` and announce its citation."""
        if not 0 <= index < len(self.cards):
            return
        self._mark(index)
        if index == 0:      # the first card from its top (it may not be laid out yet)
            self.verticalScrollBar().setValue(0)
        else:
            self.ensureWidgetVisible(self.cards[index])
        self.sig_citation_activated.emit(self.cards[index].citation)

    def select(self, index: int) -> None:
        """Mark the card at `index` selected, as it was before a restart, without announcing it:
        the page the document was left at stays on screen."""
        if 0 <= index < len(self.cards):
            self._mark(index)
            self._pending_reveal = self.cards[index]
            QTimer.singleShot(0, lambda: self._reveal(settled=False))

    def _mark(self, index: int) -> None:
        self._pending_reveal = None
        for card in self.cards:
            card.set_selected(card.index == index)
        self.current = index

    def _reveal(self, settled: bool = True) -> None:
        """Scroll to the selected card once its place is known: a panel rebuilt on restart is
        laid out later, when the scroll range changes (then the card's place is final)."""
        card = self._pending_reveal
        if card is None or card not in self.cards:
            self._pending_reveal = None
            return
        self.ensureWidgetVisible(card)
        if settled:
            self._pending_reveal = None

    def step(self, delta: int) -> None:
        """Next (+1) or previous (-1) citation, wrapping around."""
        if self.cards:
            self.activate((self.current + delta) % len(self.cards) if self.current >= 0 else 0)
