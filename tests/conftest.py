"""Shared fixtures: the corpus, a temporary PAGEWISE_HOME, an empty library, the corpus library."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.corpus import corpus_files, corpus_path


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The corpus folder; fails under ./run-tests and CI where it is missing, skips elsewhere."""
    return corpus_path()


@pytest.fixture(autouse=True)
def pagewise_home(tmp_path_factory, monkeypatch) -> Path:
    """Every test gets its own PAGEWISE_HOME: nothing touches the real user folders."""
    home = tmp_path_factory.mktemp("pagewise-home")
    monkeypatch.setenv("PAGEWISE_HOME", str(home))
    return home


@pytest.fixture
def lib(tmp_path):
    """An empty library in the test's own folder, closed afterwards."""
    from app.core.library import Library
    library = Library(tmp_path / "library.sqlite")
    yield library
    library.close()


@pytest.fixture
def file_keyring(tmp_path):
    """keyring stores secrets in a JSON file under tmp_path for the test (tests/support/file_keyring.py)."""
    from tests.support.file_keyring import FileKeyring, keyring_backend
    with keyring_backend(FileKeyring(tmp_path / "keyring.json")) as backend:
        yield backend


@pytest.fixture(scope="session")
def corpus_library(corpus, tmp_path_factory):
    """One library holding the whole corpus, built once per test session."""
    from app.core.library import Library
    lib = Library(tmp_path_factory.mktemp("corpus-lib") / "library.sqlite")
    ids = {str(p.relative_to(corpus)): lib.add(p).id for p in corpus_files()}
    yield lib, ids
    lib.close()


def pytest_collection_modifyitems(config, items):
    """./run-tests runs tests/core's fast tests once, without PySide6 (.venv-headless), and then
    sets PAGEWISE_CORE_RAN_HEADLESS=1 for the main run: there they are not run a second time."""
    if os.environ.get("PAGEWISE_CORE_RAN_HEADLESS") != "1":
        return
    core = Path(__file__).parent / "core"
    keep, again = [], []
    for item in items:
        fast_core = Path(str(item.path)).is_relative_to(core) and item.get_closest_marker("slow") is None
        (again if fast_core else keep).append(item)
    if again:
        config.hook.pytest_deselected(items=again)
        items[:] = keep
