"""The one settings module: `settings.toml` in the config dir, the one atomic file writer every
persisted file goes through, and secrets, which live only in the OS keyring."""
from __future__ import annotations

import contextlib
import logging
import math
import os
import sys
import tempfile
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:                                   # pragma: no cover - Python 3.10
    import tomli as tomllib

from app.core import paths
from app.core.failures import BadInput, FailureKind
from app.core.storage import StorageError, storage_error, tell

log = logging.getLogger(__name__)

ENGINES = ("auto", "llamacpp", "vllm", "remote")
THEMES = ("auto", "light", "dark")
LANGUAGES = ("auto", "en", "zh")      # the interface's: auto follows the system locale
RERANK = ("off", "on")                  # the model picks the best retrieved page first (off: measured to hurt, see rerank.py)
JUDGE = ("auto", "on", "off")           # the model judges the candidate evidence cards (auto: when it fits the time budget)
FILE_NAME = "settings.toml"
SERVICE = "Pagewise"                    # the keyring service every secret is stored under
CPU_FIRST_TOKEN_S, GPU_FIRST_TOKEN_S = 10.0, 3.0   # the budget when first_token_budget_s is unset
# secrets: only ever in the OS keyring; "pdf-password:<document hash>" for remembered passwords
SECRETS = ("hub_token", "remote_api_key")
PDF_PASSWORD_PREFIX = "pdf-password:"


@dataclass(frozen=True)
class Settings:
    engine: str = "auto"                # auto | llamacpp | vllm | remote
    threads: int = 0                    # llama.cpp CPU threads; 0 = automatic
    context_cap: int = 0                # tokens; 0 = no cap (the plan's own limit)
    first_token_budget_s: float | None = None   # None: 10 s on the CPU, 3 s on a GPU
    theme: str = "auto"                 # auto (follow the system) | light | dark
    interface_language: str = "auto"    # auto (the system locale) | en | zh (中文)
    remember_pdf_passwords: bool = False         # kept in the keyring when on
    remote_url: str = ""                # an OpenAI-compatible endpoint, for engine = "remote"
    remote_model: str = ""
    rerank: str = "off"                 # on: the model picks the best retrieved page before answering
    judge_cards: str = "auto"           # the model judges the candidate cards: auto (within the budget) | on | off
    rewrite_question: str = "auto"      # the model words the question as the document would, the search looks
                                        # for that too: auto (within the budget) | on | off

    @property
    def uses_remote(self) -> bool:
        """The user chose a team's server (engine = remote) over a local engine."""
        return self.engine == "remote"

    def first_token_budget(self, on_gpu: bool) -> float:
        if self.first_token_budget_s is not None:
            return self.first_token_budget_s
        return GPU_FIRST_TOKEN_S if on_gpu else CPU_FIRST_TOKEN_S


KEYS = tuple(f.name for f in fields(Settings))


def settings_path() -> Path:
    return paths.config_dir() / FILE_NAME


# --- one atomic writer ----------------------------------------------------------------------------
def atomic_write(path: Path | str, data: bytes | str, mode: int = 0o600) -> None:
    """Write all of `data` or nothing: a crash or a full disk never leaves half a file, and two
    writers never share a temp name. The folder is made 0700 if it is missing."""
    path = Path(path)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # the mode is the temp file's before any byte is in it, whatever the umask; the rename then
        # replaces the old file (its inode and looser mode with it): a rewrite is always `mode`
        if hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable; not possible on Windows (no O_DIRECTORY), harmless there."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# --- values ---------------------------------------------------------------------------------------
def _known(key: str) -> str:
    if key not in KEYS:
        raise BadInput(f"unknown setting {key!r} (known: {', '.join(KEYS)})")
    return key


_UNSET = ("", "auto", "default", "none")


