"""Shared fixtures: where the corpus lives, a temporary PAGEWISE_HOME, a built library."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("PAGEWISE_CORPUS", ROOT.parent / "shared" / "corpus"))
EVAL = CORPUS.parent / "eval" / "dev.jsonl"


def corpus_files() -> list[Path]:
    """Every good corpus PDF (bad/ excluded), in a stable order."""
    return sorted(p for p in CORPUS.glob("*/*.pdf") if p.parent.name != "bad")


def dev_questions() -> list[dict]:
    return [json.loads(l) for l in EVAL.read_text(encoding="utf-8").splitlines() if l.strip()]


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not found at {CORPUS} (set PAGEWISE_CORPUS)")
    return CORPUS


@pytest.fixture(autouse=True)
def pagewise_home(tmp_path_factory, monkeypatch) -> Path:
    """Every test gets its own PAGEWISE_HOME: nothing touches the real user folders."""
    home = tmp_path_factory.mktemp("pagewise-home")
    monkeypatch.setenv("PAGEWISE_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def corpus_library(corpus, tmp_path_factory):
    """One library holding the whole corpus, built once per test session."""
    from app.core.library import Library
    lib = Library(tmp_path_factory.mktemp("corpus-lib") / "library.sqlite")
    ids = {str(p.relative_to(corpus)): lib.add(p).id for p in corpus_files()}
    yield lib, ids
    lib.close()
