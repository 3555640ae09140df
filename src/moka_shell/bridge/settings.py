"""Bridge methods for settings and API keys."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from moka_shell.bridge.params import Params, opt_str, req_str
from moka_shell.core.chat.endpoints import accepts_key, api_key, key_source, resolve_endpoint
from moka_shell.core.chat.keys import delete_key, has_key, store_key
from moka_shell.errors import AgentError, InvalidParamsError, UnknownBackendError
from moka_shell.core.views.display import mode_icon

if TYPE_CHECKING:
    from moka_shell.core.app import MokaApp

SETTABLE = {
    "agent.backend", "agent.model", "agent.options", "agent.systemPrompt", "agent.maxSteps", "agent.baseUrls",
    "theme.themeId", "theme.mode",
    "consent.open_link", "consent.message", "consent.download", "consent.sampling",
    "approval.mode", "approval.servers",
}
CHOICES = ("allow", "ask", "deny")


class SettingsMethods:
    """``settings.*`` and ``keys.*`` (they work without a conversation store)."""

    def __init__(self, app: MokaApp) -> None:
        self.app = app
        self.model_lists: dict[str, list[str]] = {}  # backend → the models its endpoint listed last

    def methods(self) -> dict[str, Any]:
        """Method name → coroutine function."""
        return {"settings.get": self.get, "settings.set": self.set, "keys.set": self.keys_set,
                "keys.delete": self.keys_delete, "approval.set": self.approval_set,
                "settings.baseUrl": self.base_url, "settings.testBackend": self.test_backend}

    async def get(self, p: Params) -> dict[str, Any]:
        """Every setting, the backends (with key state and which local servers answer), themes, modes."""
        app, cfg = self.app, self.app.config
        backends = []
        # Local model servers are looked for, and help offered, only where a chat could use them.
        local = await app.chat.detect_local() if app.keeps_conversations and p.get("detect", True) else []
        for bid, reg in sorted(app.backends.items()):
            b = reg.obj
            backends.append({"id": bid, "name": b.display_name, "needsKey": b.needs_key,
                             "hasKey": has_key(bid, b.key_env_var), "keyEnvVar": b.key_env_var,
                             "acceptsKey": accepts_key(b), **key_source(b),
                             **resolve_endpoint(b, cfg.agent).to_json(),
                             "defaultBaseUrl": getattr(b, "default_base_url", None),
                             "canListModels": callable(getattr(b, "list_models", None)),
                             "acceptsMedia": sorted(getattr(b, "accepts_media", ()) or ()),
                             "models": self.model_lists.get(bid, []),
                             "defaultModel": b.default_model, "available": bid in local, "plugin": reg.plugin})
        out: dict[str, Any] = {
            "agent": cfg.agent.model_dump(by_alias=True, exclude_none=True),
            "theme": cfg.theme.model_dump(by_alias=True), "consent": cfg.consent.model_dump(),
            "approval": cfg.approval.model_dump(),
            "backends": backends, "themes": [{"id": t, "label": r.obj.label} for t, r in app.themes.items()],
            # A built-in mode has its own button; a plugin's is in the view's "More" menu, with its icon.
            "displayModes": [{"id": m, "label": r.obj.label, "wireMode": r.obj.wire_mode,
                              "icon": mode_icon(r.obj), "builtin": r.plugin.startswith("moka.")}
                             for m, r in app.display_modes.items()],
        }
        if app.keeps_conversations and not app.chat.backend_configured():
            help_text = app.chat.no_backend_help()
            if local:
                help_text += f"\nFound a local model server right now: {', '.join(local)} — pick it in Settings."
            out["noBackendHelp"] = help_text
        return out

    async def set(self, p: Params) -> dict[str, Any]:
        """Change one setting (validated as the config file is)."""
        key, value = req_str(p, "key"), p.get("value")
        if key not in SETTABLE:
            raise InvalidParamsError(f"{key!r} is not a setting (settable: {sorted(SETTABLE)})")
        section, field = key.split(".", 1)
        if section == "theme":  # built first and saved only if that worked (finding R4.5)
            self.app.appearance.set(**{"theme_id" if field == "themeId" else "mode": opt_str(p, "value")})
            return await self.get({"detect": False})
        config = self.app.config
        data = getattr(config, section).model_dump(by_alias=True)
        data[field] = value
        if section == "agent" and field == "backend" and value and value not in self.app.backends:
            raise InvalidParamsError(f"unknown backend {value!r}")
        setattr(config, section, type(getattr(config, section)).model_validate(data))
        self.app.save_config()
        return await self.get({"detect": False})

    async def approval_set(self, p: Params) -> dict[str, Any]:
        """Save (or clear, with choice null) the standing choice for one tool, or for all of a server's."""
        choice = p.get("choice")
        if choice is not None and choice not in CHOICES:
            raise InvalidParamsError(f"'choice' must be one of {list(CHOICES)} or null, not {choice!r}")
        self.app.approvals.remember(req_str(p, "server"), opt_str(p, "tool"), choice)
        return await self.get({"detect": False})

    def _backend(self, bid: str) -> Any:
        reg = self.app.backends.get(bid)
        if reg is None:
            raise UnknownBackendError(bid, list(self.app.backends))
        return reg.obj

    async def base_url(self, p: Params) -> dict[str, Any]:
        """Set (or, with an empty url, clear) one backend's base URL in the config."""
        bid, url = req_str(p, "backend"), (opt_str(p, "url") or "").strip()
        self._backend(bid)
        if url and not url.lower().startswith(("http://", "https://")):
            raise InvalidParamsError(f"the base URL must start with http:// or https:// (got {url!r})")
        urls = dict(self.app.config.agent.base_urls)
        if url:
            urls[bid] = url
        else:
            urls.pop(bid, None)
        self.app.config.agent.base_urls = urls
        self.app.save_config()
        return await self.get({"detect": False})

    async def test_backend(self, p: Params) -> dict[str, Any]:
        """Ask the backend's endpoint for its models (the URL given, else the effective one)."""
        bid = req_str(p, "backend")
        backend = self._backend(bid)
        list_models = getattr(backend, "list_models", None)
        if not callable(list_models):
            raise AgentError(f"{backend.display_name} can't list its models; type the model name instead")
        url = opt_str(p, "baseUrl") or resolve_endpoint(backend, self.app.config.agent).url
        models = sorted(await list_models(url, api_key(backend)))
        self.model_lists[bid] = models[:1000]
        return {"backend": bid, "baseUrl": url, "models": models[:1000]}

    async def keys_set(self, p: Params) -> dict[str, Any]:
        """Store an API key in the OS keyring."""
        key = str(p.get("key") or "").strip()
        if not key:
            raise InvalidParamsError("the key is empty")
        store_key(req_str(p, "backend"), key)
        return {"stored": True}

    async def keys_delete(self, p: Params) -> dict[str, Any]:
        """Remove a stored API key."""
        delete_key(req_str(p, "backend"))
        return {}
