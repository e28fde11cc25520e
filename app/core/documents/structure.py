"""Page structure: running headers/footers, clause/section headings (EN + ZH), language."""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from app.core.textnorm import is_chinese

EDGE = 6            # lines at each end of a page where running headers/footers live
_CN_DIGITS = "零〇一二三四五六七八九十百千万两"
_CN_VALUE = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5,
             "六": 6, "七": 7, "八": 8, "九": 9}
_CN_UNIT = {"十": 10, "百": 100, "千": 1000, "万": 10000}
_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}


@dataclass(frozen=True)
class Heading:
    label: str      # "5.2", "第五条", "Article VII", "(a)"
    level: int      # 1 = chapter/article/top clause, 2 = clause, 3 = sub-item
    title: str      # words after the number on the same line ("Payment Dispute"), may be ""
    key: str        # canonical form shared by EN/ZH numerals: "5.2" for 第5.2条 and 5.2


def cn_to_int(text: str) -> int | None:
    """Chinese numerals to int: 五百八十六 → 586, 十二 → 12, 二〇二三 → 2023."""
    if not text:
        return None
    if text.isdigit():
        return int(text)
    if all(c in _CN_VALUE for c in text):  # digit-by-digit (年份 style)
        return int("".join(str(_CN_VALUE[c]) for c in text))
    total, section, digit = 0, 0, 0
    for ch in text:
        if ch in _CN_VALUE:
            digit = _CN_VALUE[ch]
        elif ch in _CN_UNIT:
            unit = _CN_UNIT[ch]
            if unit == 10000:
                total, section = (total + section + digit) * unit, 0
            else:
                section += (digit or 1) * unit
            digit = 0
        else:
            return None
    return total + section + digit


def roman_to_int(text: str) -> int | None:
    values = [_ROMAN.get(c) for c in text.lower()]
    if not values or None in values:
        return None
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))


_DOTTED = re.compile(r"\d+(\.\d+)*")


@lru_cache(maxsize=4096)   # a document repeats its few numbers (（一）, 5, 第三条) many times
def _key(number: str) -> str:
    """'5.2' → '5.2'; '五' → '5'; 'VII' → '7' — one form for matching queries to sections."""
    if _DOTTED.fullmatch(number):
        return ".".join(str(int(p)) for p in number.split("."))
    value = cn_to_int(number)
    if value is None:
        value = roman_to_int(number)
    return str(value) if value is not None else number.lower()


_NUM = rf"[{_CN_DIGITS}]+|\d+(?:\.\d+)*"
_PATTERNS: list[tuple[re.Pattern, int, str]] = [
    (re.compile(rf"^第\s*({_NUM})\s*条(?:之[{_CN_DIGITS}]+)?(?=\s|$)"), 2, "第{}条"),
    (re.compile(rf"^第\s*([{_CN_DIGITS}]+|\d+)\s*(?:编|分编|章|节)"), 1, ""),
    (re.compile(rf"^([{_CN_DIGITS}]+)、"), 1, "{}、"),
    (re.compile(rf"^[（(]([{_CN_DIGITS}]+|\d{{1,2}})[）)]"), 3, "（{}）"),
    (re.compile(r"^(?:section|clause|§)\s*(\d{1,3}(?:\.\d{1,3})*)\.?(?=\s|$|\()", re.I), 2, "{}"),
    (re.compile(r"^article\s+([ivxlcdm]+|\d{1,3})\b\.?", re.I), 1, "Article {}"),
    # "5.2 Payment" / "18.4." / "1. Definitions"; the next word must start a title
    # so wrapped sentences ("30 days of …", "1.5% per month") are not headings.
    (re.compile(r"^(\d{1,3}(?:\.\d{1,3})+)\.?(?=\s+[\"“A-Z\u4e00-\u9fff]|\s*$)"), 2, "{}"),
    (re.compile(r"^(\d{1,3})\.(?=\s+[\"“A-Z\u4e00-\u9fff]|\s*$)"), 1, "{}"),
    (re.compile(r"^\(([a-z]|[ivx]{1,4}|\d{1,2})\)(?=\s|$)"), 3, "({})"),
    (re.compile(r"^([a-z])\)(?=\s)"), 3, "{})"),
]


# Every heading starts with one of these: a cheap test that spares most body lines
# the ten patterns below.
_MAYBE = re.compile(rf"\s*(?:[\d第（(§{_CN_DIGITS}]|[a-z]\)|section|clause|article)", re.I)
maybe_heading = _MAYBE.match   # falsy: the line is surely no heading (what heading_of tests first)
# All ten patterns as one alternation: tried in the same order, the first that matches
# wins, as in a loop over them, but in one call; each has one group, so the group that
# took part (lastindex) tells which pattern matched.
_ANY = re.compile("|".join(f"(?{'i' if p.flags & re.I else ''}:{p.pattern.removeprefix('^')})"
                           for p, _, _ in _PATTERNS))
_KINDS = [(level, fmt) for _, level, fmt in _PATTERNS]


def heading_of(line: str) -> Heading | None:
    """The clause/section heading a line starts with, if any."""
    if not _MAYBE.match(line):
        return None
    s = line.strip()
    m = _ANY.match(s)
    if not m:
        return None
    level, fmt = _KINDS[m.lastindex - 1]
    number = m.group(m.lastindex)
    if fmt == "{}" and s[:1].isalpha() and _REFERENCE.match(s[m.end():]):
        return None     # "Section 12 (General Terms), Section 13 …": a wrapped line citing clauses
    label = fmt.format(number) if fmt else m.group(0).replace(" ", "")
    key = _key(number)
    if not fmt or fmt == "{}、":  # 第八章 → 章8, 一、 → 、1: not article 8 / 1
        key = label[-1] + key
    # Chinese articles and sub-items have no titles: their first words are body text.
    titled = level < 3 and not fmt.endswith("条")
    title = short_title(s[m.end():].strip(" .\u3000")) if titled else ""
    return Heading(label=label, level=level, title=title, key=key)


