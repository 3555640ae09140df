"""The per-user plugin folder of a frozen Moka: one subfolder per installed distribution.

``<data dir>/plugins/<name>/`` holds one unpacked wheel (its packages and its ``.dist-info``), so
installing is one rename and removing is another: a failure at any point leaves either the old
state or the new, never half of one. At start ``kind.activate`` puts each subfolder on ``sys.path``,
where ``importlib.metadata`` finds the plugins' entry points as it does for any installed package.
"""

from __future__ import annotations

import shutil
import uuid
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path

from moka_shell.errors import PluginInstallError
from moka_shell.plugin_install.wheel import Wheel, extract, normalize

TEMP_PREFIXES = (".staging-", ".old-")


@dataclass(frozen=True)
class FolderDist:
    """One distribution in the plugin folder."""

    key: str
    name: str
    version: str
    requested: bool  # named on `moka plugins install` (not only pulled in as a dependency)
    requires: tuple[str, ...]
    path: Path


def distributions(root: Path) -> dict[str, FolderDist]:
    """What the folder holds, by normalized name (subfolders without a readable .dist-info are skipped)."""
    found: dict[str, FolderDist] = {}
    if not root.is_dir():
        return found
    for sub in sorted(root.iterdir()):
        if sub.name.startswith(".") or not sub.is_dir():
            continue
        for info in sub.glob("*.dist-info"):
            try:
                meta = Parser().parsestr((info / "METADATA").read_text(encoding="utf-8"))
            except OSError:
                continue
            name = meta.get("Name") or sub.name
            found[normalize(name)] = FolderDist(normalize(name), name, meta.get("Version") or "?",
                                                (info / "REQUESTED").exists(),
                                                tuple(meta.get_all("Requires-Dist") or []), sub)
            break
    return found


def _clean_leftovers(root: Path) -> None:
    # A process killed mid-install leaves only these: the finished state is always the plain names.
    for leftover in root.glob(".*"):
        if leftover.name.startswith(TEMP_PREFIXES) and leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)


def install(root: Path, wheels: list[tuple[Wheel, bool]]) -> None:
    """Unpack every (wheel, requested) pair, then swap them all in; on any failure change nothing."""
    root.mkdir(parents=True, exist_ok=True)
    _clean_leftovers(root)
    run = uuid.uuid4().hex[:8]
    staging = root / f".staging-{run}"
    staging.mkdir()
    swapped: list[tuple[Path, Path | None]] = []  # (installed path, the old one moved aside)
    try:
        for wheel, requested in wheels:
            target = staging / wheel.key
            target.mkdir()
            extract(wheel, target, requested=requested)
        for wheel, _requested in wheels:
            final = root / wheel.key
            old: Path | None = None
            if final.exists():
                old = root / f".old-{run}-{wheel.key}"
                final.rename(old)
            (staging / wheel.key).rename(final)
            swapped.append((final, old))
    except BaseException as exc:
        for final, old in reversed(swapped):
            shutil.rmtree(final, ignore_errors=True)
            if old is not None:
                old.rename(final)
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, OSError):
            raise PluginInstallError(f"could not write to the plugin folder {root}: {exc}; nothing was installed",
                                     hint="check the folder's permissions and free space") from exc
        raise
    for _final, old in swapped:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(staging, ignore_errors=True)


def _needed(dists: dict[str, FolderDist], keep: set[str]) -> set[str]:
    """``keep`` and everything in the folder their requirements reach."""
    from packaging.requirements import InvalidRequirement, Requirement

    seen: set[str] = set()
    todo = list(keep)
    while todo:
        key = todo.pop()
        if key in seen or key not in dists:
            continue
        seen.add(key)
        for line in dists[key].requires:
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(normalize(req.name))
    return seen


def uninstall(root: Path, key: str) -> list[FolderDist]:
    """Remove ``key`` and the dependencies only it needed; returns what was removed."""
    dists = distributions(root)
    if key not in dists:
        raise PluginInstallError(f"{key} is not installed in the plugin folder {root}",
                                 hint="`moka plugins` lists what is installed")
    remaining = {k for k, d in dists.items() if d.requested and k != key}
    gone = [d for k, d in dists.items() if k == key or (not d.requested and k not in _needed(dists, remaining))]
    run = uuid.uuid4().hex[:8]
    for dist in gone:
        aside = root / f".old-{run}-{dist.key}"
        dist.path.rename(aside)  # one rename: the plugin is gone for the next start at once
        shutil.rmtree(aside, ignore_errors=True)
    return gone
