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


PRIVATE_DIR = 0o700      # the library, caches and logs hold document text: the owner's alone
PRIVATE_FILE = 0o600


def _ensure(path: Path) -> Path:
    """The folder, made 0700 whatever the umask, and tightened if an earlier version left it looser."""
    path.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    private_dir(path)
    return path


def private_dir(path: Path) -> None:
    """chmod 0700 unless it already is (a no-op on Windows, where ACLs rule instead)."""
    try:
        if path.stat().st_mode & 0o777 != PRIVATE_DIR:
            os.chmod(path, PRIVATE_DIR)
    except OSError:          # not ours to change (a shared PAGEWISE_HOME): what can be read stays so
        pass


def private_file(path: Path, create: bool = True) -> Path:
    """Make `path` 0600: created empty that way if missing (with `create`), tightened if looser.
    For files whose writer takes no mode (SQLite, logging): called before the writer opens them."""
    try:
        if create:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, PRIVATE_FILE))
        if path.stat().st_mode & 0o777 != PRIVATE_FILE:
            os.chmod(path, PRIVATE_FILE)
    except OSError:          # missing, read-only or not ours: the opener reports what it cannot do
        pass
    return path


def config_dir() -> Path:
    return _ensure(_root("config"))


def data_dir() -> Path:
    return _ensure(_root("data"))


def cache_dir() -> Path:
    return _ensure(_root("cache"))


def log_dir() -> Path:
    """The logs folder; never raises: logs are not worth stopping for (an unwritable folder is
    reported once, by whoever opens a file in it)."""
    path = _root("logs")
    try:
        return _ensure(path)
    except OSError:
        return path


def library_path() -> Path:
    """The one SQLite library file."""
    return data_dir() / "library.sqlite"


def kv_cache_dir() -> Path:
    """Saved engine KV state per document prefix (llama.cpp worker)."""
    return _ensure(cache_dir() / "kv")


def ocr_dir() -> Path:
    """Searchable copies of scanned documents: document text, so the owner's alone."""
    return _ensure(data_dir() / "ocr")


def models_dir() -> Path:
    """Downloaded and imported model files."""
    return _ensure(data_dir() / "models")
