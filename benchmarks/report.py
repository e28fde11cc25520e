"""Collect out/bench/*.json into docs/benchmarks.md and the chart docs/benchmarks.png.

    .venv/bin/python benchmarks/report.py [--in out/bench] [--docs docs]

Missing inputs are reported as "not run"; the chart needs matplotlib (skipped with a
message when it is not installed).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

NAMES = ("ingest", "latency", "quality", "app_start")
RERUN = {"ingest": "benchmarks/ingest.py", "latency": "benchmarks/latency.py",
         "quality": "benchmarks/quality.py --limit 12", "app_start": "benchmarks/app_start.py"}


def load(folder: Path) -> dict:
    out = {}
    for name in NAMES:
        path = folder / f"{name}.json"
        if path.is_file():
            out[name] = json.loads(path.read_text(encoding="utf-8"))
    # experiments beside the app: quality.py --name quality_experiment[-…] …
    out["quality_experiments"] = [json.loads(p.read_text(encoding="utf-8"))
                                  for p in sorted(folder.glob("quality_experiment*.json"))]
    return out


def targets(data: dict) -> list[tuple[str, str, bool]]:
    """(benchmark, target with the measured figure, met) for every target we have figures for."""
    rows = []
    for res in data.get("ingest", {}).get("results", []):
        rows.append(("ingest", f"{res['input']}: ≥ 50% of bare PyMuPDF speed ({res['ratio']:.0%})",
                     res["ratio"] >= res["target_ratio"]))
    for name in ("latency", "quality", "app_start"):
        rows += [(name, c["target"], c["met"]) for c in data.get(name, {}).get("checks", [])]
    return rows


def _table(head: list[str], rows: list[list]) -> list[str]:
    return (["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows])


def _when(d: dict) -> str:
    m = d.get("machine", {})
    quick = " — **quick smoke run, not representative**" if d.get("quick") else ""
    start = f"{m['load_avg_start'][0]} at the start, " if m.get("load_avg_start") else ""
    return (f"_Measured {d.get('when', '?')} at commit {d.get('commit', '?')}, {m.get('cpus', '?')} CPUs, "
            f"load average (1 min) {start}{(m.get('load_avg') or ['?'])[0]} at the end{quick}._")


def ingest_md(d: dict) -> list[str]:
    rows = [[r["input"], r["pages"], f"{r['ours_pages_per_s']:.0f}", f"{r['bare_pages_per_s']:.0f}",
             f"**{r['ratio']:.2f}**", ", ".join(f"{x:.2f}" for x in r["paired_ratios"]),
             f"{r['ours_peak_rss_mb']:.0f}", f"{r['bare_peak_rss_mb']:.0f}"] for r in d["results"]]
    return [_when(d), "", *_table(["input", "pages", "ours pages/s", "bare PyMuPDF pages/s", "ratio",
                                   "paired ratios", "ours peak RSS MB", "bare peak RSS MB"], rows)]


def latency_md(d: dict) -> list[str]:
    doc, s = d["document"], d["summary"]
    rows = [[k, f"{v['ours_ttft_s']:.2f}", f"{v['inproc_ttft_s']:.2f}", f"**{v['ttft_ratio']:.2f}×**",
             f"{v['ours_total_s']:.2f}", f"{v['inproc_total_s']:.2f}", f"{v['total_ratio']:.2f}×",
             f"{v['share_of_first']:.1%}" if "share_of_first" in v else "—",
             f"{_join(v.get('ours_tokens'))} / {_join(v.get('inproc_tokens'))}",
             f"{v.get('ours_decode_tps') or 0:.1f} / {v.get('inproc_decode_tps') or 0:.1f}"] for k, v in s.items()]
    starts = [t for r in d["rounds"] for t in r["ours"].get("worker_start_s", [])]
    return [_when(d), "",
            f"Document: `{Path(doc['path']).name}` ({doc['pages']} pages, {doc['prompt_tokens']} prompt tokens), "
            f"the largest contract in `contracts-en` the app sends whole within the plan's "
            f"{d['rounds'][0]['ours'].get('n_ctx', '?')}-token context;"
            f" **{doc['mode']}** mode, answers up to {doc['answer_tokens_max']} tokens, {len(d['rounds'])} round(s);"
            f" same messages on both sides: {d['same_prompt']}. Ratios are medians of the back-to-back pairs.", "",
            "*first*: nothing read yet; *follow-up*: a second question to the same worker; *restart*: the worker "
            "stopped and started again, the question asked as soon as it is ready (the CLI's path: the worker restores the "
            "document used last from disk on its own at start-up, racing the question); *reopened*: the GUI's path after a restart: the "
            "document opened (the window asks the worker to restore its KV state then) and the question typed "
            "a second later. In-process is one Llama that never restarts.", "",
            *_table(["question", "ours TTFT s", "in-process TTFT s", "TTFT ratio", "ours total s",
                     "in-process total s", "total ratio", "ours TTFT vs first", "tokens ours / in-proc",
                     "decode tok/s ours / in-proc"], rows), "",
            "Greedy decoding on both sides; when the token counts differ, the outputs diverged (the prompt "
            "is evaluated in different batches, so logits differ in the last bits) and only the TTFT and "
            "decode-speed columns compare like with like.", "",
            f"Worker start (plan → model loaded → health): {', '.join(f'{t:.1f}' for t in starts)} s."]


def _join(values) -> str:
    return ",".join(str(v) for v in values or []) or "?"


ASK_HEAD = ["group", "questions", "citations", "verified", "on a gold page", "answered", "'not stated'",
            "hit the token limit", "median s"]


def _ask_rows(d: dict) -> list[list]:
    rows = []
    for g, s in d["ask"].items():
        keep = [q for q in d["questions"] if _in_group(q, g)]
        cut = sum(q.get("completion_tokens", 0) >= d.get("answer_tokens", 400) for q in keep)
        rows.append([g, s["questions"], s["citations"], _share(s["verified_share"]), _share(s["gold_share"]),
                     f"{s['answered_with_verified_gold']:.2f}", f"{s['not_stated_share']:.2f}",
                     f"{cut}/{len(keep)}", f"{s['median_seconds']:.0f}"])
    return rows


def _share(value: float) -> str:
    return "—" if value != value else f"{value:.2f}"      # nan: no citations to share out


def _in_group(q: dict, group: str) -> bool:
    """The groups of quality.ask_summary: en / zh answerable, unanswerable, all."""
    if group in ("all", "unanswerable"):
        return group == "all" or q["type"] == "unanswerable"
    return q["type"] != "unanswerable" and q["lang"] == group


def experiment_md(d: dict) -> list[str]:
    return ["", f"**Experiment, not the app** (`quality.py {experiment_flags(d)}`): "
            f"{EXPERIMENTS.get(experiment_flags(d), 'see benchmarks/README.md')}; same "
            f"{d['asked']} questions, {d['seconds'] / 60:.1f} min:", "", *_table(ASK_HEAD, _ask_rows(d))]


EXPERIMENTS = {"--free-quotes": "quotes generated as free strings and checked against the page afterwards "
                                "(the app before quotes were limited to the prompt's sentences)",
               "--repeat-penalty 1.15": "llama.cpp's repeat penalty 1.15 on the answer (the app sends none "
                                        "for SmolLM2); measured at the commit named in its JSON, when it was "
                                        "briefly the catalogue's default"}


def experiment_flags(d: dict) -> str:
    return d.get("experiment_flags") or f"--answer-max-chars {d.get('answer_max_chars')}"


def quality_md(d: dict) -> list[str]:
    ask = _ask_rows(d)
    rec = []
    for setting, sides in d["retrieval"].items():
        for g, v in sides["ours"].items():
            n, b = sides["naive"].get(g, {}), sides.get("bm25", {}).get(g, {})
            rec.append([setting, g, v["n"], f"{v['r1']:.2f}", f"{v['r5']:.2f}", f"{v['mrr']:.2f}",
                        f"{b.get('r1', 0):.2f}", f"{b.get('r5', 0):.2f}",
                        f"{n.get('r1', 0):.2f}", f"{n.get('r5', 0):.2f}", f"{n.get('mrr', 0):.2f}"])
    modes = sorted({q["mode"] for q in d["questions"]})
    earlier = d.get("ask_measured")
    ask_when = (f" (`ask` measured earlier: {earlier.get('when', '?')} at commit {earlier.get('commit', '?')}, "
                "retrieval figures recomputed with `--retrieval-only`)") if earlier else ""
    return [_when(d) + ask_when, "",
            f"`ask` with the embedded SmolLM2-135M on {d['asked']} of {d['of']} dev questions "
            f"({d['mode']} mode → {', '.join(modes)}), {d['seconds'] / 60:.1f} min in all. "
            "Shares are of all citations in the group; \"answered\" = questions with at least one "
            "verified citation on a gold page.", "",
            *_table(ASK_HEAD, ask), *(line for e in d.get("experiments", []) for line in experiment_md(e)), "",
            "Page retrieval on all dev questions (benchmarks/retrieval.py's evaluation): ours (the app: BM25 + "
            "multilingual-e5-small search vectors), the same without vectors (BM25 only), and a naive page BM25:", "",
            *_table(["setting", "group", "n", "R@1", "R@5", "MRR", "BM25-only R@1", "BM25-only R@5",
                     "naive R@1", "naive R@5", "naive MRR"], rec)]


def app_start_md(d: dict) -> list[str]:
    s = d["summary"]
    rows = [["window shown", f"{s['app_shown_s']:.2f} s", f"bare QMainWindow {s['bare_qt_shown_s']:.2f} s",
             common.fmt_ratio(s["shown_ratio"])],
            ["worker ready", f"{s['app_ready_s']:.2f} s", f"bare Llama load {s['bare_llama_ready_s']:.2f} s",
             common.fmt_ratio(s["ready_ratio"])],
            ["idle RSS, GUI", f"{s['gui_rss_mb']:.0f} MB", f"bare QMainWindow {s['bare_qt_rss_mb']:.0f} MB", ""],
            ["idle RSS, worker", f"{s['worker_rss_mb']:.0f} MB", f"bare Llama {s['bare_llama_rss_mb']:.0f} MB", ""]]
    return [_when(d), "", f"Median of {d['rounds']} start(s) from process spawn (offscreen Qt).", "",
            *_table(["", "ours", "baseline", "ratio"], rows)]


SECTIONS = {"ingest": ("1. Ingestion", ingest_md), "latency": ("2. Answer latency (CPU, embedded model)", latency_md),
            "quality": ("3. Quality", quality_md), "app_start": ("4. App start", app_start_md)}


def markdown(data: dict, chart: str | None) -> str:
    lines = ["# Benchmarks", "",
             "Generated by `benchmarks/report.py` from `out/bench/*.json`. Each benchmark measures ours and a "
             "baseline side by side in the same run (alternating), because the machine is shared: the ratios are "
             "the figures to trust, absolute times are context. How to rerun: `benchmarks/README.md`. "
             "The GPU (vLLM) figures are in `docs/gpu-results.md`.", ""]
    if chart:
        lines += [f"![benchmarks]({chart})", ""]
    lines += ["## Targets", "", *_table(["benchmark", "target (measured)", "status"],
                                         [[b, t, "met" if ok else "**MISSED**"] for b, t, ok in targets(data)]), ""]
    for name, (title, fn) in SECTIONS.items():
        lines += [f"## {title}", ""]
        lines += fn(data[name]) if name in data else [f"Not run (`.venv/bin/python {RERUN[name]}`)."]
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--in", dest="src", type=Path, default=common.OUT)
    ap.add_argument("--docs", type=Path, default=common.ROOT / "docs")
    args = ap.parse_args(argv)
    data = load(args.src)
    experiments = data.pop("quality_experiments")
    if "quality" in data and experiments:
        data["quality"]["experiments"] = experiments
    if not data:
        sys.exit(f"no benchmark results in {args.src}: run the benchmarks first")
    args.docs.mkdir(parents=True, exist_ok=True)
    png = args.docs / "benchmarks.png"
    try:
        import report_chart
        report_chart.draw(data, png)
        chart = png.name
    except ImportError:
        print("matplotlib is not installed: no chart (pip install matplotlib)")
        chart = None
    md = args.docs / "benchmarks.md"
    md.write_text(markdown(data, chart), encoding="utf-8")
    for bench, target, ok in targets(data):
        print(f"  {common.verdict(ok):6s} {bench}: {target}")
    print(f"wrote {md}" + (f" and {png}" if chart else ""))


if __name__ == "__main__":
    main()
