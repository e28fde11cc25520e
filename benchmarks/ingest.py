"""Ingestion speed: Library.add into a fresh library vs a bare PyMuPDF get_text() loop.

    .venv/bin/python benchmarks/ingest.py [--rounds 3] [--pages 2000] [--quick]

Two inputs: the corpus (bad/ excluded) and a generated large PDF
(../shared/corpus/make_large_pdf.py, cached outside the repo under ~/.cache/pagewise-bench,
keyed by the generator, the corpus and the PyMuPDF version; its sha256 is checked on reuse).
Each side runs in its own child process (so each has its own peak RSS), alternating
ours/bare and bare/ours by round; pages/s counts only the work, not interpreter start-up.
Target: ours ≥ 50% of bare PyMuPDF speed.
"""
from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

TARGET = 0.50


# --- the two sides, each run in a child process ----------------------------------------------
def _child(side: str, files: list[str]) -> None:
    import pymupdf  # noqa: F401  imports happen before the clock starts
    if side != "bare":
        import app.core.library  # noqa: F401
    rss_import = common.rss_mb()
    extra: dict = {}
    with tempfile.TemporaryDirectory(prefix="pagewise-ingest-") as tmp:
        start = common.now()
        pages = _bare(files) if side == "bare" else _ours(files, Path(tmp), side, extra)
        seconds = extra.pop("searchable_s", None) or common.now() - start
    common.emit_result({"side": side, "pages": pages, "seconds": seconds, **extra,
                        "peak_rss_mb": common.peak_rss_mb(), "rss_after_import_mb": rss_import})


def _ours(files: list[str], tmp: Path, side: str = "ours", extra: dict | None = None) -> int:
    """`ours`: Library.add as the CLI's ask does (tables at once); `later`: as the window and
    `index` do (searchable first, the table pass after: timed apart, tables counted)."""
    from app.core.library import Library, table_pass
    lib = Library(tmp / "library.sqlite")
    began = common.now()       # a library is opened once per session, not per document: not timed here
    infos = [lib.add(f, tables_later=side == "later") for f in files]
    pages = sum(i.page_count for i in infos)
    if extra is not None:
        extra["searchable_s"] = common.now() - began
        began = common.now()
        if side == "later":
            table_pass.run(lib._con, lib._lock, None)
        extra["table_pass_s"] = common.now() - began
        extra["table_chunks"] = lib._con.execute("SELECT count(*) FROM chunks WHERE text LIKE '[table]%'").fetchone()[0]
    lib.close()
    return pages


def _bare(files: list[str]) -> int:
    import pymupdf
    pages = 0
    for f in files:
        with pymupdf.open(f) as doc:
            for page in doc:
                page.get_text()
                pages += 1
    return pages


# --- the large generated PDF ----------------------------------------------------------------
def large_pdf(pages: int, corpus: Path = common.CORPUS) -> tuple[Path, str]:
    """Generate (or reuse) the N-page PDF; returns (path, sha256 of the file)."""
    import pymupdf
    script = corpus / "make_large_pdf.py"
    key = hashlib.sha256(script.read_bytes() + pymupdf.VersionBind.encode() + str(pages).encode())
    for f in common.corpus_files(corpus):
        key.update(f"{f.relative_to(corpus)}:{f.stat().st_size}".encode())
    path = common.bench_cache_dir() / f"large-{pages}-{key.hexdigest()[:16]}.pdf"
    stamp = path.with_suffix(".sha256")
    if path.is_file() and stamp.is_file() and _sha256(path) == stamp.read_text().strip():
        return path, stamp.read_text().strip()
    print(f"generating a {pages}-page PDF with make_large_pdf.py (cached in {path.parent}) …", flush=True)
    common.run_child_plain([str(script), "--pages", str(pages), "--out", str(path)])
    digest = _sha256(path)
    stamp.write_text(digest)
    return path, digest


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- measuring --------------------------------------------------------------------------------
def compare(name: str, files: list[Path], rounds: int) -> dict:
    """Alternate the two sides `rounds` times; medians, paired ratios, peak RSS."""
    runs = {"ours": [], "bare": []}
    argv = [str(f) for f in files]
    for r in range(rounds):
        order = ("ours", "bare") if r % 2 == 0 else ("bare", "ours")
        for side in order:
            res = common.run_child([__file__, "--child", side, *argv])
            res["pages_per_s"] = res["pages"] / res["seconds"]
            runs[side].append(res)
        print(f"  {name} round {r + 1}: ours {runs['ours'][-1]['pages_per_s']:.0f} pages/s, "
              f"bare {runs['bare'][-1]['pages_per_s']:.0f} pages/s", flush=True)
    return summarise(name, files, runs)


