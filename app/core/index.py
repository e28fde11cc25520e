"""SQLite FTS5 index over chunks: how text is tokenised, how questions become queries.

One FTS5 table with the porter + unicode61 tokenizer serves both languages: English
words are stemmed; runs of CJK characters are written as overlapping bigrams
("违约金" → "违约 约金"), the usual way to search unsegmented Chinese without a
dictionary, and questions are cut into bigrams the same way.
"""
from __future__ import annotations

import json
import math
import re
import sqlite3
from dataclasses import dataclass, replace
from operator import add

from app.core.documents.chunking import Piece
from app.core.documents.structure import cn_to_int, roman_to_int
from app.core.textnorm import join_hyphenation, nfkc, normalize

_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
_WORD = re.compile(r"[^\W_]+")
# Column weights for bm25(): body, section labels, headings, document title.
# Headings (clause titles, chapter names; also tried: defined terms) are stored but not
# scored: boosting them (weights 0.5-4) lowered recall@1 on dev.jsonl (EN 0.73 → 0.66-0.68).
WEIGHTS = (1.0, 6.0, 0.0, 1.0)


def bigrams(run: str) -> list[str]:
    return [run] if len(run) < 2 else list(map(add, run, run[1:]))


_CJK_SPAN = re.compile(rf"{_CJK_RUN.pattern}(?:\s+{_CJK_RUN.pattern})*")  # CJK across line wraps


def index_text(text: str) -> str:
    """Text as the FTS tokenizer should see it: ligatures expanded, hyphenation joined,
    every CJK run (line wraps removed) spelled as space-separated bigrams. Lighter than
    normalize(): case, quotes and spacing are the tokenizer's business, and this runs
    over every chunk at ingestion. Yields the same tokens as normalize() would."""
    text = nfkc(join_hyphenation(text).replace("\u00ad", ""))
    return text if text.isascii() else _CJK_SPAN.sub(_spell_bigrams, text)


def _spell_bigrams(m: re.Match) -> str:
    run = m.group()
    if not run.isalpha():   # wrapped across lines: drop the whitespace
        run = "".join(run.split())
    return f" {run} " if len(run) < 2 else f" {' '.join(map(add, run, run[1:]))} "


def section_token(key: str) -> str:
    """'5.2' → 'sec5d2': one token, so 'Section 5.2' never matches clause 5.20 or 2.5."""
    return "sec" + key.replace(".", "d")


# FTS5 gathers new terms in memory and writes an index segment each time they pass
# 'hashsize' bytes (default 1 MB), merging segments as they pile up. With 8 MB the
# 2,000-page benchmark PDF is written as one segment (6 left after merges with 1 MB)
# and its FTS inserts take ~30% less time. Stored in chunk_fts_config: written once.
FTS_HASHSIZE = 8 << 20


def add_pieces(con: sqlite3.Connection, rows: list[tuple[int, Piece]], title: str) -> None:
    """Index (chunk id, piece) pairs; `title` is the document title in index form."""
    if con.execute("SELECT v FROM chunk_fts_config WHERE k = 'hashsize'").fetchone() != (FTS_HASHSIZE,):
        try:
            con.execute("INSERT INTO chunk_fts(chunk_fts, rank) VALUES ('hashsize', ?)", (FTS_HASHSIZE,))
        except sqlite3.OperationalError:   # an SQLite without the option: default buffer
            pass
    con.executemany(
        "INSERT INTO chunk_fts(rowid, body, section, heading, title) VALUES (?,?,?,?,?)",
        [(chunk_id, index_text(p.chunk.text), " ".join(section_token(k) for k in p.keys),
          "", title) for chunk_id, p in rows])  # headings: unscored (see WEIGHTS), left empty


# --- questions -------------------------------------------------------------------

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
            parts.append("{body title} : (" + " OR ".join(_quote(t) for t in self.terms) + ")")
        if self.sections:
            parts.append("section : (" + " OR ".join(self.sections) + ")")
        return " OR ".join(parts)


