"""Consent: may a view or a server do this? Plugins first, then the setting, then the person."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from moka_shell.config import MokaConfig
from moka_shell.core.shell import Emit, Mode
from moka_shell.plugins import PluginHost

CONSENT_TIMEOUT = 120.0


class Consent:
    """Asks for and remembers the person's answers to consent requests."""

    def __init__(self, plugins: PluginHost, config: MokaConfig, emit: Emit, save_config: Callable[[], None], *,
                 mode: Mode, someone_listening: Callable[[], bool]) -> None:
        self._plugins = plugins
        self._config = config
        self._emit = emit
        self._save_config = save_config
        self._mode = mode
        self._someone_listening = someone_listening
        self._pending: dict[str, asyncio.Future[bool]] = {}
        self._asked: dict[str, dict[str, Any]] = {}  # what each waiting request said, for a page that missed it
        self._seq = 0

    async def ask(self, action: str, server: str, detail: dict[str, Any]) -> bool:
        """True when ``server`` may do ``action`` now."""
        # Awaited off the loop with a deadline: a plugin that blocks is named and skipped, Moka answers.
        decided = await self._plugins.first_result_async("moka_consent", action=action, server=server, detail=detail)
        if isinstance(decided, bool):
            return decided
        policy = getattr(self._config.consent, action, "ask")
        if policy != "ask":
            return bool(policy == "allow")
        if self._mode == "check":
            # `moka check` allows nothing a person would be asked about: it answers as a denial and
            # reports the request ("would ask the person"), so the app's handling of a "no" is tested.
            self._emit("consent.would_ask", {"action": action, "server": server, "detail": detail})
            return False
        if not self._someone_listening():
            return False  # nobody to ask
        # Unique for the run: an id reused while an earlier request still waited would let one
        # answer resolve the wrong request and leave the other to time out.
        self._seq += 1
        request_id = f"q{self._seq}"
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = fut
        self._asked[request_id] = {"requestId": request_id, "action": action, "server": server, "detail": detail}
        self._emit("consent.request", self._asked[request_id])
        try:
            return await asyncio.wait_for(fut, timeout=CONSENT_TIMEOUT)
        except asyncio.TimeoutError:
            return False
        finally:
            self._pending.pop(request_id, None)
            self._asked.pop(request_id, None)

    def pending(self) -> list[dict[str, Any]]:
        """The requests waiting for the person now (a page that reconnects or reloads shows them)."""
        return list(self._asked.values())

    def answer(self, request_id: str, allow: bool, remember: bool, action: str | None = None) -> None:
        """The person answered a consent request (and may want it remembered)."""
        fut = self._pending.get(request_id)
        if fut is not None and not fut.done():
            fut.set_result(bool(allow))
        if remember and action:
            setattr(self._config.consent, action, "allow" if allow else "deny")
            self._save_config()
