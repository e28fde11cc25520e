"""Soak: many questions through the real worker with the embedded model, one engine start.

    .venv/bin/python benchmarks/soak.py [--questions 200] [--every 50] [--docs 10]

Questions cycle through the corpus' English and Chinese contracts and laws, alternating new
conversations and follow-ups, in retrieval and whole-document mode. Every `--every` questions the
worker is killed (SIGKILL) between answers, and half-way one document is removed from the library
and added again (it comes back under a new id: ids are never reused). Reports failures (target:
zero), answers with a verified citation, the resident memory of the app and of the worker at the
start and every `--every` questions (a leak shows as growth), restarts, and the library's
integrity and foreign-key checks at the end.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

QUESTIONS = ("Who are the parties?", "How can the agreement be terminated?", "Which law governs it?",
             "What must be kept confidential?", "How long does it last?", "合同可以解除吗？", "违约责任是什么？")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--every", type=int, default=50, help="kill the worker and note memory this often")
    ap.add_argument("--docs", type=int, default=10)
    args = ap.parse_args(argv)
    import os
    import signal
    import sqlite3
    from app.core import paths
    from app.core.answer import qa
    from app.core.answer.conversation import Conversation
    from app.core.library import Library
    from app.worker.runtime import EngineRuntime

    qa.ANSWER_TOKENS = 96           # the soak is about the engine staying up, not long answers
    docs = [p for p in common.corpus_files() if p.suffix == ".pdf"][:args.docs]
    with common.temp_home("pagewise-soak-"):
        lib = Library()
        refs = [[qa.DocRef(1, lib.add(p).id, p.name)] for p in docs]
        rt = EngineRuntime()
        rt.start()
        worker = rt.engine.pid
        rss = [(0, common.rss_mb(), common.rss_mb(worker) if worker else None)]
        failures, verified, began, conv = [], 0, common.now(), Conversation()
        kills, readded = 0, None
        for n in range(args.questions):
            if n == args.questions // 2:        # a document removed and added again mid-way
                gone = refs[0][0]
                lib.remove(gone.doc_id)
                refs[0] = [qa.DocRef(1, lib.add(docs[0]).id, docs[0].name)]
                readded = (gone.doc_id, refs[0][0].doc_id)
            ref = refs[(n // 3) % len(refs)]
            if n % 3 == 0:
                conv = Conversation()
            q = QUESTIONS[n % len(QUESTIONS)]
            try:
                a = rt.ask(lib, ref, q, conversation=conv, mode="retrieval" if n % 2 else "auto")
                verified += any(c.verified for c in a.citations)
            except Exception as exc:  # noqa: BLE001 - counted and shown
                failures.append(f"q{n} {ref[0].label}: {type(exc).__name__}: {exc}")
            if (n + 1) % args.every == 0 or n + 1 == args.questions:
                worker = rt.engine.pid or worker
                rss.append((n + 1, common.rss_mb(), common.rss_mb(worker) if worker else None))
                print(f"{n + 1} questions, {len(failures)} failures, {common.now() - began:.0f} s", flush=True)
                if n + 1 < args.questions and worker:
                    os.kill(worker, signal.SIGKILL)      # the next question finds it gone
                    kills += 1
        restarts = len(rt.engine.recoveries)
        rt.stop()
        lib.close()
        con = sqlite3.connect(paths.library_path())
        integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
        orphans = len(con.execute("PRAGMA foreign_key_check").fetchall())
        con.close()
    print(f"worker killed {kills} times, {restarts} restarts; document removed and "
          f"added again: id {readded[0] if readded else '-'} → {readded[1] if readded else '-'}; "
          f"library integrity {integrity}, {orphans} rows without their document")
    print(f"\n{args.questions} questions in {common.now() - began:.0f} s: {len(failures)} failures, "
          f"{verified} answers with a verified citation")
    for n, app_mb, worker_mb in rss:
        print(f"  after {n:>3} questions: app RSS {app_mb:.0f} MB, worker RSS {worker_mb or 0:.0f} MB")
    for f in failures[:10]:
        print(f"  failure: {f}")
    common.write_json("soak", {"questions": args.questions, "every": args.every, "failures": failures,
                               "verified": verified, "rss_mb": rss, "kills": kills,
                               "restarts": restarts, "readded": readded,
                               "integrity": integrity, "orphans": orphans})
    return 1 if failures or integrity != "ok" or orphans else 0


if __name__ == "__main__":
    sys.exit(main())
