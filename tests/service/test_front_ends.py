"""The command line's commands and the window ask, read, review and compare only through
app.service: none of them finds evidence, runs the engine, locks documents or stores an
exchange itself (the import contracts hold the modules; this holds the names)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "app"
FRONT_ENDS = sorted([*(ROOT / "cli" / "commands").glob("*.py"), *(ROOT / "qt").glob("*.py")])
SERVICE_ONLY = {"find_evidence", "EngineRuntime", "doc_locks", "add_exchange", "compare_clauses"}


def names_used(path: Path) -> set[str]:
    """Every name imported, and every attribute called, in one module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            found |= {a.name for a in node.names} | set((node.module or "").split("."))
        elif isinstance(node, ast.Import):
            found |= {part for a in node.names for part in a.name.split(".")}
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
    return found


def test_the_scan_sees_the_front_ends():
    assert len(FRONT_ENDS) > 20
    assert "Assistant" in names_used(ROOT / "cli" / "commands" / "ask.py")


@pytest.mark.parametrize("path", FRONT_ENDS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_front_end_leaves_the_application_work_to_the_service(path):
    assert not names_used(path) & SERVICE_ONLY