def _coerce(key: str, value: object) -> object:
    """`value` (text from the command line, or what TOML gave) as the field's type; BadInput if not."""
    _known(key)
    text = value.strip() if isinstance(value, str) else value
    if key in ("engine", "theme", "rerank", "interface_language", "judge_cards", "rewrite_question"):
        allowed = {"engine": ENGINES, "theme": THEMES, "rerank": RERANK, "interface_language": LANGUAGES,
                   "judge_cards": JUDGE, "rewrite_question": JUDGE}[key]
        if text not in allowed:
            raise BadInput(f"{key} must be one of {', '.join(allowed)}, not {value!r}")
        return text
    if key in ("remote_url", "remote_model"):
        if not isinstance(text, str):
            raise BadInput(f"{key} must be text, not {value!r}")
        if key == "remote_url" and text and not text.startswith(("http://", "https://")):
            raise BadInput(f"remote_url must start with http:// or https://, not {value!r}")
        return text.rstrip("/") if key == "remote_url" else text
    if key == "remember_pdf_passwords":
        if isinstance(text, bool):
            return text
        words = {"on": True, "true": True, "yes": True, "1": True,
                 "off": False, "false": False, "no": False, "0": False}
        if not isinstance(text, str) or text.lower() not in words:
            raise BadInput(f"remember_pdf_passwords must be on or off, not {value!r}")
        return words[text.lower()]
    if key in ("threads", "context_cap"):
        try:
            if isinstance(text, bool) or isinstance(text, float):
                raise ValueError
            number = int(text)
        except (TypeError, ValueError):
            raise BadInput(f"{key} must be a whole number (0 = automatic), not {value!r}") from None
        if number < 0:
            raise BadInput(f"{key} must be 0 (automatic) or more, not {number}")
        if key == "context_cap" and 0 < number < 2048:
            raise BadInput(f"context_cap must be 0 (no cap) or at least 2048 tokens, not {number}")
        if key == "threads" and number > MAX_THREADS:       # no machine has these: not worth keeping
            return usable_threads(number)
        return number
    # first_token_budget_s: seconds, or unset ("auto") for the CPU's and the GPU's defaults
    if text is None or (isinstance(text, str) and text.lower() in _UNSET):
        return None
    try:
        if isinstance(text, bool):
            raise ValueError
        seconds = float(text)
    except (TypeError, ValueError):
        raise BadInput(f"{key} must be a number of seconds (or auto), not {value!r}") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise BadInput(f"{key} must be more than 0 seconds, not {value!r}")
    return seconds


