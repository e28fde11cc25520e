"""`python -m app` behaves like the `pagewise` console script.

It is also the frozen bundle's entry script (installers/pagewise.spec): there `sys.executable`
is the bundle's own program, so the engine worker is started as `Pagewise --worker ARGS…`
(app/worker/engines/llamacpp.py) instead of `python -m app.worker.llama ARGS…`.
"""
import sys

WORKER_FLAG = "--worker"


def _run() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == WORKER_FLAG:
        from app.worker.llama.server import main as worker_main
        worker_main(sys.argv[2:])
        return 0
    if getattr(sys, "frozen", False):
        import multiprocessing
        multiprocessing.freeze_support()     # libraries that spawn helpers re-enter here
    from app.cli import main
    return main()


if __name__ == "__main__":
    raise SystemExit(_run())
