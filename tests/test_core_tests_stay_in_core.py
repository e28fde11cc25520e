"""tests/core tests app.core alone, as app.core itself never imports app.worker: a test there that
needs the engine (its client, its child process, its KV store) belongs in tests/worker, so a change
to the engine side never has to look for its tests among the core's."""
from __future__ import annotations

import ast
from pathlib import Path

CORE_TESTS = Path(__file__).resolve().parent / "core"
ENGINE_SIDE = ("app.worker", "app.service", "app.cli", "app.qt")


def engine_side_uses(path: Path) -> list[str]:
    """`line: name` for every import of the layers above app.core (at any depth: a function's
    own import counts) and every string that runs one as a module (`-m app.worker.llama`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value]
        found += [f"{node.lineno}: {n}" for n in names if n.startswith(ENGINE_SIDE)]
    return found


def test_no_core_test_imports_the_worker_or_the_layers_above():
    offending = {str(p.relative_to(CORE_TESTS)): uses for p in sorted(CORE_TESTS.rglob("*.py"))
                 if (uses := engine_side_uses(p))}
    assert not offending, f"tests/core reaches above app.core (move these to tests/worker or tests/service): {offending}"


def test_the_check_sees_a_function_level_import_and_a_module_run(tmp_path):
    sample = tmp_path / "t.py"
    sample.write_text("def f():\n    from app.worker.client import ChatClient\n"
                      "ARGV = ['-m', 'app.worker.llama']\nimport app.core.db\n")
    assert engine_side_uses(sample) == ["2: app.worker.client", "3: app.worker.llama"]
