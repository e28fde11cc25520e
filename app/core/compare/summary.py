"""The model's row after the table: the comparison's prompt (what the engine is asked, never
what the chat shows) and whether its answer may be shown (its citations back it)."""
from __future__ import annotations

from pathlib import Path

from app.core.compare.clauses import ClauseTable

PROMPTS = Path(__file__).resolve().parents[3] / "resources" / "prompts"


def model_prompt(table: ClauseTable) -> str:
    """The internal prompt: the template filled with the topics, and the clauses found for
    each document named, so the model compares those first."""
    text = (PROMPTS / f"compare_clauses_{table.lang}.md").read_text(encoding="utf-8").strip()
    body = text.partition("\n")[2].strip() if text.startswith("#") else text
    joiner = "、" if table.lang == "zh" else ", "
    prompt = body.replace("{topic}", joiner.join(t.label(table.lang) for t in table.topics))
    found = [f"- {t.label(table.lang)}, document {c.ref.number}: {c.card.clause or 'p. ' + str(c.card.page)}"
             for t, row in zip(table.topics, table.rows) for c in row if c.card is not None]
    return prompt + ("\n\nClauses found by the search:\n" + "\n".join(found) if found else "")


def model_row(answer) -> dict | None:
    """The model's summary as the table's last row, only when its citations verify and back it."""
    if answer is None or not answer.supported:
        return None
    return {"summary": answer.text, "citations": [c.to_dict() for c in answer.citations if c.verified]}
