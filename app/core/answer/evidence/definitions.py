"""A document's own definitions as the question's synonyms. A contract names a thing once
("“Updates” means updates and maintenance releases …", "本法所称个人信息，是指…") and then
uses only the defined term ("Customer will install all Updates …"); a question asks in the
definition's words ("apply the vendor's patches and maintenance releases"). When a definition's
body holds enough of the question, its term is read as one of the question's words, so the
sentences using it count as about the question."""
from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.answer.evidence import per_document
from app.core.answer.evidence.scoring import TermWeights, question_terms
from app.core.search.evidence import Words

_QUOTED = r"[\"“”']([^\"“”']{2,60})[\"“”']"
_EN = re.compile(rf"^(?:[\d.()a-z]{{0,8}}\s+)?{_QUOTED}\s*(?:means|shall mean|refers to|has the meaning|is|are)\s+(.+)$",
                 re.IGNORECASE | re.DOTALL)
_ZH = re.compile(r"(?:所称|^(?:（[一二三四五六七八九十]+）)?[“\"]?)([^，,。；：“”\"]{2,20}?)[”\"]?[，,]?\s*(?:是指|系指)(.+)$", re.DOTALL)

_LEAD = re.compile(r"^(第[一二三四五六七八九十百零]+条)?\s*([^所]{0,6}所称)?")


@dataclass(frozen=True)
class Definition:
    term: str           # as printed: "Updates", "个人信息"
    page: int
    body: Words         # what it is defined as


_read: per_document.PerDocument[list[Definition]] = per_document.PerDocument()


def paraphrased(library, info, question: str, weights: TermWeights, floor: float,
                most: int) -> list[tuple[list[str], frozenset[str]]]:
    """(the defined term's search terms, the question terms its definition holds) for the
    document's definitions whose bodies hold at least `floor` of the question's weighted terms
    (`weights`), best first, at most `most`, those whose term the question does not name already."""
    if most <= 0:
        return []
    named = Words.of(question)
    scored, seen = [], set()
    for d in _definitions(library, info):
        terms = question_terms(d.term)
        if not terms or all(named.has(t) for t in terms) or d.term in seen:
            continue
        share = weights.share(d.body)
        if share >= floor:
            seen.add(d.term)
            scored.append((share, terms, frozenset(t for t in weights.terms if d.body.has(t))))
    scored.sort(key=lambda item: -item[0])
    return [(terms, held) for _, terms, held in scored[:most]]


def named_in(library, info, question: str) -> list[Definition]:
    """The document's definitions whose term the question names whole (all its search terms),
    the longest term first ("Customer Personal Data" before "Personal Data")."""
    named = Words.of(question)
    found = {}
    for d in _definitions(library, info):
        terms = question_terms(d.term)
        if terms and all(named.has(t) for t in terms) and d.term not in found:
            found[d.term] = (len(terms), len(d.term), d)
    return [d for *_, d in sorted(found.values(), key=lambda item: (-item[0], -item[1]))]


def parse(sentence: str) -> tuple[str, str] | None:
    """(term, body) of a definition sentence ("“Fees” means …", "本法所称X，是指…"), else None."""
    text = " ".join(sentence.split())
    m = _EN.match(text) or _ZH.search(text)
    if not m:
        return None
    term, body = _LEAD.sub("", m.group(1)).strip(), m.group(2).strip()
    return (term, body) if len(body) >= 8 else None


def _definitions(library, info) -> list[Definition]:
    """The document's definitions, read once per document (per_document)."""
    def read() -> list[Definition]:
        return [Definition(parsed[0], page, Words.of(parsed[1]))
                for page, text in per_document.sentences(library, info) if (parsed := parse(text))]
    return _read.get(info, read)
