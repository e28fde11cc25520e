"""Storage faults as one line the user can act on: a full disk, a read-only folder, a library
another program holds. SQLite's own words ("database or disk is full") name no file and, after a
failed write, the rollback's error used to hide them ("cannot rollback - no transaction is active")."""
from __future__ import annotations

import errno
import logging
import sqlite3
import sys
from pathlib import Path

from app.core.failures import BadInput


class StorageError(BadInput):
    """The library or another of the app's files cannot be written; the message says why."""


_SQLITE = (("disk is full", "the disk is full"), ("readonly", "the file or its folder is read-only"),
           ("unable to open", "the file or its folder cannot be opened (permissions?)"),
           ("locked", "another program is writing to it; try again in a moment"),
           ("disk i/o error", "the disk reported an input/output error"))
_ERRNO = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is used up",
          errno.EROFS: "the file system is read-only", errno.EACCES: "permission denied",
          errno.EPERM: "permission denied", errno.EFBIG: "the file is larger than the system allows"}


def storage_error(exc: BaseException, path: Path | str, what: str = "the library") -> StorageError | None:
    """A StorageError naming the cause and the file, or None when `exc` is not a storage fault."""
    cause = None
    if isinstance(exc, sqlite3.DatabaseError):
        text = str(exc).lower()
        cause = next((why for words, why in _SQLITE if words in text), None)
        if cause is None and ("malformed" in text or "not a database" in text):
            return StorageError(f"{what} ({path}) is damaged ({exc}): nothing more was written to it. "
                                f"Close Pagewise and open it again: the damaged file is copied aside "
                                f"and you are told what can be kept")
    elif isinstance(exc, OSError):
        cause = _ERRNO.get(exc.errno)
    if cause is None:
        return None
    return StorageError(f"cannot write {what} ({path}): {cause}")


_told: set[str] = set()


def tell(message: str) -> None:
    """A loss or a damaged file the user must hear of at once: on stderr as well as in the log,
    once per process (a file read ten times is reported once)."""
    if message in _told:
        return
    _told.add(message)
    logging.getLogger("app.core.storage").warning("%s", message)
    print(f"pagewise: warning: {message}", file=sys.stderr, flush=True)
