"""PyInstaller support for Moka.

PyInstaller finds this package through the ``pyinstaller40`` entry point that
moka-shell declares (``get_hook_dirs``) and runs ``hook-moka_shell.py`` from here
whenever an app imports ``moka_shell``. The hook needs three things a plain import
analysis misses:

* the UI's static files and the demo server's views (package data, not modules);
* the modules Moka only imports lazily (shells, commands, the demo server);
* the *metadata* of moka-shell and of every plugin distribution installed in the
  build environment. Plugins are found at run time through ``importlib.metadata``
  entry points in the ``moka`` group; without their ``.dist-info`` in the bundle a
  frozen app silently has no plugins.

The functions below do not import PyInstaller, so the test suite can check what a
bundle will carry without building one.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

#: The entry-point group Moka loads plugins from (same as ``moka_shell.plugins``).
PLUGIN_GROUP = "moka"
#: moka-shell's own distribution name.
DISTRIBUTION = "moka-shell"
#: Package data a frozen Moka must carry, as globs relative to ``moka_shell/``.
DATA_GLOBS = ("web/static/**/*", "demo/views/*", "check_profiles/*.json", "py.typed", "docs/*.md")
#: Subpackages left out of bundles: test doubles and this build-time helper.
EXCLUDED_SUBPACKAGES = ("moka_shell.testing", "moka_shell._pyinstaller")

HERE = Path(__file__).resolve().parent


def get_hook_dirs() -> list[str]:
    """Where PyInstaller finds ``hook-moka_shell.py`` (the ``pyinstaller40`` entry point)."""
    return [str(HERE)]


def package_dir() -> Path:
    """The ``moka_shell`` package directory being bundled."""
    return HERE.parent


def data_files() -> list[str]:
    """Every package data file a bundle must carry, relative to ``moka_shell/``, sorted."""
    root = package_dir()
    found: set[str] = set()
    for pattern in DATA_GLOBS:
        for path in root.glob(pattern):
            if path.is_file() and "__pycache__" not in path.parts:
                found.add(path.relative_to(root).as_posix())
    return sorted(found)


def keep_submodule(name: str) -> bool:
    """Whether a ``moka_shell`` submodule goes into a bundle."""
    return not any(name == p or name.startswith(p + ".") for p in EXCLUDED_SUBPACKAGES)


def plugin_distributions() -> dict[str, list[str]]:
    """Installed distributions (other than moka-shell) with ``moka`` entry points.

    Maps each distribution name to the modules its entry points name. Whatever is
    installed in the build environment is what the bundle ships, so the build script
    decides which first-party plugins go in by installing them.
    """
    found: dict[str, list[str]] = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if not name or _normal(name) == _normal(DISTRIBUTION):
            continue
        modules = [ep.module for ep in dist.entry_points if ep.group == PLUGIN_GROUP]
        if modules:
            found.setdefault(name, [])
            found[name] += [m for m in modules if m not in found[name]]
    return dict(sorted(found.items()))


def bundled_distributions() -> dict[str, str]:
    """Every installed distribution a bundle carries: moka-shell's and the bundled plugins' requirements, closed.

    Written into the frozen app as ``moka_shell/bundled-distributions.json``: with it, ``moka plugins
    install`` knows which of a plugin's requirements the app meets already (and at which version),
    without shipping every ``.dist-info``. Requirements whose distribution is not installed (PyQt6 in
    the GTK build venv, a marker for another OS) are not carried.
    """
    from packaging.requirements import Requirement

    found: dict[str, str] = {}
    todo = [DISTRIBUTION, *plugin_distributions()]
    while todo:
        name = todo.pop()
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        key = dist.metadata["Name"] or name
        if key in found:
            continue
        found[key] = dist.version
        for line in dist.requires or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return dict(sorted(found.items()))


def metadata_distributions() -> list[str]:
    """Distributions whose metadata (``.dist-info``) a bundle must carry."""
    return [DISTRIBUTION, *plugin_distributions()]


def plugin_packages() -> list[str]:
    """Top-level packages of the bundled plugins (collected with all their submodules)."""
    tops: list[str] = []
    for modules in plugin_distributions().values():
        for module in modules:
            top = module.split(".", 1)[0]
            if top not in tops:
                tops.append(top)
    return tops


def _normal(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")
