"""A damaged library file is never lost in silence. Two faults SQLite itself hides or only half
reports: a write-ahead log (-wal) whose frames stop checking out (after a crash, a bad disk):
SQLite replays the good prefix and drops every transaction after the bad frame without a word;
and a garbled page in the file: reads fail with "malformed" at random later, while writes may
still succeed into a file whose integrity check fails. Either way the damaged files are copied
aside first, and the user is told what was kept and where the copy went."""
from __future__ import annotations

import shutil
import sqlite3
import struct
import time
from logging import getLogger
from pathlib import Path

from app.core import paths
from app.core.storage import StorageError

log = getLogger(__name__)

_WAL_HEADER, _FRAME_HEADER = 32, 24


def committed_frames(wal: Path) -> int:
    """The number of the last frame of the WAL file that ends a transaction (a commit frame)
    under the header's salts: what SQLite would replay were every checksum good. Frames with
    other salts are left over from before the last checkpoint and mean nothing."""
    try:
        with open(wal, "rb") as fh:
            header = fh.read(_WAL_HEADER)
            if len(header) < _WAL_HEADER:
                return 0
            page_size = struct.unpack(">I", header[8:12])[0]
            salts = header[16:24]
            last, number = 0, 0
            while True:
                frame = fh.read(_FRAME_HEADER)
                if len(frame) < _FRAME_HEADER:
                    return last
                number += 1
                if frame[8:16] == salts and struct.unpack(">I", frame[4:8])[0] != 0:
                    last = number
                fh.seek(page_size, 1)
    except OSError:
        return 0


def replayed_frames(shm: Path) -> int | None:
    """mxFrame of the WAL index (the -shm file): the frames SQLite accepted; None if unreadable."""
    try:
        with open(shm, "rb") as fh:
            head = fh.read(48)
    except OSError:
        return None
    if len(head) < 48:
        return None
    return struct.unpack("=I", head[16:20])[0]


def check_wal(con: sqlite3.Connection, path: Path) -> str | None:
    """After SQLite opened `path`: if it dropped committed transactions of a damaged -wal, set the
    files aside and return what to tell the user. Holds the write lock while it looks, so no
    other process appends frames between the two counts."""
    wal, shm = _side(path, "-wal"), _side(path, "-shm")
    if not wal.exists() or wal.stat().st_size <= _WAL_HEADER:
        return None
    try:
        con.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError:     # read-only, or locked past the timeout: not checked now
        return None
    try:
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()    # recovery, if needed
        accepted, written = replayed_frames(shm), committed_frames(wal)
        if accepted is None or written <= accepted:
            return None
        copy = set_aside(path)
    finally:
        con.execute("ROLLBACK")
    kept = con.execute("SELECT count(*) FROM documents").fetchone()[0] \
        if _has_documents(con) else 0
    return (f"the library's write-ahead log ({wal.name}) is damaged: {written - accepted} of its "
            f"{written} frames of finished writes could not be read back, so the documents added or "
            f"changed last may be missing. Kept: the library as it was before them ({kept} documents). "
            f"The damaged files were copied to {copy}; add any missing document again.")


def check_pages(con: sqlite3.Connection, path: Path) -> None:
    """Raise a StorageError with advice if the file's pages do not check out (a garbled page),
    after copying it aside: nothing more is written into a damaged file."""
    try:
        problems = [r[0] for r in con.execute("PRAGMA quick_check(5)").fetchall()]
    except sqlite3.DatabaseError as exc:
        problems = [str(exc)]
    if problems == ["ok"]:
        return
    raise damaged(path, problems[0])


def damaged(path: Path, detail: str) -> StorageError:
    """The error for a library file that SQLite finds malformed, its files copied aside."""
    try:
        copy = f"a copy of it is in {set_aside(path)}"
    except OSError as exc:
        copy = f"no copy could be made ({exc.strerror})"
    return StorageError(
        f"the library ({path}) is damaged ({detail}); {copy}. Nothing was changed in it. To go on, "
        f"move {path.name} out of {path.parent} (Pagewise then starts an empty library) and add your "
        f"documents again; the copy keeps what could still be read (sqlite3 {path.name} .recover).")


def set_aside(path: Path) -> Path:
    """Copy the library with its -wal and -shm into data/damaged/<time>/ (0700); that folder."""
    folder = paths.data_dir() / "damaged" / time.strftime("%Y%m%d-%H%M%S")
    folder.mkdir(mode=paths.PRIVATE_DIR, parents=True, exist_ok=True)
    paths.private_dir(folder.parent)
    for source in (path, _side(path, "-wal"), _side(path, "-shm")):
        if source.exists():
            shutil.copy2(source, folder / source.name)
            paths.private_file(folder / source.name, create=False)
    return folder


def is_damage(exc: BaseException) -> bool:
    """SQLite's words for a file whose pages or header do not check out."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.DatabaseError) and ("malformed" in text or "not a database" in text)


def _side(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _has_documents(con: sqlite3.Connection) -> bool:
    return con.execute("SELECT 1 FROM sqlite_master WHERE name = 'documents'").fetchone() is not None
