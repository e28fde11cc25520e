"""Prompt templates from resources/prompts (English and Chinese) and the answer's JSON schema."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from app.core.textnorm import cjk_share

PROMPTS = Path(__file__).resolve().parents[2] / "resources" / "prompts"

ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "citations": {
            "type": "array",
            "maxItems": 4,
            "items": {
                "type": "object",
                "properties": {
                    "doc": {"type": "integer"},
                    "page": {"type": "integer"},
                    "quote": {"type": "string"},
                },
                "required": ["doc", "page", "quote"],
            },
        },
    },
    "required": ["answer", "citations"],
}

NOT_STATED = {"en": "The document does not say.", "zh": "文件没有规定。"}


@lru_cache(maxsize=None)
def template(name: str) -> str:
    return (PROMPTS / f"{name}.md").read_text(encoding="utf-8").strip()


def question_language(question: str) -> str:
    return "zh" if cjk_share(question) > 0.2 else "en"


def messages(context: str, question: str, whole: bool) -> list[dict]:
    """System prompt and documents first, question last, so follow-ups share the prefix."""
    lang = question_language(question)
    ctx = template("context_whole" if whole else "context_retrieval").format(documents=context)
    q = template(f"question_{lang}").format(question=question.strip())
    return [{"role": "system", "content": template("system")},
            {"role": "user", "content": f"{ctx}\n\n{q}"}]