def _quote(term: str) -> str:
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
    for run in _CJK_RUN.findall(text):
        for piece in _STOP_ZH.split(run):
            terms.extend(_cjk_terms(piece))
    latin = _CJK_RUN.sub(" ", text)
    terms.extend(w for w in _WORD.findall(latin) if w not in _STOP_EN and len(w) > 1)
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
    try:
        import jieba
    except ImportError:
        return None
    global _JIEBA_QUIET
    if not _JIEBA_QUIET:  # it logs its dictionary loading at INFO on first use
        import logging
        jieba.setLogLevel(logging.WARNING)
        _JIEBA_QUIET = True
    return list(jieba.cut(text))


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
    match = "body : " + _quote(term)
    if doc_ids is None:
        return con.execute("SELECT 1 FROM chunk_fts WHERE chunk_fts MATCH ? LIMIT 1", (match,)).fetchone() is not None
    return con.execute("SELECT 1 FROM chunk_fts JOIN chunks c ON c.id = chunk_fts.rowid WHERE chunk_fts MATCH ? "
                       f"AND c.doc_id IN ({','.join('?' * len(doc_ids))}) LIMIT 1",
                       [match, *doc_ids]).fetchone() is not None


@dataclass(frozen=True)
class ChunkHit:
    chunk_id: int
    doc_id: int
    page: int
    page_end: int
    section: str
    text: str
    score: float


def search_chunks(con: sqlite3.Connection, query: Query, doc_ids: list[int] | None,
                  limit: int) -> list[ChunkHit]:
    """Best chunks first (BM25); each attributed to the page holding most query terms."""
    expr = query.match()
    if not expr:
        return []
    sql = ("SELECT c.id, c.doc_id, c.page_start, c.page_end, c.section, c.text, c.spans, "
           f"bm25(chunk_fts, {', '.join(map(str, WEIGHTS))}) AS s "
           "FROM chunk_fts JOIN chunks c ON c.id = chunk_fts.rowid WHERE chunk_fts MATCH ?")
    args: list = [expr]
    if doc_ids is not None:
        sql += f" AND c.doc_id IN ({','.join('?' * len(doc_ids))})"
        args += list(doc_ids)
    rows = con.execute(sql + " ORDER BY s LIMIT ?", args + [limit]).fetchall()
    weights = _idf(con, query.terms) if any(len(json.loads(r[6])) > 1 for r in rows) else {}
    return [ChunkHit(cid, doc, _best_page(text, json.loads(spans), weights), end, sec, text, -s)
            for cid, doc, start, end, sec, text, spans, s in rows]


def chunk_hits(con: sqlite3.Connection, chunk_ids: list[int], query: Query) -> list[ChunkHit]:
    """Chunks found by other means (dense vectors), attributed to pages like BM25 hits."""
    if not chunk_ids:
        return []
    rows = con.execute("SELECT id, doc_id, page_end, section, text, spans FROM chunks WHERE id IN "
                       f"({','.join('?' * len(chunk_ids))})", list(chunk_ids)).fetchall()
    weights = _idf(con, query.terms)
    return [ChunkHit(cid, doc, _best_page(text, json.loads(spans), weights), end, sec, text, 0.0)
            for cid, doc, end, sec, text, spans in rows]


def _idf(con: sqlite3.Connection, terms: tuple[str, ...]) -> dict[str, float]:
    """Inverse document frequency of each query term over all chunks (rare terms count more)."""
    total = con.execute("SELECT count(*) FROM chunk_fts").fetchone()[0] or 1
    out = {}
    for t in terms:
        n = con.execute("SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH ?",
                        ("body : " + _quote(t),)).fetchone()[0]
        out[t] = math.log(1 + (total - n + 0.5) / (n + 0.5))
    return out


def docs_using(con: sqlite3.Connection, term: str) -> int:
    """How many documents hold an index-form term in their text."""
    return con.execute("SELECT count(DISTINCT c.doc_id) FROM chunk_fts JOIN chunks c ON c.id = chunk_fts.rowid "
                       "WHERE chunk_fts MATCH ?", ("body : " + _quote(term),)).fetchone()[0]


def _holds(term: str, words: list[str], prefixes: set[str]) -> bool:
    """Whether a page part holds a query term: a backed-off root ("audit*") as any word's
    start, another term by its first five letters."""
    if term.endswith("*"):
        return any(w.startswith(term[:-1]) for w in words)
    return term[:5] in prefixes


def _best_page(text: str, spans: list[list[int]], weights: dict[str, float]) -> int:
    """The page of a multi-page chunk whose part holds the most (IDF-weighted) query terms."""
    if len(spans) == 1:
        return spans[0][0]
    best, best_score = spans[0][0], -1.0
    for i, (page, start) in enumerate(spans):
        stop = spans[i + 1][1] if i + 1 < len(spans) else len(text)
        seg = index_text(text[start:stop]).casefold()
        words = seg.split()
        prefixes = {w[:5] for w in words}   # crude stemming: "payments" ~ "payment"
        score = sum(w for t, w in weights.items() if _holds(t, words, prefixes))
        if score > best_score:
            best, best_score = page, score
    return best
