"""API keys: from environment variables or the OS keyring, never logged or stored elsewhere."""

from __future__ import annotations

import os

from moka_shell.core.redact import SECRETS
from moka_shell.errors import MokaError

SERVICE = "moka"


def _keyring() -> object | None:
    try:
        import keyring
        from keyring.errors import KeyringError  # noqa: F401
    except ImportError:
        return None
    return keyring


def get_key(backend_id: str, env_var: str | None) -> str | None:
    """The key for a backend: its environment variable first, then the keyring."""
    key = os.environ.get(env_var) if env_var else None
    key = key or _keyring_key(backend_id)
    SECRETS.add(key)  # masked wherever a provider echoes it (core/redact.py)
    return key


def keyring_has_key(backend_id: str) -> bool:
    """Is a key for this backend in the OS keyring (whatever the environment says)?"""
    return bool(_keyring_key(backend_id))


def _keyring_key(backend_id: str) -> str | None:
    kr = _keyring()
    if kr is None:
        return None
    try:
        return kr.get_password(SERVICE, backend_id)  # type: ignore[attr-defined,no-any-return]
    except Exception:  # no usable keyring backend on this machine: treat as "no key"
        return None


def store_key(backend_id: str, key: str) -> None:
    """Store a key in the OS keyring, with a clear error when there is none."""
    kr = _keyring()
    if kr is None:
        raise MokaError("the keyring package is not installed")
    try:
        kr.set_password(SERVICE, backend_id, key)  # type: ignore[attr-defined]
    except Exception as exc:
        raise MokaError(
            f"could not store the key in the OS keyring: {type(exc).__name__}",
            hint="set the backend's environment variable instead (e.g. OPENAI_API_KEY)",
        ) from None
    # Some keyrings accept a write they do not keep: only a key that reads back counts as stored.
    if _keyring_key(backend_id) != key:
        raise MokaError("the OS keyring accepted the key but does not return it, so it was not stored",
                        hint="set the backend's environment variable instead (e.g. OPENAI_API_KEY)")


def delete_key(backend_id: str) -> None:
    """Remove a stored key (missing keys are fine)."""
    kr = _keyring()
    if kr is None:
        return
    try:
        kr.delete_password(SERVICE, backend_id)  # type: ignore[attr-defined]
    except Exception:
        pass


def has_key(backend_id: str, env_var: str | None) -> bool:
    """True if a key is available from either source."""
    return bool(get_key(backend_id, env_var))
