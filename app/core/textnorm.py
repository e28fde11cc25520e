"""Text normalisation shared by indexing, querying and citation matching.

Both sides of every comparison go through `normalize`, so a quote typed by a model
("liability", straight quotes, no line breaks) matches the PDF's text layer
("liabil-\\nity", curly quotes, ligatures, wrapped Chinese lines).
"""
from __future__ import annotations

import re
import unicodedata

# The one definition of CJK character ranges (regex class bodies), from narrow to wide:
IDEOGRAPH_CLASS = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"                  # Han ideographs
CJK_LETTER_CLASS = r"\u3040-\u30ff" + IDEOGRAPH_CLASS + r"\uac00-\ud7af"     # + kana, hangul: words
# + CJK radicals, symbols and punctuation, bopomofo, kanbun, vertical and full-width forms
CJK_CLASS = (r"\u2e80-\u2fdf\u3000-\u303f\u3100-\u312f\u3190-\u31ff" + CJK_LETTER_CLASS
             + r"\ufe30-\ufe4f\uff00-\uffef")
_CJK = f"[{CJK_CLASS}]"

_MAP = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\u00b4": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u00ab": '"', "\u00bb": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-",
    "\u2015": "-", "\u2212": "-", "\ufe58": "-", "\ufe63": "-", "\uff0d": "-",
    "\u00ad": "", "\u200b": "", "\u200c": "", "\u200d": "", "\ufeff": "",
}
# A regex over the few characters to map is much faster than str.translate, which
# looks up every character of the page in a dict.
_QUOTES = re.compile("[" + "".join(_MAP) + "]")
# A hyphen at a line end between two lower-case letters is a word broken by the
# typesetter ("liabil-\nity"); upper-case compounds ("NON-\nINFRINGEMENT") keep it.
# The pattern opens with the literal "-" (the look-behind follows it), so the engine
# jumps from hyphen to hyphen instead of trying the look-behind at every character.
_SOFT_BREAK = re.compile(r"-(?<=[a-z\u00df-\u00ff]-)[ \t]*\n\s*(?=[a-z\u00df-\u00ff])")
_SPACE = re.compile(r"\s+")
_SPACE_BY_CJK = re.compile(rf" (?={_CJK})|(?<={_CJK}) ")


def normalize(text: str) -> str:
    """Canonical form for matching: NFKC, plain quotes/dashes, joined hyphenation,
    single spaces, no spaces touching CJK, casefolded."""
    text = _SOFT_BREAK.sub("", text)
    text = _SPACE.sub(" ", _unify(text))
    text = drop_cjk_spaces(text)
    # NFKC after the CJK step: it turns full-width punctuation (，：) into ASCII,
    # which would hide it from the CJK space rule.
    if not unicodedata.is_normalized("NFKC", text):
        text = drop_cjk_spaces(_SPACE.sub(" ", _unify(unicodedata.normalize("NFKC", text))))
    return text.casefold().strip()


def _unify(text: str) -> str:
    return _QUOTES.sub(lambda m: _MAP[m.group()], text)


# Full-width ASCII forms (，；：（）) and the ideographic space are most of what keeps
# Chinese text from being NFKC already. Each is swapped for its compatibility
# decomposition (one ASCII character) first: NFKD decomposes them the same way, so
# NFKC's result does not change, and usually nothing is left for the slow full pass.
_WIDE = {c: unicodedata.normalize("NFKD", c) for c in map(chr, [0x3000, *range(0xFF01, 0xFF5F)])}
_WIDE_CHARS = re.compile("[\u3000\uff01-\uff5e]")


def nfkc(text: str) -> str:
    """unicodedata.normalize("NFKC", text), faster on typical Chinese text."""
    if text.isascii():
        return text
    for c in set(_WIDE_CHARS.findall(text)):
        text = text.replace(c, _WIDE[c])
    return text if unicodedata.is_normalized("NFKC", text) else unicodedata.normalize("NFKC", text)


