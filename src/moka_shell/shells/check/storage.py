"""What ``moka check`` says about a view's storage, and ``--no-storage``.

By default a view gets Moka's host-backed ``localStorage`` and ``sessionStorage``
(core/views/storage.py), and the report says which of them it used, because hosts that give
sandboxed views no storage lose that state. With ``--no-storage`` the view sees what such an
opaque-origin host gives (reading either object throws ``SecurityError``) and the report warns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from moka_shell.core.app import MokaApp
    from moka_shell.core.views.view import View

NAMES = {"local": "localStorage", "session": "sessionStorage"}


def prepare(app: MokaApp, no_storage: bool) -> None:
    """Before any view is rendered: give views Moka's storage, or none (``--no-storage``)."""
    app.view_host.provide_storage(not no_storage)


def summary(app: MokaApp, view: View, no_storage: bool) -> dict[str, Any]:
    """``{provided, used: [...], denied: [...]}`` for the report."""
    channel = app.view_host.storage
    return {"provided": not no_storage,
            "used": [NAMES[a] for a in sorted(channel.touched.get(view.id, ()))],
            "denied": [NAMES[a] for a in sorted(channel.denied.get(view.id, ()))]}


def warning(info: dict[str, Any]) -> str | None:
    """The warning ``--no-storage`` adds when the view reached for storage."""
    if not info["denied"]:
        return None
    return (f"the view reached for {' and '.join(info['denied'])}, which threw SecurityError as in an opaque-origin "
            "host without Moka's storage: such hosts lose whatever state the view keeps there")


def line(info: dict[str, Any]) -> str | None:
    """The report line for a view that used Moka's storage."""
    if not info["used"]:
        return None
    return (f"storage: used {' and '.join(info['used'])} (Moka keeps localStorage per server and sessionStorage per "
            "view; hosts without storage for sandboxed views lose it; --no-storage shows what they give)")


def report(app: MokaApp, view: View, vr: Any, no_storage: bool) -> None:
    """Put the storage summary (and, with ``--no-storage``, the warning) on the view's report."""
    info = summary(app, view, no_storage)
    vr.storage = info
    warned = warning(info)
    if warned and warned not in vr.warnings:
        vr.warnings.append(warned)
