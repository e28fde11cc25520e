"""Which of the app modules the GPU benchmark imports load on this machine, and what is missing.
usage (repo root): python3 benchmarks/gpu/check_imports.py"""
import importlib
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
MODULES = ("app.core.paths", "app.core.models.catalogue", "app.core.plan.hardware", "app.core.plan.memory",
           "app.core.plan.planner", "app.worker.engine_errors", "app.worker.launch", "app.worker.ports",
           "app.worker.engines.vllm")
bad = 0
for name in MODULES:
    try:
        importlib.import_module(name)
        print(f"IMPORT ok   {name}")
    except Exception as exc:
        bad += 1
        where = traceback.extract_tb(exc.__traceback__)[-1]
        print(f"IMPORT FAIL {name}: {type(exc).__name__}: {exc} (at {where.filename}:{where.lineno})")
sys.exit(1 if bad else 0)
