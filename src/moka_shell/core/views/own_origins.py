"""A view's policy, vetted: not Moka's own origins, not every port of this machine (finding S15).

The CSP sanitizer keeps any well-formed origin, so a resource could declare Moka's host or
sandbox origin (and reach Moka's API, held back only by the token) or ``http://127.0.0.1:*``
(Moka's ports and every local service). These are dropped before the policy is built, and the
view's problems say so; a specific local port (a dev server) is still allowed.
"""

from __future__ import annotations

import re
from typing import Any

from moka_shell.core.shell import Endpoints
from moka_shell.core.views.csp import ViewPolicy, build_policy
from moka_shell.core.views.permissions import DevicePermissions
from moka_shell.core.views.reports import report_uri

_CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
_LOOPBACK_ANY_PORT = re.compile(r"^(https?|wss?)://(127\.0\.0\.1|localhost|\[::1\])(:\*)?/?$", re.I)
_ORIGIN = re.compile(r"^(?:https?|wss?)://([^/]+)", re.I)


def _authority(value: str) -> str:
    match = _ORIGIN.match(value.strip())
    return match.group(1).lower() if match else ""


def without_own_origins(ui_meta: dict[str, Any] | None, endpoints: Endpoints,
                        refused: list[str]) -> dict[str, Any] | None:
    """``ui_meta`` with Moka's origins and any-port loopback sources taken out of its CSP lists."""
    csp = (ui_meta or {}).get("csp")
    if not isinstance(csp, dict):
        return ui_meta
    own = set()
    for origin in (endpoints.host_origin, endpoints.sandbox_origin):
        port = origin.rsplit(":", 1)[-1] if origin else ""
        if port.isdigit():
            own |= {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
    cleaned: dict[str, Any] = dict(csp)
    for key in _CSP_KEYS:
        values = csp.get(key)
        if not isinstance(values, list):
            continue
        kept = []
        for value in values:
            if isinstance(value, str) and _authority(value) in own:
                refused.append(f"csp.{key}: {value!r} is Moka's own origin; ignored")
            elif isinstance(value, str) and _LOOPBACK_ANY_PORT.match(value.strip()):
                refused.append(f"csp.{key}: {value!r} would allow every port of this machine, Moka's "
                               "included; name the port (like http://127.0.0.1:5173); ignored")
            else:
                kept.append(value)
        cleaned[key] = kept
    return {**(ui_meta or {}), "csp": cleaned}


async def view_policy(endpoints: Endpoints, permissions: DevicePermissions, server: str,
                      ui_meta: dict[str, Any] | None, view_id: str, allow_eval: bool) -> ViewPolicy:
    """A new view's policy: its declarations vetted against Moka's ``endpoints``, its report URL keyed,
    its devices asked for (``permissions``)."""
    refused: list[str] = []
    policy = build_policy(without_own_origins(ui_meta, endpoints, refused), report_uri=report_uri(view_id),
                          allow_eval=allow_eval)
    policy.rejected[:0] = refused
    await permissions.confirm(server, policy)  # the person grants device access, not the declaration
    return policy
