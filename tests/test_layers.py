"""The architecture, checked: the core knows nothing of its front ends, and nobody reaches into MokaApp."""

from __future__ import annotations

import ast
from pathlib import Path

import moka_shell

SRC = Path(moka_shell.__file__).parent
FRONT_ENDS = ("moka_shell.web", "moka_shell.shells", "moka_shell.cli", "moka_shell.bridge", "webview")


def modules(under: Path) -> list[Path]:
    return sorted(p for p in under.rglob("*.py") if "_pyinstaller" not in p.parts)


def imported_names(path: Path) -> set[str]:
    """Every module a file imports, at module level, in functions and under TYPE_CHECKING alike."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def test_core_imports_no_front_end() -> None:
    """No module of core/ imports the web layer, a shell, the CLI, the bridge or webview."""
    offenders = []
    for path in modules(SRC / "core"):
        for name in imported_names(path):
            if any(name == f or name.startswith(f + ".") for f in FRONT_ENDS):
                offenders.append(f"{path.relative_to(SRC)} imports {name}")
    assert offenders == []


def _is_app(node: ast.expr) -> bool:
    # `app`, `self.app`, `core.app`, `moka.app` ...: the names a MokaApp goes by outside the core.
    return (isinstance(node, ast.Name) and node.id == "app") or (isinstance(node, ast.Attribute) and node.attr == "app")


def test_nothing_outside_the_core_assigns_attributes_on_the_app() -> None:
    """Shells and the web layer pass values in (Endpoints, ShellActions); they never set fields of MokaApp."""
    offenders = []
    for path in modules(SRC):
        if (SRC / "core") in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for t in targets:
                for el in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    if isinstance(el, ast.Attribute) and _is_app(el.value):
                        offenders.append(f"{path.relative_to(SRC)}:{el.lineno} assigns app.{el.attr}")
    assert offenders == []


def module_files(package: Path, root: Path = SRC.parent) -> dict[str, Path]:
    """Dotted module name → file, for every module under ``package`` (``root`` holds the top package)."""
    out = {}
    for path in modules(package):
        parts = path.relative_to(root).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def import_cycles(files: dict[str, Path]) -> list[list[str]]:
    """Import circles among ``files`` (every import counts, TYPE_CHECKING ones too: a circle drawn
    only for the type checker is still two modules that each need the other)."""
    graph = {name: sorted(n for n in imported_names(path) if n in files and n != name)
             for name, path in files.items()}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for nxt in graph[name]:
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)
    return cycles


def test_no_import_circle_in_the_views_or_the_shells() -> None:
    """core/views and shells/ import one way: no module needs one that needs it back."""
    assert import_cycles(module_files(SRC / "core" / "views")) == []
    assert import_cycles(module_files(SRC / "shells")) == []


def test_the_circle_finder_finds_a_circle(tmp_path: Path) -> None:
    """The check above can fail: two modules that import each other (one only for the type checker) are named."""
    views = tmp_path / "moka_shell" / "core" / "views"
    views.mkdir(parents=True)
    (views / "a.py").write_text("from moka_shell.core.views.b import B\n", encoding="utf-8")
    (views / "b.py").write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                                "    from moka_shell.core.views.a import A\n", encoding="utf-8")
    (views / "c.py").write_text("from moka_shell.core.views import a\n", encoding="utf-8")
    assert import_cycles(module_files(views, tmp_path)) == [
        ["moka_shell.core.views.a", "moka_shell.core.views.b", "moka_shell.core.views.a"]]


def test_the_app_holds_no_collaborator_typed_any() -> None:
    """Every attribute MokaApp sets in __init__ has a real type: no `Any` where a type exists."""
    tree = ast.parse((SRC / "core" / "app.py").read_text(encoding="utf-8"))
    init = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    untyped = [ast.unparse(n.target) for n in ast.walk(init) if isinstance(n, ast.AnnAssign)
               and "Any" in ast.unparse(n.annotation).replace("dict[str, Any]", "")]
    assert untyped == []
    assert all("Any" not in ast.unparse(a.annotation) for a in init.args.kwonlyargs if a.annotation is not None)


def test_modules_stay_small() -> None:
    """No module over 400 lines (the review's bound; most are 80-300)."""
    big = [f"{p.relative_to(SRC)}: {n}" for p in modules(SRC)
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400]
    assert big == []
