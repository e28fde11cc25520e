"""From ranked chunks to ranked pages: the unit a citation, and the benchmark, counts.

A page holds several chunks (a Chinese law page holds about six articles of ~150
characters). Ranking a page by its best chunk alone ("max") ignores that the words of a
paraphrased question are often spread over one article and its neighbours or chapter
heading, which is why a naive page-level BM25 can beat chunk-level BM25. "sum" adds a
share of the page's other chunks' scores to its best one. The page's representative hit
is still its best chunk (its text and section), so callers see the same shape either way.

Measured on both halves of dev.jsonl (in-document recall@1, the app's default): "sum"
lost on both, share 0.25: tuning 0.88 → 0.79, checking 0.82 → 0.68 (0.5: 0.73 / 0.57);
the pages a chunk spans (SPAN_SHARE 0.5) changed nothing. Both stay off; the switches
remain so that other question sets can be measured with `--variant`.
"""
from __future__ import annotations

from dataclasses import replace

from app.core.search.fts import ChunkHit

PAGE_FUSION = "max"     # "max" | "sum"
SUM_SHARE = 0.5         # "sum": weight of the page's other chunks against its best one
# A chunk that runs over a page break is attributed to one page; the other pages it covers
# are candidates too, at this share of its score (0: not at all). An article of a Chinese
# law that starts at the foot of one page and ends on the next answers from either.
SPAN_SHARE = 0.0


def by_page(found: list[ChunkHit], mode: str | None = None) -> list[ChunkHit]:
    """One hit per (document, page), best first; `found` is best first."""
    mode = mode or PAGE_FUSION
    best: dict[tuple[int, int], ChunkHit] = {}
    rest: dict[tuple[int, int], float] = {}
    if SPAN_SHARE > 0:
        found = sorted(found + _other_pages(found), key=lambda h: -h.score)
    for h in found:
        key = (h.doc_id, h.page)
        if key not in best:
            best[key] = h
        else:
            rest[key] = rest.get(key, 0.0) + max(h.score, 0.0)
    if mode == "sum":
        best = {k: replace(h, score=h.score + SUM_SHARE * rest.get(k, 0.0)) for k, h in best.items()}
    return sorted(best.values(), key=lambda h: -h.score)


def _other_pages(found: list[ChunkHit]) -> list[ChunkHit]:
    """The pages a multi-page chunk covers besides the one it is attributed to."""
    out = []
    for h in found:
        first = h.page_start or h.page
        for page in range(first, max(h.page_end, first) + 1):
            if page != h.page:
                out.append(replace(h, page=page, score=h.score * SPAN_SHARE))
    return out
