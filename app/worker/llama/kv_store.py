"""KV state of long prompts on disk, so a restarted worker answers a known document at once.

Each entry is two files under <root>/<model key>/:
  <digest>.kv   a 16-byte header (b"PWKV", format version, token count, CRC-32 of what follows) and
                then llama.cpp's sequence state (llama_state_seq_get_data: the KV cells of the
                evaluated prompt). Restored by mapping the file and handing the mapping to
                llama_state_seq_set_data: one copy, page cache → KV cache (measured, 5.4K tokens =
                126 MB on 2 busy cores: ~38 ms; re-reading the prompt takes 10–40 s). llama.cpp checks
                its own magic and sizes but not the cells: damaged cells were restored as they were
                and aborted the worker in the sampler on every later answer, so the CRC is checked
                first (~40 ms more for 126 MB) and an entry that fails it is deleted.
  <digest>.tok  the entry's token ids (int32), written last: it is the commit marker, so a
                crash mid-write leaves at most an orphan .kv that the next prune deletes.
  <digest>.restoring  the pid of a worker that restored the entry and has not finished an answer
                from it yet. A process that dies there (a C abort never reaches Python) leaves it
                behind; the next restore of that entry finds it and deletes the entry instead.
No index file: the directory listing is the index and file mtimes are the LRU clock, so two
workers sharing the folder cannot disagree about it.
The files detokenize to the document and the question: 0600 in 0700 folders, whatever the umask.
The cache is only a speed-up: an unwritable folder means no saving (one warning line), and an
entry that fails to load (truncated, damaged, foreign, older format, tokens not matching its name)
is deleted, so its prompt is read once more and saved again instead of being re-read on every question.
"""
from __future__ import annotations

import ctypes
import hashlib
import mmap
import os
import struct
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

DEFAULT_MAX_BYTES = 2 * 1024**3
EXTEND_MIN_TOKENS, EXTEND_SHARE = 128, 0.15   # a follow-up worth keeping on disk: this much new
MIN_TOKENS = 512          # shorter prompts re-read faster than the file system round trip is worth
MAGIC, FORMAT = b"PWKV", 2
HEADER = struct.Struct("<4sIII")   # magic, format, token count, CRC-32 of the state; llama.cpp's state follows
RESTORING = ".restoring"
FILE_MODE, DIR_MODE = 0o600, 0o700


@dataclass
class Match:
    digest: str
    common: int            # tokens shared with the query prompt
    n_tokens: int          # tokens stored in the entry


