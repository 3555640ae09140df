"""The plugin manager: built-ins, installed plugins, and what each registered.

A plugin that fails to import, implements a hook that does not exist, raises in a hook, or blocks
in one past its deadline (``hook_deadline``) is recorded with the reason and skipped; Moka still
starts. A plugin that blocked once is not called again. ``moka plugins`` shows the record.
Set ``MOKA_TRACE_PLUGINS=1`` to see every hook call, its arguments and its outcome on stderr.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import pluggy

from moka_shell import hook_deadline, hookspecs
from moka_shell.errors import PluginError
from moka_shell.hook_deadline import DECISION_TIMEOUT, HOOK_TIMEOUT, HookTimeout
from moka_shell.registered import Registered
from moka_shell.version import __version__

if TYPE_CHECKING:  # pragma: no cover - the contracts, for annotations only
    from moka_shell.core.chat.backends import AgentBackend
    from moka_shell.core.mcp.transport import Transport
    from moka_shell.core.themes import ThemeProvider
    from moka_shell.core.views.display import DisplayMode

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
RegistryName = Literal["transports", "backends", "themes", "display_modes"]


def _contract(name: str) -> type:
    """The Protocol every object in registry ``name`` must satisfy."""
    # Imported here, not at the top: `moka plugins` and `import moka_shell` stay light, and these
    # modules never import this one back.
    if name == "transports":
        from moka_shell.core.mcp.transport import Transport

        return Transport
    if name == "backends":
        from moka_shell.core.chat.backends import AgentBackend

        return AgentBackend
    if name == "themes":
        from moka_shell.core.themes import ThemeProvider

        return ThemeProvider
    from moka_shell.core.views.display import DisplayMode

    return DisplayMode


@dataclass
class PluginInfo:
    """One plugin as ``moka plugins`` shows it."""

    name: str
    version: str
    builtin: bool
    hooks: list[str] = field(default_factory=list)
    error: str | None = None
    distribution: str | None = None
    blocked: bool = False  # it once blocked past a hook's deadline and is not called any more
    in_folder: bool = False  # installed in the app's plugin folder (`moka plugins install` in a frozen app)


def _builtin_modules() -> list[ModuleType]:
    # Static imports so PyInstaller's analysis sees every built-in plugin.
    from moka_shell.builtins import backends_openai, display_modes, themes, transport_sse, transports

    return [transports, transport_sse, themes, display_modes, backends_openai]


class PluginHost:
    """Owns the pluggy manager, the plugin records and the registries built from hooks."""

    def __init__(self, *, load_entrypoints: bool = True, extra: list[Any] | None = None,
                 hook_timeout: float = HOOK_TIMEOUT, decision_timeout: float = DECISION_TIMEOUT,
                 plugin_folder: Path | None = None) -> None:
        self.pm = pluggy.PluginManager("moka")
        # A frozen app's per-user plugin folder (`moka plugins install`): on sys.path before the scan.
        self.plugin_folder = plugin_folder
        self.hook_timeout = hook_timeout
        self.decision_timeout = decision_timeout
        self.on_block: Callable[[str, str], None] | None = None  # (plugin, why): the app tells `moka plugins`
        self._tracing = bool(os.environ.get("MOKA_TRACE_PLUGINS"))  # read once: hooks run on hot paths
        self.pm.add_hookspecs(hookspecs)
        self.infos: dict[str, PluginInfo] = {}
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
        self._check_pending()

    def _check_pending(self) -> None:
        # A hook name no spec knows (`register_theme` for `register_themes`) would never be called:
        # report it as that plugin's error and skip the plugin, as for any other broken plugin.
        while True:
            try:
                self.pm.check_pending()
                return
            except pluggy.PluginValidationError as exc:
                pname = self.pm.get_name(exc.plugin) or "?"
                self._record_error(pname, str(exc), trace=False)
                self.pm.unregister(exc.plugin)

    def register(self, plugin: Any, name: str, *, version: str = "", builtin: bool = False) -> None:
        """Register a plugin object (module or instance), recording any validation error."""
        try:
            self.pm.register(plugin, name=name)
        except (pluggy.PluginValidationError, ValueError) as exc:
            self.infos[name] = PluginInfo(name, version, builtin=builtin, error=f"invalid plugin: {exc}")
            return
        self.infos[name] = PluginInfo(name, version, builtin=builtin)

    def _load_entrypoints(self) -> None:
        if self.plugin_folder is not None:
            from moka_shell.plugin_install.kind import activate, install_kind

            if install_kind() == "folder":
                activate(self.plugin_folder)
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
            in_folder = self._in_folder(dist)
            for ep in eps:
                if self.pm.get_plugin(ep.name) is not None or ep.name in self.infos:
                    continue
                try:
                    plugin = ep.load()
                except (Exception, SystemExit) as exc:  # a broken plugin must never stop Moka
                    self.infos[ep.name] = PluginInfo(
                        ep.name, dist.version, builtin=False, distribution=dist_name, in_folder=in_folder,
                        error=f"failed to import {ep.value}: {type(exc).__name__}: {exc}",
                    )
                    continue
                self.register(plugin, ep.name, version=dist.version)
                self.infos[ep.name].distribution = dist_name
                self.infos[ep.name].in_folder = in_folder

    def _in_folder(self, dist: importlib.metadata.Distribution) -> bool:
        if self.plugin_folder is None:
            return False
        try:
            return Path(str(dist.locate_file(""))).resolve().is_relative_to(self.plugin_folder.resolve())
        except OSError:
            return False

    @overload
    def collect(self, hook_name: str, id_attr: str) -> dict[str, Registered[Any]]: ...
    @overload
    def collect(self, hook_name: str, id_attr: str, kind: type[T],
                check: Callable[[Any], str | None] | None = None) -> dict[str, Registered[T]]: ...

    def collect(self, hook_name: str, id_attr: str, kind: type[Any] = object,
                check: Callable[[Any], str | None] | None = None) -> dict[str, Registered[Any]]:
        """Call one ``register_*`` hook on every plugin and gather the ``kind`` objects they register.

        Each plugin is called on its own, on a worker thread with a deadline, so one that raises or
        blocks is reported and skipped without losing what the others registered. The first
        registration of an id wins; an object that is not a ``kind`` (a runtime-checkable Protocol),
        or that ``check`` finds a problem with, is reported and dropped.
        """
        caller = getattr(self.pm.hook, hook_name)
        found: dict[str, Registered[Any]] = {}
        # get_hookimpls() lists plugins in registration order: built-ins come first and keep
        # their ids; installed plugins add new ones.
        for impl in caller.get_hookimpls():
            pname = impl.plugin_name
            if self._is_blocked(pname):
                continue
            staged: list[Any] = []
            try:
                self._trace(hook_name, pname, {"register": "<callback>"})
                hook_deadline.call(partial(impl.function, register=staged.append), self.hook_timeout,
                                   f"{pname}.{hook_name}")
                self._trace(hook_name, pname, None, result=staged)
            except HookTimeout as exc:
                self._block(pname, hook_name, exc)
                continue
            except Exception as exc:
                self._record_error(pname, f"raised in {hook_name}: {type(exc).__name__}: {exc}")
                continue
            for obj in list(staged):  # a copy: nothing a late thread appends counts
                obj_id = getattr(obj, id_attr, None)
                if not isinstance(obj_id, str) or not obj_id:
                    self._record_error(pname, f"{hook_name} registered an object without a {id_attr}")
                    continue
                if not isinstance(obj, kind):
                    self._record_error(pname, f"{hook_name}: {obj_id!r} is not a {kind.__name__} "
                                              f"(missing {', '.join(_missing(obj, kind))})")
                    continue
                if obj_id in found:
                    self._record_error(
                        pname, f"{hook_name}: {id_attr} {obj_id!r} is already registered by {found[obj_id].plugin}"
                    )
                    continue
                problem = self._check(check, obj, pname, hook_name) if check is not None else None
                if problem:
                    self._record_error(pname, f"{hook_name}: {obj_id!r} was rejected: {problem}")
                    continue
                if self._is_blocked(pname):  # its check blocked: nothing of it is used
                    break
                found[obj_id] = Registered(obj, pname)
        return found

    def _check(self, check: Callable[[Any], str | None], obj: Any, pname: str, hook_name: str) -> str | None:
        """Run ``check(obj)`` (it calls the plugin's code) under the same deadline as the hook."""
        try:
            return hook_deadline.call(lambda: check(obj), self.hook_timeout, f"{pname}.check")
        except HookTimeout as exc:
            self._block(pname, hook_name, exc)
            return None
        except Exception as exc:  # the object's own methods raised
            return f"{type(exc).__name__}: {exc}"

    @overload
    def registry(self, name: Literal["transports"]) -> dict[str, Registered[Transport]]: ...
    @overload
    def registry(self, name: Literal["backends"]) -> dict[str, Registered[AgentBackend]]: ...
    @overload
    def registry(self, name: Literal["themes"]) -> dict[str, Registered[ThemeProvider]]: ...
    @overload
    def registry(self, name: Literal["display_modes"]) -> dict[str, Registered[DisplayMode]]: ...
    @overload
    def registry(self, name: str) -> dict[str, Registered[Any]]: ...

    def registry(self, name: str) -> dict[str, Registered[Any]]:
        """One of the REGISTRIES, collected from every plugin and typed by its contract."""
        from moka_shell.plugin_checks import CHECKS

        hook_name, id_attr = REGISTRIES[name]
        return self.collect(hook_name, id_attr, _contract(name), CHECKS.get(name))

    def _impls(self, hook_name: str) -> list[Any]:
        # Newest first, as pluggy itself calls them: an installed plugin decides before a built-in.
        caller = getattr(self.pm.hook, hook_name)
        return [i for i in reversed(caller.get_hookimpls()) if not self._is_blocked(i.plugin_name)]

    def call_each(self, hook_name: str, *, timeout: float | None = None, **kwargs: Any) -> list[Any]:
        """Call a hook on every plugin, each on a worker thread with a deadline, isolating failures.

        This blocks the calling thread for up to the deadline per plugin; on the core loop use
        ``call_each_async``.
        """
        # pluggy's own call loop would stop at the first plugin that raises; this one records it and
        # goes on, so one broken plugin never takes the others' answers with it.
        results: list[Any] = []
        for impl in self._impls(hook_name):
            try:
                args = {k: kwargs[k] for k in impl.argnames}
                self._trace(hook_name, impl.plugin_name, args)
                results.append(hook_deadline.call(partial(impl.function, **args),
                                                  timeout or self.hook_timeout, f"{impl.plugin_name}.{hook_name}"))
                self._trace(hook_name, impl.plugin_name, None, result=results[-1])
            except HookTimeout as exc:
                self._block(impl.plugin_name, hook_name, exc)
            except Exception as exc:
                self._record_error(impl.plugin_name, f"raised in {hook_name}: {type(exc).__name__}: {exc}")
        return results

    async def call_each_async(self, hook_name: str, *, timeout: float | None = None, **kwargs: Any) -> list[Any]:
        """``call_each`` for the core loop: the loop keeps running while a plugin works or blocks."""
        results: list[Any] = []
        for impl in self._impls(hook_name):
            try:
                args = {k: kwargs[k] for k in impl.argnames}
                self._trace(hook_name, impl.plugin_name, args)
                results.append(await hook_deadline.call_async(
                    partial(impl.function, **args), timeout or self.hook_timeout, f"{impl.plugin_name}.{hook_name}"))
                self._trace(hook_name, impl.plugin_name, None, result=results[-1])
            except HookTimeout as exc:
                self._block(impl.plugin_name, hook_name, exc)
            except Exception as exc:
                self._record_error(impl.plugin_name, f"raised in {hook_name}: {type(exc).__name__}: {exc}")
        return results

    def first_result(self, hook_name: str, **kwargs: Any) -> Any:
        """The first non-None answer of a decision hook, isolating failures.

        This is what ``firstresult=True`` on a hookspec means here: the marker documents the
        hook, and this method (not pluggy's loop) implements it.
        """
        for value in self.call_each(hook_name, timeout=self.decision_timeout, **kwargs):
            if value is not None:
                return value
        return None

    async def first_result_async(self, hook_name: str, **kwargs: Any) -> Any:
        """``first_result`` for the core loop, with the decision deadline per plugin."""
        for value in await self.call_each_async(hook_name, timeout=self.decision_timeout, **kwargs):
            if value is not None:
                return value
        return None

    def _is_blocked(self, pname: str) -> bool:
        info = self.infos.get(pname)
        return info is not None and info.blocked

    def _block(self, pname: str, hook_name: str, exc: HookTimeout) -> None:
        """A plugin blocked: name it, and never call it again (its thread may hold anything)."""
        info = self.infos.setdefault(pname, PluginInfo(pname, "", builtin=False))
        if not info.blocked:
            info.blocked = True
            why = f"blocked in {hook_name}: {exc}; Moka goes on without this plugin"
            self._record_error(pname, why, trace=False)
            if self.on_block is not None:
                self.on_block(pname, why)

    def _trace(self, hook_name: str, pname: str, args: dict[str, Any] | None, *, result: Any = None) -> None:
        # datasette's add_hookcall_monitoring, for our own call loops (pluggy's monitor never sees them).
        if not self._tracing:
            return
        if args is not None:
            print(f"moka plugins: {pname}.{hook_name}({', '.join(f'{k}={v!r}' for k, v in args.items())})",
                  file=sys.stderr)
        else:
            print(f"moka plugins: {pname}.{hook_name} -> {result!r}", file=sys.stderr)

    def _record_error(self, pname: str, problem: str, *, trace: bool = True) -> None:
        info = self.infos.setdefault(pname, PluginInfo(pname, "", builtin=False))
        info.error = problem if not info.error else f"{info.error}; {problem}"
        if trace and os.environ.get("MOKA_TRACE_PLUGINS"):
            traceback.print_exc()

    def mark_blocked(self, pname: str, why: str) -> None:
        """Record that the running Moka found ``pname`` blocked (``moka plugins`` reads it from there)."""
        info = self.infos.get(pname)
        if info is not None and not info.blocked:
            info.blocked = True
            info.error = why if not info.error else f"{info.error}; {why}"

    def broken(self) -> list[PluginError]:
        """Every plugin problem seen so far, as errors a person can read."""
        return [PluginError(i.name, i.error) for i in self.infos.values() if i.error]

    def list(self) -> list[PluginInfo]:
        """Every plugin: built-ins first, then installed ones by name."""
        return sorted(self.infos.values(), key=lambda i: (not i.builtin, i.name))



def _missing(obj: Any, kind: type) -> list[str]:
    """The members of Protocol ``kind`` that ``obj`` lacks, for the error message."""
    # Annotated attributes plus methods: what a Protocol class body declares.
    members = {*getattr(kind, "__annotations__", {}), *(n for n, v in vars(kind).items() if callable(v))}
    return sorted(m for m in members if not m.startswith("_") and not hasattr(obj, m)) or ["?"]
