"""The Matcha plugin registers through Moka's hooks and its values pass Moka's filters."""

from __future__ import annotations

import moka_theme_matcha
from moka_shell.core.themes import STANDARD_VARIABLES, standard_only
from moka_shell.plugins import PluginHost


def test_registers_theme_and_display_mode() -> None:
    host = PluginHost(load_entrypoints=False, extra=[moka_theme_matcha])
    themes = host.registry("themes")
    modes = host.registry("display_modes")
    assert themes["matcha"].obj.label == "Matcha"
    assert modes["present"].obj.wire_mode == "fullscreen"


def test_only_standard_variables() -> None:
    for mode in ("light", "dark"):
        values = moka_theme_matcha.Matcha().variables(mode)
        assert set(values) <= set(STANDARD_VARIABLES)
        assert standard_only(values) == values
