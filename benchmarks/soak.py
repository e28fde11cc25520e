"""Soak: many questions with the embedded model, the worker killed (SIGKILL) every `--every`
questions and one document removed and added again half-way.

    .venv/bin/python benchmarks/soak.py --via cli|window|runtime [--questions 200] [--every 50]

* `cli`: ONE `pagewise ask` process, one conversation, every document of the evaluation set
  named on its command line and `-q` given once per question (`--stream`: each answer is a
  JSON line). The worker is killed from outside; the document is removed and indexed again by
  other `pagewise library remove` / `pagewise index` processes while the conversation goes on.
* `window`: ONE main window session (QT_QPA_PLATFORM decides: xcb under Xvfb, or offscreen).
  Each question opens its document(s) the way a user does (two side by side), asks, waits for
  the answer on screen; the library panel removes the document and opening it adds it again.
* `runtime`: the EngineRuntime the window and the CLI share, driven directly.

Reports failures (target 0), answers shown, answers with a verified citation, the resident
memory of the app and of the worker at the start and every `--every` questions (a leak shows as
growth after the first round), kills and restarts, and the library's integrity and foreign-key
checks at the end. `--budget S` sets the first-token budget (a user setting) for the run.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import soak_plan  # noqa: E402


def set_budget(seconds: float | None) -> None:
    if seconds:
        from app.core import settings
        import dataclasses
        settings.save(dataclasses.replace(settings.load(), first_token_budget_s=seconds))


# --- one CLI conversation ----------------------------------------------------------------------
def pagewise(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=common.ROOT, capture_output=True,
                          text=True, timeout=timeout)


def soak_cli(asked: list[soak_plan.SoakQuestion], every: int) -> soak_plan.SoakResult:
    result = soak_plan.SoakResult("cli", len(asked), every)
    files = sorted({f for q in asked for f in q.files})
    cmd = [sys.executable, "-m", "app", "ask", *map(str, files), "--stream"]
    for q in asked:
        cmd += ["-q", q.question]
    began = common.now()
    errors = open(Path(os.environ["PAGEWISE_HOME"]) / "soak-cli.stderr", "w+")
    proc = subprocess.Popen(cmd, cwd=common.ROOT, stdout=subprocess.PIPE, stderr=errors, text=True)
    result.note_memory(0, proc.pid, None)
    readd = None
    for line in proc.stdout:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "error" or "error" in event and "event" not in event:
            result.failures.append(f"q{result.answered + 1}: {event.get('error') or event}")
            continue
        if event.get("event") != "answer":
            continue
        result.answered += 1
        n = result.answered
        result.verified += any(c.get("verified") for c in event.get("citations", []))
        if n % 10 == 0:
            print(f"  {n} answered, {common.now() - began:.0f} s", flush=True)
        if n % every == 0 and n < len(asked):
            worker = soak_plan.worker_pid(proc.pid)
            result.note_memory(n, proc.pid, worker)
            if worker:
                os.kill(worker, signal.SIGKILL)        # the next question finds it gone
                result.kills += 1
        if n == len(asked) // 2:     # other processes remove a document and index it again, meanwhile
            readd = threading.Thread(target=lambda: setattr(result, "readded", _remove_and_readd_cli(files[0])))
            readd.start()
    rc = proc.wait()
    if readd is not None:
        readd.join()
    result.seconds = common.now() - began
    result.note_memory(result.answered, None, None)   # the process has ended: nothing to read
    result.rss.pop()
    if rc != 0 or result.answered < len(asked):
        errors.seek(0)
        tail = [ln for ln in errors.read().splitlines() if ln.strip()][-1:] or ["no message"]
        result.failures.append(f"ask ended with rc {rc} after {result.answered} answers: {tail[0]}")
    return result


def _remove_and_readd_cli(path: Path) -> tuple:
    listed = json.loads(pagewise("library", "list", "--json").stdout or "[]")
    rows = listed if isinstance(listed, list) else listed.get("documents", [])
    old = next((r["id"] for r in rows if Path(r.get("path", "")).name == path.name), None)
    pagewise("library", "remove", str(old))
    pagewise("index", str(path), "--no-dense")
    listed = json.loads(pagewise("library", "list", "--json").stdout or "[]")
    rows = listed if isinstance(listed, list) else listed.get("documents", [])
    new = next((r["id"] for r in rows if Path(r.get("path", "")).name == path.name), None)
    return old, new


# --- the runtime the window and the CLI share ------------------------------------------------------
def soak_runtime(asked: list[soak_plan.SoakQuestion], every: int) -> soak_plan.SoakResult:
    from app.core.answer import qa
    from app.core.answer.conversation import Conversation
    from app.core.library import Library
    from app.worker.runtime import EngineRuntime
    from app.service.planning import start_planned

    result = soak_plan.SoakResult("runtime", len(asked), every)
    lib = Library()
    ids: dict[Path, int] = {}
    rt = EngineRuntime()
    start_planned(rt)
    began, conv, last = common.now(), Conversation(), None
    result.note_memory(0, os.getpid(), rt.engine.pid)
    for n, q in enumerate(asked, 1):
        if n == len(asked) // 2 + 1 and ids:       # a document removed and added again mid-way
            path = next(iter(ids))
            lib.remove(ids[path])
            old, ids[path] = ids[path], lib.add(path).id
            result.readded = (old, ids[path])
        for f in q.files:
            if f not in ids:
                ids[f] = lib.add(f).id
        refs = [qa.DocRef(k, ids[f], f.name) for k, f in enumerate(q.files, 1)]
        if q.files != last:
            conv, last = Conversation(), q.files
        try:
            a = rt.ask(lib, refs, q.question, conversation=conv)
            result.answered += 1
            result.verified += any(c.verified for c in a.citations)
        except Exception as exc:  # noqa: BLE001 - counted and shown
            result.failures.append(f"q{n} {q.files[0].name}: {type(exc).__name__}: {exc}")
        if n % every == 0 and n < len(asked):
            result.note_memory(n, os.getpid(), rt.engine.pid)
            if rt.engine.pid:
                os.kill(rt.engine.pid, signal.SIGKILL)
                result.kills += 1
    result.note_memory(len(asked), os.getpid(), rt.engine.pid)
    result.seconds = common.now() - began
    result.restarts = len(rt.engine.recoveries)
    rt.stop()
    lib.close()
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--via", choices=["cli", "window", "runtime"], default="cli")
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--every", type=int, default=50, help="kill the worker and note memory this often")
    ap.add_argument("--budget", type=float, default=None, help="first-token budget in seconds (a setting)")
    ap.add_argument("--keep", help="use this PAGEWISE_HOME and keep it (default: a temporary one)")
    args = ap.parse_args(argv)
    asked = soak_plan.questions(args.questions)
    from app.core import paths
    with (_kept_home(args.keep) if args.keep else common.temp_home("pagewise-soak-")):
        set_budget(args.budget)
        if args.via == "window":
            import soak_window
            result = soak_window.soak(asked, args.every)
        else:
            result = (soak_cli if args.via == "cli" else soak_runtime)(asked, args.every)
        result.check_library(paths.library_path())
    result.print()
    common.write_json(f"soak_{args.via}", {**result.to_dict(), "budget_s": args.budget})
    return 0 if result.ok() else 1


class _kept_home:
    def __init__(self, path: str):
        self.path = Path(path).resolve()

    def __enter__(self):
        self.path.mkdir(parents=True, exist_ok=True)
        os.environ["PAGEWISE_HOME"] = str(self.path)
        return self.path

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    started = time.time()
    sys.exit(main())
