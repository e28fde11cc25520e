"""Chunks that join the candidates because of structure, not words (issue 19.2).

- cross-references: a top chunk that says "subject to Section 8.4" or "依照本法第三十九条"
  brings the chunk of that clause (the question's answer is often in the clause referred to);
- defined terms: a question that uses a defined term ("Enhanced Cap", "去标识化") brings the
  chunk that defines it ("“Enhanced Cap” means …", "去标识化，是指 …");
- neighbours: the chunks just before and after a top chunk (a clause cut in two).

Each joins at a share of the score that brought it (0 turns the technique off), and never
lowers a score a chunk already has. Measured on both halves of dev.jsonl with
benchmarks/retrieval.py --table --variant: at XREF_SHARE 0.9, DEF_SHARE 0.9 and
NEIGHBOUR_SHARE 0.5 no figure of either half moved (recall@1 is decided by the best
chunk of a page, which these rarely outscore; definitions: recall@5 of the tuning half
0.97 → 0.94), so all three are off (0).
"""
from __future__ import annotations

import re
import sqlite3
from dataclasses import replace

from app.core.search import fts
from app.core.search.fts import ChunkHit
from app.core.search.queries import Query, parse_query

XREF_SHARE = 0.0
DEF_SHARE = 0.0
NEIGHBOUR_SHARE = 0.0
TOP = 3     # chunks whose references and neighbours are followed

_DEFINED_EN = re.compile(r"[“\"]([A-Z][\w’'\- ]{2,40})[”\"]\s*(?:\([^)]{0,40}\)\s*)?"
                         r"(?:means|shall mean|has the meaning|refers to|is defined)")
_DEFINED_ZH = re.compile(r"[，,]是指")
_ZH_TERM_START = re.compile(r".*(?:[。；：，、（）()]|条|所称)")   # what precedes the defined term
_definitions: dict[tuple[int, int], list[tuple[str, int]]] = {}   # (doc, chunk count) → (term, chunk id)


def expand(con: sqlite3.Connection, question: str, query: Query, found: list[ChunkHit],
           doc_ids: list[int] | None) -> list[ChunkHit]:
    """`found` (best first) with the structurally related chunks added, best first."""
    if not found or not (XREF_SHARE or DEF_SHARE or NEIGHBOUR_SHARE):
        return found
    extra: dict[int, float] = {}

    def offer(chunk_id: int, score: float) -> None:
        extra[chunk_id] = max(extra.get(chunk_id, 0.0), score)

    top = found[:TOP]
    if XREF_SHARE:
        for h in top:
            own = set(parse_query(h.section).sections) if h.section else set()
            refs = [s for s in parse_query(h.text).sections if s not in own]
            for cid in _chunks_of_sections(con, h.doc_id, refs):
                offer(cid, h.score * XREF_SHARE)
    if NEIGHBOUR_SHARE:
        for h in top:
            for cid in _neighbours(con, h.chunk_id):
                offer(cid, h.score * NEIGHBOUR_SHARE)
    if DEF_SHARE:
        docs = doc_ids if doc_ids is not None else sorted({h.doc_id for h in top})
        for cid in _definitions_used(con, question, docs):
            offer(cid, found[0].score * DEF_SHARE)
    have = {h.chunk_id: h for h in found}
    out = dict(have)
    new = [cid for cid in extra if cid not in have]
    for h in fts.chunk_hits(con, new, query):
        out[h.chunk_id] = replace(h, score=extra[h.chunk_id])
    for cid, score in extra.items():
        if cid in have and score > have[cid].score:
            out[cid] = replace(have[cid], score=score)
    return sorted(out.values(), key=lambda h: -h.score)


def _chunks_of_sections(con: sqlite3.Connection, doc_id: int, tokens: list[str]) -> list[int]:
    if not tokens:
        return []
    rows = con.execute("SELECT c.id FROM chunk_fts JOIN chunks c ON c.id = chunk_fts.rowid "
                       "WHERE chunk_fts MATCH ? AND c.doc_id = ? LIMIT 6",
                       ("section : (" + " OR ".join(dict.fromkeys(tokens)) + ")", doc_id)).fetchall()
    return [r[0] for r in rows]


def _neighbours(con: sqlite3.Connection, chunk_id: int) -> list[int]:
    row = con.execute("SELECT doc_id, ordinal FROM chunks WHERE id = ?", (chunk_id,)).fetchone()
    if row is None:
        return []
    return [r[0] for r in con.execute("SELECT id FROM chunks WHERE doc_id = ? AND ordinal IN (?, ?)",
                                      (row[0], row[1] - 1, row[1] + 1))]


def _definitions_used(con: sqlite3.Connection, question: str, doc_ids: list[int]) -> list[int]:
    """Chunks defining a term the question uses (case-insensitive, whole words)."""
    asked = " ".join(question.casefold().split())
    out = []
    for doc in doc_ids:
        for term, cid in _definitions_of(con, doc):
            if (re.search(rf"\b{re.escape(term)}\b", asked) if term.isascii() else term in asked):
                out.append(cid)
    return out


def _definitions_of(con: sqlite3.Connection, doc_id: int) -> list[tuple[str, int]]:
    count = con.execute("SELECT count(*), max(id) FROM chunks WHERE doc_id = ?", (doc_id,)).fetchone()
    key = (doc_id, hash(count))
    if key not in _definitions:
        found = []
        for cid, text in con.execute("SELECT id, text FROM chunks WHERE doc_id = ?", (doc_id,)):
            flat = " ".join(text.split())
            found += [(m.group(1).casefold().strip(), cid) for m in _DEFINED_EN.finditer(flat)]
            plain = "".join(text.split())
            for m in _DEFINED_ZH.finditer(plain):
                term = _ZH_TERM_START.sub("", plain[max(0, m.start() - 14):m.start()])
                if 2 <= len(term) <= 12:
                    found.append((term, cid))
        _definitions[key] = found
    return _definitions[key]
