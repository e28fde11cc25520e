"""One-line messages for any exception: known ones say what to do, unknown ones where the log is."""
from __future__ import annotations

from app.core import paths

KNOWN = ("DocumentError", "CatalogueError", "ModelNotAvailable", "UserError", "WorkerError", "ValueError")


def _is_known(exc: BaseException) -> bool:
    return any(cls.__name__ in KNOWN for cls in type(exc).__mro__)


def describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if _is_known(exc):
        return text
    return f"{type(exc).__name__}: {text} (details in {paths.log_dir() / 'pagewise.log'})"
