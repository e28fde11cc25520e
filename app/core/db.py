"""SQLite helpers shared by the library and the search vectors."""
from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from typing import Iterator

from app.core.storage import storage_error


@contextmanager
def transaction(con: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE … COMMIT, or ROLLBACK on any exception (a crash or Ctrl-C included):
    the library never holds half a write. A storage fault (disk full, read-only, locked) comes
    out as one StorageError line naming its cause, never as the rollback's own error."""
    try:
        con.execute("BEGIN IMMEDIATE")
        try:
            yield con
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:      # SQLite has already rolled back after some faults (SQLITE_FULL)
                try:
                    con.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            raise
    except sqlite3.DatabaseError as exc:      # not IntegrityError: storage_error gives None
        fault = storage_error(exc, database_file(con))
        if fault is None:
            raise
        raise fault from exc


def database_file(con: sqlite3.Connection) -> str:
    try:
        return next((row[2] for row in con.execute("PRAGMA database_list") if row[1] == "main"), "") or ":memory:"
    except sqlite3.Error:
        return "the library"
