"""The SQLite library file: connection, schema and migrations (WAL, foreign keys)."""
from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from app.core import paths
from app.core.db import transaction
from app.core.failures import BadInput
from app.core.library import damage
from app.core.storage import storage_error, tell

# Each entry upgrades the schema by one version (PRAGMA user_version); never edit a
# released entry, append a new one.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE documents (
        id          INTEGER PRIMARY KEY,
        sha256      TEXT NOT NULL UNIQUE,
        path        TEXT NOT NULL,          -- where it was first added
        last_path   TEXT NOT NULL,          -- where it was opened from most recently
        title       TEXT NOT NULL,
        page_count  INTEGER NOT NULL,
        lang        TEXT NOT NULL,
        warnings    TEXT NOT NULL DEFAULT '[]',   -- JSON list of strings
        added_at    REAL NOT NULL,
        opened_at   REAL NOT NULL
    );
    CREATE TABLE pages (
        doc_id      INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        number      INTEGER NOT NULL,
        text        TEXT NOT NULL,
        width       REAL NOT NULL,
        height      REAL NOT NULL,
        searchable  INTEGER NOT NULL DEFAULT 1,
        PRIMARY KEY (doc_id, number)
    ) WITHOUT ROWID;
    CREATE TABLE chunks (
        id          INTEGER PRIMARY KEY,
        doc_id      INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        ordinal     INTEGER NOT NULL,
        page_start  INTEGER NOT NULL,
        page_end    INTEGER NOT NULL,
        section     TEXT NOT NULL,
        heading     TEXT NOT NULL,
        text        TEXT NOT NULL,
        spans       TEXT NOT NULL           -- JSON [[page, offset], …] into text
    );
    CREATE INDEX chunks_doc ON chunks(doc_id, ordinal);
    CREATE VIRTUAL TABLE chunk_fts USING fts5(
        body, section, heading, title,
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    CREATE TABLE exchanges (
        id          INTEGER PRIMARY KEY,
        doc_key     TEXT NOT NULL,          -- sorted document ids, "3,7"
        question    TEXT NOT NULL,
        answer_json TEXT NOT NULL,
        created_at  REAL NOT NULL
    );
    CREATE INDEX exchanges_docs ON exchanges(doc_key, id);
    CREATE TABLE exchange_docs (
        exchange_id INTEGER NOT NULL REFERENCES exchanges(id) ON DELETE CASCADE,
        doc_id      INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        PRIMARY KEY (exchange_id, doc_id)
    ) WITHOUT ROWID;
    """,
    # v2: optional dense vectors (app.core.search.dense), one per chunk and model.
    """
    CREATE TABLE chunk_vectors (
        chunk_id    INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
        model       TEXT NOT NULL,
        vec         BLOB NOT NULL,          -- float16, L2-normalised
        PRIMARY KEY (chunk_id, model)
    ) WITHOUT ROWID;
    """,
    # v3: document and chunk ids are never reused (AUTOINCREMENT). With max(id)+1, a removed
    # document's id and chunk ids went to the next one added, and work keyed by them (search
    # vectors being computed, an answer about to be saved) landed on the wrong document. SQLite
    # cannot alter a key, so both tables are rebuilt (foreign keys off: see migrate).
    """
    CREATE TABLE documents_v3 (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        sha256      TEXT NOT NULL UNIQUE,
        path        TEXT NOT NULL,
        last_path   TEXT NOT NULL,
        title       TEXT NOT NULL,
        page_count  INTEGER NOT NULL,
        lang        TEXT NOT NULL,
        warnings    TEXT NOT NULL DEFAULT '[]',
        added_at    REAL NOT NULL,
        opened_at   REAL NOT NULL
    );
    INSERT INTO documents_v3 SELECT id, sha256, path, last_path, title, page_count, lang, warnings,
        added_at, opened_at FROM documents;
    DROP TABLE documents;
    ALTER TABLE documents_v3 RENAME TO documents;
    CREATE TABLE chunks_v3 (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        doc_id      INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        ordinal     INTEGER NOT NULL,
        page_start  INTEGER NOT NULL,
        page_end    INTEGER NOT NULL,
        section     TEXT NOT NULL,
        heading     TEXT NOT NULL,
        text        TEXT NOT NULL,
        spans       TEXT NOT NULL
    );
    INSERT INTO chunks_v3 SELECT id, doc_id, ordinal, page_start, page_end, section, heading, text,
        spans FROM chunks;
    DROP TABLE chunks;
    ALTER TABLE chunks_v3 RENAME TO chunks;
    CREATE INDEX chunks_doc ON chunks(doc_id, ordinal);
    """,
    # v4: several conversations per document set (issue 33). Each exchange belongs to one; the
    # history a set had so far becomes its first conversation.
    """
    CREATE TABLE conversations (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        doc_key     TEXT NOT NULL,          -- sorted document ids, "3,7", as exchanges.doc_key
        created_at  REAL NOT NULL
    );
    CREATE INDEX conversations_docs ON conversations(doc_key, id);
    ALTER TABLE exchanges ADD COLUMN conversation_id INTEGER REFERENCES conversations(id) ON DELETE CASCADE;
    INSERT INTO conversations(doc_key, created_at)
        SELECT doc_key, min(created_at) FROM exchanges GROUP BY doc_key ORDER BY min(id);
    UPDATE exchanges SET conversation_id =
        (SELECT c.id FROM conversations c WHERE c.doc_key = exchanges.doc_key);
    CREATE INDEX exchanges_conversation ON exchanges(conversation_id, id);
    """,
    # v5: sentence vectors (app.core.search.sentence_vectors): the evidence cards rank a page's
    # sentences by meaning as well as by words. Keyed by the SHA-1 of the sentence's text (8 bytes).
    """
    CREATE TABLE sentence_vectors (
        doc_id      INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        page        INTEGER NOT NULL,
        key         BLOB NOT NULL,
        model       TEXT NOT NULL,
        vec         BLOB NOT NULL,          -- float16, L2-normalised
        PRIMARY KEY (doc_id, page, key, model)
    ) WITHOUT ROWID;
    CREATE TABLE sentence_vector_docs (
        doc_id      INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        model       TEXT NOT NULL,
        PRIMARY KEY (doc_id, model)
    ) WITHOUT ROWID;
    """,
]


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the library at `path`."""
    path = Path(path)
    try:
        path.parent.mkdir(mode=paths.PRIVATE_DIR, parents=True, exist_ok=True)
        # 0600 before SQLite opens it: its -wal and -shm files take the database file's mode
        paths.private_file(path)
        for side in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            paths.private_file(side, create=False)       # left looser by an earlier version
        # isolation_level=None: we issue BEGIN/COMMIT ourselves so one document is one
        # transaction; check_same_thread=False because the GUI reads from worker threads
        # (the Library serialises access with a lock).
        con = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30)
        _wal(con)
        con.execute("PRAGMA synchronous=NORMAL")
        con.execute("PRAGMA foreign_keys=ON")
        lost = damage.check_wal(con, path)       # before any write could checkpoint it away
        if lost:
            tell(lost)
        damage.check_pages(con, path)
        migrate(con)
    except sqlite3.DatabaseError as exc:
        if damage.is_damage(exc):
            raise damage.damaged(path, str(exc)) from exc
        fault = storage_error(exc, path)
        if fault is None:
            raise
        raise fault from exc
    except OSError as exc:
        fault = storage_error(exc, path)
        if fault is None:
            raise
        raise fault from exc
    return con


