"""Is an answer string being written repeating itself? Pure functions over the text so far,
read by both sides of the engine boundary: the llama.cpp worker's logits processor
(app/worker/llama/loop_guard.py) and the parent's stream reader for engines that have no such
hook (vLLM, a remote endpoint: app/worker/client.py).
"""
from __future__ import annotations

import re

from app.core.textnorm import CJK_ENDS, LATIN_ENDS, LOOP_MIN_CHARS, is_repeat, sentences

TAIL = LOOP_MIN_CHARS   # characters of the answer's end that must have come twice before


def looping(text: str) -> bool:
    """Whether an answer string (so far) repeats itself: its last finished sentence was said
    before, or its last TAIL characters came twice before."""
    said = sentences(text)
    done = said if text.rstrip().endswith(tuple(LATIN_ENDS + CJK_ENDS)) else said[:-1]   # the last may be unfinished
    if done and is_repeat(done[-1], done[:-1]):
        return True
    tail = text[-TAIL:]
    return len(text) >= 3 * TAIL and text[:-TAIL].count(tail) >= 2


def answer_start(generated: str, key: str = "answer") -> int | None:
    """Where the JSON string value of `key` begins (just after its opening quote), or None."""
    m = re.search(rf'"{key}"\s*:\s*"', generated)
    return m.end() if m else None


def answer_body(generated: str, key: str = "answer") -> str | None:
    """The text of the JSON string value of `key` while it is being written; None before it
    starts and once it is closed."""
    start = answer_start(generated, key)
    if start is None:
        return None
    body, escaped = [], False
    for ch in generated[start:]:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            return None                    # closed: the citations are being written
        body.append(ch)
    return "".join(body)


_OPEN_ESCAPE = re.compile(r'(?<!\\)(\\\\)*\\(u[0-9a-fA-F]{0,3})?$')


def closed_at_loop(generated: str, key: str = "answer") -> str:
    """A reply stopped while its answer string looped, closed as JSON: the string ends where
    it was cut (an escape left open is dropped) and the object ends after it, so the reply
    parses and its repeated sentence is dropped like any other (qa.without_repeats)."""
    start = answer_start(generated, key)
    body = answer_body(generated, key) or ""
    body = _OPEN_ESCAPE.sub(lambda m: m.group(1) or "", body)
    return generated[:start] + body + '"}'
