"""Shared benchmark plumbing: where things are, timing, memory, child processes, JSON output.

Every benchmark prints its figures and writes out/bench/<name>.json (git-ignored), which
benchmarks/report.py turns into docs/benchmarks.md and docs/benchmarks.png. The machine is
shared and noisy, so each benchmark measures ours and its baseline side by side in the same
run (alternating) and reports the ratio; absolute figures are context only.
"""
from __future__ import annotations

import contextlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CORPUS = Path(os.environ.get("PAGEWISE_CORPUS", ROOT.parent / "shared" / "corpus"))
EVAL = CORPUS.parent / "eval" / "dev.jsonl"
OUT = ROOT / "out" / "bench"


def corpus_files(corpus: Path = CORPUS) -> list[Path]:
    """Every good corpus PDF (bad/ excluded), in a stable order."""
    return sorted(p for p in corpus.glob("*/*.pdf") if p.parent.name != "bad")


def bench_cache_dir() -> Path:
    """Outside the repo: generated inputs (the 2,000-page PDF) survive between runs."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    path = base / "pagewise-bench"
    path.mkdir(parents=True, exist_ok=True)
    return path


# --- time and memory -------------------------------------------------------------------------
def now() -> float:
    return time.perf_counter()


def peak_rss_mb() -> float:
    """This process's peak resident set so far (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def rss_mb(pid: int | None = None) -> float:
    """Current resident set of a process (this one by default): /proc on Linux (psutil is
    no dependency of the app: the pinned PyMuPDF does not pull it in), psutil elsewhere."""
    statm = Path(f"/proc/{pid or os.getpid()}/statm")
    if statm.is_file():
        return int(statm.read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)
    import psutil
    return psutil.Process(pid or os.getpid()).memory_info().rss / (1024 * 1024)


def median(values) -> float:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float("nan")


def ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def load_average() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


@contextlib.contextmanager
def temp_home(prefix: str = "pagewise-bench-"):
    """A throwaway PAGEWISE_HOME (library, KV cache, logs): benchmarks never touch user data.
    Children started meanwhile (the worker) inherit it through the environment."""
    old = os.environ.get("PAGEWISE_HOME")
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        os.environ["PAGEWISE_HOME"] = tmp
        try:
            yield Path(tmp)
        finally:
            if old is None:
                os.environ.pop("PAGEWISE_HOME", None)
            else:
                os.environ["PAGEWISE_HOME"] = old


# --- child processes -------------------------------------------------------------------------
RESULT_TAG = "BENCH-RESULT "


def emit_result(data: dict) -> None:
    """A child's result: one tagged JSON line on stdout (everything else it prints is ignored)."""
    print(RESULT_TAG + json.dumps(data), flush=True)


def run_child(argv: list[str], timeout_s: float = 900, env: dict | None = None) -> dict:
    """Run `python argv…` in its own process (its own peak RSS) and return its tagged result."""
    proc = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout_s, env={**os.environ, **(env or {})})
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_TAG):
            return json.loads(line[len(RESULT_TAG):])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
    raise RuntimeError(f"benchmark child {argv[:2]} failed (exit {proc.returncode}): {tail[0]}")


def run_child_plain(argv: list[str], timeout_s: float = 900) -> str:
    """Run `python argv…`; its stdout, or a one-line error naming the script."""
    proc = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout_s)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"{Path(argv[0]).name} failed (exit {proc.returncode}): {tail[0]}")
    return proc.stdout


# --- output ----------------------------------------------------------------------------------
_LOAD_AT_START = load_average()      # when the benchmark began (this module is imported first)


def machine() -> dict:
    return {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
            "load_avg_start": _LOAD_AT_START, "load_avg": load_average()}


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def write_json(name: str, data: dict, out_dir: Path | None = None) -> Path:
    """out/bench/<name>.json with when/where it was measured, so the report can say so."""
    out = Path(out_dir or OUT)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    meta = {"benchmark": name, "when": time.strftime("%Y-%m-%d %H:%M:%S"), "commit": git_commit(),
            "machine": machine()}
    path.write_text(json.dumps({**meta, **data}, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"\nwrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return path


def fmt_ratio(value: float) -> str:
    return "n/a" if value != value else f"{value:.2f}×"


def verdict(ok: bool) -> str:
    return "MET" if ok else "MISSED"
