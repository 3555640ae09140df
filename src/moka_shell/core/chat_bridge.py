"""Bridge methods for chat, conversations and settings (see docs/bridge-api.md)."""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Any

from moka_shell.core.secrets import delete_key, has_key, store_key
from moka_shell.errors import BridgeError

if TYPE_CHECKING:
    from moka_shell.core.app import MokaApp

_SETTABLE = {
    "agent.backend", "agent.model", "agent.options", "agent.systemPrompt", "agent.maxSteps", "agent.baseUrls",
    "theme.themeId", "theme.mode",
    "consent.open_link", "consent.message", "consent.download", "consent.sampling",
}


def export_markdown(title: str, messages: list[dict[str, Any]]) -> str:
    """A conversation as readable Markdown."""
    lines = [f"# {title}", ""]
    for m in messages:
        who = "From app" if m.get("source") == "app" else {"user": "You", "assistant": "Assistant"}.get(m["role"], m["role"])
        lines.append(f"**{who}:** {m['content']}".rstrip())
        for c in m.get("toolCalls", []):
            lines.append(f"\n- tool `{c['server']}/{c['tool']}` ({c['status']}) with `{json.dumps(c['arguments'])}`")
        if m.get("error"):
            lines.append(f"\n> error: {m['error']}")
        lines.append("")
    return "\n".join(lines)


def chat_methods(app: MokaApp) -> dict[str, Any]:
    """The methods, bound to one app (chat ones need its ChatEngine; settings work without)."""

    def engine() -> Any:
        if app.chat is None:
            raise BridgeError(BridgeError.DENIED, "conversations are not available in this mode")
        return app.chat

    async def send(p: dict[str, Any]) -> dict[str, Any]:
        text = str(p.get("text") or "").strip()
        if not text:
            raise BridgeError(BridgeError.INVALID_PARAMS, "the message is empty")
        return {"conversationId": engine().start_turn(p.get("conversationId"), text)}

    async def stop(p: dict[str, Any]) -> dict[str, Any]:
        engine().stop(str(p["conversationId"]))
        return {}

    async def list_(p: dict[str, Any]) -> list[dict[str, Any]]:
        return engine().store.list_conversations(p.get("query") or None)

    async def get(p: dict[str, Any]) -> dict[str, Any]:
        cid = str(p["id"])
        if not engine().store.has_conversation(cid):
            raise BridgeError(BridgeError.INVALID_PARAMS, f"no conversation {cid!r}")
        turn = engine().turns.get(cid)
        running = turn is not None and turn.task is not None and not turn.task.done()
        return {"id": cid, "title": engine().store.title(cid), "messages": engine().store.messages(cid), "running": running}

    async def rename(p: dict[str, Any]) -> dict[str, Any]:
        engine().store.rename(str(p["id"]), str(p["title"]))
        return {}

    async def delete(p: dict[str, Any]) -> dict[str, Any]:
        engine().stop(str(p["id"]))
        engine().store.delete(str(p["id"]))
        return {}

    async def export(p: dict[str, Any]) -> dict[str, Any]:
        cid = str(p["id"])
        title, messages = engine().store.title(cid), engine().store.messages(cid)
        slug = re.sub(r"[^A-Za-z0-9]+", "-", title).strip("-")[:40] or "conversation"
        if p.get("format") == "markdown":
            return {"filename": f"{slug}.md", "content": export_markdown(title, messages)}
        doc = {"id": cid, "title": title, "exportedAt": time.time(), "messages": messages}
        return {"filename": f"{slug}.json", "content": json.dumps(doc, indent=2, default=str)}

    async def settings_get(p: dict[str, Any]) -> dict[str, Any]:
        cfg = app.config
        backends = []
        local = await app.chat.detect_local() if app.chat is not None and p.get("detect", True) else []
        for bid, reg in sorted(app.backends.items()):
            b = reg.obj
            backends.append({"id": bid, "name": b.display_name, "needsKey": b.needs_key,
                             "hasKey": has_key(bid, b.key_env_var), "keyEnvVar": b.key_env_var,
                             "defaultModel": b.default_model, "available": bid in local, "plugin": reg.plugin})
        out: dict[str, Any] = {
            "agent": cfg.agent.model_dump(by_alias=True, exclude_none=True),
            "theme": cfg.theme.model_dump(by_alias=True), "consent": cfg.consent.model_dump(),
            "backends": backends, "themes": [{"id": t, "label": r.obj.label} for t, r in app.themes.items()],
            "displayModes": [{"id": m, "label": r.obj.label, "wireMode": r.obj.wire_mode}
                             for m, r in app.display_modes.items()],
        }
        if app.chat is not None and not app.chat.backend_configured():
            help_text = app.chat.no_backend_help()
            if local:
                help_text += f"\nFound a local model server right now: {', '.join(local)} — pick it in Settings."
            out["noBackendHelp"] = help_text
        return out

    async def settings_set(p: dict[str, Any]) -> dict[str, Any]:
        key, value = str(p["key"]), p.get("value")
        if key not in _SETTABLE:
            raise BridgeError(BridgeError.INVALID_PARAMS, f"{key!r} is not a setting (settable: {sorted(_SETTABLE)})")
        section, field = key.split(".", 1)
        data = getattr(app.config, section).model_dump(by_alias=True)
        data[field] = value
        if section == "agent" and field == "backend" and value and value not in app.backends:
            raise BridgeError(BridgeError.INVALID_PARAMS, f"unknown backend {value!r}")
        setattr(app.config, section, type(getattr(app.config, section)).model_validate(data))
        app.save_config()
        if section == "theme":
            app.set_theme()
        return await settings_get({"detect": False})

    async def keys_set(p: dict[str, Any]) -> dict[str, Any]:
        key = str(p.get("key") or "").strip()
        if not key:
            raise BridgeError(BridgeError.INVALID_PARAMS, "the key is empty")
        store_key(str(p["backend"]), key)
        return {"stored": True}

    async def keys_delete(p: dict[str, Any]) -> dict[str, Any]:
        delete_key(str(p["backend"]))
        return {}

    return {"chat.send": send, "chat.stop": stop, "conversations.list": list_, "conversations.get": get,
            "conversations.rename": rename, "conversations.delete": delete, "conversations.export": export,
            "settings.get": settings_get, "settings.set": settings_set, "keys.set": keys_set,
            "keys.delete": keys_delete}
