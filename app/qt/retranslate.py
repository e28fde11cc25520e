"""Show a widget tree in English or Chinese: every text a widget shows (labels, buttons, menus,
actions, tooltips, placeholders, titles, combo, list, table and tab items) looked up in the
catalogue. The English each text came from is kept on the object, so a second walk — or a
switch back to English — knows the source even after the widget's text was replaced; text the
code sets later is seen as new English and translated on the next walk."""
from __future__ import annotations

import html
import re

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QMenu,
    QPlainTextEdit,
    QProgressBar,
    QTableWidget,
    QTabWidget,
    QTextEdit,
    QTreeWidget,
    QWidget,
)

from app.qt import catalogue_zh

SOURCE_ROLE = Qt.ItemDataRole.UserRole + 733      # items: the English their text came from
_ACCEL = re.compile(r"&(?=[^&\s])")
_TAG = re.compile(r"(<[^>]*>)")


def translate(text: str) -> str:
    """Chinese for one English string: the catalogue, its patterns, else piece by piece
    (lines, then the text between HTML tags); what is not known stays as it is."""
    if not text or not any("a" <= c.lower() <= "z" for c in text):
        return text
    if "<" in text or "&nbsp;" in text:        # HTML: only the text between tags, never across them
        return "".join(piece if _TAG.fullmatch(piece) else _html_text(piece) for piece in _TAG.split(text))
    found = _one(text)
    if found is not None:
        return found
    if "\n" in text:
        return "\n".join(_one(line) or line for line in text.split("\n"))
    return text


def _html_text(piece: str) -> str:
    """Text between two tags: looked up with its entities read (html.escape writes ' as &#x27;),
    written back escaped; unknown text stays as it was."""
    found = _one(html.unescape(piece))
    return piece if found is None else html.escape(found, quote=False)


def _one(text: str) -> str | None:
    core = text.strip()
    if not core:
        return None
    lead, trail = text[:len(text) - len(text.lstrip())], text[len(text.rstrip()):]
    accel = _ACCEL.search(core)
    plain = _ACCEL.sub("", core) if accel else core
    found = catalogue_zh.lookup(plain)
    if found is None:
        return None
    if accel:         # "&File" → "文件(&F)": the mnemonic kept, after the Chinese
        found += f"(&{core[accel.end()].upper()})"
    return lead + found + trail


# --- the walk -------------------------------------------------------------------------------------
def _swap(obj, name: str, getter, setter, lang: str) -> None:
    """One property of one object: English source remembered, shown in `lang`."""
    shown = getter()
    src_key, out_key = f"_en_{name}", f"_zh_{name}"
    source, last = obj.property(src_key), obj.property(out_key)
    if not isinstance(source, str) or shown not in (source, last):
        source = shown                                   # new text from the code: the new English
        obj.setProperty(src_key, source)
    want = translate(source) if lang == "zh" else source
    obj.setProperty(out_key, want)
    if want != shown:
        setter(want)


def _swap_item(item, getter, setter, lang: str) -> None:
    shown = getter()
    source = item.data(SOURCE_ROLE)
    if not isinstance(source, str) or (shown != source and shown != translate(source)):
        source = shown
        item.setData(SOURCE_ROLE, source)
    want = translate(source) if lang == "zh" else source
    if want != shown:
        setter(want)


def _actions(obj, lang: str) -> None:
    for action in obj.actions():
        _swap(action, "text", action.text, action.setText, lang)
        _swap(action, "tip", action.toolTip, action.setToolTip, lang)
        menu = action.menu()
        if menu is not None and menu is not obj:
            _swap(menu, "title", menu.title, menu.setTitle, lang)
            _actions(menu, lang)


def _widget(w: QWidget, lang: str) -> None:
    if w.toolTip():
        _swap(w, "tip", w.toolTip, w.setToolTip, lang)
    if w.isWindow() and w.windowTitle():
        _swap(w, "title", w.windowTitle, w.setWindowTitle, lang)
    if isinstance(w, (QLabel, QAbstractButton)):
        _swap(w, "text", w.text, w.setText, lang)
    elif isinstance(w, (QLineEdit, QPlainTextEdit, QTextEdit)):
        _swap(w, "placeholder", w.placeholderText, w.setPlaceholderText, lang)
    elif isinstance(w, (QGroupBox, QMenu)):
        _swap(w, "title", w.title, w.setTitle, lang)
    elif isinstance(w, QAbstractSpinBox):
        for name in ("suffix", "specialValueText"):
            if hasattr(w, name):
                _swap(w, name, getattr(w, name), getattr(w, "set" + name[0].upper() + name[1:]), lang)
    elif isinstance(w, QComboBox):
        for i in range(w.count()):
            _swap(w, f"item{i}", lambda i=i: w.itemText(i), lambda t, i=i: w.setItemText(i, t), lang)
    elif isinstance(w, QTabWidget):
        for i in range(w.count()):
            _swap(w, f"tab{i}", lambda i=i: w.tabText(i), lambda t, i=i: w.setTabText(i, t), lang)
    elif isinstance(w, QProgressBar) and w.format() != "%p%":
        _swap(w, "format", w.format, w.setFormat, lang)
    if isinstance(w, QListWidget):
        for i in range(w.count()):
            item = w.item(i)
            _swap_item(item, item.text, item.setText, lang)
    elif isinstance(w, QTableWidget):
        _table(w, lang)
    elif isinstance(w, QTreeWidget):
        head = w.headerItem()
        for col in range(w.columnCount()):
            _swap(w, f"head{col}", lambda c=col: head.text(c), lambda t, c=col: head.setText(c, t), lang)
    if w.actions():
        _actions(w, lang)


def _table(w: QTableWidget, lang: str) -> None:
    for col in range(w.columnCount()):
        head = w.horizontalHeaderItem(col)
        if head is not None:
            _swap_item(head, head.text, head.setText, lang)
    for row in range(w.rowCount()):
        for col in range(w.columnCount()):
            item = w.item(row, col)
            if item is not None:
                _swap_item(item, item.text, item.setText, lang)


def walk(root: QWidget, lang: str) -> None:
    """`root` and every widget under it, in `lang` ("en" | "zh")."""
    for w in [root, *root.findChildren(QWidget)]:
        _widget(w, lang)
