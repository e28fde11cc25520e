"""App start: time to window shown and to worker ready; idle RSS of the GUI and the worker.

    .venv/bin/python benchmarks/app_start.py [--rounds 3] [--quick]

Each start is a fresh process (QT_QPA_PLATFORM=offscreen, a temp PAGEWISE_HOME) running the
real entry point app.qt.app.run_gui; times count from just before the process is spawned
(interpreter start-up and imports included, as a user waits for them). "Shown" is the first
paint of the main window; "ready" is the engine controller's sig_ready (plan → worker child →
model loaded → health answers). RSS is read after the engine is ready and the app idles.
Baselines in the same run, alternating: a bare PySide6 QMainWindow (shown) and a bare
python process loading the same model with llama_cpp.Llama (ready).
Target: window shown < 2 s.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

TARGET_SHOWN_S = 2.0
SIDES = ("app", "bare-qt", "bare-llama")


# --- children ----------------------------------------------------------------------------------
def _child_gui(spawned: float, settle_s: float, bare: bool) -> None:
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication, QLabel, QMainWindow, QWidget

    app = QApplication(sys.argv[:1])
    marks: dict = {}

    def finish(**extra) -> None:
        win = _main_window(app)
        try:
            service = getattr(getattr(win, "engine", None), "service", None)   # the window's engine runs in the service
            runtime = getattr(service, "runtime", None)
            pid = runtime.engine.pid if runtime is not None else None
            common.emit_result({**marks, **extra, "gui_rss_mb": common.rss_mb(),
                                "worker_rss_mb": common.rss_mb(pid) if pid else None})
        except Exception as exc:  # noqa: BLE001 - a failed measurement must still end the child
            common.emit_result({**marks, "error": f"measuring failed: {exc!r}"})
        finally:
            if win is not None:
                win.close()
            app.quit()

    def on_ready(*_args) -> None:
        marks.setdefault("ready_s", time.time() - spawned)
        QTimer.singleShot(int(settle_s * 1000), finish)

    def watch_engine() -> None:
        win = _main_window(app)
        if bare:
            QTimer.singleShot(int(settle_s * 1000), finish)
            return
        win.engine.sig_ready.connect(on_ready)
        win.engine.sig_failed.connect(lambda exc: finish(error=str(exc)))
        if win.engine.ready():
            on_ready()

    class FirstPaint(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 - Qt override
            if ("shown_s" not in marks and event.type() == QEvent.Type.Paint and isinstance(obj, QWidget)
                    and obj.window().inherits("QMainWindow")):
                marks["shown_s"] = time.time() - spawned
                QTimer.singleShot(0, watch_engine)
            return False

    watcher = FirstPaint()
    app.installEventFilter(watcher)
    QTimer.singleShot(300_000, lambda: finish(error="timed out after 300 s"))
    if bare:
        win = QMainWindow()
        win.setCentralWidget(QLabel("bare window"))
        win.resize(1400, 900)
        win.show()
        app.exec()
    else:
        from app.qt.app import run_gui
        run_gui([])


def _main_window(app):
    return next((w for w in app.topLevelWidgets() if w.inherits("QMainWindow")), None)


def _child_llama(spawned: float, settle_s: float) -> None:
    import latency_sides
    import llama_cpp

    from app.worker.llama.server import physical_cores
    path, n_ctx = latency_sides.model_and_context()
    threads = physical_cores()
    llm = llama_cpp.Llama(str(path), n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads, verbose=False)
    ready = time.time() - spawned
    time.sleep(settle_s)
    common.emit_result({"ready_s": ready, "worker_rss_mb": common.rss_mb()})
    del llm


# --- parent ------------------------------------------------------------------------------------
def start_once(side: str, settle_s: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="pagewise-start-") as home:
        env = {"QT_QPA_PLATFORM": "offscreen", "PAGEWISE_HOME": home}
        return common.run_child([__file__, "--child", side, "--spawned", repr(time.time()),
                                 "--settle", str(settle_s)], timeout_s=400, env=env)


def summarise(runs: dict) -> dict:
    med = lambda side, key: common.median(r.get(key) for r in runs[side])  # noqa: E731
    best = lambda side, key: min((r[key] for r in runs[side] if r.get(key) is not None), default=None)  # noqa: E731
    return {"app_shown_s": med("app", "shown_s"), "app_shown_best_s": best("app", "shown_s"),
            "app_ready_s": med("app", "ready_s"), "app_ready_best_s": best("app", "ready_s"),
            "gui_rss_mb": med("app", "gui_rss_mb"), "worker_rss_mb": med("app", "worker_rss_mb"),
            "bare_qt_shown_s": med("bare-qt", "shown_s"), "bare_qt_rss_mb": med("bare-qt", "gui_rss_mb"),
            "bare_llama_ready_s": med("bare-llama", "ready_s"), "bare_llama_rss_mb": med("bare-llama", "worker_rss_mb"),
            "shown_ratio": common.median(a["shown_s"] / b["shown_s"] for a, b in zip(runs["app"], runs["bare-qt"])),
            "ready_ratio": common.median(a["ready_s"] / b["ready_s"] for a, b in zip(runs["app"], runs["bare-llama"])
                                         if a.get("ready_s")),
            "errors": [r["error"] for r in runs["app"] if r.get("error")], "target_shown_s": TARGET_SHOWN_S}


def show(s: dict) -> list[tuple[str, bool]]:
    print(f"\nwindow shown   {s['app_shown_s']:6.2f} s (best {s['app_shown_best_s']:.2f})   bare Qt window "
          f"{s['bare_qt_shown_s']:.2f} s   ratio {common.fmt_ratio(s['shown_ratio'])}")
    print(f"worker ready   {s['app_ready_s']:6.2f} s (best {s['app_ready_best_s'] or float('nan'):.2f})   "
          f"bare Llama load {s['bare_llama_ready_s']:.2f} s   ratio {common.fmt_ratio(s['ready_ratio'])}")
    print(f"idle RSS       GUI {s['gui_rss_mb']:.0f} MB (bare Qt {s['bare_qt_rss_mb']:.0f} MB)   "
          f"worker {s['worker_rss_mb']:.0f} MB (bare Llama {s['bare_llama_rss_mb']:.0f} MB)")
    for err in s["errors"]:
        print(f"  engine error: {err}")
    checks = [(f"window shown < {TARGET_SHOWN_S:.0f} s (median {s['app_shown_s']:.2f} s)",
               s["app_shown_s"] < TARGET_SHOWN_S)]
    for text, ok in checks:
        print(f"  {common.verdict(ok):6s} {text}")
    return checks


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--settle", type=float, default=3.0, help="idle seconds before RSS is read")
    ap.add_argument("--quick", action="store_true", help="CI smoke run: 1 round, 1 s idle")
    ap.add_argument("--out", type=Path, default=None, help="folder for app_start.json (default out/bench)")
    ap.add_argument("--child", choices=SIDES, help=argparse.SUPPRESS)
    ap.add_argument("--spawned", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child == "bare-llama":
        return _child_llama(args.spawned, args.settle)
    if args.child:
        return _child_gui(args.spawned, args.settle, bare=args.child == "bare-qt")
    if args.quick:
        args.rounds, args.settle = 1, 1.0
    runs: dict = {side: [] for side in SIDES}
    for r in range(args.rounds):
        for side in (SIDES if r % 2 == 0 else SIDES[::-1]):
            runs[side].append(start_once(side, args.settle))
        a = runs["app"][-1]
        print(f"  round {r + 1}: shown {a['shown_s']:.2f} s, ready {a.get('ready_s', float('nan')):.2f} s, "
              f"GUI {a['gui_rss_mb']:.0f} MB, worker {a.get('worker_rss_mb') or 0:.0f} MB", flush=True)
    s = summarise(runs)
    checks = show(s)
    data = {"quick": args.quick, "rounds": args.rounds, "summary": s, "runs": runs,
            "checks": [{"target": t, "met": ok} for t, ok in checks]}
    common.write_json("app_start", data, args.out)
    return data


if __name__ == "__main__":
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    main()
