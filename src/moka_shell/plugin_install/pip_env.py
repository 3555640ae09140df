"""Installing plugins with pip into Moka's own environment (a venv or pipx install), as ``llm install`` does."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from moka_shell.errors import PluginInstallError
from moka_shell.plugin_install.wheel import normalize

ENTRY_POINT_GROUP = "moka"


def requested_names(requests: list[str]) -> list[str]:
    """The distribution names a list of install requests stands for (wheel, folder, or requirement)."""
    names: list[str] = []
    for request in requests:
        path = Path(request)
        if request.endswith(".whl"):
            try:
                names.append(str(parse_wheel_filename(path.name)[0]))
            except InvalidWheelFilename:
                pass
        elif (path / "pyproject.toml").is_file():
            try:
                names.append(tomllib.loads((path / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"])
            except (OSError, KeyError, tomllib.TOMLDecodeError):
                pass
        else:
            try:
                names.append(Requirement(request).name)
            except InvalidRequirement:
                pass
    return names


def plugin_distribution(name: str) -> metadata.Distribution | None:
    """The installed distribution with ``moka`` entry points that ``name`` means (its name, or a plugin's)."""
    for dist in metadata.distributions():
        eps = [ep for ep in dist.entry_points if ep.group == ENTRY_POINT_GROUP]
        if eps and (normalize(dist.metadata["Name"] or "") == normalize(name) or any(ep.name == name for ep in eps)):
            return dist
    return None


def _pip(args: list[str]) -> None:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    print(f"moka plugins: {' '.join(cmd[2:])}", file=sys.stderr)
    done = subprocess.run(cmd, check=False)
    if done.returncode != 0:
        raise PluginInstallError(f"pip {args[0]} failed (exit code {done.returncode}); see its output above")


def install_args(requests: list[str], *, editable: bool, upgrade: bool, index_url: str | None) -> list[str]:
    """pip's arguments for ``moka plugins install``: what the person asked for can never be read as pip's options.

    A request is the value of ``-e`` or comes after ``--``, and the index is ``--index-url=URL``, so a
    request ``--target=/somewhere`` (``moka plugins install -- --target=…``) is a requirement pip refuses,
    not an option it follows.
    """
    args = ["install"] + (["--upgrade"] if upgrade else []) + ([f"--index-url={index_url}"] if index_url else [])
    if editable:
        return args + [part for request in requests for part in ("-e", request)]
    return args + ["--", *requests]


def pip_install(requests: list[str], *, editable: bool, upgrade: bool, index_url: str | None) -> list[str]:
    """``pip install`` into this environment; returns the requested names that are not Moka plugins."""
    _pip(install_args(requests, editable=editable, upgrade=upgrade, index_url=index_url))
    return [n for n in requested_names(requests) if plugin_distribution(n) is None]


def pip_uninstall(name: str) -> str:
    """``pip uninstall`` one plugin's distribution; refuses anything that isn't a plugin."""
    dist = plugin_distribution(name)
    if dist is None or normalize(dist.metadata["Name"] or "") == "moka-shell":
        raise PluginInstallError(f"no installed plugin is named {name!r}", hint="`moka plugins` lists them")
    dist_name = dist.metadata["Name"] or name
    _pip(["uninstall", "--yes", "--", dist_name])
    return dist_name
