"""The secrets of a server's configured OAuth client: kept like tokens, never in the config file.

A client secret, a private key (``private_key_jwt``), the identity provider's client secret and
an ID token (cross-app access) are kept per server URL in the OS keyring, or the owner-only token
file when there is none (``store.py``), apart from the sign-in record: signing out forgets the
tokens, not the client the owner gave. ``moka servers oauth`` and the server's dialog set them;
connections read them. Every value is masked wherever text is kept or shown.
"""

from __future__ import annotations

from typing import Any, Literal

from moka_shell.core.mcp.oauth.store import load_record, save_record
from moka_shell.core.redact import SECRETS
from moka_shell.errors import InvalidParamsError

Secret = Literal["clientSecret", "privateKey", "idpClientSecret", "idToken"]
SECRETS_KNOWN: tuple[Secret, ...] = ("clientSecret", "privateKey", "idpClientSecret", "idToken")
MAX_SECRET = 16 * 1024  # a PEM key or an ID token fits; anything longer is not what was meant
WHAT = {"clientSecret": "client secret", "privateKey": "private key", "idpClientSecret": "identity provider's "
        "client secret", "idToken": "ID token"}


def _key(url: str) -> str:
    return f"client:{url}"


class ClientSecrets:
    """The stored secrets of the OAuth client configured for the server at ``url``."""

    def __init__(self, url: str) -> None:
        self.url = url

    def _record(self) -> dict[str, Any]:
        record = load_record(_key(self.url)) or {}
        return {k: v for k, v in record.items() if k in SECRETS_KNOWN and isinstance(v, str)}

    def get(self, name: Secret) -> str | None:
        """One secret, or None when none is stored."""
        value = self._record().get(name)
        if value:
            SECRETS.add(value)
        return value

    def stored(self) -> list[str]:
        """The names of the secrets that are stored (never their values)."""
        return sorted(self._record())

    def set(self, **values: str | None) -> None:
        """Keep the given secrets (None or "" forgets one); the others stay."""
        unknown = sorted(set(values) - set(SECRETS_KNOWN))
        if unknown:
            raise InvalidParamsError(f"unknown secret(s) {', '.join(unknown)} (known: {', '.join(SECRETS_KNOWN)})")
        record = self._record()
        for name, value in values.items():
            value = (value or "").strip()
            if len(value) > MAX_SECRET:
                raise InvalidParamsError(f"the {WHAT[name]} is longer than {MAX_SECRET // 1024} KiB")
            if value:
                SECRETS.add(value)
                record[name] = value
            else:
                record.pop(name, None)
        save_record(_key(self.url), {**record, "url": self.url} if record else None)

    def forget(self) -> None:
        """Forget every secret of this server's client."""
        save_record(_key(self.url), None)
