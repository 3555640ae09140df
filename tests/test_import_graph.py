"""The import graph of src/moka_shell: no circle runs through the core, and the core never imports the package face.

An edge is an import a module makes when it is loaded or type-checked: statements at module level,
under ``if TYPE_CHECKING:`` included (a type names a dependency as much as a call does); imports
inside functions are left out (they are how a module defers a heavy or optional dependency).
"""

from __future__ import annotations

import ast
from pathlib import Path

import moka_shell

SRC = Path(moka_shell.__file__).parent
PACKAGE = SRC.parent


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(SRC.rglob("*.py")) if "_pyinstaller" not in p.parts}


def module_level_imports(path: Path) -> set[str]:
    """The moka_shell modules ``path`` imports outside its functions (``from pkg import mod`` names ``mod``)."""
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name in MODULES)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    if f"{node.module}.{alias.name}" in MODULES:
                        found.add(f"{node.module}.{alias.name}")
                    elif node.module in MODULES:
                        found.add(node.module)
            for block in ("body", "orelse", "handlers", "finalbody"):
                visit(getattr(node, block, []))

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return found


GRAPH = {name: module_level_imports(path) for name, path in MODULES.items()}


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next((e for e in edges if e not in index or e in on_stack), None)
            if nxt is not None:
                if nxt in index:
                    low[node] = min(low[node], index[nxt])
                else:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def room(module: str) -> str:
    """``core.mcp``, ``core.views``, ``core.chat``, ``core`` (its top-level modules), or ``outside``."""
    parts = module.split(".")
    if parts[1:2] != ["core"]:
        return "outside"
    return ".".join(parts[1:3]) if len(parts) > 3 else "core"


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The finder itself: a three-module circle and a self-contained pair, beside an acyclic tail."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"f"}, "f": {"e"}}
    assert sorted(map(sorted, cycles(graph))) == [["a", "b", "c"], ["e", "f"]]


def test_no_import_cycle_runs_through_the_core() -> None:
    """No circle joins a core module to the rest of the package, or two of the core's subsystems.

    The big circle of round 3 (core → the package face / plugin host → hookspecs → MokaApp) closed
    through placement accidents: ``Registered`` in plugins.py, ``__version__`` on the package face,
    ``MokaApp`` named by hookspecs, ``ChatEngine`` in sampling.py. A circle inside one subsystem
    (core/views' host and its helpers) is that subsystem's own business.
    """
    crossing = [sorted(c) for c in cycles(GRAPH) if any(room(m) != "outside" for m in c)
                and len({room(m) for m in c}) > 1]
    assert crossing == []


def test_the_core_does_not_import_the_package_face() -> None:
    """``moka_shell/__init__.py`` is the plugin author's API; the core takes what it needs from the modules."""
    offenders = sorted(name for name, imports in GRAPH.items() if room(name) != "outside" and "moka_shell" in imports)
    assert offenders == []


def test_the_core_takes_registered_without_the_plugin_host() -> None:
    """The core needs the plugin host only where it builds or asks it (the app, consent), not for ``Registered``."""
    users = sorted(name for name, imports in GRAPH.items() if room(name) != "outside" and "moka_shell.plugins" in imports)
    assert users == ["moka_shell.core.app", "moka_shell.core.consent"]