def cores() -> int:
    """The CPU cores this process may run on (its affinity, where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:           # macOS, Windows
        return os.cpu_count() or 1


MAX_THREADS = 4096                   # a value above it is clamped when set, not stored


def usable_threads(threads: int | None) -> int | None:
    """`threads` at most the cores, and the user told when it was more: 1,000 llama.cpp threads on
    2 cores ran the machine's load past 300 and no answer came (issue 32, point 13). The setting
    keeps what was asked (a settings file moves between machines); the worker gets this."""
    if threads and threads > cores():
        tell(f"threads {threads} is more than the {cores()} cores of this machine: using {cores()}")
        return cores()
    return threads


# --- the file -------------------------------------------------------------------------------------
def load() -> Settings:
    """The saved settings; defaults for a missing file. A broken file never stops the app and
    never loses values in silence: a copy of it is kept beside it, every line that still reads is
    kept, and the user is told on stderr which (the next save then writes those, not defaults)."""
    path = settings_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Settings()
    except IsADirectoryError:
        tell(f"{path} is a folder, not a file: using the default settings (move it away to save any)")
        return Settings()
    except OSError as exc:
        tell(f"cannot read {path} ({exc.strerror}): using the default settings")
        return Settings()
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        data = _salvage(raw.decode("utf-8", errors="replace"))
        kept = ", ".join(f"{k} = {data[k]!r}" for k in data if k in KEYS) or "nothing"
        tell(f"{path} is damaged ({exc}); a copy of it is in {_keep_damaged(path, raw)}. "
             f"Kept: {kept}; the rest are the defaults (the next change saves just these)")
    values = {}
    for key, value in data.items():
        if key not in KEYS:
            continue                    # from a newer version, or a typo: not worth failing over
        try:
            values[key] = _coerce(key, value)
        except BadInput as exc:
            log.warning("%s: %s; using the default", path, exc)
    return Settings(**values)


def _salvage(text: str) -> dict:
    """The `key = value` lines of a damaged file that still read on their own."""
    data = {}
    for line in text.splitlines():
        try:
            data.update(tomllib.loads(line))
        except (tomllib.TOMLDecodeError, TypeError, ValueError):
            continue
    return data


def _keep_damaged(path: Path, raw: bytes) -> Path:
    """A 0600 copy beside it, named by its content (read twice, copied once)."""
    import hashlib
    copy = path.with_name(f"{path.name}.damaged-{hashlib.sha256(raw).hexdigest()[:8]}")
    if not copy.exists():
        atomic_write(copy, raw)
    return copy


def save(settings: Settings) -> None:
    import tomli_w  # here: only writing needs it
    path = settings_path()
    if path.is_dir():
        raise BadInput(f"{path} is a folder, not a file: move it away, then set the value again")
    values = {k: v for k, v in asdict(settings).items() if v is not None}   # TOML has no null: unset = absent
    try:
        atomic_write(path, tomli_w.dumps(values))
    except OSError as exc:          # a read-only home, a full disk: one line naming the file
        raise storage_error(exc, path, "the settings") or StorageError(
            f"cannot write the settings ({path}): {exc.strerror or exc}") from None


@contextlib.contextmanager
def _locked():
    """One settings change at a time across processes (an exclusive lock on a file beside
    settings.toml): two `settings set` at once each read the file, changed their key and wrote
    it back, and one of the two values was lost."""
    try:
        import fcntl
    except ImportError:                       # Windows: no flock; the window's changes are one process
        yield
        return
    lock = settings_path().with_name(f".{FILE_NAME}.lock")
    try:
        lock.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise storage_error(exc, settings_path(), "the settings") or StorageError(
            f"cannot write the settings ({settings_path()}): {exc.strerror or exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)                          # closing releases the lock


def get(key: str) -> object:
    return getattr(load(), _known(key))


def set_value(key: str, text: str) -> Settings:
    """Parse `text` to the setting's type, save, and return the new settings: read, changed and
    written under one lock, so a change made meanwhile by another process is kept."""
    value = _coerce(key, text)
    with _locked():
        settings = replace(load(), **{key: value})
        if key == "threads":
            usable_threads(settings.threads)      # said now, not first at the next start
        save(settings)
    return settings


# --- secrets --------------------------------------------------------------------------------------
class NoKeyring(Exception):
    kind = FailureKind.NO_KEYRING

    def __init__(self, message: str = "no keyring service is available on this system; "
                                      "Pagewise never stores secrets in plain text"):
        super().__init__(message)


def _keyring():
    """The keyring module, if the OS offers a usable backend; never a plain-text fallback."""
    import keyring
    from keyring.backends import fail
    backend = keyring.get_keyring()
    try:
        priority = backend.priority
    except Exception:                   # some backends raise here when they cannot work
        priority = 0
    if isinstance(backend, fail.Keyring) or priority <= 0:
        raise NoKeyring()
    return keyring


def _call(op, *args):
    from keyring.errors import NoKeyringError
    try:
        return op(*args)
    except NoKeyringError:
        raise NoKeyring() from None


def check_secret_name(name: str) -> str:
    if name in SECRETS or (name.startswith(PDF_PASSWORD_PREFIX) and len(name) > len(PDF_PASSWORD_PREFIX)):
        return name
    raise BadInput(f"unknown secret {name!r} (known: {', '.join(SECRETS)}, {PDF_PASSWORD_PREFIX}<document>)")


def keyring_name() -> str:
    """The OS keyring backend secrets go to; NoKeyring when there is none."""
    backend = _keyring().get_keyring()
    return f"{type(backend).__module__}.{type(backend).__name__}"


def set_secret(name: str, value: str) -> None:
    _call(_keyring().set_password, SERVICE, name, value)


def get_secret(name: str) -> str | None:
    return _call(_keyring().get_password, SERVICE, name)


def delete_secret(name: str) -> None:
    """Forget a secret; one that was never stored is no error."""
    keyring = _keyring()
    from keyring.errors import PasswordDeleteError
    try:
        _call(keyring.delete_password, SERVICE, name)
    except PasswordDeleteError:
        pass


def remember_pdf_password(doc_key: str, password: str) -> bool:
    """Keep a PDF's password in the keyring, only when the user turned remembering on."""
    if not load().remember_pdf_passwords:
        return False
    set_secret(PDF_PASSWORD_PREFIX + doc_key, password)
    return True


def remembered_pdf_password(doc_key: str) -> str | None:
    if not load().remember_pdf_passwords:
        return None
    try:
        return get_secret(PDF_PASSWORD_PREFIX + doc_key)
    except NoKeyring:
        return None
