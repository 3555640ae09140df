"""Every third-party package Moka's code imports is one it declares (pyproject.toml), not one that
happens to arrive through another package's requirements (which may drop it in any release)."""

from __future__ import annotations

import ast
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "moka_shell"
# Imported only where the person chose them, each with a message naming what to install.
OPTIONAL = {"webview", "PyQt6", "qtpy", "gi", "playwright", "PIL", "objc", "AppKit", "Foundation",
            "PyInstaller"}  # the freezing hook's own import, run only by PyInstaller
# Packages one project ships as a part of another, pinned to it exactly: declaring both could only conflict.
PART_OF = {"pydantic_core": "pydantic"}


def imported_top_levels() -> set[str]:
    names: set[str] = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n != "moka_shell"}


def test_every_third_party_import_is_a_declared_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {canonicalize_name(Requirement(r).name) for r in project["dependencies"]}
    declared |= {canonicalize_name(Requirement(r).name) for r in project["optional-dependencies"]["check"]}
    owners = packages_distributions()
    undeclared = {}
    for name in imported_top_levels() - OPTIONAL:
        dists = {canonicalize_name(d) for d in owners.get(name, [])} | {PART_OF.get(name, name)}
        if not dists & declared:
            undeclared[name] = sorted(dists) or ["(not installed)"]
    assert not undeclared, f"imported but not in pyproject.toml's dependencies: {undeclared}"
