"""Walk a window for English left on screen in the 中文 interface: every text a visible widget
shows (labels, buttons, placeholders, menus and actions, combo, list and table items), each
reported with the English words it still holds (proper names, file names and paths allowed).
Used by tests/qt/test_interface_language.py and scripts/chinese_answer_screenshot.py."""
from __future__ import annotations

import re

from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QTableWidget,
    QWidget,
)

# proper names and things shown as they are in any language
ALLOWED = {"pagewise", "pdf", "pdfs", "llama", "cpp", "vllm", "gguf", "awq", "qwen", "qwen2", "qwen3", "smollm2",
           "instruct", "q4_k_m", "q4_1", "nvidia", "gpu", "gpus", "cpu", "ram", "vram", "gb", "mb", "ctrl", "shift",
           "esc", "enter", "url", "api", "openai", "keyring", "json", "ocr", "http", "llm", "team", "lan", "v1",
           "e5", "qwen2.5", "english", "o", "token", "markdown", "llama.cpp", "avx2", "avx512f", "nda", "mnda", "ok", "gib", "tok", "k", "s", "q", "b", "m", "p", "x", "f", "e1", "tokens",
           "embedded", "kv", "nvml", "smollm2-135m-q4_1", "secretservice", "keyring", "chainer", "plaintext", "fail", "null", "mulan", "psl"}
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.'’-]*")
FILE_LIKE = re.compile(r"\S+\.(pdf|gguf|md|toml|json|png)\b|[/~]\S+|https?://\S+|`[^`]*`", re.I)
MNEMONIC = re.compile(r"\(&?[A-Z]\)|&(?=\S)")      # "文件(&F)": the key, not a word
TAG = re.compile(r"<[^>]+>|&\w+;")


def english_left(text: str) -> list[str]:
    text = FILE_LIKE.sub(" ", TAG.sub(" ", MNEMONIC.sub("", text)))
    words = [w.strip(".'’-") for w in WORD.findall(text)]
    return [w for w in words if w and w.lower() not in ALLOWED and not re.fullmatch(r"[A-Z0-9.]+\d[A-Z0-9.]*", w)]


def shown_texts(root: QWidget) -> list[tuple[str, str]]:
    """(where, text) for every text a visible widget under `root` shows."""
    out = []
    for w in [root, *root.findChildren(QWidget)]:
        if not w.isVisibleTo(root) and w is not root:
            continue
        where = f"{type(w).__name__}#{w.objectName()}"
        texts = [w.toolTip()]
        if w.isWindow():
            texts.append(w.windowTitle())
        if isinstance(w, (QLabel, QAbstractButton)):
            texts.append(w.text())
        if isinstance(w, (QLineEdit, QPlainTextEdit)):
            texts.append(w.placeholderText())
        if isinstance(w, QGroupBox):
            texts.append(w.title())
        if isinstance(w, QAbstractSpinBox):
            texts += [getattr(w, "suffix", str)(), getattr(w, "specialValueText", str)()]
        if isinstance(w, QComboBox):
            texts += [w.itemText(i) for i in range(w.count())]
        if isinstance(w, QListWidget):
            texts += [w.item(i).text() for i in range(w.count())]
        if isinstance(w, QTableWidget):
            texts += [w.horizontalHeaderItem(c).text() for c in range(w.columnCount())]
            texts += [w.item(r, c).text() for r in range(w.rowCount()) for c in range(1, w.columnCount())
                      if w.item(r, c)]
        for action in w.actions():
            texts += [action.text(), action.toolTip()]
            if action.menu():
                texts.append(action.menu().title())
                texts += [a.text() for a in action.menu().actions()]
        out += [(where, t) for t in texts if t]
    return out


def report(root: QWidget) -> list[str]:
    from app.qt import interface_language
    interface_language.refresh_now()     # text the code set since the last timer tick (≤ REFRESH_MS ago)
    return sorted({f"{where}: {text!r} → {english_left(text)}" for where, text in shown_texts(root)
                   if english_left(text)})
