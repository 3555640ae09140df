"""Device permissions (camera, microphone, geolocation, clipboard) are the person's to give (S15).

A resource's ``_meta.ui.permissions`` used to go straight onto the view's frames. Now the first
view of a server that declares them asks the person; the answer holds for that server and that
set of permissions until Moka quits. A "no" mounts the view without them, and the view's
problem list says so.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from moka_shell.core.views.csp import ViewPolicy

if TYPE_CHECKING:
    from moka_shell.core.views.host import ViewHost

# Per ViewHost (one per run): (server, permissions) -> the person's answer.
_ANSWERS: weakref.WeakKeyDictionary[ViewHost, dict[tuple[str, frozenset[str]], bool]] = weakref.WeakKeyDictionary()


async def confirm_permissions(host: ViewHost, server: str, policy: ViewPolicy) -> None:
    """Ask once per server and permission set; strip the frames' ``allow`` on a no."""
    if not policy.allow:
        return
    wanted = frozenset(policy.permissions)
    answers = _ANSWERS.setdefault(host, {})
    if (server, wanted) not in answers:
        if len(answers) > 1000:
            answers.clear()
        answers[(server, wanted)] = bool(await host.consent("permissions", server,
                                                            {"permissions": sorted(wanted)}))
    if not answers[(server, wanted)]:
        policy.rejected.append("permissions " + ", ".join(sorted(wanted)) + " were not granted by the person")
        policy.allow = ""
        policy.permissions = {}
