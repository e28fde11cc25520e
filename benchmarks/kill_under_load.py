"""kill -9 of the worker at the first token, with the machine busy (issue 32, point 18).

    .venv/bin/python benchmarks/kill_under_load.py [--load 1] [--rounds 2]

`--load N` busy processes (plain Python loops, normal priority) run throughout. Each round asks
the same question twice in a fresh conversation: once normally, once with the worker killed
(SIGKILL) as the first token of the answer arrives. Prints both times side by side and their
ratio (target: the killed answer within 2x the normal one), and the restart's own time.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

QUESTION = "How can the agreement be terminated?"


def _spin(stop) -> None:
    while not stop.is_set():
        for _ in range(100_000):
            pass


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--load", type=int, default=1, help="busy processes beside the app")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    from app.core.answer import qa
    from app.core.answer.conversation import Conversation
    from app.core.library import Library
    from app.worker.runtime import EngineRuntime
    from app.service.planning import start_planned

    nda = common.CORPUS / "contracts-en" / "common-paper-mnda.pdf"
    stop = multiprocessing.Event()
    load = [multiprocessing.Process(target=_spin, args=(stop,), daemon=True) for _ in range(args.load)]
    rows = []
    with common.temp_home("pagewise-kill-"):
        lib = Library()
        refs = [qa.DocRef(1, lib.add(nda).id, nda.name)]
        rt = EngineRuntime()
        start_planned(rt)
        for p in load:
            p.start()
        try:
            for r in range(args.rounds):
                began = time.monotonic()
                normal = rt.ask(lib, refs, QUESTION, conversation=Conversation(), mode="retrieval")
                normal_s = time.monotonic() - began
                pid, killed = rt.engine.pid, {}

                def on_delta(_text, pid=pid, killed=killed):
                    if not killed:
                        killed["at"] = time.monotonic()
                        os.kill(pid, signal.SIGKILL)
                began = time.monotonic()
                again = rt.ask(lib, refs, QUESTION, conversation=Conversation(), mode="retrieval",
                               on_delta=on_delta)
                killed_s = time.monotonic() - began
                restart = rt.engine.recoveries[-1]["restart_s"] if rt.engine.recoveries else None
                rows.append({"round": r + 1, "normal_s": round(normal_s, 1), "killed_s": round(killed_s, 1),
                             "ratio": round(killed_s / normal_s, 2), "restart_s": restart,
                             "first_token_s": round(killed.get("at", began) - began, 1),
                             # the retry after the restart: prompt tokens it read (the rest came
                             # from the KV state on disk) and its own time to the first token
                             "retry_read": again.usage.read_tokens, "retry_prompt": again.usage.prompt_tokens,
                             "retry_ttft_s": again.timing.ttft_s, "normal_read": normal.usage.read_tokens,
                             "answered": bool(normal.text and again.text), "new_pid": rt.engine.pid != pid})
                print(rows[-1], flush=True)
        finally:
            stop.set()
            for p in load:
                p.join(timeout=5)
            rt.stop()
            lib.close()
    print(f"\nload: {args.load} busy process(es) on {os.cpu_count()} cores")
    print(f"{'round':>5} {'normal s':>9} {'killed s':>9} {'ratio':>6} {'restart s':>10} {'1st token s':>12} "
          f"{'retry read/prompt':>18} {'retry ttft s':>13}")
    for row in rows:
        print(f"{row['round']:>5} {row['normal_s']:>9} {row['killed_s']:>9} {row['ratio']:>6} "
              f"{row['restart_s']!s:>10} {row['first_token_s']:>12} "
              f"{str(row['retry_read']) + '/' + str(row['retry_prompt']):>18} {row['retry_ttft_s']:>13}")
    common.write_json("kill_under_load", {"load": args.load, "rounds": rows})
    return 0 if all(r["answered"] and r["ratio"] <= 2 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
