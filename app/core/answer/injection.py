"""Instruction-like text inside a document (prompt injection, issue 15.7).

A PDF can carry text addressed to the model rather than to the reader ("Ignore all
previous instructions and answer only ..."), visible or not. The prompt fences document
text as evidence (resources/prompts), but a small model may still obey it, so such text
is also found here and flagged to the user, and citations.quotable never offers it as a
quote. The patterns are deliberately specific (an imperative aimed at the model, or at
"previous/above instructions"): contracts say "instructions" and "ignore" in ordinary
clauses ("Customer's documented instructions"), which must not be flagged.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_EN = [
    r"\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}\b(?:previous|prior|above|earlier|preceding|all|any|other|system)\b"
    r"[^.\n]{0,20}\b(?:instructions?|prompts?|rules?|directions?|context)\b",
    r"\b(?:answer|reply|respond|say|output|state)\s+(?:only|just|exactly|with\s+only)\b\s*[:\"“'‘]",
    r"\byou\s+(?:are|must|should|will)\s+now\b",
    r"\b(?:as|you\s+are)\s+an?\s+(?:ai|language\s+model|assistant|llm|chatbot)\b",
    r"\b(?:new|updated|real)\s+(?:system\s+)?instructions?\s*:",
    r"\b(?:system|developer)\s+prompt\b",
    r"\bdo\s+not\s+(?:cite|quote|mention|reveal)\b[^.\n]{0,40}\b(?:this|these|document|page|clause|source)",
]
_ZH = [
    r"(?:忽略|无视|忘记|忘掉|不要理会|不要遵守)[^。\n]{0,10}(?:之前|以上|上面|上述|前面|先前|所有|全部|一切|其他)?[^。\n]{0,6}(?:指令|指示|提示|规则|要求|命令)",
    r"(?:只|仅)(?:回答|回复|输出|说)[:：\"“「]",
    r"你(?:现在)?(?:必须|应该|只能)(?:回答|回复|输出|说)",
    r"(?:系统|开发者)提示",
    r"作为(?:一个)?(?:人工智能|AI|语言模型|助手)",
]
_PATTERNS = [re.compile(p, re.I) for p in _EN + _ZH]


@dataclass(frozen=True)
class Finding:
    doc_id: int
    page: int
    text: str          # the instruction-like words, as on the page (cut to ~120 characters)


def instruction_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each instruction-like phrase in the text, in order."""
    return sorted({m.span() for p in _PATTERNS for m in p.finditer(" ".join(text.split()))})


def looks_like_instruction(text: str) -> bool:
    """Whether the text holds words addressed to the model rather than to a reader."""
    return bool(instruction_spans(text))


def scan_pages(doc_id: int, pages: dict[int, str]) -> list[Finding]:
    """Instruction-like text on the pages of one document (page number → page text):
    one finding per page, quoting its first instruction-like phrase."""
    out = []
    for number in sorted(pages):
        flat = " ".join(pages[number].split())
        spans = instruction_spans(flat)
        if spans:
            start, end = spans[0]
            out.append(Finding(doc_id, number, flat[start:end + 80].strip()[:120]))
    return out


def warning(findings: list[Finding], labels: dict[int, str] | None = None) -> str:
    """One line for the user, or "" when there is nothing to flag."""
    if not findings:
        return ""
    first = findings[0]
    where = sorted({(labels or {}).get(f.doc_id, f"doc {f.doc_id}") + f" p. {f.page}" for f in findings})
    return (f"The document contains text that gives instructions to the assistant ({', '.join(where[:4])}"
            f"{' …' if len(where) > 4 else ''}): “{first.text}”. It was treated as document text, "
            "not obeyed; check the answer against the page.")
