"""The host profiles ``moka check --profile`` renders with: data files in ``moka_shell/check_profiles``.

Each file names its sources. ``"moka"`` (or ``"all"`` for the lists) in a field means "as Moka
does"; the file for ``moka`` itself says so for every field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from moka_shell.core.views.profile import HostProfile
from moka_shell.errors import UsageError

DEFAULT = "moka"
ORDER = ("moka", "claude", "chatgpt", "vscode", "cursor", "goose", "m365-copilot", "minimal")


@dataclass(frozen=True)
class ProfileSpec:
    """A profile as shipped: what Moka applies, and what the report says about it."""

    name: str
    title: str
    summary: str
    sources: tuple[str, ...]
    profile: HostProfile | None  # None: Moka as it is


def _files() -> dict[str, Any]:
    folder = resources.files("moka_shell") / "check_profiles"
    return {p.name[:-5]: p for p in folder.iterdir() if p.name.endswith(".json")}


def profile_names() -> list[str]:
    """Every shipped profile, Moka first."""
    names = set(_files())
    return [n for n in ORDER if n in names] + sorted(names - set(ORDER))


def _opt(value: Any, kind: type) -> Any:
    if value in ("moka", "all") or value is None:
        return None
    if not isinstance(value, kind):
        raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
    return tuple(value) if isinstance(value, list) else value


def load_profile(name: str) -> ProfileSpec:
    """One profile by name; an unknown name is a usage error listing the known ones."""
    files = _files()
    if name not in files:
        raise UsageError(f"no host profile named {name!r}",
                         hint=f"known profiles: {', '.join(profile_names())}, or all")
    data = json.loads(files[name].read_text(encoding="utf-8"))
    try:
        profile = HostProfile(
            name=name, title=str(data.get("title") or name),
            capabilities=_opt(data.get("hostCapabilities"), dict),
            display_modes=_opt(data.get("displayModes"), list),
            container=_opt(data.get("containerDimensions"), dict),
            platform=_opt(data.get("platform"), str),
            context_fields=_opt(data.get("hostContextFields"), list),
            style_variables=_opt(data.get("styleVariables"), list))
    except TypeError as exc:
        raise UsageError(f"host profile {name!r} is malformed: {exc}") from exc
    plain = profile == HostProfile(name=name, title=profile.title)
    return ProfileSpec(name=name, title=profile.title, summary=str(data.get("summary") or ""),
                       sources=tuple(str(s) for s in data.get("sources") or ()),
                       profile=None if plain else profile)


def resolve(names: list[str] | None) -> list[ProfileSpec]:
    """``--profile`` values (repeatable, ``all``, comma lists) as profiles, in order, once each."""
    wanted: list[str] = []
    for value in names or [DEFAULT]:
        for part in value.split(","):
            part = part.strip()
            if part == "all":
                wanted.extend(profile_names())
            elif part:
                wanted.append(part)
    return [load_profile(n) for n in dict.fromkeys(wanted)]