def _wal(con: sqlite3.Connection, patience_s: float = 30.0) -> None:
    """Switch to WAL, waiting for other openers: SQLite skips its busy handler for this
    change (it needs the file to itself), so several processes creating one library at
    once got 'database is locked' at once instead of waiting their turn."""
    deadline = time.monotonic() + patience_s
    while True:
        try:
            con.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _version(con: sqlite3.Connection) -> int:
    return con.execute("PRAGMA user_version").fetchone()[0]


def _statements(script: str) -> list[str]:
    """A migration script as single statements (executescript would COMMIT the open transaction)."""
    out, buf = [], ""
    for piece in script.split(";"):
        buf += piece + ";"
        if sqlite3.complete_statement(buf):
            if buf.strip(" \n\t;"):
                out.append(buf.strip())
            buf = ""
    return out


def migrate(con: sqlite3.Connection) -> None:
    """Bring the schema up to date. The version is read again under the write lock (BEGIN
    IMMEDIATE), so two processes opening a new library at once migrate it once: the second
    waits, then finds nothing to do."""
    if _version(con) == len(MIGRATIONS):
        return
    # A rebuilt table is dropped: with foreign keys on, that would delete every page, chunk and
    # vector by cascade. The pragma is a no-op inside a transaction, so it is set around it, and
    # the keys are checked before the commit instead (SQLite's 12-step ALTER recipe).
    con.execute("PRAGMA foreign_keys=OFF")
    try:
        with transaction(con):
            version = _version(con)
            if version > len(MIGRATIONS):
                raise BadInput(f"library schema v{version} is newer than this Pagewise (v{len(MIGRATIONS)})")
            for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
                for statement in _statements(script):
                    con.execute(statement)
                con.execute(f"PRAGMA user_version={number}")
            broken = con.execute("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise BadInput(f"library migration left {len(broken)} rows without their document")
    finally:
        con.execute("PRAGMA foreign_keys=ON")
