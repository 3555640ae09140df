"""The architecture, checked: the core knows nothing of its front ends, and nothing outside it writes into it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

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


# A container's own mutators: called on a core object's data (`app.view_host.client.update(…)`), they
# write into it as surely as an assignment does.
MUTATORS = {"append", "extend", "insert", "remove", "pop", "popitem", "clear", "update", "setdefault", "add",
            "discard", "sort", "reverse", "__setitem__", "__delitem__"}


class CoreWrites(ast.NodeVisitor):
    """Writes into core objects in one module outside the core, at any depth.

    A core object is the app (`app`, `self.app`, `core.app`), anything reached from it through
    attributes, items or calls (`app.view_host.profile`, `app.servers.get(name).tools`), a name or
    `self.x` bound to one (`host = app.view_host`), and a parameter or variable annotated with a class
    from `moka_shell.core`. A write is an assignment, augmented assignment or `del` of an attribute or
    item of one, `setattr`/`delattr` on one, or a container's mutator called on an object two or more
    steps below the app (the app's own parts are subsystems, whose methods are their API; below them
    is their data). The config model (`moka_shell/config.py`) is not a core object: the editing
    surfaces change it through its validation, so writes inside `….config` are not counted.
    """

    def __init__(self, where: str, core_types: set[str]) -> None:
        self.where = where
        self.core_types = core_types
        self.found: list[str] = []
        self._names: list[dict[str, list[str]]] = [{}]  # per function: alias -> path below the app
        self._selves: list[dict[str, list[str]]] = [{}]  # per class: `self.x` -> path below the app

    def path(self, node: ast.expr) -> list[str] | None:
        """The steps from the app to ``node`` (None when it is not a core object)."""
        steps: list[str] = []
        while True:
            if _is_app(node):
                return list(reversed(steps))
            if isinstance(node, ast.Name) and node.id in self._names[-1]:
                return self._names[-1][node.id] + list(reversed(steps))
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
                    and node.attr in self._selves[-1]:
                return self._selves[-1][node.attr] + list(reversed(steps))
            if isinstance(node, ast.Attribute):
                steps.append(node.attr)
                node = node.value
            elif isinstance(node, ast.Subscript):
                steps.append("[]")
                node = node.value
            elif isinstance(node, ast.Call):
                steps.append("()")
                node = node.func
            elif isinstance(node, ast.Await):
                node = node.value
            else:
                return None

    def _report(self, node: ast.AST, what: str, owner: list[str]) -> None:
        if "config" not in owner:
            self.found.append(f"{self.where}:{getattr(node, 'lineno', 0)} {what}")

    def _bind(self, target: ast.expr, value: ast.expr | None, annotation: ast.expr | None = None) -> None:
        path = self.path(value) if value is not None else None
        if path is None and annotation is not None and ast.unparse(annotation).strip("'\"") in self.core_types:
            path = ["<core>"]
        if isinstance(target, ast.Name):
            if path is not None:
                self._names[-1][target.id] = path
            else:
                self._names[-1].pop(target.id, None)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self" \
                and path is not None and target.attr != "app":
            self._selves[-1][target.attr] = path
        elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            for t, v in zip(target.elts, value.elts):
                self._bind(t, v)

    def _write(self, target: ast.expr, how: str) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for el in target.elts:
                self._write(el, how)
        elif isinstance(target, (ast.Attribute, ast.Subscript)):
            owner = self.path(target.value)
            if owner is not None:
                self._report(target, f"{how} {ast.unparse(target)}", owner)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        selves: dict[str, list[str]] = {}
        self._selves.append(selves)
        for sub in ast.walk(node):  # `self.host = app.view_host` in any method names a core object everywhere
            if isinstance(sub, ast.Assign):
                for t in sub.targets:
                    self._bind(t, sub.value) if isinstance(t, ast.Attribute) else None
        self.generic_visit(node)
        self._selves.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._names.append(dict(self._names[-1]))
        for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
            if arg.annotation is not None:
                self._bind(ast.Name(arg.arg), None, arg.annotation)
        self.generic_visit(node)
        self._names.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        for t in node.targets:
            self._write(t, "assigns")
        for t in node.targets:
            self._bind(t, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.generic_visit(node)
        self._write(node.target, "assigns")
        self._bind(node.target, node.value, node.annotation)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.generic_visit(node)
        self._write(node.target, "augments")

    def visit_Delete(self, node: ast.Delete) -> None:
        for t in node.targets:
            self._write(t, "deletes")

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self._bind(node.target, node.iter)
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_withitem(self, node: ast.withitem) -> None:
        if node.optional_vars is not None:
            self._bind(node.optional_vars, node.context_expr)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("setattr", "delattr") and node.args:
            owner = self.path(node.args[0])
            if owner is not None:
                self._report(node, f"{func.id} on {ast.unparse(node.args[0])}", owner)
        elif isinstance(func, ast.Attribute) and func.attr in MUTATORS:
            owner = self.path(func.value)
            if owner is not None and len(owner) >= 2:
                self._report(node, f"mutates {ast.unparse(func.value)} ({func.attr})", owner)


def core_types(tree: ast.Module) -> set[str]:
    """The names a module imports from moka_shell.core (a parameter annotated with one is a core object)."""
    return {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0
            and (n.module or "").startswith("moka_shell.core") for a in n.names}


def core_writes(source: str, where: str) -> list[str]:
    """Every write into a core object in ``source`` (a module outside the core)."""
    tree = ast.parse(source)
    finder = CoreWrites(where, core_types(tree))
    finder.visit(tree)
    return finder.found


def test_nothing_outside_the_core_assigns_attributes_on_the_app() -> None:
    """Shells, the bridge, the CLI and the web layer pass values in (Endpoints, ShellActions) and call the
    core's methods; they never write into a core object, at any depth (`app.view_host.profile = …`)."""
    offenders = []
    for path in modules(SRC):
        if (SRC / "core") in path.parents:
            continue
        offenders += core_writes(path.read_text(encoding="utf-8"), str(path.relative_to(SRC)))
    assert offenders == []


