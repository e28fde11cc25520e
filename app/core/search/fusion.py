"""Fusing BM25 and dense chunk scores into one ranking.

Measured on dev.jsonl (in-document, page recall@1): dense alone beats BM25 on Chinese
questions (0.71 vs 0.64) but loses on English ones (0.49 vs 0.73), and only dense can
answer a question asked in the other language. So the dense weight depends on how the
question's language relates to each document's: small for English on English, larger
for Chinese (bigram BM25 is the weaker matcher there), dominant across languages. The
weight is chosen per chunk by its document's language, so a library-wide search over
English and Chinese documents still lets vectors find a Chinese clause for an English
question (measured library-wide: EN recall@5 0.90 → 0.95) without letting them
outweigh BM25 on same-language documents.
"""
from __future__ import annotations

import sqlite3

from app.core.search import fts
from app.core.search.fts import ChunkHit
from app.core.search.queries import Query

SAME_EN, ZH, CROSS = 0.25, 2.0, 4.0
COS_FLOOR = 0.7     # e5 cosines of unrelated texts sit around 0.7-0.75: rescale above it
# "linear": the scores above; "rrf": reciprocal-rank fusion, sum of weight / (RRF_K + rank)
# over the BM25 and the dense ranking (the same per-language dense weights), which ignores
# how far ahead the best hit is. Measured (benchmarks/retrieval.py --table, in-document
# recall@1): tuning half 0.88 → 0.76, checking half 0.82 → 0.79, Chinese 0.93 → 0.71: off.
FUSION = "linear"
RRF_K = 60


def dense_weight(q_lang: str, doc_langs: set[str]) -> float:
    if doc_langs and all(lang != q_lang and lang != "mixed" for lang in doc_langs):
        return CROSS
    return ZH if q_lang == "zh" else SAME_EN


def fuse(con: sqlite3.Connection, query: Query, bm25: list[ChunkHit],
         dense: list[tuple[int, float]], q_lang: str, doc_langs: dict[int, str]) -> list[ChunkHit]:
    """Linear fusion of max-normalised BM25 and rescaled cosine, the dense part weighted
    by how the question's language relates to each chunk's document; best first."""
    hits = {h.chunk_id: h for h in bm25}
    missing = [cid for cid, _ in dense if cid not in hits]
    hits.update({h.chunk_id: h for h in fts.chunk_hits(con, missing, query)})
    top_bm = bm25[0].score if bm25 and bm25[0].score > 0 else 1.0
    top_cos = dense[0][1] if dense else 1.0
    span = max(top_cos - COS_FLOOR, 1e-6)
    weights = {doc: dense_weight(q_lang, {lang}) for doc, lang in doc_langs.items()}
    if FUSION == "rrf":
        scores = {h.chunk_id: 1.0 / (RRF_K + i) for i, h in enumerate(bm25, 1)}
        for i, (chunk_id, _) in enumerate(dense, 1):
            weight = weights.get(hits[chunk_id].doc_id, SAME_EN)
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (RRF_K + i)
        order = sorted(scores, key=lambda cid: -scores[cid])
        return [ChunkHit(**{**hits[cid].__dict__, "score": scores[cid]}) for cid in order]
    scores = {h.chunk_id: h.score / top_bm for h in bm25}
    for chunk_id, cos in dense:
        weight = weights.get(hits[chunk_id].doc_id, SAME_EN)
        scores[chunk_id] = scores.get(chunk_id, 0.0) + weight * max(cos - COS_FLOOR, 0.0) / span
    order = sorted(scores, key=lambda cid: -scores[cid])
    return [ChunkHit(**{**hits[cid].__dict__, "score": scores[cid]}) for cid in order]
