"""A real keyring backend for tests: secrets in a JSON file under a temporary folder, so the
secrets API runs through keyring itself without touching the OS keyring."""
from __future__ import annotations

import json
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class FileKeyring(KeyringBackend):
    priority = 1                        # usable, but never chosen over a real OS backend

    def __init__(self, path: Path):
        super().__init__()
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
