"""The bundle's entry script (PyInstaller freezes this file): app/__main__.py's `_run`, which also
answers `Pagewise --worker ARGS…` with the llama.cpp worker (app/worker/engines/llamacpp.py)."""
from app.__main__ import _run

raise SystemExit(_run())
