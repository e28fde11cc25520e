"""Answer quality on shared/eval/dev.jsonl: citations verified and on a gold page (ask), plus
page retrieval (benchmarks/retrieval.py's own evaluation, ours beside a naive page BM25).

    .venv/bin/python benchmarks/quality.py [--limit 12 | --all] [--mode auto] [--quick]

`ask` runs the real app path (EngineRuntime + qa.ask) with the embedded model, one question
at a time with only its documents given (in-document). The subset is deterministic: evenly
spaced over the English and the Chinese questions (a third Chinese), in dev.jsonl order.
In auto mode the app budgets by its remembered prefill speed; the benchmark pins that to
--prefill-tps before each question so the whole/retrieval choice does not depend on the
momentary load of a shared machine.
Retrieval targets: in-document recall@1 ≥ 0.80 and library-wide recall@5 ≥ 0.90, EN and ZH.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import retrieval  # noqa: E402  (owned by the retrieval work: evaluate, group, NaivePages)

TARGETS = {"in-document": ("r1", 0.80), "library-wide": ("r5", 0.90)}


def subset(questions: list[dict], limit: int | None) -> list[dict]:
    """Evenly spaced within each question language, a third Chinese; dev.jsonl order kept."""
    if not limit or limit >= len(questions):
        return questions
    zh = [q for q in questions if q["lang"] == "zh"]
    en = [q for q in questions if q["lang"] != "zh"]
    n_zh = min(len(zh), max(1, limit // 3)) if limit > 1 else 0
    picked = {id(q) for grp, n in ((zh, n_zh), (en, limit - n_zh)) for q in _spaced(grp, n)}
    return [q for q in questions if id(q) in picked]


def _spaced(items: list, n: int) -> list:
    return [items[i * len(items) // n] for i in range(n)] if n > 0 else []


# --- retrieval (no model) ---------------------------------------------------------------------
def retrieval_figures(lib, ids, questions, vectors: bool = True) -> dict:
    """Recall@1/@5 and MRR per language group, both settings: "ours" is what the app does
    (BM25 + search vectors where this machine has the embedding model), "bm25" the same
    without vectors, "naive" a page-level BM25. Leaves the vectors in the library, so the
    `ask` runs that follow retrieve as the app would."""
    naive = retrieval.NaivePages(lib)
    ours = lambda q, d, k: [(h.doc_id, h.page, h.score) for h in lib.search(q, d, k)]  # noqa: E731
    out = {}
    for setting, in_doc in (("in-document", True), ("library-wide", False)):
        out[setting] = {"bm25": _recall(retrieval.evaluate(questions, ours, ids, in_doc)),
                        "naive": _recall(retrieval.evaluate(questions, naive.search, ids, in_doc))}
    from app.core.search import dense
    if vectors and dense.available():
        retrieval._load_vectors(lib, retrieval.VECTOR_CACHE)
        for setting, in_doc in (("in-document", True), ("library-wide", False)):
            out[setting]["ours"] = _recall(retrieval.evaluate(questions, ours, ids, in_doc))
    else:
        for sides in out.values():
            sides["ours"] = sides["bm25"]
    return {setting: {k: sides[k] for k in ("ours", "bm25", "naive")} for setting, sides in out.items()}


def _recall(rows) -> dict:
    res = {}
    for name in ("en", "zh", "comparison", "all"):
        rs = [r for r in rows if retrieval.group(r) != "unanswerable" and
              (name == "all" or retrieval.group(r) == name)]
        if rs:
            res[name] = {"n": len(rs), "r1": sum(r["rank"] == 1 for r in rs) / len(rs),
                         "r5": sum(bool(r["rank"]) and r["rank"] <= 5 for r in rs) / len(rs),
                         "mrr": sum(1 / r["rank"] for r in rs if r["rank"]) / len(rs)}
    return res


# --- ask (the real model) ---------------------------------------------------------------------
def ask_all(lib, ids, questions, mode: str, prefill_tps: float, repeat_penalty: float | None = None) -> list[dict]:
    from app.core.answer import qa
    from app.worker.runtime import EngineRuntime
    from app.service.planning import start_planned
    rt = EngineRuntime()
    start_planned(rt)
    if repeat_penalty is not None:              # experiment: another penalty than the catalogue's
        rt.engine.use_repeat_penalty(repeat_penalty)
    rows = []
    try:
        for n, q in enumerate(questions, 1):
            rt.memory.data["prefill_tps"][rt.plan.model_id] = prefill_tps
            refs = [qa.DocRef(i, ids[d], d) for i, d in enumerate(q["docs"], 1)]
            began = common.now()
            ans = rt.ask(lib, refs, q["question"], mode=mode)
            rows.append(_row(q, ans, common.now() - began))
            r = rows[-1]
            print(f"  [{n}/{len(questions)}] {q['id']} {q['lang']} {ans.mode:14s} {r['seconds']:6.1f}s  "
                  f"citations {r['citations']} verified {r['verified']} gold {r['gold']}"
                  f"{'  (not stated)' if ans.not_stated else ''}", flush=True)
    finally:
        rt.stop()
    return rows


def _row(q: dict, ans, seconds: float) -> dict:
    from app.core.answer.citations import with_support
    gold = {(g["doc"], g["page"]) for g in q["gold"]}
    checked = with_support(ans.citations, ans.text, q["question"])   # the second check (support.py)
    cites = [{"doc": c.doc, "page": c.page, "verified": c.verified, "gold": (c.doc, c.page) in gold,
              "support": c.support} for c in checked]
    return {"id": q["id"], "lang": q["lang"], "type": q["type"], "mode": ans.mode, "seconds": seconds,
            "ttft_s": ans.timing.ttft_s, **ans.usage.to_dict(),
            "citations": len(cites),
            "verified": sum(c["verified"] for c in cites), "gold": sum(c["gold"] for c in cites),
            "verified_gold": sum(c["verified"] and c["gold"] for c in cites),
            "supporting": sum(c["support"] == "supports" for c in cites),
            "not_stated": ans.not_stated, "answer": ans.text[:300], "cites": cites}


def ask_summary(rows: list[dict]) -> dict:
    out = {}
    groups = {"en": lambda r: r["lang"] == "en" and r["type"] != "unanswerable",
              "zh": lambda r: r["lang"] == "zh" and r["type"] != "unanswerable",
              "unanswerable": lambda r: r["type"] == "unanswerable",
              "all": lambda r: True}
    for name, keep in groups.items():
        rs = [r for r in rows if keep(r)]
        if not rs:
            continue
        n_cit = sum(r["citations"] for r in rs)
        out[name] = {"questions": len(rs), "citations": n_cit,
                     "verified_share": common.ratio(sum(r["verified"] for r in rs), n_cit),
                     "gold_share": common.ratio(sum(r["gold"] for r in rs), n_cit),
                     "answered_with_verified_gold": sum(r["verified_gold"] > 0 for r in rs) / len(rs),
                     "answered_with_supporting": sum(r.get("supporting", 0) > 0 for r in rs) / len(rs),
                     "not_stated_share": sum(r["not_stated"] for r in rs) / len(rs),
                     "median_seconds": common.median(r["seconds"] for r in rs)}
    return out


def show(ask: dict, rec: dict, seconds: float) -> list[tuple[str, bool]]:
    print(f"\nask ({seconds / 60:.1f} min):")
    for name, s in ask.items():
        print(f"  {name:12s} n={s['questions']:2d} citations {s['citations']:3d}  verified {s['verified_share']:.2f}"
              f"  on a gold page {s['gold_share']:.2f}  answered with a verified gold citation "
              f"{s['answered_with_verified_gold']:.2f}  with a supporting citation "
              f"{s.get('answered_with_supporting', float('nan')):.2f}  'not stated' {s['not_stated_share']:.2f}")
    checks = []
    for setting, per_side in rec.items():
        print(f"retrieval, {setting}:")
        for side, groups in per_side.items():
            print(f"  {side:6s} " + "   ".join(f"{g} R@1 {v['r1']:.2f} R@5 {v['r5']:.2f} MRR {v['mrr']:.2f}"
                                           for g, v in groups.items()))
        metric, target = TARGETS[setting]
        for lang in ("en", "zh"):
            value = per_side["ours"][lang][metric]
            checks.append((f"{setting} {lang.upper()} recall@{metric[1]} ≥ {target:.2f} ({value:.2f})",
                           value >= target))
    for text, ok in checks:
        print(f"  {common.verdict(ok):6s} {text}")
    return checks


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=12, help="questions asked (deterministic subset)")
    ap.add_argument("--all", action="store_true", help="ask every dev question (slow on a CPU)")
    ap.add_argument("--mode", choices=("auto", "whole-document", "retrieval"), default="auto")
    ap.add_argument("--prefill-tps", type=float, default=215.0,
                    help="prefill speed the app is told it has (auto mode); 215 = SmolLM2 on 2 idle cores")
    ap.add_argument("--answer-max-chars", type=int, default=0,
                    help="experiment: bound the answer string to N characters in both languages instead of "
                         "the app's bound (prompts.answer_chars)")
    ap.add_argument("--free-quotes", action="store_true",
                    help="experiment, the app before quotes were constrained: a quote may be any string "
                         "(checked against the page afterwards) instead of one of the prompt's sentences")
    ap.add_argument("--repeat-penalty", type=float, default=None,
                    help="experiment: this repeat penalty instead of the model's own (models.toml; 1.0 = none)")
    ap.add_argument("--quick", action="store_true", help="CI smoke run: 1 question, 2 retrieved pages, 48-token answer")
    ap.add_argument("--eval", type=Path, default=common.EVAL)
    ap.add_argument("--out", type=Path, default=None, help="folder for quality.json (default out/bench)")
    ap.add_argument("--name", default="quality", help="JSON file name (e.g. for an experiment beside the default)")
    ap.add_argument("--retrieval-only", action="store_true",
                    help="recompute the retrieval figures (seconds) and keep the `ask` results of the existing "
                         "JSON, which keeps its own commit and date (`ask_measured`)")
    args = ap.parse_args(argv)
    if args.retrieval_only:
        return _refresh_retrieval(args)
    from app.core.answer import prompts, qa, refs as answer_refs
    from app.core.library import Library
    experiment = []
    if args.answer_max_chars:
        prompts.answer_chars = lambda *_a, **_k: args.answer_max_chars
        experiment.append(f"--answer-max-chars {args.answer_max_chars}")
    if args.free_quotes:
        qa.quotable = lambda _context: []
        experiment.append("--free-quotes")
    if args.repeat_penalty is not None:
        experiment.append(f"--repeat-penalty {args.repeat_penalty:g}")
    questions = [json.loads(line) for line in args.eval.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.quick:
        # CI checks that it runs, not what it scores: a short context and a short answer
        args.limit, args.mode, answer_refs.RETRIEVAL_PAGES, qa.ANSWER_TOKENS = 1, "retrieval", 2, 48
    asked = subset(questions, None if args.all else args.limit)
    began = common.now()
    with common.temp_home("pagewise-quality-"), tempfile.TemporaryDirectory() as tmp:
        lib = Library(Path(tmp) / "library.sqlite")
        ids = {str(p.relative_to(common.CORPUS)): lib.add(p).id for p in common.corpus_files()}
        rec = retrieval_figures(lib, ids, questions, vectors=not args.quick)
        print(f"asking {len(asked)} of {len(questions)} questions ({args.mode} mode) …", flush=True)
        rows = ask_all(lib, ids, asked, args.mode, args.prefill_tps, args.repeat_penalty)
        lib.close()
    seconds = common.now() - began
    ask = ask_summary(rows)
    checks = show(ask, rec, seconds)
    data = {"quick": args.quick, "mode": args.mode, "experiment_flags": " ".join(experiment) or None,
            "answer_tokens": qa.ANSWER_TOKENS, "asked": len(asked), "of": len(questions),
            "seconds": seconds, "ask": ask, "retrieval": rec, "questions": rows,
            "checks": [{"target": t, "met": ok} for t, ok in checks]}
    common.write_json(args.name, data, args.out)
    return data


def _refresh_retrieval(args) -> dict:
    from app.core.library import Library
    path = Path(args.out or common.OUT) / f"{args.name}.json"
    old = json.loads(path.read_text(encoding="utf-8"))
    questions = [json.loads(line) for line in args.eval.read_text(encoding="utf-8").splitlines() if line.strip()]
    with common.temp_home("pagewise-quality-"), tempfile.TemporaryDirectory() as tmp:
        lib = Library(Path(tmp) / "library.sqlite")
        ids = {str(p.relative_to(common.CORPUS)): lib.add(p).id for p in common.corpus_files()}
        rec = retrieval_figures(lib, ids, questions)
        lib.close()
    keep = {k: v for k, v in old.items() if k not in ("benchmark", "when", "commit", "machine")}
    ask_measured = old.get("ask_measured") or {k: old.get(k) for k in ("when", "commit", "machine")}
    checks = show(old["ask"], rec, old["seconds"])
    data = {**keep, "retrieval": rec, "ask_measured": ask_measured,
            "checks": [{"target": t, "met": ok} for t, ok in checks]}
    common.write_json(args.name, data, args.out)
    return data


if __name__ == "__main__":
    main()
