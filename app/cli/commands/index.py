"""`pagewise index FILE… [--no-dense]`: ingest into the library; pages, chunks, seconds."""
from __future__ import annotations

import time
from pathlib import Path

from app.cli.documents import open_library, print_warnings
from app.cli.progress import ingest_progress


def run(args):
    lib = open_library()
    rows, lines = [], []
    for f in args.files:
        start = time.perf_counter()
        info = lib.add(f, password=args.password, progress=ingest_progress(Path(f).name, args.json))
        secs = time.perf_counter() - start
        print_warnings(f, info.warnings)
        chunks = len(lib.chunks(info.id))
        rows.append({"doc": f, "id": info.id, "pages": info.page_count, "chunks": chunks,
                     "lang": info.lang, "seconds": round(secs, 3), "warnings": list(info.warnings)})
        warn = f"  warning: {'; '.join(info.warnings)}" if info.warnings else ""
        lines.append(f"{f}: {info.page_count} pages, {chunks} chunks, {info.lang}, {secs:.2f} s{warn}")
    if args.dense:
        from app.core.search import dense
        if dense.available():
            start = time.perf_counter()
            done = lib.embed([r["id"] for r in rows],
                             progress=ingest_progress("search vectors", args.json, unit="passages"))
            lines.append(f"search vectors: {done} passages in {time.perf_counter() - start:.1f} s")
            rows[-1]["embedded_chunks"] = done
        else:
            lines.append("search vectors: no embedding model on this machine (BM25 only)")
    return {"documents": rows}, "\n".join(lines)
