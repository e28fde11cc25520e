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


# --- time: the prompt a first token within the user's wait can afford ------------------------------
SPEED_MARGIN = 0.8           # prefill slows as the prompt grows (attention): aim a fifth under the target
FOLLOW_UP_SHARE = 0.2        # a follow-up adds at most this share of the first prompt (the issue: ≤ ¼ of its
                             # budget), its question and the last reply included: its wait stays ≤ ¼ of the first


def time_budget_tokens(target_s: float | None, prefill_tps: float | None, context_tokens: int) -> int:
    """Prompt tokens allowed: the first-token target × the measured prefill speed of this model
    on this machine (never a model's constant), within what the context holds. Without a
    measured speed or a target, the context is the only limit."""
    room = prompt_room(context_tokens)
    if not target_s or not prefill_tps:
        return room
    return max(256, min(room, int(target_s * prefill_tps * SPEED_MARGIN)))


def reading_seconds(tokens: int, prefill_tps: float | None) -> float | None:
    """Expected time to read `tokens` new prompt tokens, from the measured speed."""
    return round(tokens / prefill_tps, 1) if prefill_tps else None
