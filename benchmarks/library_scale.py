"""Library scale: a 10,000-page library (five generated 2,000-page documents, plus the
corpus): ingestion throughput, index size, search latency p50/p95, peak memory.

    .venv/bin/python benchmarks/library_scale.py [--docs 5] [--pages 2000] [--queries 60]

The documents come from ../shared/corpus/make_large_pdf.py (cached, as in ingest.py), each
copy with one different line on its first page so every copy has its own SHA-256 and is
indexed for real. Searches are BM25 (search vectors for 10,000 pages are not computed here:
see the embedding figures in docs/benchmarks.md). Questions are dev.jsonl's, library-wide.
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


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=5)
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=60)
    args = ap.parse_args(argv)
    from app.core.library import Library
    src, _ = large_pdf(args.pages)
    with common.temp_home() as home:
        files = distinct_copies(src, args.docs, home) + common.corpus_files()
        lib = Library(home / "library.sqlite")
        start, pages = common.now(), 0
        for f in files:
            pages += lib.add(f).page_count
        ingest_s = common.now() - start
        size_mb = sum(p.stat().st_size for p in home.glob("library.sqlite*")) / 1e6
        questions = [json.loads(l)["question"] for l in common.EVAL.read_text(encoding="utf-8").splitlines()
                     if l.strip()][: args.queries]
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
              "dense": False, "machine": common.machine(), "load": common.load_average()}
    print(json.dumps(result, indent=2))
    common.write_json("library_scale", result)
    return result


if __name__ == "__main__":
    main()
