"""The plugin manager: built-ins, installed plugins, and what each registered.

A plugin that fails to import or raises in a hook is recorded with the reason and
skipped; Moka still starts. ``moka plugins`` shows the record.
"""

from __future__ import annotations

import importlib.metadata
import os
import traceback
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Generic, TypeVar

import pluggy

from moka_shell import hookspecs
from moka_shell.errors import PluginError

ENTRY_POINT_GROUP = "moka"
T = TypeVar("T")

# The registries built from the registration hooks: name → (hook, the id attribute of each object).
# MokaApp and `moka plugins` both read this table.
REGISTRIES: dict[str, tuple[str, str]] = {
    "transports": ("register_transports", "transport_id"),
    "backends": ("register_agent_backends", "backend_id"),
    "themes": ("register_themes", "theme_id"),
    "display_modes": ("register_display_modes", "mode_id"),
}


@dataclass
class PluginInfo:
    """One plugin as ``moka plugins`` shows it."""

    name: str
    version: str
    builtin: bool
    hooks: list[str] = field(default_factory=list)
    error: str | None = None
    distribution: str | None = None


@dataclass
class Registered(Generic[T]):
    """An object a plugin registered, with the plugin it came from."""

    obj: T
    plugin: str


def _builtin_modules() -> list[ModuleType]:
    # Static imports so PyInstaller's analysis sees every built-in plugin.
    from moka_shell.builtins import backends_openai, display_modes, themes, transports

    return [transports, themes, display_modes, backends_openai]


class PluginHost:
    """Owns the pluggy manager, the plugin records and the registries built from hooks."""

    def __init__(self, *, load_entrypoints: bool = True, extra: list[Any] | None = None) -> None:
        self.pm = pluggy.PluginManager("moka")
        self.pm.add_hookspecs(hookspecs)
        self.infos: dict[str, PluginInfo] = {}
        from moka_shell import __version__

        for module in _builtin_modules():
            name = module.__name__.rsplit(".", 1)[-1]
            self.pm.register(module, name=f"moka.{name}")
            self.infos[f"moka.{name}"] = PluginInfo(f"moka.{name}", __version__, builtin=True)
        if load_entrypoints:
            self._load_entrypoints()
        for i, plugin in enumerate(extra or []):
            pname = getattr(plugin, "__name__", None) or f"extra-{i}"
            self.register(plugin, pname)
        for pname, info in self.infos.items():
            plugin_obj = self.pm.get_plugin(pname)
            if plugin_obj is not None:
                info.hooks = sorted(h.name for h in self.pm.get_hookcallers(plugin_obj) or [])

    def register(self, plugin: Any, name: str, *, version: str = "", builtin: bool = False) -> None:
        """Register a plugin object (module or instance), recording any validation error."""
        try:
            self.pm.register(plugin, name=name)
        except (pluggy.PluginValidationError, ValueError) as exc:
            self.infos[name] = PluginInfo(name, version, builtin=builtin, error=f"invalid plugin: {exc}")
            return
        self.infos[name] = PluginInfo(name, version, builtin=builtin)

    def _load_entrypoints(self) -> None:
        wanted = os.environ.get("MOKA_LOAD_PLUGINS")
        allow: set[str] | None = None
        if wanted is not None:
            allow = {w.strip() for w in wanted.split(",") if w.strip()}
        for dist in importlib.metadata.distributions():
            eps = [ep for ep in dist.entry_points if ep.group == ENTRY_POINT_GROUP]
            if not eps:
                continue
            dist_name = dist.metadata["Name"] or "?"
            if allow is not None and dist_name not in allow:
                continue
            for ep in eps:
                if self.pm.get_plugin(ep.name) is not None or ep.name in self.infos:
                    continue
                try:
                    plugin = ep.load()
                except Exception as exc:  # a broken plugin must never stop Moka
                    self.infos[ep.name] = PluginInfo(
                        ep.name, dist.version, builtin=False, distribution=dist_name,
                        error=f"failed to import {ep.value}: {type(exc).__name__}: {exc}",
                    )
                    continue
                self.register(plugin, ep.name, version=dist.version)
                self.infos[ep.name].distribution = dist_name

    def collect(self, hook_name: str, id_attr: str) -> dict[str, Registered[Any]]:
        """Call one ``register_*`` hook on every plugin and gather what they register.

        Each plugin is called on its own so one that raises is reported and skipped
        without losing what the others registered. The first registration of an id wins.
        """
        caller = getattr(self.pm.hook, hook_name)
        found: dict[str, Registered[Any]] = {}
        # get_hookimpls() lists plugins in registration order: built-ins come first and keep
        # their ids; installed plugins add new ones.
        for impl in caller.get_hookimpls():
            pname = impl.plugin_name
            staged: list[Any] = []
            try:
                impl.function(register=staged.append)
            except Exception as exc:
                self._record_error(pname, f"raised in {hook_name}: {type(exc).__name__}: {exc}")
                continue
            for obj in staged:
                obj_id = getattr(obj, id_attr, None)
                if not isinstance(obj_id, str) or not obj_id:
                    self._record_error(pname, f"{hook_name} registered an object without a {id_attr}")
                    continue
                if obj_id in found:
                    self._record_error(
                        pname, f"{hook_name}: {id_attr} {obj_id!r} is already registered by {found[obj_id].plugin}"
                    )
                    continue
                found[obj_id] = Registered(obj, pname)
        return found

    def registry(self, name: str) -> dict[str, Registered[Any]]:
        """One of the REGISTRIES, collected from every plugin."""
        hook_name, id_attr = REGISTRIES[name]
        return self.collect(hook_name, id_attr)

    def call_each(self, hook_name: str, **kwargs: Any) -> list[Any]:
        """Call a lifecycle or decision hook on every plugin, isolating failures."""
        results: list[Any] = []
        caller = getattr(self.pm.hook, hook_name)
        # Newest first, as pluggy itself calls them: an installed plugin decides before a built-in.
        for impl in reversed(caller.get_hookimpls()):
            try:
                args = {k: kwargs[k] for k in impl.argnames}
                results.append(impl.function(**args))
            except Exception as exc:
                self._record_error(impl.plugin_name, f"raised in {hook_name}: {type(exc).__name__}: {exc}")
        return results

    def first_result(self, hook_name: str, **kwargs: Any) -> Any:
        """The first non-None answer of a decision hook, isolating failures."""
        for value in self.call_each(hook_name, **kwargs):
            if value is not None:
                return value
        return None

    def _record_error(self, pname: str, problem: str) -> None:
        info = self.infos.setdefault(pname, PluginInfo(pname, "", builtin=False))
        info.error = problem if not info.error else f"{info.error}; {problem}"
        if os.environ.get("MOKA_TRACE_PLUGINS"):
            traceback.print_exc()

    def broken(self) -> list[PluginError]:
        """Every plugin problem seen so far, as errors a person can read."""
        return [PluginError(i.name, i.error) for i in self.infos.values() if i.error]

    def list(self) -> list[PluginInfo]:
        """Every plugin: built-ins first, then installed ones by name."""
        return sorted(self.infos.values(), key=lambda i: (not i.builtin, i.name))

