"""Device permissions (camera, microphone, geolocation, clipboard) are the person's to give (S15).

A resource's ``_meta.ui.permissions`` used to go straight onto the view's frames. Now the first
view of a server that declares them asks the person; the answer holds for that server and that
set of permissions until Moka quits. A "no" mounts the view without them, and the view's
problem list says so.
"""

from __future__ import annotations

from moka_shell.core.views.csp import ViewPolicy
from moka_shell.core.views.ports import ConsentAsk

MAX_ANSWERS = 1000  # (server, permission set) answers kept; past that they are asked again


class DevicePermissions:
    """The person's answers about devices, per server and permission set, for one run."""

    def __init__(self, consent: ConsentAsk) -> None:
        self._consent = consent
        self.answers: dict[tuple[str, frozenset[str]], bool] = {}

    async def confirm(self, server: str, policy: ViewPolicy) -> None:
        """Ask once per server and permission set; strip the frames' ``allow`` on a no."""
        if not policy.allow:
            return
        wanted = frozenset(policy.permissions)
        if (server, wanted) not in self.answers:
            if len(self.answers) > MAX_ANSWERS:
                self.answers.clear()
            self.answers[(server, wanted)] = bool(await self._consent("permissions", server,
                                                                      {"permissions": sorted(wanted)}))
        if not self.answers[(server, wanted)]:
            # Not a fault of the declaration: the view mounts without the devices, as any host may decide.
            policy.denied.append("permissions " + ", ".join(sorted(wanted)) + " were not granted by the person")
            policy.allow = ""
            policy.permissions = {}
