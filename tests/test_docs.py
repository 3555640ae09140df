"""docs/plugin-hooks.md documents every hook: datasette's guard, so a new hook cannot ship undocumented."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from moka_shell import hookspecs

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "plugin-hooks.md"
SPECS = sorted(n for n in dir(hookspecs) if getattr(getattr(hookspecs, n), "moka_spec", None) is not None)


def signature(name: str) -> str:
    """`name(arg1, arg2)`, as the reference writes it."""
    return f"{name}({', '.join(inspect.signature(getattr(hookspecs, name)).parameters)})"


@pytest.mark.parametrize("name", SPECS)
def test_every_hook_has_a_heading_and_its_signature(name: str) -> None:
    """One heading per hook, directly followed by its signature with the spec's argument names."""
    doc = REFERENCE.read_text(encoding="utf-8")
    assert re.search(rf"^### {name}\n\n`{re.escape(signature(name))}`\n", doc, re.MULTILINE), signature(name)


@pytest.mark.parametrize("name", SPECS)
def test_every_hook_has_an_example(name: str) -> None:
    """Each hook's section holds a Python example implementing that hook with @hookimpl."""
    doc = REFERENCE.read_text(encoding="utf-8")
    section = doc.split(f"### {name}\n", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    assert "```python" in section and "@hookimpl" in section and f"def {name}(" in section, name


def test_the_reference_has_no_hook_that_does_not_exist() -> None:
    """A heading for a removed or misspelt hook would document something Moka rejects."""
    headings = re.findall(r"^### (\w+)$", REFERENCE.read_text(encoding="utf-8"), re.MULTILINE)
    assert sorted(headings) == SPECS


def test_the_examples_compile() -> None:
    """Every Python block in the reference is valid Python."""
    blocks = re.findall(r"^```python\n(.*?)^```$", REFERENCE.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)
    assert len(blocks) == len(SPECS)
    for block in blocks:
        compile(block, str(REFERENCE), "exec")


def test_the_tutorial_links_to_the_reference() -> None:
    """docs/plugins.md stays the tutorial and sends readers to the reference."""
    assert "(plugin-hooks.md)" in (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
