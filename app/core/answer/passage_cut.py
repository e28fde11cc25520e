"""The budget follows the machine as it is now (issue 31.2): a retrieval prompt tells our
llama.cpp worker where its passages end and when the prompt must be read; the worker measures
its speed on the first slices and, behind plan, drops the lower-ranked passages at a passage
boundary. Here: that plan for a request, and what the answer keeps of the worker's outcome.

Why the cut can keep the question: a retrieval turn's message is `<intro><passages><closing +
question>`, so the prompt with only the first K passages is the message's text up to the end
of passage K followed by the closing part — exactly the message the conversation builds for
those K passages, so the append-only context stays the prompt that was read."""
from __future__ import annotations

from app.core.answer.conversation import Conversation, Passage

READ_SHARE = 0.85     # of the time left, the prompt's share: the first token follows the read
                      # (its last token's decode, the grammar's start) and later slices read slower


def request_plan(conv: Conversation, question: str, passages: list[Passage], messages: list[dict],
                 seconds_left: float) -> dict | None:
    """`pagewise_passages` for this turn's request, or None where a cut could not keep the
    conversation's exact text (then the request goes as before)."""
    if len(passages) < 2 or not messages or seconds_left <= 0:
        return None
    full = messages[-1]["content"]
    blocks = [p.block for p in passages]
    intro = full.find(blocks[0])
    if intro < 0:
        return None
    ends = [intro + len("\n\n".join(blocks[:k])) for k in range(1, len(blocks) + 1)]
    tail = ends[-1]
    for k in range(1, len(blocks)):
        if full[:ends[k - 1]] + full[tail:] != conv.messages(question, passages[:k])[-1]["content"]:
            return None
    return {"ends": ends, "tail": tail, "deadline_s": round(seconds_left * READ_SHARE, 2)}


def kept(passages: list[Passage], outcome: dict | None) -> list[Passage]:
    """The passages the engine read: all, unless it reports fewer."""
    if not outcome:
        return list(passages)
    try:
        read = int(outcome["read"])
    except (KeyError, TypeError, ValueError):
        return list(passages)
    return list(passages[:max(1, read)]) if read < len(passages) else list(passages)


def warning(outcome: dict | None, planned_tps: float | None) -> str:
    """The line the answer carries when the engine read fewer passages than were sent."""
    try:
        read, total = int(outcome["read"]), int(outcome["of"])
        measured = float(outcome.get("measured_tps") or 0)
    except (KeyError, TypeError, ValueError):
        return ""
    if read >= total:
        return ""
    planned = f"{planned_tps:.0f} planned" if planned_tps else "no speed measured before"
    return (f"Read {read} of {total} passages: the machine was slower than planned ({measured:.0f} tok/s "
            f"measured vs {planned}); the lower-ranked passages were left out so the answer starts on time.")
