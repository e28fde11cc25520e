"""`pagewise models pull`: a hub model's files through huggingface_hub (resumable: an interrupted
or cancelled download continues from its .part file), with progress in bytes, speed and
time left, each file's SHA-256 checked and the whole checkpoint verified before it is offered.
Nothing here runs until a download is asked for: listing models never touches the network."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import threading
import urllib.parse
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from app.core.failures import FailureKind
from app.core.models import catalogue
from app.core.models.catalogue import ModelNotAvailable, ModelSpec


class DownloadCancelled(Exception):
    kind = FailureKind.CANCELLED


@dataclass(frozen=True)
class Progress:
    file: str
    index: int                  # 1-based, of `files`
    files: int
    done: int                   # bytes of this file on disk, resumed ones included
    total: int | None
    speed_bps: float            # this session's bytes / second
    eta_s: float | None

    def line(self) -> str:
        mb = 1e6
        size = f"{self.done / mb:.1f} / {self.total / mb:.1f} MB" if self.total else f"{self.done / mb:.1f} MB"
        left = f", {format_eta(self.eta_s)} left" if self.eta_s is not None else ""
        return (f"{self.file} ({self.index}/{self.files}): {size}, "
                f"{self.speed_bps / mb:.1f} MB/s{left}")


def format_eta(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


ProgressFn = Callable[[Progress], None]


def _bar_class(name: str, index: int, files: int, on_progress: ProgressFn | None,
               cancel: threading.Event | None, every_s: float = 0.25):
    """A tqdm stand-in for huggingface_hub (its `tqdm_class`): reports Progress and stops the
    download when `cancel` is set, leaving the .part file for the next pull to resume."""

    class Bar:
        def __init__(self, *args, total=None, initial=0, **kwargs):
            self.total, self.n, self.first = total, initial, initial
            self.began = self.last = time.monotonic()
            self._report(force=True)

        def update(self, n: int = 1) -> None:
            if cancel is not None and cancel.is_set():
                raise DownloadCancelled(f"download of {name} cancelled; `pagewise models pull` resumes it")
            self.n += n
            self._report()

        def _report(self, force: bool = False) -> None:
            now = time.monotonic()
            if on_progress is None or (not force and now - self.last < every_s):
                return
            self.last = now
            speed = (self.n - self.first) / max(now - self.began, 1e-6)
            eta = (self.total - self.n) / speed if self.total and speed > 0 else None
            on_progress(Progress(name, index, files, self.n, self.total, speed, eta))

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> bool:
            if exc[0] is None:
                self._report(force=True)
            return False

        def close(self) -> None:
            pass

        def set_description(self, *args, **kwargs) -> None:
            pass

        def refresh(self, *args, **kwargs) -> None:
            pass

    return Bar


def pull(spec: ModelSpec, endpoint: str | None = None, token: str | None = None,
         on_progress: ProgressFn | None = None, cancel: threading.Event | None = None) -> Path:
    """Download every file of a hub model, then verify it; returns what the engine loads."""
    if spec.source != "hf":
        return catalogue.local_path(spec)
    folder = catalogue.model_dir(spec)
    for index, name in enumerate(spec.files, start=1):
        if cancel is not None and cancel.is_set():
            raise DownloadCancelled(f"download of {spec.id} cancelled; `pagewise models pull` resumes it")
        bar = _bar_class(name, index, len(spec.files), on_progress, cancel)
        try:
            path, etag = _fetch(spec, name, folder, endpoint, token, bar)
        except (DownloadCancelled, NoRoom):
            raise
        except Exception as exc:  # noqa: BLE001 - huggingface_hub's and httpx's errors, as one line
            raise ModelNotAvailable(f"model {spec.id}: {name}: {_hub_error(exc, endpoint)}") from exc
        _check_hash(spec, name, path, etag)
    problems = catalogue.verify(spec)
    if problems:     # the hub's own files are broken: never offer them (they would look installed)
        try:
            catalogue.remove_tree(folder)
        except OSError:
            pass
        raise ModelNotAvailable(f"model {spec.id} downloaded but refused and deleted: " + "; ".join(problems))
    return catalogue.local_path(spec)


def _fetch(spec: ModelSpec, name: str, folder: Path, endpoint, token, bar) -> tuple[Path, str]:
    """One file through huggingface_hub's HTTP download (Range requests, retries within the
    call), into a .part file of our own that stays when the download stops: huggingface_hub
    2.x deletes its own partial file on failure, so only this one survives to be resumed."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.file_download import http_get
    from huggingface_hub.utils import build_hf_headers

    meta = get_hf_file_metadata(hf_hub_url(spec.repo, name, endpoint=endpoint), token=token)
    etag = (meta.etag or "").strip('"').removeprefix("W/").strip('"')
    final = catalogue.model_file(spec, name)
    if final.is_file() and meta.size is not None and final.stat().st_size == meta.size:
        return final, etag                      # already here; its hash is checked again
    # The ETag names the .part file (a new version never resumes an old one's bytes), but it is the
    # server's text: only its digest goes into the name, so "/../../x" cannot place the file.
    tag = hashlib.sha256(etag.encode("utf-8", "replace")).hexdigest()[:16] if etag else "noetag"
    part = folder / ".partial" / f"{name.replace('/', '__')}.{tag}.part"
    part.parent.mkdir(parents=True, exist_ok=True)
    done = part.stat().st_size if part.exists() else 0
    if meta.size is not None and done > meta.size:
        part.unlink()
        done = 0
    if meta.size is not None:
        room_for(part.parent, meta.size - done, name)
    asked = hf_hub_url(spec.repo, name, endpoint=endpoint)
    # The hub may send the file from elsewhere (a CDN, or whatever its answer names): the token is
    # for the hub's own host only.
    headers = build_hf_headers(token=token if same_host(meta.location, asked) else False)
    with open(part, "ab") as fh:
        http_get(meta.location, fh, resume_size=done, headers=headers,
                 expected_size=meta.size, displayed_filename=name, tqdm_class=bar)
    final.parent.mkdir(parents=True, exist_ok=True)
    os.replace(part, final)
    return final, etag


