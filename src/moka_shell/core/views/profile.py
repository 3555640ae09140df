"""Host profiles: Moka advertising itself the way another MCP Apps host does (``moka check --profile``).

A profile changes only what Moka advertises to a view and which of the view's requests it
answers: ``hostCapabilities``, display modes, container limits, platform, which ``hostContext``
fields and style variables are sent. It never changes Moka's security rules: the CSP, the
sandbox, tool visibility and consent apply exactly as without a profile. It can also only take
away: a capability Moka does not implement is never advertised, whatever the profile says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The view request each capability governs; without the capability the host answers -32601,
# as a host that does not implement the method would.
CAPABILITY_OF_METHOD: dict[str, str] = {
    "ui/message": "message",
    "ui/update-model-context": "updateModelContext",
    "ui/open-link": "openLinks",
    "ui/download-file": "downloadFile",
    "tools/call": "serverTools",
    "resources/read": "serverResources",
    "resources/list": "serverResources",
    "resources/templates/list": "serverResources",
    "sampling/createMessage": "sampling",
}


@dataclass(frozen=True)
class HostProfile:
    """How one host advertises itself to views; ``None`` fields mean "as Moka does"."""

    name: str
    title: str
    capabilities: dict[str, Any] | None = None  # hostCapabilities keys (with modalities) the host advertises
    display_modes: tuple[str, ...] | None = None  # wire modes the host offers
    container: dict[str, int] | None = None  # inline containerDimensions, e.g. {"maxHeight": 800, "width": 649}
    platform: str | None = None  # "web" | "desktop" | "mobile"
    context_fields: tuple[str, ...] | None = None  # hostContext keys the host sends
    style_variables: tuple[str, ...] | None = None  # the subset of standard variables it sends

    def advertise(self, caps: dict[str, Any]) -> dict[str, Any]:
        """Moka's capabilities cut down to what this host advertises."""
        if self.capabilities is None:
            return caps
        out: dict[str, Any] = {}
        for key, wanted in self.capabilities.items():
            if key not in caps:
                continue  # never claim what Moka does not do
            have = caps[key]
            if isinstance(wanted, dict) and isinstance(have, dict) and wanted:
                out[key] = {k: v for k, v in have.items() if k in wanted}
            else:
                out[key] = have
        return out

    def refusal(self, method: str) -> str | None:
        """Why this host would not answer ``method`` (None when it would)."""
        cap = CAPABILITY_OF_METHOD.get(method)
        if cap is None or self.capabilities is None or cap in self.capabilities:
            return None
        return (f"{method} is not available in the {self.title} profile: that host does not advertise "
                f"hostCapabilities.{cap}")

    def wire_modes(self, available: list[str]) -> list[str]:
        """The display modes this host offers, of those Moka has."""
        if self.display_modes is None:
            return available
        return [m for m in available if m in self.display_modes or m == "inline"]

    def context(self, ctx: dict[str, Any]) -> dict[str, Any]:
        """A hostContext as this host would send it."""
        out = dict(ctx)
        if "availableDisplayModes" in out:
            out["availableDisplayModes"] = self.wire_modes(list(out["availableDisplayModes"]))
        dims = out.get("containerDimensions")
        if self.container is not None and isinstance(dims, dict) and "height" not in dims:
            out["containerDimensions"] = dict(self.container)  # inline: the host's limits, not Moka's
        if self.platform is not None:
            out["platform"] = self.platform
        out = self.styles(out)
        if self.context_fields is not None:
            out = {k: v for k, v in out.items() if k in self.context_fields}
        return out

    def styles(self, params: dict[str, Any]) -> dict[str, Any]:
        """Only the style variables this host sends (``styles`` dropped when it sends none)."""
        styles = params.get("styles")
        if self.style_variables is None or not isinstance(styles, dict):
            return params
        variables = {k: v for k, v in (styles.get("variables") or {}).items() if k in self.style_variables}
        out = dict(params)
        if variables:
            out["styles"] = {**styles, "variables": variables}
        else:
            out.pop("styles", None)
        return out
