"""KV state of long prompts on disk, so a restarted worker answers a known document at once.

Each entry is two files under <root>/<model key>/:
  <digest>.kv   a 12-byte header (b"PWKV", format version, token count) and then llama.cpp's
                sequence state (llama_state_seq_get_data: the KV cells of the evaluated prompt,
                with llama.cpp's own magic and version, which it checks on restore). Restored by
                mapping the file and handing the mapping to llama_state_seq_set_data: one copy,
                page cache → KV cache. llama_state_seq_load_file reads into a buffer and copies
                again (measured, 5.4K tokens = 126 MB on 2 busy cores: ~38 ms mapped, ~55 ms
                through the file API; re-reading the prompt takes 10–40 s). Entries written by
                earlier versions (llama_state_seq_save_file) still load through the file API.
  <digest>.tok  the entry's token ids (int32), written last: it is the commit marker, so a
                crash mid-write leaves at most an orphan .kv that the next prune deletes.
No index file: the directory listing is the index and file mtimes are the LRU clock, so two
workers sharing the folder cannot disagree about it.
"""
from __future__ import annotations

import ctypes
import hashlib
import mmap
import os
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

DEFAULT_MAX_BYTES = 2 * 1024**3
MIN_TOKENS = 512          # shorter prompts re-read faster than the file system round trip is worth
MAGIC, FORMAT = b"PWKV", 1
HEADER = struct.Struct("<4sII")   # magic, format, token count; llama.cpp's state follows


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


def common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    n = min(len(a), len(b))
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if diff.size else n


class KvStore:
    def __init__(self, root: Path, key: str, max_bytes: int = DEFAULT_MAX_BYTES,
                 min_tokens: int = MIN_TOKENS):
        self.dir = Path(root) / key
        self.dir.mkdir(parents=True, exist_ok=True)
        self.max_bytes, self.min_tokens = max_bytes, min_tokens
        self._tokens: dict[str, np.ndarray] = {}     # digest → token ids (read once per entry)

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
        """Save when the prompt holds at least min_tokens that no entry has yet."""
        return n_tokens - best_common >= self.min_tokens

    def save(self, ctx, tokens: Sequence[int]) -> Path:
        """Write sequence 0's KV state for `tokens` atomically (tmp + rename), then prune (LRU)."""
        toks = np.asarray(tokens, dtype=np.int32)
        digest = hashlib.sha1(toks.tobytes()).hexdigest()[:20]
        kv, tok = self.dir / f"{digest}.kv", self.dir / f"{digest}.tok"
        tmp_kv, tmp_tok = kv.with_suffix(f".kv.{os.getpid()}.tmp"), tok.with_suffix(f".tok.{os.getpid()}.tmp")
        if not self._write_state(ctx, tmp_kv, toks):
            tmp_kv.unlink(missing_ok=True)
            raise OSError(f"llama.cpp could not write {tmp_kv}")
        os.replace(tmp_kv, kv)
        toks.tofile(tmp_tok)
        os.replace(tmp_tok, tok)                       # commit marker last
        self._tokens[digest] = toks
        self.prune()
        return kv

    def load(self, ctx, digest: str, capacity: int) -> list[int] | None:
        """Restore an entry into sequence 0; returns its tokens, or None if llama.cpp refused it
        (truncated or foreign file: the caller then evaluates the prompt as usual)."""
        kv = self.dir / f"{digest}.kv"
        try:
            with open(kv, "rb") as f:
                head = f.read(HEADER.size)
                if len(head) < HEADER.size:
                    return None
                if head[:4] == MAGIC:
                    tokens = self._load_mapped(ctx, f, head, digest, capacity)
                else:
                    tokens = self._load_file(ctx, kv, capacity)
        except (OSError, ValueError, BufferError):
            return None
        if tokens is not None:
            self.touch(digest)
        return tokens

    def _load_mapped(self, ctx, f, head: bytes, digest: str, capacity: int) -> list[int] | None:
        import llama_cpp  # here, not at module top: lookups and pruning need no engine
        _, fmt, n_tokens = HEADER.unpack(head)
        stored = self._load_tokens(self.dir / f"{digest}.tok")
        if fmt != FORMAT or stored is None or len(stored) != n_tokens or n_tokens > capacity:
            return None
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            state = np.frombuffer(mm, dtype=np.uint8, offset=HEADER.size)
            try:
                ok = llama_cpp.llama_state_seq_set_data(
                    ctx, state.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), state.size, 0)
            finally:
                del state                    # the mapping closes only once no view holds it
        return stored.tolist() if ok else None

    @staticmethod
    def _load_file(ctx, kv: Path, capacity: int) -> list[int] | None:
        """An entry in llama.cpp's own file format (written by earlier versions)."""
        import llama_cpp
        out, n_out = (llama_cpp.llama_token * capacity)(), ctypes.c_size_t(0)
        if not llama_cpp.llama_state_seq_load_file(ctx, str(kv).encode(), 0, out, capacity, ctypes.byref(n_out)):
            return None
        return list(out[:n_out.value])

    def touch(self, digest: str) -> None:
        """Mark an entry used (the LRU clock is the files' mtime)."""
        for path in (self.dir / f"{digest}.kv", self.dir / f"{digest}.tok"):
            if path.exists():
                os.utime(path)

    @staticmethod
    def _write_state(ctx, path: Path, toks: np.ndarray) -> bool:
        """Header, then llama.cpp's sequence state copied straight into the mapped file."""
        import llama_cpp
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        if not size:
            return False
        with open(path, "w+b") as f:
            f.write(HEADER.pack(MAGIC, FORMAT, len(toks)))
            f.flush()
            f.truncate(HEADER.size + size)
            with mmap.mmap(f.fileno(), HEADER.size + size) as mm:
                state = np.frombuffer(mm, dtype=np.uint8, offset=HEADER.size)
                try:
                    written = llama_cpp.llama_state_seq_get_data(
                        ctx, state.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), size, 0)
                finally:
                    del state
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
            except OSError:
                return None
            self._tokens[tok_file.stem] = cached
        return cached
