"""Issue 33 defect 11: Settings → Theme → Dark is applied at once and after a restart
(it was saved and never applied), and the settings speak the user's words, not the engine's."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QApplication, QFormLayout

from tests.qt.conftest import open_and_wait
from tests.support.corpus import corpus_path

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def _labels(dialog) -> list[str]:
    form = dialog.findChild(QFormLayout)
    return [form.itemAt(row, QFormLayout.ItemRole.LabelRole).widget().text()
            for row in range(form.rowCount()) if form.itemAt(row, QFormLayout.ItemRole.LabelRole)]


def test_dark_theme_applies_at_once_and_after_a_restart(qtbot, window, monkeypatch):
    from app.core import settings
    from app.qt import theme
    from app.qt.settings_dialog import SettingsDialog
    monkeypatch.delenv("PAGEWISE_THEME", raising=False)
    app = QApplication.instance()
    open_and_wait(qtbot, window, corpus_path("contracts-en/common-paper-mnda.pdf"))
    try:
        dialog = SettingsDialog(window)
        qtbot.addWidget(dialog)
        labels = _labels(dialog)
        assert "Longest text the model reads at once" in labels and "Aim for the first words within" in labels
        assert not {"Context cap", "First-token budget"} & set(labels)
        dialog.theme.setCurrentIndex(dialog.theme.findData("dark"))
        assert dialog.save()
        assert settings.load().theme == "dark"
        assert theme.is_dark(app)
        qtbot.waitUntil(lambda: window.chat.ask_box.palette().color(
            window.chat.ask_box.backgroundRole()).lightness() < 80, timeout=3000)
        SHOTS.mkdir(parents=True, exist_ok=True)
        qtbot.wait(200)
        window.grab().save(str(SHOTS / "dark-theme.png"))

        # A restart: the palette starts light, the app's start-up applies the saved theme.
        app.setPalette(app.style().standardPalette())
        assert not theme.is_dark(app)
        theme.apply(app)
        assert theme.is_dark(app)

        settings.set_value("theme", "light")
        theme.refresh(app)
        assert not theme.is_dark(app)
    finally:
        app.setPalette(app.style().standardPalette())
