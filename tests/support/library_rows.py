"""What a library file holds, counted from outside the Library object (another connection)."""
from __future__ import annotations

import sqlite3
from pathlib import Path

TABLES = ("documents", "pages", "chunks", "chunk_fts")


def row_counts(db: Path) -> tuple[int, ...]:
    """The rows of each of TABLES, in that order."""
    con = sqlite3.connect(db)
    try:
        return tuple(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES)
    finally:
        con.close()
