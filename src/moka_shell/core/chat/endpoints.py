"""Where a backend's requests go and with which key: the config, the SDK's environment variable, the preset.

The order is the one the official SDKs' users expect, with Moka's own config on top: a base URL
set in the config (Settings → Model) wins; then the SDK's variable (``OPENAI_BASE_URL``,
``ANTHROPIC_BASE_URL``); then the backend's default. Each answer says where it came from, so
the UI can tell the person the truth.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

from moka_shell.config import AgentSettings
from moka_shell.core.chat.keys import get_key, keyring_has_key

UrlSource = Literal["config", "env", "default", "none"]
KeySource = Literal["env", "keyring", "none"]


@dataclass(frozen=True)
class Endpoint:
    """A backend's effective base URL and where it came from."""

    url: str | None
    source: UrlSource
    env_var: str | None = None  # the variable read (or that would be read) for the URL

    def to_json(self) -> dict[str, Any]:
        """The UI's shape."""
        out: dict[str, Any] = {"baseUrl": self.url, "baseUrlSource": self.source}
        if self.env_var:
            out["baseUrlEnvVar"] = self.env_var
        return out


def base_url_env_var(backend: Any) -> str | None:
    """The environment variable a backend's SDK users set for the base URL (None if it has none)."""
    value = getattr(backend, "base_url_env_var", None)
    return value if isinstance(value, str) and value else None


def resolve_endpoint(backend: Any, agent: AgentSettings) -> Endpoint:
    """Config value, then the SDK's environment variable, then the backend's default."""
    env_var = base_url_env_var(backend)
    configured = (agent.base_urls.get(backend.backend_id) or "").strip()
    if configured:
        return Endpoint(configured, "config", env_var)
    if env_var and os.environ.get(env_var, "").strip():
        return Endpoint(os.environ[env_var].strip(), "env", env_var)
    default = getattr(backend, "default_base_url", None)
    return Endpoint(default, "default" if default else "none", env_var)


def key_source(backend: Any) -> dict[str, Any]:
    """Where the key the backend would use comes from: ``{"source": "env"|"keyring"|"none", ...}``.

    The environment wins over the keyring (as ``get_key`` reads them), and a key in the keyring
    that the environment hides is reported too, so it can still be removed.
    """
    env_var = getattr(backend, "key_env_var", None)
    in_keyring = keyring_has_key(backend.backend_id)
    source: KeySource
    if env_var and os.environ.get(env_var):
        source = "env"
    elif in_keyring:
        source = "keyring"
    else:
        source = "none"
    out: dict[str, Any] = {"keySource": source, "keyInKeyring": in_keyring}
    if env_var:
        out["keyEnvVar"] = env_var
    return out


def api_key(backend: Any) -> str | None:
    """The key a request carries (environment first, then the keyring)."""
    return get_key(backend.backend_id, getattr(backend, "key_env_var", None))


def accepts_key(backend: Any) -> bool:
    """Does the backend take a key at all (needed, or optional as for a custom endpoint)?"""
    return bool(getattr(backend, "needs_key", False) or getattr(backend, "key_env_var", None)
                or getattr(backend, "optional_key", False))
