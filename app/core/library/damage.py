"""A damaged library file is never lost in silence. Two faults SQLite itself hides or only half
reports: a write-ahead log (-wal) whose frames stop checking out (after a crash, a bad disk):
SQLite replays the good prefix and drops every transaction after the bad frame without a word;
and a garbled page in the file: reads fail with "malformed" at random later, while writes may
still succeed into a file whose integrity check fails. Either way the damaged files are copied
aside first, and the user is told what was kept and where the copy went."""
from __future__ import annotations

import json
import os
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
# The full-text index's own check reads every posting (~0.1 s per 1,000 chunks on a busy core):
# at every open for a small library, otherwise once a day.
FTS_CHECK_CHUNKS, FTS_CHECK_EVERY_S = 2_000, 24 * 3600
_COPIED = "copied-from.json"      # in a damaged/ folder: what the copy was made of (one copy per damage)


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


def cut_frames(wal: Path, accepted: int) -> bool:
    """A frame past the ones SQLite accepted whose salts half-match the header's: its header is
    damaged (a commit frame's, maybe), and SQLite drops it and all after it without a word.
    A -wal ending inside a frame is not taken for damage: a write stopped by a full disk leaves
    one too, and SQLite reported that write's failure when it happened."""
    try:
        with open(wal, "rb") as fh:
            header = fh.read(_WAL_HEADER)
            if len(header) < _WAL_HEADER:
                return False
            page_size = struct.unpack(">I", header[8:12])[0]
            if not page_size:
                return False
            frame_size = _FRAME_HEADER + page_size
            salts = (header[16:20], header[20:24])
            fh.seek(_WAL_HEADER + accepted * frame_size)
            while len(frame := fh.read(_FRAME_HEADER)) == _FRAME_HEADER:
                if (frame[8:12] == salts[0]) != (frame[12:16] == salts[1]):
                    return True
                fh.seek(page_size, 1)
    except OSError:
        return False
    return False


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
        if accepted is None:
            return None
        cut = written <= accepted and cut_frames(wal, accepted)
        if written <= accepted and not cut:
            return None
        copy = set_aside(path)
    finally:
        con.execute("ROLLBACK")
    kept = con.execute("SELECT count(*) FROM documents").fetchone()[0] \
        if _has_documents(con) else 0
    lost = ("the header of its last frames is damaged" if cut else
            f"{written - accepted} of its {written} frames of finished writes could not be read back")
    return (f"the library's write-ahead log ({wal.name}) is damaged: {lost}, so the documents added or "
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
        problems = check_fts(con, path)
    if problems == ["ok"]:
        return
    raise damaged(path, problems[0])


def check_fts(con: sqlite3.Connection, path: Path) -> list[str]:
    """FTS5's own integrity check of the search index: quick_check passes a garbled FTS page,
    and searches then silently find less. ["ok"], or the problem."""
    stamp = path.with_name(path.name + ".fts-checked")
    try:
        if not con.execute("SELECT 1 FROM sqlite_master WHERE name = 'chunk_fts'").fetchone():
            return ["ok"]
        chunks = con.execute("SELECT max(rowid) FROM chunks").fetchone()[0] or 0
        if chunks > FTS_CHECK_CHUNKS and stamp.exists() and time.time() - stamp.stat().st_mtime < FTS_CHECK_EVERY_S:
            return ["ok"]
        con.execute("INSERT INTO chunk_fts(chunk_fts) VALUES('integrity-check')")
    except sqlite3.DatabaseError as exc:
        if not is_damage(exc) and "integrity" not in str(exc).lower() and "corrupt" not in str(exc).lower():
            raise
        return [f"its search index: {exc}"]
    try:
        stamp.touch()
    except OSError:
        pass
    return ["ok"]


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
    """Copy the library with its -wal and -shm into data/damaged/<time>/ (0700); that folder.
    Once per damage: while the files are as they were when last copied, that copy is the answer
    (a damaged library refused on every command made a fresh full copy each time)."""
    sources = [s for s in (path, _side(path, "-wal"), _side(path, "-shm")) if s.exists()]
    # the -shm is rewritten by every opener, an empty -wal made anew: the damage is in the rest
    made_of = {s.name: [s.stat().st_size, s.stat().st_mtime_ns] for s in sources
               if not s.name.endswith("-shm") and s.stat().st_size}
    root = paths.data_dir() / "damaged"
    for earlier in sorted(root.glob("*/" + _COPIED), reverse=True)[:1]:
        try:
            if json.loads(earlier.read_text(encoding="utf-8")) == made_of:
                return earlier.parent
        except (OSError, ValueError):
            pass
    folder = root / time.strftime("%Y%m%d-%H%M%S")
    if folder.exists():
        folder = folder.with_name(f"{folder.name}-{os.getpid()}")
    folder.mkdir(mode=paths.PRIVATE_DIR, parents=True, exist_ok=True)
    paths.private_dir(folder.parent)
    for source in sources:
        shutil.copy2(source, folder / source.name)
        paths.private_file(folder / source.name, create=False)
    (folder / _COPIED).write_text(json.dumps(made_of), encoding="utf-8")
    paths.private_file(folder / _COPIED, create=False)
    return folder


def is_damage(exc: BaseException) -> bool:
    """SQLite's words for a file whose pages or header do not check out."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.DatabaseError) and ("malformed" in text or "not a database" in text)


def _side(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _has_documents(con: sqlite3.Connection) -> bool:
    return con.execute("SELECT 1 FROM sqlite_master WHERE name = 'documents'").fetchone() is not None
