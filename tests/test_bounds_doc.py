"""docs/architecture.md's "Bounds, deadlines and bad files" table stays complete and true (issue 28).

Every module-level number in src/moka_shell named like a bound (``MAX_*``, ``*_LIMIT``, ``*_TIMEOUT``,
``*_BYTES``, ``*_CHARS``) is a row's constant, in a row that names its file; and every constant a row's
"Where" names is defined in one of the files that row names (the table once put ``BATCH_CHARS`` in
web/server.py, where it never was). Read from the source (ast), so nothing is imported.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "moka_shell"
DOC = ROOT / "docs" / "architecture.md"
BOUND_NAME = re.compile(r"^(MAX_\w+|\w+_LIMIT|\w+_TIMEOUT|\w+_BYTES|\w+_CHARS)$")

# Numbers named like bounds that are not Moka's bounds, each with why.
NOT_BOUNDS = {
    # The demo server's own tool arguments and memory (a sample MCP server, not Moka).
    ("demo/dice.py", "MAX_SIDES"),
    ("demo/dice.py", "MAX_COUNT"),
    ("demo/dice.py", "HISTORY_LIMIT"),
    ("demo/stdio_server.py", "MAX_MESSAGE"),
}

_OPS: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
}


def number(node: ast.AST, known: dict[str, float]) -> float | None:
    """The value of a constant expression of numbers, or None when it is not one.

    A call with a number among its arguments counts as that number: a default an environment
    variable may override (``hook_deadline._seconds("MOKA_HOOK_TIMEOUT", 5.0)``).
    """
    if isinstance(node, ast.Constant):
        value = node.value
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if isinstance(node, ast.Name):
        return known.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = number(node.operand, known)
        return None if inner is None else -inner
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = number(node.left, known), number(node.right, known)
        return None if left is None or right is None else _OPS[type(node.op)](left, right)  # type: ignore[no-any-return]
    if isinstance(node, ast.Call):
        found = [v for v in (number(a, known) for a in node.args) if v is not None]
        return found[-1] if found else None
    return None


def module_numbers(path: Path) -> Iterator[tuple[str, float]]:
    """Every module-level name bound to a number in ``path``, with its value."""
    known: dict[str, float] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        pairs: list[tuple[ast.AST, ast.AST]] = []
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    pairs += zip(target.elts, node.value.elts)
                else:
                    pairs.append((target, node.value))
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            pairs.append((node.target, node.value))
        for bound, value in pairs:
            if isinstance(bound, ast.Name) and (n := number(value, known)) is not None:
                known[bound.id] = n
                yield bound.id, n


def module_names(path: Path) -> set[str]:
    """Every name ``path`` binds at module level (constants, classes, functions)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
    return names


def table_rows() -> list[list[str]]:
    """The bounds table's rows, each as its three cells."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Bounds, deadlines and bad files", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| What ")]
    assert len(rows) > 20, "the bounds table was not found"
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows]


def bound_constants() -> list[tuple[str, str, float]]:
    """(file relative to src/moka_shell, name, value) of every number named like a bound."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for name, value in module_numbers(path):
            if BOUND_NAME.match(name) and (rel, name) not in NOT_BOUNDS:
                found.append((rel, name, value))
    return found


def test_the_scan_finds_the_bounds_it_should() -> None:
    """The collector itself: bounds written as products, shifts and environment defaults are numbers."""
    found = {(rel, name): value for rel, name, value in bound_constants()}
    assert found[("web/outbox.py", "BATCH_CHARS")] == 1024 * 1024
    assert found[("core/views/storage.py", "MAX_MESSAGES_PER_WINDOW")] == 200
    assert found[("hook_deadline.py", "HOOK_TIMEOUT")] == 5.0
    assert found[("core/mcp/oauth/store.py", "MAX_FILE_BYTES")] == 4 * 2**20
    assert len(found) > 80


def test_every_bound_is_in_the_table_beside_its_file() -> None:
    rows = table_rows()
    missing = []
    for rel, name, value in bound_constants():
        if not any(f"`{name}`" in where and f"`{rel}`" in where for _, _, where in rows):
            missing.append(f"{rel} {name} = {value!r}")
    assert not missing, ("bounds not in docs/architecture.md's table (add a row or the name to the row that "
                         "names its file; a number that is not a bound goes in NOT_BOUNDS, saying why):\n  "
                         + "\n  ".join(missing))


def test_every_constant_the_table_names_is_where_it_says() -> None:
    wrong = []
    for what, _, where in table_rows():
        files = re.findall(r"`([\w/]+\.py)`", where)
        assert files, f"the row {what!r} names no file"
        defined = set().union(*(module_names(SRC / f) for f in files if (SRC / f).exists()))
        assert all((SRC / f).exists() for f in files), f"the row {what!r} names a file that does not exist: {files}"
        for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", where):
            if name not in defined:
                wrong.append(f"{what}: {name} is in none of {files}")
    assert not wrong, "the table names constants where they are not:\n  " + "\n  ".join(wrong)
