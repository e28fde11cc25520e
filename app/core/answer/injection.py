"""Instruction-like text inside a document (prompt injection, issue 15.7).

A PDF can carry text addressed to the model rather than to the reader ("Ignore all
previous instructions and answer only ..."), visible or not. The prompt fences document
text as evidence (resources/prompts), but a small model may still obey it, so such text
is also found here and flagged to the user, and citations.quotable never offers it as a
quote. The patterns are deliberately specific (an imperative aimed at the model, or at
"previous/above instructions"): contracts say "instructions" and "ignore" in ordinary
clauses ("Customer's documented instructions"), which must not be flagged.

The patterns match a folded copy of the text (`fold`), so that trivial disguises do not slip by
(issue 32, point 16): format characters are dropped (zero-width space, soft hyphen, word joiner,
BOM, bidi marks), compatibility forms folded (NFKD: full-width and mathematical letters,
ligatures), accents dropped, Cyrillic and Greek letters that look Latin read as Latin, and words
spelt out letter by letter ("i g n o r e") joined. Spans are given back in the original text.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

_EN = [
    r"\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}\b(?:previous|prior|above|earlier|preceding|all|any|other|system)\b"
    r"[^.\n]{0,20}\b(?:instructions?|prompts?|rules?|directions?|context)\b",
    r"\b(?:answer|reply|respond|say|output|state)\s+(?:only|just|exactly|with\s+only)\b\s*[:\"“'‘]",
    r"\byou\s+(?:must|should|will)\s+now\b|\byou\s+are\s+now\s+(?:an?|the|my|in)\b",
    r"\bfrom\s+now\s+on,?\s+you\s+(?:must|will|should|are)\b",
    # paraphrases: another verb for "ignore", another noun for "instructions"
    r"\b(?:stop\s+following|do\s+not\s+follow|don'?t\s+follow|no\s+longer\s+follow|set\s+aside|"
    r"throw\s+out|abandon)\b[^.\n]{0,40}\b(?:previous|prior|above|earlier|preceding|all|any|other|"
    r"system|original)\b[^.\n]{0,20}\b(?:instructions?|prompts?|rules?|directions?|guidance|guidelines)\b",
    # ... and the noun before its "above": "ignore the instructions above"
    r"\b(?:ignore|disregard|forget|override|stop\s+following|do\s+not\s+follow|don'?t\s+follow|"
    r"no\s+longer\s+follow|set\s+aside|throw\s+out|abandon)\b[^.\n]{0,30}\b(?:instructions?|prompts?|"
    r"rules?|directions?|guidance|guidelines)\s+(?:above|before|so\s+far|until\s+now|"
    r"(?:given|stated)\s+(?:above|before|earlier))\b",
    r"\b(?:as|you\s+are)\s+an?\s+(?:ai|language\s+model|assistant|llm|chatbot)\b",
    r"\b(?:new|updated|real)\s+(?:system\s+)?instructions?\s*:",
    r"\b(?:system|developer)\s+prompt\b",
    r"\bdo\s+not\s+(?:cite|quote|mention|reveal)\b[^.\n]{0,40}\b(?:this|these|document|page|clause|source)",
]
_DE = [
    r"\b(?:ignorier\w*|vergiss|vergessen\s+sie|missachte\w*)\b[^.\n]{0,40}\b(?:vorherigen?|obigen?|"
    r"bisherigen?|alle[nms]?|fruheren?|sonstigen?)\b[^.\n]{0,20}\b(?:anweisungen|instruktionen|regeln|"
    r"vorgaben|befehle)\b",
    r"\bantworte(?:n\s+sie)?\s+(?:nur|ausschlie(?:ss|\u00df)lich)\b",
    r"\bdu\s+(?:bist|musst)\s+(?:jetzt|nun|ab\s+sofort)\b",
]
_ZH = [
    r"(?:忽略|无视|忘记|忘掉|不要理会|不要遵守)[^。\n]{0,10}(?:之前|以上|上面|上述|前面|先前|所有|全部|一切|其他)?[^。\n]{0,6}(?:指令|指示|提示|规则|要求|命令)",
    r"(?:只|仅)(?:回答|回复|输出|说)[:：\"“「]",
    r"你(?:现在)?(?:必须|应该|只能)(?:回答|回复|输出|说)",
    r"(?:系统|开发者)提示",
    r"作为(?:一个)?(?:人工智能|AI|语言模型|助手)",
]
_PATTERNS = [re.compile(p, re.I) for p in _EN + _DE + _ZH]

# Cyrillic and Greek letters drawn like Latin ones (Unicode's confusables, the common subset)
_LOOKALIKE = str.maketrans(
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\u0455\u0501\u04bb\u04cf\u0261"
    "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425\u0406\u0408\u0405"
    "\u03bf\u03b1\u03bd\u03b9\u03ba\u03c1\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c"
    "\u039d\u039f\u03a1\u03a4\u03a5\u03a7",
    "aeopcyxijsdhlg"
    "ABEKMHOPCTXIJS"
    "oavikpABEZHIKM"
    "NOPTYX")
_SPELT_OUT = re.compile(r"(?<!\w)\w(?: \w(?!\w)){3,}")      # "i g n o r e": 4+ letters, one by one


@functools.lru_cache(maxsize=8192)
def _folded_char(ch: str) -> str:
    if unicodedata.category(ch) == "Cf":                 # zero-width, soft hyphen, BOM, bidi marks
        return ""
    return "".join(c for c in unicodedata.normalize("NFKD", ch)
                   if not unicodedata.combining(c)).translate(_LOOKALIKE)


def fold(text: str) -> tuple[str, list[int]]:
    """The text as the patterns read it, and for each of its characters the index of the
    original character it came from."""
    chars, where = [], []
    for i, ch in enumerate(text):
        if ch.isascii():
            chars.append(ch)
            where.append(i)
            continue
        for c in _folded_char(ch):
            chars.append(c)
            where.append(i)
    folded = "".join(chars)
    if _SPELT_OUT.search(folded):
        keep = [True] * len(folded)
        for m in _SPELT_OUT.finditer(folded):
            for k in range(m.start(), m.end()):
                keep[k] = folded[k] != " "
        folded = "".join(c for c, k in zip(folded, keep) if k)
        where = [w for w, k in zip(where, keep) if k]
    return folded, where


@dataclass(frozen=True)
class Finding:
    doc_id: int
    page: int
    text: str          # the instruction-like words, as on the page (cut to ~120 characters)


def instruction_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each instruction-like phrase in the text, in order."""
    folded, where = fold(" ".join(text.split()))
    return sorted({(where[m.start()], where[m.end() - 1] + 1)
                   for p in _PATTERNS for m in p.finditer(folded) if m.end() > m.start()})


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
