"""Where OAuth sign-ins live: the OS keyring, or a 0600 file in the data dir when there is none.

One record per MCP server URL (the token's audience, RFC 8707), holding the issuer that
registered the client, the client registration, the tokens and when the access token expires.
The SDK's ``OAuthClientProvider`` reads and writes it through the ``TokenStorage`` protocol.
Nothing here is ever logged: errors name the server, never a token.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moka_shell.core.redact import SECRETS
from moka_shell.paths import PRIVATE_DIR, resolve_paths

if TYPE_CHECKING:
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

SERVICE = "moka-oauth"
FILE_NAME = "oauth-tokens.json"
MAX_RECORD_BYTES = 64 * 1024  # a record bigger than this is not a sign-in we wrote
MAX_FILE_BYTES = 4 * 2**20
log = logging.getLogger("moka.oauth")
_file_lock = threading.Lock()
_data_dir: Path | None = None


def use_data_dir(path: Path | None) -> None:
    """Keep the fallback token file in ``path`` (MokaApp sets its data dir here; None: the default)."""
    global _data_dir
    _data_dir = path


def data_dir() -> Path:
    """The data dir the fallback file lives in."""
    return _data_dir or resolve_paths().data_dir


def _keyring() -> Any | None:
    try:
        import keyring
    except ImportError:
        return None
    return keyring


def keyring_name() -> str | None:
    """The usable OS keyring backend's name, or None when there is no usable one."""
    kr = _keyring()
    if kr is None:
        return None
    try:
        backend = kr.get_keyring()
        priority = float(getattr(backend, "priority", 0))
    except Exception:  # a broken keyring configuration counts as none
        return None
    name = f"{type(backend).__module__}.{type(backend).__name__}"
    if priority <= 0 or name.startswith(("keyring.backends.fail", "keyring.backends.null")):
        return None
    return name


class TokenFile:
    """The fallback: one JSON file, mode 0600, mapping server URL to its record."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, Any]:
        try:
            if self.path.stat().st_size > MAX_FILE_BYTES:
                log.warning("ignoring %s: larger than %d bytes", self.path, MAX_FILE_BYTES)
                return {}
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            log.warning("ignoring %s: not a token file Moka can read", self.path)
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, key: str) -> dict[str, Any] | None:
        """The record for ``key``."""
        with _file_lock:
            found = self._read().get(key)
        return found if isinstance(found, dict) else None

    def put(self, key: str, record: dict[str, Any] | None) -> None:
        """Write (or with None, delete) the record for ``key``, atomically and owner-only."""
        with _file_lock:
            data = self._read()
            if record is None:
                if data.pop(key, None) is None:
                    return
            else:
                data[key] = record
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
            fd, tmp = tempfile.mkstemp(prefix=".oauth-", dir=self.path.parent)  # mkstemp creates it 0600
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(data, f)
                os.chmod(tmp, 0o600)
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise


def where() -> str:
    """Where sign-ins are kept on this machine, in words."""
    name = keyring_name()
    if name:
        return f"the OS keyring ({name})"
    return f"{data_dir() / FILE_NAME} (no OS keyring is available; the file is readable only by you)"


def load_record(key: str) -> dict[str, Any] | None:
    """The record kept under ``key``: the keyring's, else the file's."""
    kr = _keyring()
    if keyring_name() and kr is not None:
        try:
            text = kr.get_password(SERVICE, key)
        except Exception:  # the keyring went away: look in the file, where a refused write went
            text = None
        if text and len(text) <= MAX_RECORD_BYTES:
            try:
                data = json.loads(text)
            except ValueError:
                data = None
            if isinstance(data, dict):
                return data
    return TokenFile(data_dir() / FILE_NAME).get(key)


def save_record(key: str, record: dict[str, Any] | None) -> None:
    """Keep (or with None, delete) the record under ``key``: in the keyring, or the file when it refuses."""
    kr = _keyring()
    file = TokenFile(data_dir() / FILE_NAME)
    if keyring_name() and kr is not None:
        try:
            if record is None:
                kr.delete_password(SERVICE, key)
            else:
                kr.set_password(SERVICE, key, json.dumps(record))
                file.put(key, None)  # one copy only: an older fallback copy must not outlive this one
                return
        except Exception as exc:  # e.g. a locked keyring, or nothing to delete
            if record is not None:
                log.warning("the OS keyring refused the sign-in (%s); keeping it in %s instead",
                            type(exc).__name__, file.path)
    file.put(key, record)


class OAuthStore:
    """The ``TokenStorage`` for one MCP server URL (and the issuer that signed it in)."""

    def __init__(self, server_url: str) -> None:
        self.key = server_url

    def record(self) -> dict[str, Any]:
        """The stored record (empty when the server was never signed in)."""
        return load_record(self.key) or {}

    def _update(self, **changes: Any) -> None:
        record = self.record()
        record.update(changes)
        record["url"] = self.key
        save_record(self.key, {k: v for k, v in record.items() if v is not None})

    async def get_tokens(self) -> OAuthToken | None:
        """The stored tokens, if any."""
        from mcp.shared.auth import OAuthToken  # the SDK's models: only once a server signs in

        raw = self.record().get("tokens")
        try:
            tokens = OAuthToken.model_validate(raw) if isinstance(raw, dict) else None
        except ValueError:
            return None
        if tokens is not None:
            SECRETS.add(tokens.access_token, tokens.refresh_token)  # masked wherever text is kept or shown
        return tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Keep new tokens, and when the access token expires."""
        SECRETS.add(tokens.access_token, tokens.refresh_token)
        expires = time.time() + int(tokens.expires_in) if tokens.expires_in is not None else None
        self._update(tokens=tokens.model_dump(mode="json", exclude_none=True), expiresAt=expires)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The stored client registration, if any."""
        from mcp.shared.auth import OAuthClientInformationFull

        raw = self.record().get("client")
        try:
            info = OAuthClientInformationFull.model_validate(raw) if isinstance(raw, dict) else None
        except ValueError:
            return None
        if info is not None:
            SECRETS.add(info.client_secret)
        return info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Keep a new registration; tokens from another issuer go with the old one (SEP-2352)."""
        SECRETS.add(client_info.client_secret)
        record = self.record()
        issuer = client_info.issuer
        drop_tokens = record.get("issuer") not in (None, issuer)
        uris = client_info.redirect_uris or []
        self._update(client=client_info.model_dump(mode="json", exclude_none=True), issuer=issuer,
                     redirectUri=str(uris[0]) if uris else record.get("redirectUri"),
                     tokens=None if drop_tokens else record.get("tokens"),
                     expiresAt=None if drop_tokens else record.get("expiresAt"))

    def expires_at(self) -> float | None:
        """When the stored access token expires (Unix time), if known."""
        value = self.record().get("expiresAt")
        return float(value) if isinstance(value, (int, float)) else None

    def remember(self, **facts: Any) -> None:
        """Keep facts about the sign-in that are not secrets (issuer, revocation endpoint, redirect URI)."""
        self._update(**facts)

    def forget_client(self) -> None:
        """Drop the client registration (and its tokens), keeping nothing bound to it."""
        self._update(client=None, tokens=None, expiresAt=None, issuer=None, preregistered=None)

    def forget(self) -> None:
        """Forget everything about this server's sign-in."""
        save_record(self.key, None)

    def signed_in(self) -> bool:
        """True when tokens are stored."""
        return isinstance(self.record().get("tokens"), dict)