def test_the_write_finder_sees_deep_writes() -> None:
    """Each kind of write into a core object is found, through names and `self`; reads and API calls are not."""
    source = """
from moka_shell.core.views.view import View

def shell(app, core, view: View):
    app.mode = "x"
    app.view_host.profile = None
    core.app.view_host.storage.areas.rate = (1, 2)
    app.view_host.views["v"] = None
    app.view_host.handshake_timeout += 1
    setattr(app.view_host, "profile", None)
    host = app.view_host
    host.client.update({})
    del host.views["v"]
    view.timings["t0"] = 1.0
    got = app.view_host.get("v")
    got.problems.append("x")
    app.config.agent.backend = "ok"
    app.servers.add("ok", None)
    app.view_host.use_profile(None)
    local = {}
    local["x"] = app.view_host.views

class Methods:
    def __init__(self, app):
        self.app = app
        self.host = app.view_host

    def hello(self, p):
        self.host.viewport.update(p)
        self.app.appearance.system_dark = True
"""
    found = [line.split(" ", 1)[1] for line in core_writes(source, "x.py")]
    assert found == [
        "assigns app.mode", "assigns app.view_host.profile", "assigns core.app.view_host.storage.areas.rate",
        "assigns app.view_host.views['v']", "augments app.view_host.handshake_timeout",
        "setattr on app.view_host", "mutates host.client (update)", "deletes host.views['v']",
        "assigns view.timings['t0']", "mutates got.problems (append)", "mutates self.host.viewport (update)",
        "assigns self.app.appearance.system_dark"]


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


CORE_SUBSYSTEMS = sorted(p.name for p in (SRC / "core").iterdir() if (p / "__init__.py").exists())


def test_the_core_subsystems_are_found() -> None:
    """The parametrization below sees every subsystem (a new folder under core/ joins it by itself)."""
    assert {"chat", "dev", "mcp", "views"} <= set(CORE_SUBSYSTEMS)


@pytest.mark.parametrize("room", [*(f"core/{name}" for name in CORE_SUBSYSTEMS), "core", "shells"])
def test_no_import_circle_in_a_core_subsystem_or_the_shells(room: str) -> None:
    """Every core subsystem (core/chat, core/dev, core/mcp with its oauth/, core/views, ...), the core as a
    whole (its own modules beside them) and shells/ import one way: no module needs one that needs it back."""
    assert import_cycles(module_files(SRC / room)) == []


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
