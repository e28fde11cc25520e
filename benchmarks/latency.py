"""Answer latency on the CPU with the embedded model: ours vs llama-cpp-python in-process.

    .venv/bin/python benchmarks/latency.py [--rounds 2] [--doc PDF] [--quick]

Ours = the app's path: EngineRuntime (the llama.cpp worker child, HTTP streaming, disk KV
state) + qa.ask (context from the library, citation verification). TTFT is measured from the
call to runtime.ask until the first streamed piece of the answer; total until ask returns.
  first      the first question on the document (fresh PAGEWISE_HOME: no KV state on disk)
  follow-up  a second question on the same document, same worker
  restart    a third question after the worker was stopped and started again, asked as soon
             as it is ready (the CLI's path: `pagewise ask` starts the worker and asks at once;
             the worker restores the document used last on its own at start-up)
  reopened   the GUI's path after a restart: the worker started again, the document opened
             (the window then calls EngineRuntime.prepare, which lets the worker restore the
             document's KV state from disk) and the question typed TYPING_S later
In-process = the same messages and JSON-schema grammar sent to Llama.create_chat_completion
with the same n_ctx and threads: a fresh Llama for "first", the same one afterwards (for
"restart" and "reopened" it is the never-restarted warm instance, i.e. what a restart should be as fast as).
Rounds alternate which side goes first. Targets: follow-up and restart TTFT ≤ 10% of the
first; ours ≤ 10% slower than in-process.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import latency_sides as sides  # noqa: E402

QUESTIONS = ("Who are the parties to this agreement, and what is it for?",
             "How can either party terminate this agreement?",
             "Which law governs this agreement?",
             "What happens when this agreement ends?")
KINDS = ("first", "follow-up", "restart", "reopened")
TYPING_S = 1.0           # a question typed after the document opened (the restore takes ~40 ms)
TARGET_WARM = 0.10       # follow-up / restart TTFT as a share of the first
TARGET_OVERHEAD = 0.10   # ours vs in-process


def pick_document(lib, candidates: list[Path]):
    """The largest contract (by estimated tokens) the app would send whole to the model."""
    from app.core.answer import budget, qa
    n_ctx = sides.model_and_context()[1]          # the context this machine's plan gives
    best = None
    for path in candidates:
        info = lib.add(path)
        ref = qa.DocRef(1, info.id, str(path))
        tokens = budget.estimate_tokens(qa.whole_context(lib, [ref]))
        if tokens <= budget.document_room(n_ctx, QUESTIONS[0]) and (best is None or tokens > best[1]):
            best = (ref, tokens, info)
    return best


def one_round(lib, ref, r: int) -> dict:
    """Each kind measured as a back-to-back pair; which side goes first alternates by round."""
    from app.core.answer import prompts, qa
    context = qa.whole_context(lib, [ref])
    msgs = [prompts.messages(context, q, whole=True) for q in QUESTIONS]
    with common.temp_home("pagewise-latency-"):      # empty KV cache: the first question is cold
        ours, inproc = sides.Ours(lib, [ref]), sides.InProcess()
        out = {"ours": {}, "inproc": {}}
        try:
            ours.start()
            for kind, question, m in zip(KINDS, QUESTIONS, msgs):
                if kind == "restart":
                    ours.restart()
                elif kind == "reopened":
                    ours.restart()
                    ours.reopen(TYPING_S)
                schema = qa.answer_schema(context, question, m, inproc.prompt_tokens(m))   # as qa.ask makes it
                pair = [("ours", lambda: ours.ask(question)), ("inproc", lambda: inproc.ask(m, schema))]
                for side, run in (pair if r % 2 == 0 else pair[::-1]):
                    out[side][kind] = run()
            out["ours"].update(n_ctx=ours.n_ctx, worker_start_s=ours.start_s, prepared=ours.prepared)
        finally:
            ours.stop()
            inproc.close()
        for kind, line in zip(KINDS, ours.worker_lines()):
            out["ours"][kind].update(worker_prompt_s=line["prompt_s"], disk_tokens=int(line["disk"]))
    out["inproc"].update(n_ctx=inproc.n_ctx, threads=inproc.threads, load_s=inproc.load_s)
    out["same_prompt"] = ours.sent == msgs
    return out


def summarise(rounds: list[dict]) -> dict:
    s = {}
    for kind in KINDS:
        ours_ttft = common.median(r["ours"][kind]["ttft_s"] for r in rounds)
        ours_total = common.median(r["ours"][kind]["total_s"] for r in rounds)
        ip_ttft = common.median(r["inproc"][kind]["ttft_s"] for r in rounds)
        ip_total = common.median(r["inproc"][kind]["total_s"] for r in rounds)
        paired = [r["ours"][kind]["ttft_s"] / r["inproc"][kind]["ttft_s"] for r in rounds]
        s[kind] = {"ours_ttft_s": ours_ttft, "ours_total_s": ours_total, "inproc_ttft_s": ip_ttft,
                   "inproc_total_s": ip_total, "ttft_ratio": common.median(paired), "paired_ttft_ratios": paired,
                   "total_ratio": common.median(r["ours"][kind]["total_s"] / r["inproc"][kind]["total_s"]
                                                for r in rounds),
                   # greedy outputs can diverge (prompt evaluated in other batches): compare per token too
                   "ours_tokens": [r["ours"][kind]["completion_tokens"] for r in rounds],
                   "inproc_tokens": [r["inproc"][kind]["chunks"] for r in rounds],
                   "ours_decode_tps": common.median(_decode_tps(r["ours"][kind], "completion_tokens") for r in rounds),
                   "inproc_decode_tps": common.median(_decode_tps(r["inproc"][kind], "chunks") for r in rounds)}
    for kind in KINDS[1:]:
        s[kind]["share_of_first"] = common.median(
            r["ours"][kind]["ttft_s"] / r["ours"]["first"]["ttft_s"] for r in rounds)
    return s


def _decode_tps(run: dict, key: str) -> float | None:
    """Tokens per second after the first one (ours: verification included, a few ms)."""
    gen = run["total_s"] - run["ttft_s"]
    return (run[key] - 1) / gen if run[key] > 1 and gen > 0 else None


def show(doc: dict, s: dict) -> list[tuple[str, bool]]:
    print(f"\ndocument: {doc['path']} ({doc['pages']} pages, ~{doc['tokens']} tokens estimated, "
          f"{doc['prompt_tokens']} prompt tokens), mode {doc['mode']}")
    print(f"{'':10s} {'ours TTFT':>10s} {'in-proc':>9s} {'ratio':>7s}   {'ours total':>10s} {'in-proc':>9s} "
          f"{'ratio':>7s}   {'tokens ours/in-proc':>19s}  {'decode tok/s ours/in-proc':>25s}")
    for kind in KINDS:
        k = s[kind]
        print(f"{kind:10s} {k['ours_ttft_s']:9.2f}s {k['inproc_ttft_s']:8.2f}s {k['ttft_ratio']:6.2f}×"
              f"   {k['ours_total_s']:9.2f}s {k['inproc_total_s']:8.2f}s {k['total_ratio']:6.2f}×"
              f"   {_slash(k['ours_tokens'], k['inproc_tokens']):>19s}"
              f"  {k['ours_decode_tps']:12.1f} / {k['inproc_decode_tps']:<10.1f}")
    checks = [(f"{kind} TTFT ≤ {TARGET_WARM:.0%} of the first (ours: {s[kind]['share_of_first']:.1%})",
               s[kind]["share_of_first"] <= TARGET_WARM) for kind in KINDS[1:]]
    checks += [(f"{kind} TTFT overhead ≤ {TARGET_OVERHEAD:.0%} over in-process ({s[kind]['ttft_ratio'] - 1:+.0%})",
                s[kind]["ttft_ratio"] <= 1 + TARGET_OVERHEAD) for kind in KINDS]
    for text, ok in checks:
        print(f"  {common.verdict(ok):6s} {text}")
    return checks


def _slash(a: list, b: list) -> str:
    return ",".join(map(str, a)) + " / " + ",".join(map(str, b))


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--doc", type=Path, default=None, help="a PDF (default: the largest contract that "
                    "fits the context whole)")
    ap.add_argument("--quick", action="store_true",
                    help="CI smoke run: the first 2 pages of the smallest contract, 24-token answers, 1 round")
    ap.add_argument("--out", type=Path, default=None, help="folder for latency.json (default out/bench)")
    args = ap.parse_args(argv)
    from app.core.answer import budget, qa
    from app.core.library import Library
    with tempfile.TemporaryDirectory(prefix="pagewise-latency-lib-") as tmp:
        if args.quick:
            qa.ANSWER_TOKENS = budget.ANSWER_TOKENS = 24
            args.rounds = 1          # short answers: CI checks it runs, not speed
            args.doc = sides.first_pages(common.CORPUS / "contracts-en" / "common-paper-mnda.pdf", 2, Path(tmp))
        lib = Library(Path(tmp) / "library.sqlite")
        candidates = [args.doc] if args.doc else sorted((common.CORPUS / "contracts-en").glob("*.pdf"))
        picked = pick_document(lib, candidates)
        if picked is None:
            sys.exit(f"{candidates[0].name}: too long to send whole with the default model's context")
        ref, tokens, info = picked
        rounds = []
        for r in range(args.rounds):
            rounds.append(one_round(lib, ref, r))
            o, i = rounds[-1]["ours"], rounds[-1]["inproc"]
            print(f"  round {r + 1}: TTFT ours/in-proc  " + "  ".join(
                f"{k} {o[k]['ttft_s']:.2f}/{i[k]['ttft_s']:.2f}s" for k in KINDS), flush=True)
        lib.close()
    first = rounds[0]["ours"]["first"]
    doc = {"path": str(ref.label), "pages": info.page_count, "tokens": tokens, "mode": first["mode"],
           "prompt_tokens": first["prompt_tokens"], "answer_tokens_max": qa.ANSWER_TOKENS}
    s = summarise(rounds)
    checks = show(doc, s)
    data = {"quick": args.quick, "document": doc, "summary": s, "rounds": rounds,
            "checks": [{"target": t, "met": ok} for t, ok in checks],
            "same_prompt": all(r["same_prompt"] for r in rounds)}
    common.write_json("latency", data, args.out)
    return data


if __name__ == "__main__":
    main()
