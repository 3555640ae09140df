"""Secrets stay secret: known secret values are masked wherever text is kept or shown (finding S9).

Moka itself never writes a key, a configured ``env`` value or a header value anywhere. Others
echo them: a provider's error that quotes the API key, a server that prints its environment to
stderr. Whatever reaches the inspector, the database, the UI or the logs passes through
``SECRETS.mask`` (text) or ``SECRETS.scrub`` (JSON-like values) first.

What is known: the values of environment variables whose names look secret (``*_API_KEY``,
``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ``*CREDENTIAL*``; not paths), every configured server's ``env`` and ``headers``
values (through a provider the app registers), keys read from the keyring, and anything a plugin
or another part of Moka adds with ``SECRETS.add`` (OAuth tokens). Values shorter than
``MIN_LENGTH`` are not masked: they would mangle ordinary text and are not secrets worth the name.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

MASK = "[redacted]"
MIN_LENGTH = 8
REFRESH_EVERY = 1.0  # seconds between re-reading the providers (config edits, new env)
MAX_PROVIDERS = 8
MAX_VALUES = 10_000
_SECRET_NAME = re.compile(r"(api[_-]?key|token|secret|password|passwd|credential)", re.I)

Provider = Callable[[], Iterable[str]]


def env_secrets(environ: dict[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names look secret."""
    env = os.environ if environ is None else environ
    # A path is not a secret (SSH_AUTH_SOCK-like names would otherwise mask file names in logs).
    return [v for k, v in env.items() if _SECRET_NAME.search(k) and v and not v.startswith("/")]


def config_secrets(config: Any) -> list[str]:
    """Every configured server's ``env`` and ``headers`` values."""
    out: list[str] = []
    for server in (getattr(config, "mcp_servers", None) or {}).values():
        for field in ("env", "headers"):
            values = getattr(server, field, None)
            if isinstance(values, dict):
                out.extend(v for v in values.values() if isinstance(v, str))
    return out


def _header_value(value: str) -> list[str]:
    """A header value and, for ``Bearer x`` / ``Basic x``, the credential alone."""
    parts = value.split(None, 1)
    return [value, parts[1]] if len(parts) == 2 and parts[0].lower() in ("bearer", "basic", "token") else [value]


class Redactor:
    """The set of known secrets, and masking with them."""

    def __init__(self, *, with_env: bool = True) -> None:
        self._added: set[str] = set()
        self._providers: list[Provider] = []
        self._with_env = with_env
        self._values: frozenset[str] = frozenset()
        self._pattern: re.Pattern[str] | None = None
        self._checked = 0.0
        self._lock = threading.Lock()  # stderr readers mask on their own threads

    def add(self, *values: str | None) -> None:
        """Remember secret values (an OAuth token, a key read from the keyring)."""
        with self._lock:
            for v in values:
                if isinstance(v, str) and len(v) >= MIN_LENGTH and len(self._added) < MAX_VALUES:
                    self._added.add(v)
            self._checked = 0.0

    def watch(self, provider: Provider) -> None:
        """Re-read ``provider()`` for secrets now and then (the app's config)."""
        with self._lock:
            self._providers = [*self._providers[-(MAX_PROVIDERS - 1):], provider]
            self._checked = 0.0

    def _current(self) -> re.Pattern[str] | None:
        now = time.monotonic()
        if now - self._checked < REFRESH_EVERY:
            return self._pattern
        with self._lock:
            self._checked = now
            values: set[str] = set(self._added)
            if self._with_env:
                values.update(env_secrets())
            for provider in self._providers:
                try:
                    for v in provider():
                        values.update(_header_value(v))
                except Exception:  # a provider that fails must not stop masking with the rest
                    continue
            values = {v for v in values if len(v) >= MIN_LENGTH}
            if frozenset(values) != self._values:
                self._values = frozenset(values)
                forms = values | {json.dumps(v)[1:-1] for v in values}  # also as JSON spells it
                # Longest first, so a secret that contains another is masked whole.
                self._pattern = re.compile("|".join(re.escape(v) for v in sorted(forms, key=len, reverse=True))) \
                    if forms else None
            return self._pattern

    def mask(self, text: str) -> str:
        """``text`` with every known secret replaced by ``[redacted]``."""
        pattern = self._current()
        if pattern is None or not text:
            return text
        return pattern.sub(MASK, text)

    def scrub(self, value: Any) -> Any:
        """``value`` (JSON-like) with every known secret masked in its strings and keys."""
        pattern = self._current()
        if pattern is None:
            return value
        return _scrub(value, pattern)


def _scrub(value: Any, pattern: re.Pattern[str]) -> Any:
    if isinstance(value, str):
        return pattern.sub(MASK, value)
    if isinstance(value, dict):
        return {(_scrub(k, pattern) if isinstance(k, str) else k): _scrub(v, pattern) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrub(v, pattern) for v in value]
    return value


SECRETS = Redactor()  # the process's one set: the web server, the core and the stderr readers share it


class _MaskingFilter(logging.Filter):
    """Masks known secrets in every log record a handler writes."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: let logging report it as it would
            return True
        masked = SECRETS.mask(message)
        if masked != message:
            record.msg, record.args = masked, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = SECRETS.mask(logging.Formatter().formatException(record.exc_info))
        elif record.exc_text:
            record.exc_text = SECRETS.mask(record.exc_text)
        return True


def mask_logs() -> None:
    """Mask known secrets in the logs: on every handler of the root logger (once each)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, _MaskingFilter) for f in handler.filters):
            handler.addFilter(_MaskingFilter())


__all__ = ["MASK", "SECRETS", "Redactor", "config_secrets", "env_secrets", "mask_logs"]
