"""Readable text from a streamed JSON answer ({"answer": "...", "citations": [...]}).

The model streams JSON because the schema constrains it; people should see the
answer's words appear, not braces and escapes. Pure functions, no Qt.
"""
from __future__ import annotations

import re

_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "r": "", "b": "", "f": ""}
_ANSWER_KEY = re.compile(r'"answer"\s*:\s*"')


def partial_answer(raw: str) -> str:
    """The "answer" string decoded as far as it has arrived; plain text passes through."""
    text = raw.lstrip()
    if not text.startswith("{"):
        return raw
    match = _ANSWER_KEY.search(text)
    return _decode_string(text, match.end()) if match else ""


def readable_answer(text: str) -> tuple[str, bool]:
    """A final answer as people should read it, and whether it was cut off: a reply that is
    still JSON is one the model did not finish (it ran out of tokens)."""
    if not text.lstrip().startswith("{"):
        return text, False
    return partial_answer(text).strip() + " …", True


def _decode_string(text: str, i: int) -> str:
    out: list[str] = []
    while i < len(text):
        c = text[i]
        if c == '"':
            break
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= len(text):
            break                     # the escape has not fully arrived yet
        n = text[i + 1]
        if n == "u":
            code = text[i + 2:i + 6]
            if len(code) < 4:
                break
            out.append(_unicode(code))
            i += 6
            continue
        out.append(_ESCAPES.get(n, n))
        i += 2
    return _join_surrogates("".join(out))


def _unicode(code: str) -> str:
    try:
        return chr(int(code, 16))
    except ValueError:
        return ""


def _join_surrogates(text: str) -> str:
    """\\ud83d\\ude00 arrives as two halves; make them one character (drop a lone half)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "ignore")
