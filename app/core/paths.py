"""Where Pagewise keeps its files (platformdirs), overridable with PAGEWISE_HOME for tests."""
from __future__ import annotations

import os
from pathlib import Path

APP = "Pagewise"


def _root(kind: str) -> Path:
    home = os.environ.get("PAGEWISE_HOME")
    if home:
        return Path(home) / kind
    import platformdirs  # here, not at the top: the GPU benchmark imports the planner without it

    dirs = platformdirs.PlatformDirs(APP, appauthor=False)
    return Path({"config": dirs.user_config_dir, "data": dirs.user_data_dir,
                 "cache": dirs.user_cache_dir, "logs": dirs.user_log_dir}[kind])


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def config_dir() -> Path:
    return _ensure(_root("config"))


def data_dir() -> Path:
    return _ensure(_root("data"))


def cache_dir() -> Path:
    return _ensure(_root("cache"))


def log_dir() -> Path:
    return _ensure(_root("logs"))


def library_path() -> Path:
    """The one SQLite library file."""
    return data_dir() / "library.sqlite"


def kv_cache_dir() -> Path:
    """Saved engine KV state per document prefix (llama.cpp worker)."""
    return _ensure(cache_dir() / "kv")


def models_dir() -> Path:
    """Downloaded and imported model files."""
    return _ensure(data_dir() / "models")
