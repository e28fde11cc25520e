"""The SQLite FTS5 index over chunks: writing pieces, BM25 search, and the page a hit is on."""
from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass

from app.core.documents.chunking import Piece
from app.core.search.queries import Query, quote
from app.core.search.tokens import index_text, phrase_word, section_token, text_words

# Column weights for bm25(): body, section labels, headings, document title.
# Headings (clause titles, chapter names; also tried: defined terms) are stored but not
# scored: boosting them (weights 0.5-4) lowered recall@1 on dev.jsonl (EN 0.73 → 0.66-0.68).
WEIGHTS = (1.0, 6.0, 0.0, 1.0)
# A multi-page chunk is attributed to the page whose part holds most query terms. Chinese
# words of 3+ characters are phrases of bigrams ("承担 担责 责任"), which the five-letter
# prefix test never matched, so Chinese chunks fell back to their first page.
PHRASE_PAGES = True
# Parts with equal evidence: the one repeating the terms more wins (article 47 of the Labour
# Contract Law: "工资" once on its first page, five times on the next, where the cap is).
# dev.jsonl both halves unchanged; 24 hand-written Chinese questions on documents dev does
# not use: recall@1 0.75 → 0.79 (found while reading that set's misses, so not a blind check).
TIE_BY_COUNT = True


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


@dataclass(frozen=True)
class ChunkHit:
    chunk_id: int
    doc_id: int
    page: int
    page_end: int
    section: str
    text: str
    score: float
    page_start: int = 0     # first page of the chunk (0: unknown); `page` is the page it is attributed to


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
    return [ChunkHit(cid, doc, _best_page(text, json.loads(spans), weights), end, sec, text, -s, start)
            for cid, doc, start, end, sec, text, spans, s in rows]


def chunk_hits(con: sqlite3.Connection, chunk_ids: list[int], query: Query) -> list[ChunkHit]:
    """Chunks found by other means (dense vectors), attributed to pages like BM25 hits."""
    if not chunk_ids:
        return []
    rows = con.execute("SELECT id, doc_id, page_start, page_end, section, text, spans FROM chunks WHERE id IN "
                       f"({','.join('?' * len(chunk_ids))})", list(chunk_ids)).fetchall()
    weights = _idf(con, query.terms)
    return [ChunkHit(cid, doc, _best_page(text, json.loads(spans), weights), end, sec, text, 0.0, start)
            for cid, doc, start, end, sec, text, spans in rows]


class _Counts:
    """Counts over the index (chunks holding a term, documents using it) kept until the
    library changes: counting a common term's rows took ~50 ms at 10,000 pages, several
    times a search. Keyed by connection (forget() it when it closes: its id may be reused);
    this connection's writes move total_changes, another process's move data_version."""
    LIMIT = 4096

    def __init__(self):
        self.version: dict[int, tuple] = {}
        self.values: dict[tuple, int] = {}

    def get(self, con: sqlite3.Connection, key: tuple, compute) -> int:
        version = (con.total_changes, con.execute("PRAGMA data_version").fetchone()[0])
        if self.version.get(id(con)) != version:
            self.values = {k: v for k, v in self.values.items() if k[0] != id(con)}
            self.version[id(con)] = version
        full = (id(con),) + key
        if full not in self.values:
            if len(self.values) >= self.LIMIT:
                self.values.clear()
            self.values[full] = compute()
        return self.values[full]

    def forget(self, con: sqlite3.Connection) -> None:
        self.version.pop(id(con), None)
        self.values = {k: v for k, v in self.values.items() if k[0] != id(con)}


_counts = _Counts()


def forget_counts(con: sqlite3.Connection) -> None:
    """Call before closing a connection the search ran on."""
    _counts.forget(con)


def _idf(con: sqlite3.Connection, terms: tuple[str, ...]) -> dict[str, float]:
    """Inverse document frequency of each query term over all chunks (rare terms count more)."""
    total = _counts.get(con, ("rows",), lambda: con.execute("SELECT count(*) FROM chunk_fts").fetchone()[0]) or 1
    out = {}
    for t in terms:
        n = _counts.get(con, ("holding", t), lambda t=t: con.execute(
            "SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH ?", ("body : " + quote(t),)).fetchone()[0])
        out[t] = math.log(1 + (total - n + 0.5) / (n + 0.5))
    return out


def docs_using(con: sqlite3.Connection, term: str) -> int:
    """How many documents hold an index-form term in their text."""
    return _counts.get(con, ("docs", term), lambda: con.execute(
        "SELECT count(DISTINCT c.doc_id) FROM chunk_fts JOIN chunks c ON c.id = chunk_fts.rowid "
        "WHERE chunk_fts MATCH ?", ("body : " + quote(term),)).fetchone()[0])


def _holds(term: str, words: list[str], prefixes: set[str], joined: str = "") -> bool:
    """Whether a page part holds a query term: a backed-off root ("audit*") as any word's
    start, a Chinese word written as the phrase of its bigrams ("承担 担责 责任") as that
    word, another term by its first five letters."""
    if " " in term and PHRASE_PAGES:
        return phrase_word(term) in joined
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
        words = text_words(text[start:stop])
        prefixes = {w[:5] for w in words}   # crude stemming: "payments" ~ "payment"
        joined = "".join(text[start:stop].split()).casefold()
        score = sum(w for t, w in weights.items() if _holds(t, words, prefixes, joined))
        if TIE_BY_COUNT:   # equal evidence: the part that repeats the terms more ("工资" ×5 against ×1)
            score += 1e-3 * sum(joined.count(phrase_word(t).casefold()) for t in weights if not t.endswith("*"))
        if score > best_score:
            best, best_score = page, score
    return best
