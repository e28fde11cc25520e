"""The chart of docs/benchmarks.png: one panel per benchmark, ours beside its baseline."""
from __future__ import annotations

from pathlib import Path

OURS, BASE, TARGET = "#2b6cb0", "#a0aec0", "#c53030"


def draw(data: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")                       # no display needed
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(16, 9.5))
    panels = [(_ingest, "ingest"), (_latency, "latency"), (_app_start, "app_start"),
              (_retrieval, "quality"), (_ask, "quality"), (_rss, "app_start")]
    for ax, (fn, name) in zip(axes.flat, panels):
        if name in data:
            fn(ax, data[name])
        else:
            ax.set_axis_off()
            ax.text(0.5, 0.5, f"{name}: not run", ha="center", va="center")
    fig.suptitle("Pagewise benchmarks — ours (blue) vs baseline (grey), measured side by side", fontsize=13)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _bars(ax, labels, ours, base, ours_name="ours", base_name="baseline", fmt="{:.0f}"):
    ours, base = [_num(v) for v in ours], [_num(v) for v in base]
    x = range(len(labels))
    w = 0.38
    b1 = ax.bar([i - w / 2 for i in x], ours, w, color=OURS, label=ours_name)
    b2 = ax.bar([i + w / 2 for i in x], base, w, color=BASE, label=base_name)
    for bars in (b1, b2):
        for bar in bars:
            h = bar.get_height()
            ax.annotate(fmt.format(h), (bar.get_x() + bar.get_width() / 2, h), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(list(x), labels, fontsize=9)
    ax.set_ylim(0, max(ours + base + [1e-9]) * 1.3)      # headroom for the legend
    ax.legend(fontsize=8, loc="upper left")


def _num(value) -> float:
    return 0.0 if value is None or value != value else float(value)   # nan (no citations) → 0


def _ingest(ax, d):
    res = d["results"]
    labels = [f"{r['input'].replace('generated ', '')}\nratio {r['ratio']:.2f} (target ≥ 0.50)" for r in res]
    _bars(ax, labels, [r["ours_pages_per_s"] for r in res], [r["bare_pages_per_s"] for r in res],
          "Library.add", "bare PyMuPDF get_text")
    ax.set_ylabel("pages / s")
    ax.set_title("Ingestion speed")


def _latency(ax, d):
    s = d["summary"]
    kinds = list(s)
    labels = [f"{k}\n×{s[k]['ttft_ratio']:.2f} vs in-proc" for k in kinds]
    _bars(ax, labels, [s[k]["ours_ttft_s"] for k in kinds], [s[k]["inproc_ttft_s"] for k in kinds],
          "ours (worker + qa)", "llama-cpp in-process", fmt="{:.2f}")
    ax.set_yscale("log")
    ax.set_ylim(min(v["ours_ttft_s"] for v in s.values()) / 3, first_top(s) * 8)
    first = s["first"]["ours_ttft_s"]
    ax.axhline(first * 0.10, color=TARGET, ls="--", lw=1)
    ax.annotate("target: 10% of first", (len(kinds) - 0.5, first * 0.10), color=TARGET, fontsize=8,
                ha="right", va="bottom")
    ax.set_ylabel("time to first token, s (log)")
    ax.set_title(f"Answer latency ({d['document']['prompt_tokens']} prompt tokens, CPU)")


def first_top(s: dict) -> float:
    return max(max(v["ours_ttft_s"], v["inproc_ttft_s"]) for v in s.values())


def _app_start(ax, d):
    s = d["summary"]
    _bars(ax, ["window shown", "worker ready"], [s["app_shown_s"], s["app_ready_s"]],
          [s["bare_qt_shown_s"], s["bare_llama_ready_s"]], "Pagewise", "bare Qt window / bare Llama load",
          fmt="{:.2f}")
    ax.axhline(2.0, color=TARGET, ls="--", lw=1)
    ax.annotate("target: window < 2 s", (0, 2.0), color=TARGET, fontsize=8, va="bottom", ha="center")
    ax.set_ylim(0, max(ax.get_ylim()[1], 2.4))
    ax.set_ylabel("seconds from process spawn")
    ax.set_title("App start")


def _retrieval(ax, d):
    r = d["retrieval"]
    cols = [("in-document", "r1", "en"), ("in-document", "r1", "zh"),
            ("library-wide", "r5", "en"), ("library-wide", "r5", "zh")]
    labels = [f"{'in-doc' if s == 'in-document' else 'library'}\n{lang.upper()} R@{m[1]}" for s, m, lang in cols]
    _bars(ax, labels, [r[s]["ours"][lang][m] for s, m, lang in cols],
          [r[s]["naive"][lang][m] for s, m, lang in cols], "ours", "naive page BM25", fmt="{:.2f}")
    ax.hlines([0.80, 0.90], [-0.5, 1.5], [1.5, 3.5], colors=TARGET, linestyles="--", lw=1)
    ax.set_ylim(0, 1.3)
    ax.set_title("Page retrieval, all dev questions (targets dashed)")


def _ask_figures(d: dict) -> list[float]:
    a, qs = d["ask"]["all"], d["questions"]
    cut = sum(q.get("completion_tokens", 0) >= d.get("answer_tokens", 400) for q in qs) / len(qs)
    return [a["citations"] / a["questions"], a["verified_share"], a["gold_share"], cut]


def _ask(ax, d):
    labels = ["citations\nper question", "citations\nverified", "citations on\na gold page",
              "JSON cut off\nat token limit"]
    from report import experiment_flags
    exp = (d.get("experiments") or [None])[0]          # the first experiment; the report lists them all
    _bars(ax, labels, _ask_figures(d), _ask_figures(exp) if exp else [0.0] * 4, "the app's schema",
          f"experiment: {experiment_flags(exp)}" if exp else "(no experiment run)", fmt="{:.2f}")
    ax.set_ylim(0, 1.3)
    ax.set_title(f"ask with SmolLM2-135M, {d['asked']} questions (weak model)")


def _rss(ax, d):
    s = d["summary"]
    _bars(ax, ["GUI", "worker"], [s["gui_rss_mb"], s["worker_rss_mb"]],
          [s["bare_qt_rss_mb"], s["bare_llama_rss_mb"]], "Pagewise (idle)", "bare QMainWindow / bare Llama")
    ax.set_ylabel("resident memory, MB")
    ax.set_title("Idle memory (engine ready)")
