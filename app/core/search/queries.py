"""Questions → FTS5 queries: stop words, section references, Chinese words, derived-word backoff."""
from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, replace

from app.core.documents.structure import cn_to_int, roman_to_int
from app.core.search.tokens import CJK_RUN, WORD, bigrams, section_token
from app.core.textnorm import normalize

_STOP_EN = set("""a about above after again against all am an and any are as at be because
been before being below between both but by can could did do does doing down during each
few for from further had has have having he her here hers him his how i if in into is it its
itself just me more most my no nor not now of off on once only or other our ours out over own
same she should so some such than that the their theirs them then there these they this those
through to too under until up very was we were what when where which while who whom why will
with would you your yours yourself under s t don may might must shall also any anything ever
still does doesn isn aren wasn weren won get gets got let lets us our one ones much many""".split())
# Words a question uses about the documents themselves ("which document wins", "which provisions
# survive", "what does it say"): they match every page alike. Measured on dev.jsonl: in-document
# EN recall@1 0.80 → 0.83, recall@5 0.95 → 0.98, library-wide recall@1 0.76 → 0.78, nothing lost.
_STOP_EN |= {"document", "documents", "provision", "provisions", "say", "says"}
_STOP_ZH = re.compile(r"有没有|是不是|能不能|可不可以|什么|怎么|怎样|如何|哪些|哪个|哪种|哪一|多少|"
                      r"多长|多久|多大|是否|请问|根据|[的了吗呢吧啊么哪]")
_SECTION_REF = re.compile(
    r"(?:section|clause|article|§)\s*(\d{1,3}(?:\.\d{1,3})*|[ivxlc]+)\b"
    r"|第\s*([零〇一二三四五六七八九十百千两]+|\d+(?:\.\d+)*)\s*条"
    r"|(?<![\d.])(\d{1,3}\.\d{1,3}(?:\.\d{1,3})*)(?![\d%]|\.\d)", re.I)


@dataclass(frozen=True)
class Query:
    terms: tuple[str, ...]       # index-form tokens (English words, CJK bigrams)
    sections: tuple[str, ...]    # section tokens the question names ("sec22d5")

    def match(self) -> str:
        """FTS5 expression: any term, in any column; named sections count extra."""
        parts = []
        if self.terms:
            parts.append("{body title} : (" + " OR ".join(quote(t) for t in self.terms) + ")")
        if self.sections:
            parts.append("section : (" + " OR ".join(self.sections) + ")")
        return " OR ".join(parts)


def quote(term: str) -> str:
    """A term as an FTS5 string; "audit*" (a backed-off root, see with_backoff) as a prefix query."""
    if term.endswith("*"):
        return '"' + term[:-1].replace('"', '""') + '" *'
    return '"' + term.replace('"', '""') + '"'


def parse_query(question: str) -> Query:
    text = normalize(question)
    sections = []
    for m in _SECTION_REF.finditer(text):
        number = next(g for g in m.groups() if g)
        value = number if re.fullmatch(r"\d+(\.\d+)*", number) else cn_to_int(number) or roman_to_int(number)
        if value:
            sections.append(section_token(".".join(str(int(p)) for p in str(value).split("."))))
    terms: list[str] = []
    for run in CJK_RUN.findall(text):
        for piece in _STOP_ZH.split(run):
            terms.extend(_cjk_terms(piece))
    latin = CJK_RUN.sub(" ", text)
    terms.extend(w for w in WORD.findall(latin) if w not in _STOP_EN and len(w) > 1)
    return Query(tuple(dict.fromkeys(terms)), tuple(dict.fromkeys(sections)))


def _cjk_terms(piece: str) -> list[str]:
    """Query terms for a run of Chinese: with jieba installed, its words (a longer word
    as the phrase of its bigrams, so '个人信息' must appear as such); without it, all
    bigrams. Measured on dev.jsonl (Chinese, BM25 only): recall@1 0.71 → 0.79 with
    jieba, since bigrams that straddle two words ('约时' in '签约时约定') stop adding noise."""
    if len(piece) < 2:
        return []
    words = _segment(piece)
    if words is None:
        return bigrams(piece)
    return [w if len(w) == 2 else " ".join(bigrams(w)) for w in words if len(w) >= 2]


def _segment(text: str) -> list[str] | None:
    jieba = quiet_jieba()
    return None if jieba is None else list(jieba.cut(text))


def quiet_jieba():
    """The jieba module, its dictionary-loading log silenced, or None where it is not installed."""
    try:
        import jieba
    except ImportError:
        return None
    global _JIEBA_QUIET
    if not _JIEBA_QUIET:  # it logs its dictionary loading at INFO on first use
        import logging
        jieba.setLogLevel(logging.WARNING)
        _JIEBA_QUIET = True
    return jieba


_JIEBA_QUIET = False


# A question's word that the searched documents never use is often a derived form of one
# they do: "auditors" for "audit" (Porter leaves -or alone), "higher" for "high",
# "licensee" for "licensed". Such a word is backed off to its root as a prefix query.
# Only absent words back off, so "processor" in a DPA full of "processor" never turns
# into "process*" (measured on dev.jsonl: backing off every such word lost as many
# questions as it won; backing off absent ones only: in-document EN recall@1 0.78 →
# 0.80, library-wide 0.73 → 0.76, nothing lost; a wider list of endings, -ing/-ion/-s,
# changed nothing and backed off noise such as "sitting" → "sitt*").
_DERIVED = re.compile(r"(?<=[a-z]{4})(?:ors?|ers?|ees?)$")


def with_backoff(con: sqlite3.Connection, query: Query, doc_ids: list[int] | None) -> Query:
    """The query plus "root*" for each derived English word absent from the documents searched."""
    roots = []
    for term in query.terms:
        m = _DERIVED.search(term) if term.isascii() and len(term) >= 6 else None
        if m and not _used_in(con, term, doc_ids):
            roots.append(term[:m.start()] + "*")
    return replace(query, terms=query.terms + tuple(dict.fromkeys(roots))) if roots else query


def _used_in(con: sqlite3.Connection, term: str, doc_ids: list[int] | None) -> bool:
    match = "body : " + quote(term)
    if doc_ids is None:
        return con.execute("SELECT 1 FROM chunk_fts WHERE chunk_fts MATCH ? LIMIT 1", (match,)).fetchone() is not None
    return con.execute("SELECT 1 FROM chunk_fts JOIN chunks c ON c.id = chunk_fts.rowid WHERE chunk_fts MATCH ? "
                       f"AND c.doc_id IN ({','.join('?' * len(doc_ids))}) LIMIT 1",
                       [match, *doc_ids]).fetchone() is not None
