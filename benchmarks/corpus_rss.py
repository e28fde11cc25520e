"""Peak memory of `pagewise index` and `pagewise ask` on every corpus PDF under a size limit.

Each command runs as a real process in a fresh home. The app's peak RSS is its own VmHWM, and the
worker's (the model) is read the same way, from /proc, every 0.1 s while the command runs: a
getrusage of the children would take the larger of the two, and the limit is about what a PDF
makes the app hold. A traceback on stderr, a timeout or a peak over the limit fails the row.

  python benchmarks/corpus_rss.py [--max-kb 2048] [--ask "What is this document about?" --model ID]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("PAGEWISE_CORPUS", "/work/shared/corpus"))


def hwm_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def descendants(pid: int) -> list[int]:
    """Every process whose parent chain reaches `pid` (the worker runs in its own session)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
                parents[int(entry.name)] = int(stat[1])
            except (OSError, ValueError, IndexError):
                continue
    found, frontier = [], [pid]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parents.items() if pp == p]
        found += kids
        frontier += kids
    return found


def run(argv: list[str], home: Path, timeout: float, stdin: str | None = None) -> dict:
    env = {**os.environ, "PAGEWISE_HOME": str(home), "PYTHONPATH": str(ROOT)}
    began = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "app", *argv], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL)
    if stdin is not None:
        proc.stdin.write(stdin.encode())
        proc.stdin.close()
    app_kb, worker_kb, timed_out = 0, 0, False
    import threading
    out: dict[str, bytes] = {}
    readers = [threading.Thread(target=lambda n=n, f=f: out.__setitem__(n, f.read()), daemon=True)
               for n, f in (("out", proc.stdout), ("err", proc.stderr))]
    for t in readers:
        t.start()
    while proc.poll() is None:
        app_kb = max(app_kb, hwm_kb(proc.pid))
        for kid in descendants(proc.pid):
            worker_kb = max(worker_kb, hwm_kb(kid))
        if time.monotonic() - began > timeout:
            proc.kill()
            timed_out = True
        time.sleep(0.1)
    for t in readers:
        t.join(10)
    err = out.get("err", b"").decode(errors="replace")
    return {"rc": proc.returncode, "app_mb": round(app_kb / 1024), "worker_mb": round(worker_kb / 1024),
            "s": round(time.monotonic() - began, 1), "timed_out": timed_out,
            "traceback": "Traceback (most recent call last)" in err,
            "stderr_lines": len([ln for ln in err.splitlines() if ln.strip()]),
            "said": (err.strip().splitlines() or [""])[-1][:160]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-kb", type=int, default=2048, help="PDFs up to this size")
    ap.add_argument("--limit-mb", type=int, default=400, help="the app's peak RSS limit")
    ap.add_argument("--ask", help="also ask this question about each PDF that indexed")
    ap.add_argument("--model", help="model id for --ask")
    ap.add_argument("--models-from", help="a PAGEWISE_HOME whose models/ is linked into each fresh home")
    ap.add_argument("--ask-only", action="store_true", help="with --ask: no separate index run (ask indexes)")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    pdfs = sorted(p for p in CORPUS.rglob("*.pdf") if p.stat().st_size <= args.max_kb * 1024)
    rows, failed = [], 0
    with tempfile.TemporaryDirectory(prefix="pw-rss-") as tmp:
        for pdf in pdfs:
            home = Path(tmp) / pdf.stem
            home.mkdir()
            if args.models_from:
                (home / "models").symlink_to(Path(args.models_from) / "models")
            row = {"pdf": str(pdf.relative_to(CORPUS)), "kb": pdf.stat().st_size // 1024}
            if not (args.ask and args.ask_only):
                row["index"] = run(["index", str(pdf)], home, args.timeout)
            if args.ask and row.get("index", {"rc": 0})["rc"] == 0:
                argv = ["ask", str(pdf), "-q", args.ask] + (["--model", args.model] if args.model else [])
                row["ask"] = run(argv, home, args.timeout)
            bad = [k for k in ("index", "ask") if k in row and (row[k]["traceback"] or row[k]["timed_out"]
                                                              or row[k]["app_mb"] > args.limit_mb)]
            failed += bool(bad)
            rows.append(row)
            cells = "  ".join(f"{k} rc {row[k]['rc']} app {row[k]['app_mb']} MB worker {row[k]['worker_mb']} MB "
                              f"{row[k]['s']} s" for k in ("index", "ask") if k in row)
            said = " / ".join(row[k]["said"] for k in ("index", "ask") if k in row and row[k]["rc"])
            print(f"{'FAIL' if bad else 'ok  '} {row['pdf']} ({row['kb']} KB): {cells} | {said}", flush=True)
    for k in ("index", "ask"):
        peaks = [(r[k]["app_mb"], r["pdf"]) for r in rows if k in r]
        if peaks:
            top = max(peaks)
            print(f"max app peak for {k}: {top[0]} MB ({top[1]}); over {len(peaks)} PDFs")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    print(f"{len(rows)} PDFs, {failed} failed (traceback, timeout or over {args.limit_mb} MB)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
