"""``moka plugins new backend|theme|display-mode NAME``: a small package that installs and passes its test.

Each package is what docs/plugins.md describes: a ``pyproject.toml`` with the ``moka`` entry point,
one module with the hook, a README, and a test that loads the module through Moka's real plugin host
(``moka_shell.testing.plugins``). ``pip install -e`` it into the environment Moka runs in, and
``moka plugins`` lists it.
"""

from __future__ import annotations

import re
from pathlib import Path

from moka_shell.version import __version__
from moka_shell.errors import PluginInstallError

NAME = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")

PYPROJECT = '''[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "moka-{name}"
version = "0.1.0"
description = "{summary}"
requires-python = ">=3.11"
dependencies = ["moka-shell>={moka_version}"]

[project.optional-dependencies]
test = ["pytest"]

# This is what makes Moka find the plugin: the group "moka", the plugin's name, its module.
[project.entry-points.moka]
{name} = "{module}"

[tool.setuptools.packages.find]
where = ["src"]
'''

README = '''# moka-{name}

{summary}

    pip install -e .          # into the environment Moka runs in (or: moka plugins install .)
    pytest tests              # the plugin's own test
    moka plugins              # lists "{name}"
{try_it}
See Moka's docs/plugins.md for what each part means.
'''

BACKEND = '''"""moka-{name}: a Moka model backend. Replace ``stream`` with your provider's API."""

from __future__ import annotations

from collections.abc import AsyncIterator

from moka_shell import AgentEvent, AgentRequest, BaseBackend, Done, RegisterBackend, TextDelta, hookimpl


class {cls}Backend(BaseBackend):
    """Answers every message with a greeting (offline, no key)."""

    backend_id = "{name}"
    display_name = "{title}"
    default_model = "{name}-1"
    needs_key = False

    async def stream(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        """One model call: stream text, then say why it stopped."""
        said = request.messages[-1].content if request.messages else ""
        yield TextDelta(text=f"Hello from {name}! You said: {{said}}")
        yield Done(stop_reason="end_turn")


@hookimpl
def register_agent_backends(register: RegisterBackend) -> None:
    """Tell Moka about the backend."""
    register({cls}Backend())
'''

BACKEND_TEST = '''"""moka-{name} loads the way Moka loads it, and answers."""

import {module}
from moka_shell.testing.plugins import registered, reply


def test_it_registers_and_answers() -> None:
    backends = registered({module}, "backends")
    assert list(backends) == ["{name}"]
    assert reply(backends["{name}"], "hi") == "Hello from {name}! You said: hi"
'''

THEME = '''"""moka-{name}: a Moka theme. Change the colours; see docs/plugins.md for what each one paints."""

from __future__ import annotations

from moka_shell import RegisterTheme, hookimpl

# Standard MCP Apps variables: Moka paints its own surfaces from these and sends them to every view.
LIGHT = {{
    "--color-background-primary": "#f7fafc",    # cards, the composer, dialogs
    "--color-background-secondary": "#edf2f7",  # the window behind them; Moka derives its bars from it
    "--color-text-primary": "#1a202c",
    "--color-border-primary": "#cbd5e0",
    "--color-ring-primary": "#2b6cb0",          # focus rings
}}
DARK = {{
    "--color-background-primary": "#1a202c",
    "--color-background-secondary": "#171923",
    "--color-text-primary": "#edf2f7",
    "--color-border-primary": "#2d3748",
    "--color-ring-primary": "#63b3ed",
}}


class {cls}Theme:
    """A theme: an id, a label, and values for (a subset of) the standard variables."""

    theme_id = "{name}"
    label = "{title}"

    def variables(self, mode: str) -> dict[str, str]:
        """Standard variables only: a view rejects any other name."""
        return dict(DARK if mode == "dark" else LIGHT)

    def ui_variables(self, mode: str) -> dict[str, str]:
        """Moka's own accent (buttons, the selected screen in the rail)."""
        return {{"--moka-accent": "#63b3ed" if mode == "dark" else "#2b6cb0"}}


@hookimpl
def register_themes(register: RegisterTheme) -> None:
    """Tell Moka about the theme."""
    register({cls}Theme())
'''