SPARE_BYTES = 256 * 1024**2     # left free beyond the file: the library and the logs still need to write


class NoRoom(ModelNotAvailable):
    """Not enough free disk space for a download (said before a byte is written)."""


def room_for(folder: Path, needed: int, name: str) -> None:
    free = shutil.disk_usage(folder).free
    if needed + SPARE_BYTES > free:
        raise NoRoom(f"{name} needs {needed / 1e9:.1f} GB but {folder} has {free / 1e9:.1f} GB free; "
                     f"free some space and pull again")


def same_host(url: str, other: str) -> bool:
    a, b = urllib.parse.urlsplit(url), urllib.parse.urlsplit(other)
    return (a.scheme, a.hostname, a.port) == (b.scheme, b.hostname, b.port)


def _hub_error(exc: Exception, endpoint: str | None) -> str:
    from huggingface_hub import errors
    where = endpoint or "huggingface.co"
    if isinstance(exc, errors.GatedRepoError):
        return "the repository is gated: accept its licence on the hub and set a token (`pagewise settings set-secret hub_token`)"
    if isinstance(exc, errors.RepositoryNotFoundError):
        return f"no such repository on {where} (or it needs a token)"
    if isinstance(exc, errors.EntryNotFoundError):
        return f"no such file in the repository on {where}"
    if isinstance(exc, errors.LocalEntryNotFoundError):
        return f"cannot reach {where} (offline?)"
    if isinstance(exc, errors.HfHubHTTPError):
        status = getattr(getattr(exc, "response", None), "status_code", "?")
        return f"{where} answered HTTP {status}"
    text = " ".join(str(exc).split())[:200]
    return f"download failed ({type(exc).__name__}: {text})"


_SHA256 = re.compile(r"[0-9a-f]{64}")
_GIT_SHA1 = re.compile(r"[0-9a-f]{40}")


def git_blob_sha1(path: Path, chunk: int = 1 << 20) -> str:
    """Git's object id of a file (the hub's ETag for a file not stored in LFS)."""
    digest = hashlib.sha1(f"blob {path.stat().st_size}\0".encode(), usedforsecurity=False)
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _check_hash(spec: ModelSpec, name: str, path: Path, etag: str) -> None:
    """The catalogue's SHA-256, or else the hub's: an LFS file's ETag is its SHA-256, a small
    file's its git object id. An ETag that is neither verifies nothing: the file is refused."""
    expected, actual = spec.sha256.get(name), None
    if expected is not None:
        actual = catalogue.sha256_of(path)
    elif _SHA256.fullmatch(etag):
        expected, actual = etag, catalogue.sha256_of(path)
    elif _GIT_SHA1.fullmatch(etag):
        expected, actual = etag, git_blob_sha1(path)
    if expected is None:
        path.unlink()
        raise ModelNotAvailable(f"model {spec.id}: {name}: the hub gave no hash to check it against "
                                f"(ETag {etag[:40]!r}) and the catalogue lists none; deleted")
    if actual != expected:
        path.unlink()
        raise ModelNotAvailable(f"model {spec.id}: {name} does not match its SHA-256 "
                                f"(damaged in transit, or not the catalogue's file); deleted, pull again")