def after_label(line: str) -> str | None:
    """The line's text after its heading's number ("（一）配偶；" → "配偶；"), None when it heads nothing."""
    s = line.strip()
    m = _ANY.match(s) if _MAYBE.match(line) else None
    return s[m.end():] if m else None


# What follows "Section 12" when the line cites it rather than heads it: "(General Terms),",
# "of this Agreement", "and 13", "; …" — a lower-case word or list punctuation, after an
# optional parenthesised title.
_REFERENCE = re.compile(r"\s*(?:\([^)]*\)\s*)?(?:[,;]|and\b|or\b|[a-z])")

_TITLE = re.compile(r"^([^.。:：]{1,80})[.。:：]")


def short_title(rest: str) -> str:
    """'Payment Dispute. If Customer …' → 'Payment Dispute' (titles end at the first stop)."""
    m = _TITLE.match(rest)
    if m:
        return m.group(1).strip()
    return rest if len(rest) <= 60 else ""


_PAGE_NUMBER = re.compile(
    r"^(?:page\s*\|?\s*)?#+(?:\s*(?:of|/)\s*#+)?(?:\s*/\s*第\s*#+\s*页)?$"
    r"|^第\s*#+\s*页(?:\s*[,，]\s*共\s*#+\s*页)?$|^[-–—]\s*#+\s*[-–—]$", re.I)


_DIGITS = re.compile(r"\d+")
_NOISE = " ,;:'\"‘’“”|_~`·•*"       # OCR specks read as punctuation before a line (never "13.")


def line_key(line: str) -> str:
    """Running-line identity: spaces collapsed, casefolded, digits masked
    ('Page 3 of 12' ≡ 'Page 4 of 12'), stray punctuation at its start dropped (OCR reads a
    speck before a header as ", Common Paper …"). Lighter than normalize(): it runs on every
    edge line."""
    return _DIGITS.sub("#", " ".join(line.split()).casefold()).lstrip(_NOISE)


def running_keys(pages: list[list[str]], edges: list[dict[int, str]] | None = None) -> set[str]:
    """Keys of lines that recur at the top/bottom of many pages (headers, footers).
    `edges`: edge_keys() of each page, when the caller has them already."""
    n = len(pages)
    counts: Counter[str] = Counter()
    example: dict[str, str] = {}
    for lines, edge in zip(pages, edges or map(edge_keys, pages)):
        keyed = {k: lines[i] for i, k in edge.items()}
        counts.update(keyed.keys())
        example.update(keyed)
    keys = {k for k in counts if _PAGE_NUMBER.match(k)}
    if n >= 3:
        need = max(3, math.ceil(0.5 * n))
        # Clause numbers ("18.4.") often open a page: never take them for running lines.
        keys |= {k for k, c in counts.items() if c >= need and not heading_of(example[k])}
    elif n == 2:
        # Two pages (a short scan): a line of words at the edge of both is their running
        # header or footer; a short line ("Yes", "the Agreement.") may repeat by chance.
        keys |= {k for k, c in counts.items() if c == 2 and not heading_of(example[k])
                 and len(re.findall(r"[^\W\d_]{2,}", k)) >= 3}
    keys.discard("")
    return keys


def edge_keys(lines: list[str]) -> dict[int, str]:
    """line_key() of the first and last EDGE non-blank lines, by line index."""
    idx = [i for i, line in enumerate(lines) if line and not line.isspace()]
    return {i: line_key(lines[i]) for i in (idx if len(idx) <= 2 * EDGE else idx[:EDGE] + idx[-EDGE:])}


def strip_running(lines: list[str], keys: set[str], edge: dict[int, str] | None = None) -> list[str]:
    """The page's non-blank lines without running headers/footers (only searched near
    the edges). `edge`: the page's edge_keys(), when the caller has them already."""
    if edge is None:
        edge = edge_keys(lines)
    drop = {i for i, k in edge.items() if k in keys}
    # A footer may extend a running title ("<title> Version 1.0 free to use under CC BY"),
    # printed on one page of a short scan or lost by OCR on the others: the bottom lines with
    # nothing but running lines below them. (At the top, a sentence may open with the title.)
    titles = [k + " " for k in keys if len(k.split()) >= 3]
    for i in sorted(edge, reverse=True) if titles else ():
        if i not in drop and not any(edge[i].startswith(t) for t in titles):
            break
        drop.add(i)
    return [line for i, line in enumerate(lines) if line and not line.isspace() and i not in drop]


def detect_language(texts: list[str]) -> str:
    """'zh', 'en' or 'mixed', by pages: bilingual documents have pages of both kinds."""
    texts = [t for t in texts if t.strip()]
    texts = texts[::max(1, len(texts) // 60)]   # 60 pages tell as well as 2,000 do
    kinds = [("zh" if is_chinese(t) else "en") for t in texts]
    if not kinds:
        return "en"
    zh = kinds.count("zh") / len(kinds)
    return "zh" if zh >= 0.8 else "en" if zh <= 0.2 else "mixed"
