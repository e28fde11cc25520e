"""A removal waits for the work on its document (issue 32): answers hold a shared lock on each
document they read, `remove` takes it exclusively.

An advisory file lock per document content (data/locks/<sha256>.lock, and a gate beside it
that a waiting removal closes to new answers), so it holds between
processes — `pagewise library remove 3` in one terminal waits for the `pagewise ask` reading
document 3 in another — and between threads of the window (each holder opens its own file,
and flock locks belong to the open file, not the process). Before the lock an answer could be
computed and then lost, or fail half-way with "document 1 has no page 5".

After taking its shared lock, an answer checks that its documents are still there: one removed
just before raises DocumentGone, and the caller asks again over what the library holds now.
"""
from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from app.core import paths
from app.core.failures import BadInput

WAIT_LIMIT_S = 900.0        # the longest a removal waits for answers under way (a hung one: say so)

try:
    import fcntl
except ImportError:          # Windows: msvcrt has exclusive locks only; readers then take turns
    fcntl = None
    import msvcrt


class DocumentGone(BadInput):
    """A document of the question was removed from the library before its answer began."""

    def __init__(self, doc_ids: list[int]):
        self.doc_ids = doc_ids
        super().__init__(f"document {', '.join(map(str, doc_ids))} was removed from the library")


class DocumentBusy(BadInput):
    pass


def _lock_path(sha256: str, suffix: str = ".lock") -> Path:
    folder = paths.data_dir() / "locks"
    if not folder.is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        paths.private_dir(folder)
    return folder / f"{sha256[:32]}{suffix}"


def _open(sha256: str, suffix: str = ".lock") -> int:
    return os.open(_lock_path(sha256, suffix), os.O_RDWR | os.O_CREAT, 0o600)


def _lock(fd: int, exclusive: bool, wait: bool) -> bool:
    if fcntl is not None:
        flags = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | (0 if wait else fcntl.LOCK_NB)
        try:
            fcntl.flock(fd, flags)
            return True
        except BlockingIOError:
            return False
    while True:       # msvcrt: one byte, exclusive, retried
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            if not wait:
                return False
            time.sleep(0.1)


def _shas(library, doc_ids: list[int]) -> tuple[dict[int, str], list[int]]:
    found, gone = {}, []
    for doc_id in doc_ids:
        try:
            found[doc_id] = library.get(doc_id).sha256
        except Exception:  # noqa: BLE001 - DocumentError: not (or no longer) in the library
            gone.append(doc_id)
    return found, gone


# this process's holds: sha → [count, fd]. The file lock is taken once per process and kept
# until the last holder is done (a nested or parallel holder in this process takes nothing more)
_held: dict[str, list] = {}
_held_lock = threading.Lock()


def _take(sha: str) -> None:
    with _held_lock:
        if sha in _held:
            _held[sha][0] += 1
            return
    gate = _open(sha, ".gate")                 # a removal waiting holds the gate: we queue
    try:
        _lock(gate, exclusive=False, wait=True)
        fd = _open(sha)
        _lock(fd, exclusive=False, wait=True)
    finally:
        os.close(gate)
    with _held_lock:
        if sha in _held:                       # another thread of ours got there meanwhile
            _held[sha][0] += 1
            os.close(fd)
        else:
            _held[sha] = [1, fd]


def _drop(sha: str) -> None:
    with _held_lock:
        _held[sha][0] -= 1
        if not _held[sha][0]:
            os.close(_held.pop(sha)[1])        # closing releases the lock


@contextlib.contextmanager
def in_use(library, doc_ids: list[int]) -> Iterator[None]:
    """Shared locks on these documents for the duration; DocumentGone if one is not there.
    Nested use (the CLI holds a question's documents, qa.ask holds them again, maybe on
    another thread) takes nothing more: queueing at the gate behind a waiting removal while
    holding the lock it waits for deadlocked both (the soak found it)."""
    found, gone = _shas(library, doc_ids)
    if gone:
        raise DocumentGone(gone)
    taken = []
    try:
        for sha in sorted(set(found.values())):       # one order everywhere: no lock-order deadlock
            _take(sha)
            taken.append(sha)
        _, gone = _shas(library, doc_ids)             # removed while we waited for the lock
        if gone:
            raise DocumentGone(gone)
        yield
    finally:
        for sha in taken:
            _drop(sha)


def answers_under_way(sha256: str) -> bool:
    """Whether an answer holds this document now (a hint: one may start right after)."""
    fd = _open(sha256)
    try:
        free = _lock(fd, exclusive=True, wait=False)
        return not free
    finally:
        os.close(fd)


@contextlib.contextmanager
def removing(sha256: str, on_wait: Callable[[], None] | None = None,
             limit_s: float = WAIT_LIMIT_S) -> Iterator[None]:
    """The document's lock held exclusively: answers under way on it finish first (`on_wait`
    is told once when there are some); DocumentBusy after `limit_s`."""
    # the gate first: answers starting from now wait behind us (shared holders that come and
    # go would otherwise keep an exclusive lock from ever being granted)
    gate = _open(sha256, ".gate")
    _lock(gate, exclusive=True, wait=True)
    fd = _open(sha256)
    try:
        if not _lock(fd, exclusive=True, wait=False):
            if on_wait:
                on_wait()
            deadline = time.monotonic() + limit_s
            while not _lock(fd, exclusive=True, wait=False):
                if time.monotonic() > deadline:
                    raise DocumentBusy(f"the document is still being read by an answer after "
                                       f"{limit_s:.0f} s; stop it (or close the app) and remove again")
                time.sleep(0.2)
        yield
    finally:
        os.close(fd)
        os.close(gate)
