"""How many tokens a prompt may carry: the one formula that qa and the window's context notice use.

The context holds the prompt and the answer; the documents get what the system prompt, the
question and a margin for the chat template leave of the prompt's share."""
from __future__ import annotations

from app.core.answer import prompts
from app.core.textnorm import cjk_count

ANSWER_TOKENS = 400          # room kept for the model's reply
TEMPLATE_MARGIN = 64         # chat-template tokens and the estimate's error


def estimate_tokens(text: str) -> int:
    """Conservative token estimate without the model's tokenizer (CJK costs ~1.5 tokens a char)."""
    cjk = cjk_count(text)
    return int((len(text) - cjk) / 3.5 + cjk * 1.5) + 8


def prompt_room(context_tokens: int) -> int:
    """Prompt tokens the context can take once the answer has its room."""
    return context_tokens - ANSWER_TOKENS


def document_room(context_tokens: int, question: str = "") -> int:
    """Tokens left for document text in a prompt for `question`."""
    return (prompt_room(context_tokens) - estimate_tokens(prompts.template("system") + question)
            - TEMPLATE_MARGIN)
