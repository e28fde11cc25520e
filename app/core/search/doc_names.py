"""Which documents a question names ("under the Bonterms DPA", "根据民法典").

A lawyer's library holds many documents that share most of their words; a question that
names one of them ("Common Paper CSA", "Bonterms云服务条款") should search that one first.
A document is known by the words of its title and of its file name, plus the initials of
its title's capitalised runs ("Cloud Service Agreement" → "csa"). Each name word weighs
by how few documents carry it (an inverse document frequency over names), so "Bonterms"
(3 of 20 documents) counts and "Agreement" (9 of 20) barely does; generic question
words therefore rarely tip the ranking; a name word that many documents use in their
text ("service", "protection") is an ordinary word and does not name anything.
Library.search then searches the named documents on their own as well, and keeps each
chunk's better score: not a filter, so a clause that only another document has is still
found. Measured on dev.jsonl, library-wide: Chinese recall@5 0.86 → 0.93 (a Chinese
question about "Bonterms云服务条款" had only Chinese laws in its top 10), English
recall@1 0.68 → 0.71, English recall@5 0.95 → 0.93; in-document unchanged.

Within a search, the question's name words that name every searched document leave the
BM25 query (`scope_words`): in-document they only favour the title page and preamble.
When what is left matches nothing (a Chinese question about an English contract whose
only English word is its name), the full query is used. Measured: in-document English
recall@1 0.73 → 0.78, library-wide 0.71 → 0.73; Chinese and recall@5 unchanged.
"""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Callable

from app.core.search.queries import parse_query

MIN_WEIGHT = 1.0   # log(n/df): a name word carried by at most ~1/3 of the documents
_CAPS_RUN = re.compile(r"(?:\b[A-Z][A-Za-z]*\b[\s-]*){3,5}")


def name_terms(title: str, path: str) -> frozenset[str]:
    """Index-form words that name a document: title, file stem, title initials."""
    stem = re.sub(r"[-_.]+", " ", Path(path).stem)
    initials = [
        "".join(w[0] for w in m.group().split()).lower()
        for m in _CAPS_RUN.finditer(re.sub(r"[()\[\],]", " ", title))
    ]
    words = parse_query(f"{title} {stem} {' '.join(initials)}").terms
    return frozenset(_base(w) for w in words if not w.isdigit())


def _base(word: str) -> str:
    """Crude plural folding so "contracts" in a file name matches "contract"."""
    return word[:-1] if len(word) > 3 and word.isascii() and word.endswith("s") else word


def naming_words(question: str, names: dict[int, frozenset[str]],
                 docs_using: Callable[[str], int]) -> dict[str, float]:
    """The question's words (in name form) that name some of these documents, each with
    its weight log(n / documents so named). `docs_using(word)` counts the documents whose
    text holds the word: a name word that many documents use in their text ("service",
    "protection") is an ordinary word, not a name."""
    df: dict[str, int] = {}
    for terms in names.values():
        for t in terms:
            df[t] = df.get(t, 0) + 1
    asked = {_base(t) for t in parse_query(question).terms}
    return {t: math.log(len(names) / df[t]) for t in asked if t in df and docs_using(t) <= 2 * df[t]}


def mention_scores(question: str, names: dict[int, frozenset[str]],
                   docs_using: Callable[[str], int]) -> dict[int, float]:
    """Document id → share (0..1] of the best match's weight, for documents the question
    names; empty when it names none."""
    if len(names) < 2:
        return {}
    weight = naming_words(question, names, docs_using)
    if not weight:
        return {}
    raw = {doc: sum(weight[t] for t in terms & weight.keys()) for doc, terms in names.items()}
    best = max(raw.values())
    if best < MIN_WEIGHT:
        return {}
    return {doc: s / best for doc, s in raw.items() if s > 0}


def scope_words(question: str, names: dict[int, frozenset[str]], scope: list[int],
                docs_using: Callable[[str], int]) -> set[str]:
    """Name words of the question that name every document of the scope: once the search
    is inside those documents they say nothing about where the answer is, and only raise
    the title page and preamble, which repeat the name."""
    words = naming_words(question, names, docs_using)
    return {t for t in words if all(t in names.get(d, ()) for d in scope)}


def without(terms: tuple[str, ...], words: set[str]) -> tuple[str, ...]:
    kept = tuple(t for t in terms if _base(t) not in words)
    return kept or terms
