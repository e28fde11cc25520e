"""How text becomes FTS5 tokens, for the index and for questions alike.

One FTS5 table with the porter + unicode61 tokenizer serves both languages: English
words are stemmed; runs of CJK characters are written as overlapping bigrams
("违约金" → "违约 约金"), the usual way to search unsegmented Chinese without a
dictionary, and questions are cut into bigrams the same way.
"""
from __future__ import annotations

import re
from operator import add

from app.core.textnorm import CJK_LETTER_CLASS, join_hyphenation, nfkc

CJK_RUN = re.compile(f"[{CJK_LETTER_CLASS}]+")
WORD = re.compile(r"[^\W_]+")


def bigrams(run: str) -> list[str]:
    return [run] if len(run) < 2 else list(map(add, run, run[1:]))


_CJK_SPAN = re.compile(rf"{CJK_RUN.pattern}(?:\s+{CJK_RUN.pattern})*")  # CJK across line wraps


def index_text(text: str) -> str:
    """Text as the FTS tokenizer should see it: ligatures expanded, hyphenation joined,
    every CJK run (line wraps removed) spelled as space-separated bigrams. Lighter than
    normalize(): case, quotes and spacing are the tokenizer's business, and this runs
    over every chunk at ingestion. Yields the same tokens as normalize() would."""
    text = nfkc(join_hyphenation(text).replace("\u00ad", ""))
    return text if text.isascii() else _CJK_SPAN.sub(_spell_bigrams, text)


def text_words(text: str) -> list[str]:
    """The text's words as the term tests read them (index form, casefolded), cut where the
    search's tokenizer cuts them (FTS5's unicode61: at every character that is not a letter or a
    digit), as the question's terms are: `“Prohibited Data”` holds "prohibited" and "data",
    `third-party` holds "third" and "party", `e-mail` holds "mail" (a term is tested by its first
    five letters, so punctuation kept on a word hid it)."""
    return WORD.findall(index_text(text).casefold())


def _spell_bigrams(m: re.Match) -> str:
    run = m.group()
    if not run.isalpha():   # wrapped across lines: drop the whitespace
        run = "".join(run.split())
    return f" {run} " if len(run) < 2 else f" {' '.join(map(add, run, run[1:]))} "


def section_token(key: str) -> str:
    """'5.2' → 'sec5d2': one token, so 'Section 5.2' never matches clause 5.20 or 2.5."""
    return "sec" + key.replace(".", "d")



def phrase_word(term: str) -> str:
    """A query term back to its word: "平均 均工 工资" (a jieba word as the phrase of its
    bigrams) → "平均工资"; any other term as it is."""
    parts = term.split(" ")
    return parts[0] + "".join(p[1:] for p in parts[1:]) if len(parts) > 1 else term
