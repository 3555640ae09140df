"""What a view is told in ``ui/initialize``: host info, capabilities that tell the truth,
and a host context with no null anywhere (the view SDK's validation rejects nulls)."""

from __future__ import annotations

import os
from typing import Any

from moka_shell.version import __version__
from moka_shell.core.views.display import WIRE_MODES

PROTOCOL_VERSION = "2026-01-26"
SUPPORTED_VERSIONS = ("2026-01-26",)
INLINE_MAX_HEIGHT = 1200
INLINE_MIN_HEIGHT = 60
# An inline frame's height before its view sizes itself: enough for an app that sizes itself from its
# own frame to render whole (the reference host starts at 600 px too; finding V1).
INLINE_START_HEIGHT = 600


def host_info() -> dict[str, str]:
    """``hostInfo`` for ``ui/initialize``."""
    return {"name": "moka", "version": __version__}


def host_capabilities(*, sampling: bool, policy: Any, images: bool = True) -> dict[str, Any]:
    """What Moka implements for views; ``policy`` is the view's ViewPolicy.

    ``images``: the model backend takes images, so a view's images reach it (otherwise a view is
    not told it may send them: they would arrive as a line of text).
    """
    content: dict[str, Any] = {"text": {}, "resource": {}, "resourceLink": {}, "structuredContent": {}}
    if images:
        content["image"] = {}
    caps: dict[str, Any] = {
        "openLinks": {},
        "serverTools": {"listChanged": True},
        "serverResources": {"listChanged": True},
        "logging": {},
        "downloadFile": {},
        "message": dict(content),
        "updateModelContext": dict(content),
        "sandbox": {},
    }
    if policy.approved:
        caps["sandbox"]["csp"] = policy.approved
    if policy.permissions:
        caps["sandbox"]["permissions"] = policy.permissions
    if sampling:
        caps["sampling"] = {}
    return caps


def container_dimensions(fixed: bool, viewport: dict[str, Any]) -> dict[str, int]:
    """Fixed modes give the exact box; inline lets the view choose its height up to the max."""
    width = int(viewport.get("width") or 0)
    if fixed:
        height = int(viewport.get("height") or 0)
        dims = {"height": max(height, INLINE_MIN_HEIGHT)}
        if width:
            dims["width"] = width
        return dims
    dims = {"maxHeight": INLINE_MAX_HEIGHT}
    if width:
        dims["maxWidth"] = width
    return dims


def clean(value: Any) -> Any:
    """Drop None values at every depth: a single null kills the view's handshake."""
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [clean(v) for v in value if v is not None]
    return value


def view_styles(theme: dict[str, Any]) -> dict[str, Any]:
    """``hostContext.styles`` from a Theme payload: colours as ``light-dark()``, and the theme's fonts CSS."""
    styles: dict[str, Any] = {"variables": theme.get("viewVariables") or theme["variables"]}
    if theme.get("fonts"):
        styles["css"] = {"fonts": theme["fonts"]}
    return styles


def build_host_context(*, theme: dict[str, Any], display_mode: str, available: list[str], fixed: bool,
                       viewport: dict[str, Any], client: dict[str, Any], tool: dict[str, Any] | None,
                       call_id: str | None, platform: str) -> dict[str, Any]:
    """The whole ``hostContext`` for a view."""
    ctx: dict[str, Any] = {
        "theme": theme["resolved"],
        "styles": view_styles(theme),
        "displayMode": display_mode,
        "availableDisplayModes": [m for m in WIRE_MODES if m in available],
        "containerDimensions": container_dimensions(fixed, viewport),
        "locale": client.get("locale") or _default_locale(),
        "timeZone": client.get("timeZone") or _default_time_zone(),
        "userAgent": f"Moka/{__version__}",
        "platform": platform,
        "deviceCapabilities": {"touch": bool(client.get("touch", False)), "hover": bool(client.get("hover", True))},
        "safeAreaInsets": {"top": 0, "right": 0, "bottom": 0, "left": 0},
    }
    if tool is not None:
        info: dict[str, Any] = {"tool": tool}
        if call_id:
            info["id"] = call_id
        ctx["toolInfo"] = info
    return clean(ctx)


def with_extras(ctx: dict[str, Any], extras: list[Any]) -> dict[str, Any]:
    """``ctx`` plus the keys plugins added (``moka_host_context``): never a core key, never a null."""
    for extra in extras:
        if isinstance(extra, dict):
            ctx.update({k: v for k, v in extra.items() if v is not None and k not in ctx})
    return ctx


def _default_locale() -> str:
    lang = os.environ.get("LC_ALL") or os.environ.get("LANG") or "en_US"
    lang = lang.split(".")[0].replace("_", "-")
    return lang if lang not in ("C", "POSIX", "") else "en-US"


def _default_time_zone() -> str:
    tz = os.environ.get("TZ")
    if tz and "/" in tz:
        return tz.lstrip(":")
    try:
        link = os.readlink("/etc/localtime")
        if "zoneinfo/" in link:
            return link.split("zoneinfo/", 1)[1]
    except OSError:
        pass
    return "UTC"