def join_hyphenation(text: str) -> str:
    """'liabil-\nity' → 'liability' (the first step of normalize, for the indexer)."""
    return _SOFT_BREAK.sub("", text)


def drop_cjk_spaces(text: str) -> str:
    return _SPACE_BY_CJK.sub("", text)


# Runs, not single characters: a page's letters in a few dozen matches, not thousands.
_IDEOGRAPHS = re.compile(f"[{IDEOGRAPH_CLASS}]+")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]+")


CHINESE_SHARE = 0.3    # a text (question or page) is Chinese from this share of ideographs on


def is_chinese(text: str) -> bool:
    """The one test of "is this question (or page) Chinese", for prompts, ranking and ingestion."""
    return cjk_share(text) > CHINESE_SHARE


def language(text: str) -> str:
    """'zh' or 'en': the language a question is answered in and ranked for."""
    return "zh" if is_chinese(text) else "en"


def cjk_count(text: str) -> int:
    """CJK characters (letters, punctuation, full-width forms) in the text."""
    return 0 if text.isascii() else len(_CJK_CHARS.findall(text))


_CJK_CHARS = re.compile(_CJK)


def cjk_share(text: str) -> float:
    """Share of CJK ideographs among letters (0.0 when there are none)."""
    if text.isascii():
        return 0.0
    cjk = sum(map(len, _IDEOGRAPHS.findall(text)))
    if not cjk:
        return 0.0
    return cjk / (cjk + sum(map(len, _LATIN.findall(text))))


LATIN_ENDS, CJK_ENDS = ".!?", "。！？"      # a Latin end needs a space after it ("5.2" is not an end)
_SENTENCE_END = re.compile(rf"(?<=[{LATIN_ENDS}])\s+|(?<=[{CJK_ENDS}])\s*")
REPEAT_MIN_CHARS = 12   # a sentence said again counts as a repeat from this length ("Yes." twice does not)


def sentences(text: str) -> list[str]:
    """Sentences of a model's answer, stripped; the last one may still be unfinished."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def is_repeat(sentence: str, earlier) -> bool:
    """Whether a sentence is long enough to count and was said before."""
    return len(sentence) >= REPEAT_MIN_CHARS and sentence in earlier


LOOP_MIN_CHARS = 30     # a loop counts from this length (also the loop guard's tail: app/worker/llama/loop_guard.py)


def without_looping_tail(text: str, longest_unit: int = 200) -> str:
    """The text with a run repeated back to back at its end ("1.1.1.1…", "by either party by
    either party …") cut to its first copy; unchanged when the end does not loop at least
    two and a half times over LOOP_MIN_CHARS characters (a loop ends where the guard or the
    token limit cut it: mid-copy, its separator missing)."""
    found = None                  # (where the loop starts, its unit's length), earliest start
    for unit in range(1, min(longest_unit, len(text) * 2 // 5) + 1):
        start = len(text) - unit      # walk back while each character equals the one a unit on
        while start > 0 and text[start - 1] == text[start - 1 + unit]:
            start -= 1
        if len(text) - start >= max(unit * 5 // 2, LOOP_MIN_CHARS) and (found is None or start < found[0]):
            found = (start, unit)
    if found is None:
        return text
    return text[:_copy_end(text, *found)].rstrip(" ,;:、，；：")


def _copy_end(text: str, start: int, unit: int) -> int:
    """Where to cut a loop after one copy: the run may start mid-sentence ("…and the
    document is 5 pages long. The document is 5 pages long. T"), so cut after the last
    sentence end within its first unit, else at the last word boundary, else after one unit."""
    window = range(start + unit, start, -1)
    for cut in window:
        if text[cut - 1] in CJK_ENDS or (text[cut - 1] in LATIN_ENDS and text[cut] == " "):
            return cut
    return next((cut for cut in window if text[cut].isspace()), start + unit)
