"""A question checked before anything slow starts (the engine, the reading).

Seen: a question with bytes that are not UTF-8 (the shell passes them through; Python keeps
them as lone surrogates) made the engine start and read for 78 s, then failed encoding the
question for the search vectors; a 125 KB question failed only after 255 s of start and
reading, when the prompt was counted against the context. Both are refused at once.
"""
from __future__ import annotations

from app.core.failures import BadInput

# A question is a few sentences; the longest the context of the smallest model in the
# catalogue holds beside any passage is ~8K tokens (≈ 30K characters). Longer is a pasted file.
MAX_CHARS = 8000


class BadQuestion(BadInput):
    """A question that cannot be asked (its message says why, in one line)."""


def check(question: str) -> str:
    """The question as it will be asked; raises BadQuestion when it cannot be."""
    try:
        question.encode("utf-8")
    except UnicodeEncodeError as exc:
        at = exc.start
        raise BadQuestion(f"the question has bytes that are not UTF-8 text (at character {at + 1}); "
                          "type it again or check the terminal's encoding") from None
    if len(question) > MAX_CHARS:
        raise BadQuestion(f"the question is {len(question):,} characters long; at most {MAX_CHARS:,} "
                          "fit beside the passages (ask about a document instead of pasting it)")
    return question
