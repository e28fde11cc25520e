"""Review templates (one click each) from resources/prompts: review_*_{en,zh}.md, compare_clauses_*.md.

A template file's first line is "# Title" (the button's label); the rest is the question.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PROMPTS = Path(__file__).resolve().parents[2] / "resources" / "prompts"
DEFAULT_TOPIC = {"en": "liability, termination, payment, confidentiality and governing law",
                 "zh": "责任、解除、付款、保密和适用法律"}


@dataclass(frozen=True)
class Template:
    key: str          # "review_contract"
    lang: str         # "en" | "zh"
    title: str
    prompt: str

    def question(self, topic: str = "") -> str:
        """The text sent as the question; compare templates fill in their topic."""
        if "{topic}" in self.prompt:
            return self.prompt.replace("{topic}", topic.strip() or DEFAULT_TOPIC[self.lang])
        return self.prompt


def parse(path: Path) -> Template:
    stem = path.stem
    key, _, lang = stem.rpartition("_")
    text = path.read_text(encoding="utf-8").strip()
    first, _, rest = text.partition("\n")
    title = first.lstrip("#").strip() if first.startswith("#") else key.replace("_", " ").capitalize()
    body = rest.strip() if first.startswith("#") else text
    return Template(key, lang, title, body)


def load(folder: Path = PROMPTS) -> list[Template]:
    """Every template in the folder, sorted by key then language."""
    found = [parse(p) for p in sorted(folder.glob("review_*.md")) + sorted(folder.glob("compare_*.md"))]
    return [t for t in found if t.lang in ("en", "zh")]


def for_language(templates: list[Template], lang: str, compare: bool) -> list[Template]:
    """Templates to show: the document's language (English for mixed); compare ones only when comparing."""
    lang = "zh" if lang == "zh" else "en"
    return [t for t in templates if t.lang == lang and (compare or not t.key.startswith("compare"))]
