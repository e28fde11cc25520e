"""Window layout and recent files, kept in an INI file under the app's config folder
(QSettings), so PAGEWISE_HOME isolates tests and the layout comes back on restart."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

from app.core import paths

MAX_RECENT = 10


def gui_settings() -> QSettings:
    return QSettings(str(paths.config_dir() / "gui.ini"), QSettings.Format.IniFormat)


def recent_files(settings: QSettings) -> list[str]:
    value = settings.value("recent", [])
    items = [value] if isinstance(value, str) else list(value or [])
    return [p for p in items if p]


def add_recent(settings: QSettings, path: str) -> list[str]:
    path = str(Path(path).expanduser().resolve())
    items = [path] + [p for p in recent_files(settings) if p != path]
    settings.setValue("recent", items[:MAX_RECENT])
    return items[:MAX_RECENT]


def open_documents(settings: QSettings) -> list[str]:
    """The documents open when the window last closed (reopened on the next start)."""
    value = settings.value("session/open", [])
    items = [value] if isinstance(value, str) else list(value or [])
    return [p for p in items if p]


def set_open_documents(settings: QSettings, paths: list[str]) -> None:
    settings.setValue("session/open", [str(Path(p).resolve()) for p in paths if p])


def page_of(settings: QSettings, sha256: str) -> int:
    """The page a document was left at (1 when never shown)."""
    try:
        return max(1, int(settings.value(f"pages/{sha256}", 1)))
    except (TypeError, ValueError):
        return 1


def set_page_of(settings: QSettings, sha256: str, page: int) -> None:
    """Kept by content, not path: a document moved or shown from its OCR copy keeps its page."""
    if sha256 and page >= 1:
        settings.setValue(f"pages/{sha256}", int(page))


def selected_card_of(settings: QSettings, conversation_id: int | None) -> int:
    """The Citations panel's card selected when this conversation was last on screen (-1: none)."""
    if conversation_id is None:
        return -1
    try:
        return int(settings.value(f"selected/{conversation_id}", -1))
    except (TypeError, ValueError):
        return -1


def set_selected_card_of(settings: QSettings, conversation_id: int | None, index: int) -> None:
    if conversation_id is not None and index >= 0:
        settings.setValue(f"selected/{conversation_id}", int(index))