def model_key(model_path: Path) -> str:
    """KV cells only fit the exact weights that made them: key by name, size and mtime."""
    st = model_path.stat()
    tag = hashlib.sha1(f"{model_path.name}:{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()[:12]
    return f"{model_path.stem[:40]}-{tag}"


def _size(path: Path) -> int:
    try:                     # another worker sharing the folder may delete files under our feet
        return path.stat().st_size
    except OSError:
        return 0


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _private_dir(path: Path) -> None:
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    if path.stat().st_mode & 0o777 != DIR_MODE:
        os.chmod(path, DIR_MODE)


def _create_private(path: Path, mode: str = "wb"):
    """A new file opened for writing that only the owner can read (umask or not)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    if hasattr(os, "fchmod"):                 # the file may have existed looser (no fchmod on Windows)
        os.fchmod(fd, FILE_MODE)
    return os.fdopen(fd, mode)


def _digest(toks: np.ndarray) -> str:
    return hashlib.sha1(toks.tobytes()).hexdigest()[:20]


def common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    n = min(len(a), len(b))
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if diff.size else n


class KvStore:
    def __init__(self, root: Path, key: str, max_bytes: int = DEFAULT_MAX_BYTES,
                 min_tokens: int = MIN_TOKENS):
        self.dir = Path(root) / key
        self.max_bytes, self.min_tokens = max_bytes, min_tokens
        self._tokens: dict[str, np.ndarray] = {}     # digest → token ids (read once per entry)
        self._restoring: set[str] = set()            # entries restored here, no answer finished from them yet
        self.writable = True
        try:
            _private_dir(self.dir)
            if not os.access(self.dir, os.W_OK | os.X_OK):
                raise PermissionError(f"no write permission on {self.dir}")
        except OSError as exc:
            self.writable = False
            print(f"kv-store: warning: the KV cache folder is not writable ({exc}); answering without it",
                  flush=True)

    def best(self, tokens: Sequence[int]) -> Match | None:
        """The stored entry sharing the longest prefix with `tokens`."""
        query, best = np.asarray(tokens, dtype=np.int32), None
        for tok_file in self.dir.glob("*.tok"):
            stored = self._load_tokens(tok_file)
            if stored is None or not tok_file.with_suffix(".kv").exists():
                continue
            common = common_prefix(query, stored)
            if best is None or common > best.common:
                best = Match(tok_file.stem, common, len(stored))
        return best

    def latest(self) -> str | None:
        """The digest of the entry used last (complete entries only), or None."""
        entries = [(_mtime(kv), kv.stem) for kv in self.dir.glob("*.kv") if kv.with_suffix(".tok").exists()]
        return max(entries)[1] if entries else None

    def worth_saving(self, n_tokens: int, best_common: int) -> bool:
        """Save when the prompt holds at least min_tokens that no entry has yet, or when it
        extends an entry by a good share (a conversation's follow-up: after a restart, the
        next follow-up must find most of its prompt on disk, not only the first question's)."""
        new = n_tokens - best_common
        extends = n_tokens >= self.min_tokens and new >= max(EXTEND_MIN_TOKENS, EXTEND_SHARE * n_tokens)
        return self.writable and (new >= self.min_tokens or extends)

    def save(self, ctx, tokens: Sequence[int]) -> Path:
        """Write sequence 0's KV state for `tokens` atomically (tmp + rename), then prune (LRU)."""
        toks = np.asarray(tokens, dtype=np.int32)
        digest = _digest(toks)
        kv, tok = self.dir / f"{digest}.kv", self.dir / f"{digest}.tok"
        tmp_kv, tmp_tok = kv.with_suffix(f".kv.{os.getpid()}.tmp"), tok.with_suffix(f".tok.{os.getpid()}.tmp")
        try:
            if not self._write_state(ctx, tmp_kv, toks):
                raise OSError(f"llama.cpp could not write {tmp_kv}")
            os.replace(tmp_kv, kv)
            with _create_private(tmp_tok) as f:
                toks.tofile(f)
            os.replace(tmp_tok, tok)                   # commit marker last
        except BaseException:                          # a full disk: no half entry left behind
            tmp_kv.unlink(missing_ok=True)
            tmp_tok.unlink(missing_ok=True)
            raise
        self._tokens[digest] = toks
        self._drop_prefixes_of(toks, digest)
        self.prune()
        return kv

    def _drop_prefixes_of(self, toks: np.ndarray, keep: str) -> None:
        """An entry whose tokens all lead the new one is served by the new one (a restore
        keeps only the shared prefix): drop it, so a conversation holds one entry on disk."""
        for tok_file in list(self.dir.glob("*.tok")):
            if tok_file.stem == keep:
                continue
            stored = self._load_tokens(tok_file)
            if stored is not None and len(stored) < len(toks) and common_prefix(toks, stored) == len(stored):
                tok_file.unlink(missing_ok=True)              # uncommit first, then the bulk
                tok_file.with_suffix(".kv").unlink(missing_ok=True)
                self._tokens.pop(tok_file.stem, None)

    def load(self, ctx, digest: str, capacity: int) -> list[int] | None:
        """Restore an entry into sequence 0; returns its tokens, or None if llama.cpp refused it
        (truncated or foreign file: the caller then evaluates the prompt as usual)."""
        kv = self.dir / f"{digest}.kv"
        if self._crashed_in(digest):
            print(f"kv-store: warning: a worker died while answering from entry {digest}", flush=True)
            self.drop(digest)
            return None
        try:
            with open(kv, "rb") as f:
                head = f.read(HEADER.size)
                if len(head) == HEADER.size and head[:4] == MAGIC and HEADER.unpack(head)[2] > capacity:
                    return None                # sound, but larger than this context: keep it
                if len(head) < HEADER.size or head[:4] != MAGIC:
                    tokens = None              # truncated, or an older format without a checksum
                else:
                    tokens = self._load_mapped(ctx, f, head, digest, capacity)
        except (OSError, ValueError, BufferError, struct.error):
            tokens = None
        if tokens is None:
            self.drop(digest)
            return None
        self.touch(digest)
        return tokens

    def drop(self, digest: str) -> None:
        """Forget an entry that failed to load: kept, it would match every later prompt of its
        document and make each of them fail to restore and read the whole prompt again."""
        self._tokens.pop(digest, None)
        self._restoring.discard(digest)
        for path in (self.dir / f"{digest}.tok", self.dir / f"{digest}.kv", self.dir / f"{digest}{RESTORING}"):
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass
        print(f"kv-store: warning: entry {digest} could not be restored; deleted (the prompt is read again)",
              flush=True)

    def _load_mapped(self, ctx, f, head: bytes, digest: str, capacity: int) -> list[int] | None:
        import llama_cpp  # here, not at module top: lookups and pruning need no engine
        _, fmt, n_tokens, crc = HEADER.unpack(head)
        stored = self._load_tokens(self.dir / f"{digest}.tok")
        if fmt != FORMAT or stored is None or len(stored) != n_tokens or n_tokens > capacity:
            return None
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            with memoryview(mm) as view:
                if zlib.crc32(view[HEADER.size:]) != crc:
                    return None                  # damaged cells: llama.cpp would take them as they are
            self._mark_restoring(digest)
            state = np.frombuffer(mm, dtype=np.uint8, offset=HEADER.size)
            try:
                ok = llama_cpp.llama_state_seq_set_data(
                    ctx, state.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), state.size, 0)
            finally:
                del state                    # the mapping closes only once no view holds it
        return stored.tolist() if ok else None

    # --- a crash while answering from an entry counts against it ----------------------------------
    def _mark_restoring(self, digest: str) -> None:
        try:
            with _create_private(self.dir / f"{digest}{RESTORING}", "w") as f:
                f.write(str(os.getpid()))
            self._restoring.add(digest)
        except OSError:                 # a read-only folder: nothing to count with, nothing to drop
            pass

    def settled(self) -> None:
        """An answer from the restored entries finished (or the worker stops cleanly): they did not
        crash it."""
        for digest in list(self._restoring):
            (self.dir / f"{digest}{RESTORING}").unlink(missing_ok=True)
        self._restoring.clear()

    def _crashed_in(self, digest: str) -> bool:
        """A marker left by a process that is gone: it died between restoring this entry and
        finishing an answer from it. A live worker sharing the folder, or this one, is no crash."""
        marker = self.dir / f"{digest}{RESTORING}"
        try:
            pid = int(marker.read_text(encoding="ascii").strip() or 0)
        except FileNotFoundError:
            return False
        except (OSError, ValueError):
            return True
        if pid == os.getpid():
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except OSError:                      # alive, another account's: not ours to judge
            return False
        return False

    def touch(self, digest: str) -> None:
        """Mark an entry used (the LRU clock is the files' mtime)."""
        for path in (self.dir / f"{digest}.kv", self.dir / f"{digest}.tok"):
            try:
                os.utime(path)
            except OSError:              # gone (another worker pruned it) or a read-only folder
                pass

    @staticmethod
    def _write_state(ctx, path: Path, toks: np.ndarray) -> bool:
        """Header, then llama.cpp's sequence state copied straight into the mapped file."""
        import llama_cpp
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        if not size:
            return False
        with _create_private(path, "w+b") as f:
            f.write(HEADER.pack(MAGIC, FORMAT, len(toks), 0))      # the CRC once the state is in
            f.flush()
            # reserve the blocks first: writing a mapping of a sparse file on a full disk is a
            # SIGBUS that kills the worker, where this is an OSError (ENOSPC) the caller logs
            if hasattr(os, "posix_fallocate"):
                os.posix_fallocate(f.fileno(), 0, HEADER.size + size)
            f.truncate(HEADER.size + size)
            with mmap.mmap(f.fileno(), HEADER.size + size) as mm:
                state = np.frombuffer(mm, dtype=np.uint8, offset=HEADER.size)
                try:
                    written = llama_cpp.llama_state_seq_get_data(
                        ctx, state.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), size, 0)
                finally:
                    del state
                with memoryview(mm) as view:
                    crc = zlib.crc32(view[HEADER.size:])
                mm[:HEADER.size] = HEADER.pack(MAGIC, FORMAT, len(toks), crc)
        return written == size

    def total_bytes(self) -> int:
        return sum(_size(p) for p in self.dir.iterdir())

    def prune(self) -> None:
        """Drop half-written leftovers, then least-recently-used entries above max_bytes."""
        now = time.time()
        for tmp in self.dir.glob("*.tmp"):            # a crash mid-write (another live writer: < 1 h old)
            if now - _mtime(tmp) > 3600:
                tmp.unlink(missing_ok=True)
        for kv in self.dir.glob("*.kv"):
            if not kv.with_suffix(".tok").exists() and now - _mtime(kv) > 60:
                kv.unlink(missing_ok=True)            # renamed, but its commit marker never came
        for marker in self.dir.glob(f"*{RESTORING}"):
            if not marker.with_suffix(".kv").exists():
                marker.unlink(missing_ok=True)
        for tok in self.dir.glob("*.tok"):
            if not tok.with_suffix(".kv").exists():
                tok.unlink(missing_ok=True)
                self._tokens.pop(tok.stem, None)
        entries = sorted(self.dir.glob("*.tok"), key=_mtime)
        total = self.total_bytes()
        while entries and total > self.max_bytes:
            tok = entries.pop(0)
            kv = tok.with_suffix(".kv")
            size = _size(tok) + _size(kv)
            tok.unlink(missing_ok=True)                # uncommit first, then the bulk
            kv.unlink(missing_ok=True)
            self._tokens.pop(tok.stem, None)
            total -= size

    def _load_tokens(self, tok_file: Path) -> np.ndarray | None:
        cached = self._tokens.get(tok_file.stem)
        if cached is None:
            try:
                cached = np.fromfile(tok_file, dtype=np.int32)
            except (OSError, ValueError):
                return None
            if _digest(cached) != tok_file.stem:       # the name is the tokens' hash: damaged
                self.drop(tok_file.stem)
                return None
            self._tokens[tok_file.stem] = cached
        return cached
