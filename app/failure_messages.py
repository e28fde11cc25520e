"""The user's errors and the one line every failure is shown as: the message of a failure whose kind
explains itself, else the exception's type and where the log is (a bug, not the user's fault)."""
from __future__ import annotations

from app.core import paths
from app.core.failures import BadInput, kind_of


class UserError(BadInput):
    """A problem the user can fix (a bad value, a missing file); printed as one line."""


def describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if kind_of(exc).explains_itself:
        return text
    return f"{type(exc).__name__}: {text} (details in {paths.log_dir() / 'pagewise.log'})"
