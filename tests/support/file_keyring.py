"""A real keyring backend for tests: secrets in a JSON file under a temporary folder, so the
secrets API runs through keyring itself without touching the OS keyring."""
from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import keyring
from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class FileKeyring(KeyringBackend):
    priority = 1                        # usable, but never chosen over a real OS backend

    def __init__(self, path: Path | None = None):
        # no path: PAGEWISE_TEST_KEYRING, so a subprocess can pick this backend with
        # PYTHON_KEYRING_BACKEND=tests.support.file_keyring.FileKeyring (keyring calls cls())
        super().__init__()
        path = path or os.environ.get("PAGEWISE_TEST_KEYRING")
        if not path:    # TypeError: keyring's backend discovery then skips this class
            raise TypeError("FileKeyring needs a path (or PAGEWISE_TEST_KEYRING)")
        self.path = Path(path)

    def _read(self) -> dict:
        try:
            return json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}

    def _write(self, data: dict) -> None:
        self.path.write_text(json.dumps(data), encoding="utf-8")

    def get_password(self, service: str, username: str) -> str | None:
        return self._read().get(service, {}).get(username)

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._read()
        data.setdefault(service, {})[username] = password
        self._write(data)

    def delete_password(self, service: str, username: str) -> None:
        data = self._read()
        if username not in data.get(service, {}):
            raise PasswordDeleteError(f"no {username!r} in {service!r}")
        del data[service][username]
        self._write(data)


@contextmanager
def keyring_backend(backend: KeyringBackend) -> Iterator[KeyringBackend]:
    """keyring uses `backend` inside the block and the one it had before afterwards."""
    old = keyring.get_keyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(old)
