"""Typed, one-line errors for documents the app cannot read."""
from __future__ import annotations

from app.core.failures import FailureKind


class DocumentError(Exception):
    """Base: str(exc) is a one-line message fit for the user."""
    kind = FailureKind.DOCUMENT


class FileMissing(DocumentError):
    pass


class EmptyFile(DocumentError):
    pass


class NotAPdf(DocumentError):
    pass


class PasswordRequired(DocumentError):
    pass


class WrongPassword(DocumentError):
    pass


class Damaged(DocumentError):
    pass


class NoTextLayer(DocumentError):
    pass
