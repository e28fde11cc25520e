"""The interface language (English / 中文): a setting, by default the system locale's, applied to
every window at start and at once when Settings changes it.

Why a catalogue and a walker, not QTranslator + tr() in every file: the window's English is written
as plain strings in a dozen modules that several people edit; wrapping each in tr() and giving each
widget a retranslateUi() would touch every line of them. Instead the English stays the source, the
Chinese lives in one catalogue (app.qt.catalogue_zh, with patterns for sentences built at run time),
and `retranslate.walk` swaps what the widgets show — remembering the English, so switching back works.
Qt's own translations (qtbase_zh_CN.qm, shipped with PySide6) cover its standard buttons and dialogs.
A light timer re-walks the visible windows, so text set later (status lines, progress, evidence
cards, dialogs) is shown in Chinese too.
"""
from __future__ import annotations

from PySide6.QtCore import QLibraryInfo, QLocale, QObject, QTimer, QTranslator
from PySide6.QtWidgets import QApplication

from app.qt import retranslate

LABELS = {"auto": "Follow the system", "en": "English", "zh": "中文"}
REFRESH_MS = 400          # text set after a walk shows in Chinese within this time

_state = {"lang": None, "timer": None, "translator": None}


def chosen() -> str:
    """The saved setting ("auto", "en" or "zh"); "auto" when the settings cannot be read."""
    from app.core import settings
    try:
        return settings.load().interface_language
    except Exception:  # noqa: BLE001 - a broken settings file must not stop the window
        return "auto"


def resolve(choice: str, locale_name: str | None = None) -> str:
    """"en" or "zh": the choice, or for "auto" the system locale's language."""
    if choice in ("en", "zh"):
        return choice
    name = locale_name if locale_name is not None else QLocale.system().name()
    return "zh" if name.lower().startswith("zh") else "en"


def current() -> str:
    """The language the interface shows now."""
    if _state["lang"] is None:
        _state["lang"] = resolve(chosen())
    return _state["lang"]


def tr(text: str) -> str:
    """One string in the interface language (for code that builds text to show)."""
    return retranslate.translate(text) if current() == "zh" else text


def apply(lang: str | None = None) -> str:
    """Show every window in `lang` (default: the setting) now, and keep doing so."""
    lang = lang or resolve(chosen())
    _state["lang"] = lang
    app = QApplication.instance()
    if app is None:
        return lang
    _qt_translations(app, lang)
    for top in app.topLevelWidgets():
        retranslate.walk(top, lang)
    _keep_refreshing(app, lang)
    for top in app.topLevelWidgets():
        if getattr(top, "_language_shown", lang) != lang:
            top._language_shown = lang
            _templates_follow(top, lang)
    return lang


def _templates_follow(window, lang: str) -> None:
    """The review buttons are the templates of the interface's language (their prompts too)."""
    from app.qt import templates
    if hasattr(window, "_all_templates") and hasattr(window, "chat"):
        compare = len(window.doc_infos()) > 1
        window.chat.set_templates(templates.for_language(window._all_templates, lang, compare=compare))
        window.chat.render()                   # the transcript's labels


def _qt_translations(app: QApplication, lang: str) -> None:
    old = _state["translator"]
    if old is not None:
        app.removeTranslator(old)
        _state["translator"] = None
    if lang != "zh":
        return
    translator = QTranslator(app)
    folder = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    if translator.load("qtbase_zh_CN", folder):
        app.installTranslator(translator)
        _state["translator"] = translator


def _keep_refreshing(app: QApplication, lang: str) -> None:
    timer = _state["timer"]
    if lang == "en":
        if timer is not None:
            timer.stop()
        return
    if timer is None:
        timer = QTimer(app, interval=REFRESH_MS)
        timer.timeout.connect(_refresh)
        _state["timer"] = timer
    timer.start()


def refresh_now() -> None:
    """Walk the visible windows now (what the timer does every REFRESH_MS)."""
    _refresh()


def _refresh() -> None:
    app = QApplication.instance()
    if app is None or _state["lang"] != "zh":
        return
    for top in app.topLevelWidgets():
        if top.isVisible():
            retranslate.walk(top, "zh")


def attach(window: QObject) -> None:
    """Called once by the main window: its widgets (and any shown later) in the chosen language."""
    lang = resolve(chosen())                  # read afresh: Settings may have changed it
    window._language_shown = lang
    apply(lang)
