"""A real `keyring` backend that keeps secrets in the JSON file named by MOKA_TEST_KEYRING_FILE.

Tests select it with PYTHON_KEYRING_BACKEND=file_keyring.FileKeyring (and this folder on
PYTHONPATH), so the OS keyring code path runs end to end without touching the person's keyring.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class FileKeyring(KeyringBackend):
    """Secrets in one JSON file: {service: {username: password}}."""

    priority = 1  # type: ignore[assignment]

    def _path(self) -> Path:
        return Path(os.environ["MOKA_TEST_KEYRING_FILE"])

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            return json.loads(self._path().read_text(encoding="utf-8"))  # type: ignore[no-any-return]
        except FileNotFoundError:
            return {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._read().get(service, {}).get(username)

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._read()
        data.setdefault(service, {})[username] = password
        self._path().write_text(json.dumps(data), encoding="utf-8")

    def delete_password(self, service: str, username: str) -> None:
        data = self._read()
        if username not in data.get(service, {}):
            raise PasswordDeleteError("not found")
        del data[service][username]
        self._path().write_text(json.dumps(data), encoding="utf-8")
