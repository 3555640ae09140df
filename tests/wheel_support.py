"""The wheel and sdist, built once per test run from a clean copy of the checkout, and venvs that use them.

``built_dist()`` builds under a lock in a folder every xdist worker of the run shares, so the wheel
tests and the packaging builds (``packaging/build.sh`` with ``MOKA_WHEEL``) install the same file.
``user_venv()`` makes a venv outside the checkout, as a person's ``python -m venv`` would, whose
third-party packages are this test venv's own — linked, and only the distributions the wheel's
``Requires-Dist`` reach — so the tests run offline, in seconds, and a dependency Moka uses but does
not declare still fails there.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from email.parser import Parser
from importlib import metadata
from pathlib import Path
from zipfile import ZipFile

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def run_folder(factory: pytest.TempPathFactory) -> Path:
    """A folder shared by every worker of this run (the xdist workers' common base temp)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def clean_copy(dest: Path) -> Path:
    """The checkout's tracked files (as they are in the working tree) copied to ``dest``: no venv, no builds."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


PLUGIN_WHEELS = ("moka-anthropic", "moka-parrot")  # the bundled plugin, and the tutorial's for install tests


def built_dist(factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``{"wheel", "sdist", "moka-anthropic", "moka-parrot"}``: files built by ``python -m build`` once per run."""
    shared = run_folder(factory) / "moka-dist"
    shared.mkdir(exist_ok=True)
    with (shared / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        out = shared / "dist"
        if not list(out.glob("*.whl")):
            src = clean_copy(shared / "src")
            # --no-isolation: the pinned setuptools of the build-system table is in the dev extra,
            # so the build needs no network (the release workflow builds isolated).
            for project, what in [(src, []), *((src / "plugins" / p, ["--wheel"]) for p in PLUGIN_WHEELS)]:
                done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", *what, "--outdir",
                                       str(out if project == src else out / "plugins"), str(project)],
                                      capture_output=True, text=True, timeout=600)
                assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
            shutil.rmtree(src)
    (wheel,) = out.glob("moka_shell-*.whl")
    (sdist,) = out.glob("moka_shell-*.tar.gz")
    found = {"wheel": wheel, "sdist": sdist}
    for plugin in PLUGIN_WHEELS:
        (found[plugin],) = (out / "plugins").glob(plugin.replace("-", "_") + "-*.whl")
    return found


def wheel_requirements(wheel: Path) -> list[str]:
    """The Requires-Dist lines of a wheel's METADATA."""
    with ZipFile(wheel) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        return list(Parser().parsestr(zf.read(meta).decode()).get_all("Requires-Dist") or [])


def _closure(requirements: list[str]) -> set[str]:
    todo, seen = [Requirement(r) for r in requirements], set()
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        dist = metadata.distribution(req.name)
        name = dist.metadata["Name"]
        if name in seen:
            continue
        seen.add(name)
        todo += [Requirement(r) for r in dist.requires or []]
    return seen


def dependency_overlay(dest: Path, requirements: list[str]) -> Path:
    """Links to exactly the installed distributions ``requirements`` reach, in one folder for a .pth."""
    dest.mkdir(parents=True)
    site = Path(sysconfig.get_paths()["purelib"])
    for name in sorted(_closure(requirements)):
        dist = metadata.distribution(name)
        for file in dist.files or []:
            top = Path(file).parts[0]
            if top == ".." or top.endswith(".pth") or (dest / top).exists():
                continue
            target = Path(str(dist.locate_file(top)))
            if target.exists() and target.resolve().is_relative_to(site.resolve()):
                (dest / top).symlink_to(target)
    return dest


def user_venv(where: Path, wheel: Path, *, more: list[str] = ()) -> Path:  # type: ignore[assignment]
    """A venv at ``where`` with the wheel installed (offline) and its dependencies from ``dependency_overlay``.

    ``more``: other distributions to make available (``pytest``, to run a plugin's own tests).
    """
    venv.EnvBuilder(with_pip=True).create(where)
    py = where / "bin" / "python"
    if "setuptools" in more:  # ensurepip's old setuptools would shadow the pinned one (it can't build wheels)
        subprocess.run([str(py), "-m", "pip", "uninstall", "-y", "-q", "setuptools"], check=True, capture_output=True)
    overlay = dependency_overlay(where / "deps", [*wheel_requirements(wheel), *more])
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "moka-test-deps.pth").write_text(f"{overlay}\n", encoding="utf-8")
    done = subprocess.run([str(py), "-m", "pip", "install", "--no-index", "--disable-pip-version-check", str(wheel)],
                          capture_output=True, text=True, timeout=300, env=venv_env(where))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return where


def venv_env(where: Path, **extra: str) -> dict[str, str]:
    """The environment a person's shell would have with the venv's bin first, and none of this checkout's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PIP_"))}
    env["PATH"] = f"{where / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(where)
    env.update(extra)
    return env
