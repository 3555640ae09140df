"""Re-rendering a view after its server restarted with new code (``moka dev``'s live reload).

The view stays the same view: its card, call, input, result, storage and Inspector history are
kept, and a new frame loads the resource read again from the restarted server and is fed the
same input and result. What goes wrong is said, never lost: a resource that cannot be read (or a
tool no longer listed) leaves the last good frame showing and is answered as the error, so the
caller can say it on the card; the next good edit reloads the view again.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from moka_shell.errors import BridgeError, MokaError

if TYPE_CHECKING:
    from moka_shell.core.views.host import ViewHost
    from moka_shell.core.views.view import View

RELOAD_TEARDOWN_TIMEOUT = 1.0  # the old frame may save on ui/resource-teardown; a reload waits no longer


def reloadable(host: ViewHost, server: str) -> list[View]:
    """The views of ``server`` a reload re-renders: live, parked, and those a broken edit failed."""
    return [v for v in list(host.views.values()) if v.server == server and v.state in ("loading", "ready", "failed",
                                                                                         "parked")]


async def tear_down(host: ViewHost, view: View) -> None:
    """Tell the old frame it goes (``ui/resource-teardown``), briefly: an app that saves then keeps its state."""
    if not (view.live and view.initialized):
        return
    try:
        await host.request(view, "ui/resource-teardown", {"reason": "the app's server was changed and restarted"},
                           RELOAD_TEARDOWN_TIMEOUT)
    except BridgeError:
        pass  # most views answer -32601 or nothing: go ahead


async def reload_view(host: ViewHost, view: View) -> str | None:
    """Load ``view`` again from its (restarted, ready) server; None when it is re-rendering, else why not."""
    try:
        conn = host.servers.ready(view.server)
        entry = conn.tools.get(view.tool.name)
        if entry is None or not entry.resource_uri:
            return (f"the server no longer lists the tool {view.tool.name!r} with a UI resource; "
                    "the view shows the last version that had one")
        resource = await conn.ui_resource(entry.resource_uri)
    except MokaError as exc:
        return exc.message
    if resource.error:
        return f"{resource.error}; the view shows the last version that could be read"
    allow_eval = bool((conn.config.model_extra or {}).get("allowUnsafeEval", False))
    policy = await host.policy(view.server, resource.ui_meta, view.id, allow_eval=allow_eval)
    was_parked = view.state == "parked"
    host.delivery.drop_inflight(view)
    view.reload(resource, policy, entry)
    host.inspector.record("view", {"event": "reloaded", "uri": resource.uri, "csp": policy.header,
                                   "parked": was_parked}, server=view.server, view=view.id, method="view/reloaded")
    if not was_parked:
        host.restart_frame(view)
    return None


async def reload_views(host: ViewHost, views: list[View]) -> dict[str, str]:
    """Reload each of ``views``; the errors by view id (an empty dict: all re-rendering)."""
    errors = await asyncio.gather(*(reload_view(host, v) for v in views))
    return {v.id: e for v, e in zip(views, errors) if e is not None}