THEME_TEST = '''"""moka-{name} loads the way Moka loads it, and gives only variables a view accepts."""

import {module}
from moka_shell.core.themes import standard_only
from moka_shell.testing.plugins import registered


def test_it_registers_with_standard_variables() -> None:
    theme = registered({module}, "themes")["{name}"]
    for mode in ("light", "dark"):
        values = theme.variables(mode)
        assert values and standard_only(values) == values
'''

MODE = '''"""moka-{name}: a Moka display mode (how a view is placed, and what the view is told)."""

from __future__ import annotations

from dataclasses import dataclass

from moka_shell import RegisterDisplayMode, WireMode, hookimpl


@dataclass(frozen=True)
class {cls}Mode:
    """A picture-in-picture variant under its own name, button icon and label."""

    mode_id: str = "{name}"
    wire_mode: WireMode = "pip"  # what the view is told: inline, fullscreen or pip
    label: str = "{title}"       # the button's tooltip and its entry in the view's "More" menu
    fixed_size: bool = True      # the host sets the size; the view's size reports are ignored
    opens_window: bool = False   # True renders it in its own window, like pop-out
    # The button's icon: SVG path data on a 24x24 grid, drawn with the text colour.
    icon: str = "M4 5h16v14H4zM13 9h5v6h-5z"


@hookimpl
def register_display_modes(register: RegisterDisplayMode) -> None:
    """Tell Moka about the display mode."""
    register({cls}Mode())
'''

MODE_TEST = '''"""moka-{name} loads the way Moka loads it."""

import {module}
from moka_shell.testing.plugins import registered


def test_it_registers() -> None:
    mode = registered({module}, "display_modes")["{name}"]
    assert mode.wire_mode in ("inline", "fullscreen", "pip") and mode.label and mode.icon
'''

KINDS = {
    "backend": (BACKEND, BACKEND_TEST, "a Moka model backend", '    moka chat --backend {name} "hello"\n'),
    "theme": (THEME, THEME_TEST, "a Moka theme", "    (Settings → Appearance lists it)\n"),
    "display-mode": (MODE, MODE_TEST, "a Moka display mode", "    (every view's header gets its button)\n"),
}


def write_package(kind: str, name: str, where: Path) -> Path:
    """Write ``moka-NAME/`` under ``where`` for a plugin of ``kind``; returns the new folder."""
    if kind not in KINDS:
        raise PluginInstallError(f"unknown plugin kind {kind!r}: use backend, theme or display-mode")
    name = name.lower()
    if not NAME.match(name):
        raise PluginInstallError(f"{name!r} is not a usable plugin name",
                                 hint="lower-case letters and digits, maybe joined by - or _ (e.g. hello, my-llm)")
    if name.startswith("moka-"):
        name = name[len("moka-"):]
    module = "moka_" + name.replace("-", "_")
    ident = name.replace("-", "_")
    folder = where / f"moka-{name}"
    if folder.exists():
        raise PluginInstallError(f"{folder} already exists; nothing was written", hint="pick another name or --dir")
    code, test, summary, try_it = KINDS[kind]
    values = {"name": ident if kind != "backend" else name, "module": module, "summary": f"{summary}: {name}",
              "title": name.replace("-", " ").replace("_", " ").title(),
              "cls": "".join(p.capitalize() for p in re.split(r"[-_]", name)), "moka_version": __version__}
    values["try_it"] = try_it.format(**values)
    files = {
        "pyproject.toml": PYPROJECT, "README.md": README,
        f"src/{module}/__init__.py": code, f"tests/test_{ident}.py": test,
    }
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.format(**values), encoding="utf-8")
    return folder