def summarise(name: str, files: list[Path], runs: dict) -> dict:
    med = {s: common.median(r["pages_per_s"] for r in runs[s]) for s in runs}
    paired = [o["pages_per_s"] / b["pages_per_s"] for o, b in zip(runs["ours"], runs["bare"])]
    return {"input": name, "files": len(files), "pages": runs["ours"][0]["pages"],
            "ours_pages_per_s": med["ours"], "bare_pages_per_s": med["bare"],
            "ratio": common.ratio(med["ours"], med["bare"]), "paired_ratios": paired,
            "ours_peak_rss_mb": common.median(r["peak_rss_mb"] for r in runs["ours"]),
            "bare_peak_rss_mb": common.median(r["peak_rss_mb"] for r in runs["bare"]),
            "ours_rss_after_import_mb": common.median(r["rss_after_import_mb"] for r in runs["ours"]),
            "bare_rss_after_import_mb": common.median(r["rss_after_import_mb"] for r in runs["bare"]),
            "runs": runs, "target_ratio": TARGET}


TABLE_HEAVY = ["contracts-en/bonterms-cloud-terms-v1.0.pdf", "contracts-en/bonterms-dpa-v1.0.pdf",
               "contracts-en/common-paper-mnda.pdf"]    # the ruled-table files of the corpus


def table_heavy(rounds: int, out: Path | None) -> dict:
    """Table-heavy files: bare text extraction vs searchable with the table pass after
    (`later`) vs tables found at once (`ours`, as before); tables found by each."""
    files = [str(common.CORPUS / f) for f in TABLE_HEAVY]
    runs: dict[str, list] = {"bare": [], "later": [], "ours": []}
    for r in range(rounds):
        for side in (("bare", "later", "ours") if r % 2 == 0 else ("ours", "later", "bare")):
            res = common.run_child([__file__, "--child", side, *files])
            res["pages_per_s"] = res["pages"] / res["seconds"]
            runs[side].append(res)
    med = {s: common.median(r["pages_per_s"] for r in runs[s]) for s in runs}
    later, now = runs["later"][-1], runs["ours"][-1]
    data = {"files": TABLE_HEAVY, "pages": runs["bare"][0]["pages"], "rounds": rounds,
            "bare_pages_per_s": med["bare"], "searchable_pages_per_s": med["later"],
            "tables_at_once_pages_per_s": med["ours"],
            "ratio_searchable": common.ratio(med["later"], med["bare"]),
            "ratio_tables_at_once": common.ratio(med["ours"], med["bare"]),
            "table_pass_s": common.median(r["table_pass_s"] for r in runs["later"]),
            "table_chunks_at_once": now["table_chunks"], "table_chunks_after_pass": later["table_chunks"],
            "runs": runs, "target_ratio": TARGET}
    print(f"table-heavy files ({len(files)}, {data['pages']} pages): bare PyMuPDF {med['bare']:.0f} pages/s | "
          f"searchable (tables after) {med['later']:.0f} pages/s = {data['ratio_searchable']:.2f}× "
          f"{common.verdict(data['ratio_searchable'] >= TARGET)} | tables at once {med['ours']:.0f} pages/s = "
          f"{data['ratio_tables_at_once']:.2f}×\n  table pass {data['table_pass_s']:.2f} s after; table chunks: "
          f"at once {data['table_chunks_at_once']}, after the pass {data['table_chunks_after_pass']}")
    common.write_json("ingest_tables", data, out)
    return data


def show(res: dict) -> None:
    ok = res["ratio"] >= TARGET
    print(f"{res['input']}: {res['files']} file(s), {res['pages']} pages\n"
          f"  ours {res['ours_pages_per_s']:8.1f} pages/s   peak RSS {res['ours_peak_rss_mb']:6.0f} MB\n"
          f"  bare {res['bare_pages_per_s']:8.1f} pages/s   peak RSS {res['bare_peak_rss_mb']:6.0f} MB\n"
          f"  ratio {res['ratio']:.2f} (paired: {', '.join(f'{r:.2f}' for r in res['paired_ratios'])})"
          f"  target ≥ {TARGET:.2f}: {common.verdict(ok)}")


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pages", type=int, default=2000, help="pages of the generated PDF")
    ap.add_argument("--quick", action="store_true", help="CI smoke run: 3 corpus files, 40 pages, 1 round")
    ap.add_argument("--out", type=Path, default=None, help="folder for ingest.json (default out/bench)")
    ap.add_argument("--tables", action="store_true", help="only the table-heavy files (issue 31)")
    ap.add_argument("--child", choices=("ours", "later", "bare"), help=argparse.SUPPRESS)
    ap.add_argument("files", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return _child(args.child, args.files)
    if args.tables:
        return table_heavy(args.rounds, args.out)
    files = common.corpus_files()
    if args.quick:
        files, args.pages, args.rounds = files[:3], 40, 1
    results = [compare("corpus", files, args.rounds)]
    big, digest = large_pdf(args.pages)
    results.append(compare(f"generated {args.pages}-page PDF", [big], args.rounds))
    results[-1]["sha256"] = digest
    print()
    for res in results:
        show(res)
    data = {"quick": args.quick, "rounds": args.rounds, "results": results}
    common.write_json("ingest", data, args.out)
    return data


if __name__ == "__main__":
    main()
