"""What installing a plugin into the folder takes: the wheels to unpack, or the reason it can't be done.

Every requirement of every wheel (markers evaluated for this Python) is met by what the app carries,
by what the folder already holds, by a wheel given on the command line, or by the newest pure wheel
on the index. The first one that fails stops the plan before anything is written.
"""

from __future__ import annotations

import json
import platform
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from moka_shell.errors import PluginInstallError
from moka_shell.plugin_install import index as pkg_index
from moka_shell.plugin_install.wheel import Wheel, normalize, open_wheel

#: Written into a frozen app by its PyInstaller hook: the distributions (name → version) it carries.
BUNDLED_FILE = Path(__file__).resolve().parent.parent / "bundled-distributions.json"


def carried() -> dict[str, str]:
    """The distributions this Moka carries, by normalized name (a frozen app's list, or this environment's)."""
    if getattr(sys, "frozen", False):
        try:
            return {normalize(k): v for k, v in json.loads(BUNDLED_FILE.read_text(encoding="utf-8")).items()}
        except (OSError, ValueError) as exc:
            raise PluginInstallError(f"this Moka app lacks its list of bundled packages ({exc})",
                                     hint="the build is incomplete: report it with `moka --version`") from exc
    return {normalize(d.metadata["Name"] or ""): d.version for d in metadata.distributions()}


@dataclass
class Plan:
    """The wheels to unpack, each with whether it was asked for by name (not only as a dependency)."""

    wheels: dict[str, tuple[Wheel, bool]] = field(default_factory=dict)

    def ordered(self) -> list[tuple[Wheel, bool]]:
        """The wheels in the order they were found."""
        return list(self.wheels.values())


class Planner:
    """Works out a Plan for some requests (wheel files or requirement strings)."""

    def __init__(self, *, carried: dict[str, str], installed: dict[str, str], downloads: Path,
                 index: str | None, upgrade: bool = False) -> None:
        self.carried = carried
        self.installed = installed
        self.downloads = downloads
        self.index = index  # None: no index (only the given wheels)
        self.upgrade = upgrade
        self.local: dict[str, list[Wheel]] = {}
        self.plan = Plan()

    def run(self, requests: list[str]) -> Plan:
        """Plan every request; raise PluginInstallError at the first thing that can't be met."""
        named: list[Requirement] = []
        given: list[Wheel] = []
        for request in requests:
            if request.endswith(".whl"):
                path = Path(request)
                if not path.is_file():
                    raise PluginInstallError(f"no such wheel file: {path}")
                given.append(open_wheel(path))
                continue
            if Path(request).is_dir() or "/" in request or request.startswith("."):
                raise PluginInstallError(
                    f"{request}: the Moka app can't build a package from its source folder",
                    hint=f"build a wheel first (`python -m build --wheel {request}`) and install the .whl")
            try:
                named.append(Requirement(request))
            except InvalidRequirement as exc:
                raise PluginInstallError(f"{request!r} is neither a wheel file nor a package name: {exc}") from None
        for wheel in given:  # every given wheel can meet a requirement; the plugins among them are asked for
            self.local.setdefault(wheel.key, []).append(wheel)
        plugins = [w for w in given if w.moka_entry_points]
        if given and not plugins and not named:
            plugins = given[:1]  # refused below, saying why
        for wheel in plugins:
            self._add(wheel, requested=True)
        for req in named:
            self._require(req, requested=True, parent="the command line")
        for wheel, requested in self.plan.ordered():
            if requested and not wheel.moka_entry_points:
                raise PluginInstallError(f"{wheel.name} {wheel.version} has no entry point in the group 'moka', "
                                         "so it is not a Moka plugin; nothing was installed",
                                         hint="a plugin declares [project.entry-points.moka] (docs/plugins.md)")
        return self.plan

    def _add(self, wheel: Wheel, *, requested: bool) -> None:
        if wheel.key in self.carried and not self.upgrade:
            raise PluginInstallError(f"{wheel.name} is part of this Moka app ({self.carried[wheel.key]}); "
                                     "it can't be installed over it")
        if wheel.requires_python and not SpecifierSet(wheel.requires_python).contains(platform.python_version()):
            raise PluginInstallError(f"{wheel.name} {wheel.version} needs Python {wheel.requires_python}; "
                                     f"this Moka runs Python {platform.python_version()}")
        self.plan.wheels[wheel.key] = (wheel, requested)
        for line in wheel.requires:
            try:
                req = Requirement(line)
            except InvalidRequirement as exc:
                raise PluginInstallError(f"{wheel.name} has an unreadable requirement {line!r}: {exc}") from None
            self._require(req, requested=False, parent=f"{wheel.name} {wheel.version}")

    def _require(self, req: Requirement, *, requested: bool, parent: str) -> None:
        if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in ("", *req.extras)):
            return
        key = normalize(req.name)
        if key in self.plan.wheels:
            wheel = self.plan.wheels[key][0]
            if not req.specifier.contains(Version(wheel.version), prereleases=True):
                raise PluginInstallError(f"{parent} needs {req}, but {wheel.name} {wheel.version} is being installed")
            if requested:
                self.plan.wheels[key] = (wheel, True)
            return
        if key in self.carried:
            have = self.carried[key]
            if requested:
                raise PluginInstallError(f"{req.name} is part of this Moka app ({have}); nothing to install")
            if not req.specifier.contains(Version(have), prereleases=True):
                raise PluginInstallError(f"{parent} needs {req}, and this Moka app carries {req.name} {have}",
                                         hint="a plugin for this Moka must accept the versions it carries "
                                              "(`moka --version`); or install Moka with pipx")
            return
        if key in self.installed and not (requested and self.upgrade):
            if req.specifier.contains(Version(self.installed[key]), prereleases=True):
                return
        self._add(self._find(req, parent), requested=requested)

    def _find(self, req: Requirement, parent: str) -> Wheel:
        local = [w for w in self.local.get(normalize(req.name), [])
                 if req.specifier.contains(Version(w.version), prereleases=True)]
        if local:
            return max(local, key=lambda w: Version(w.version))
        if self.index is None:
            raise PluginInstallError(f"{parent} needs {req}, which is neither in this Moka app nor given "
                                     "as a wheel file", hint="give its wheel too, or leave out --no-index")
        found = pkg_index.best(req.name, req.specifier, self.index)
        return open_wheel(pkg_index.download(found, self.downloads))
