"""A label that keeps its whole text and shows what fits its width, again on every resize;
`text()` is the whole text, and subclasses say how it is fitted (`_fit`)."""
from __future__ import annotations

from PySide6.QtWidgets import QLabel


class FittedLabel(QLabel):
    def __init__(self, text: str = "", **kwargs) -> None:
        super().__init__(**kwargs)
        self._full = ""
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        self._full = text
        self._fit()
        self.updateGeometry()

    def text(self) -> str:
        return self._full

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        raise NotImplementedError
