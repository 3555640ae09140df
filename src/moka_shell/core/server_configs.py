"""Edits of the config's servers (``mcpServers``): the one place an entry is added, replaced, removed or changed.

The UI (through the bridge) and ``moka servers add|remove|import`` (the CLI) both edit entries here,
so every rule about an entry is written once. The main one is what *replace* means:

    A replacement sets how the server is started or reached, the fields an editor of a server shows
    (``command``, ``args``, ``env``, ``cwd``, ``url``, ``headers``, ``type``); one the new entry does not
    give is removed. Every other field of the entry is kept: ``disabled``, ``timeout``,
    ``useInstructions``, ``allowUnsafeEval``, ``logLevel``, ``roots``, ``oauth``, and keys Moka does not know.

So ``moka servers add NAME --replace …`` and the UI's Edit give the same entry. To drop the kept
settings as well, remove the server and add it again.

``type`` counts by the transport it names (``ServerConfig.transport_id``), not by its spelling: a URL
without a ``type``, ``"http"`` and ``"streamable-http"`` are all the streamable HTTP transport. Neither
the dialog (js/servers/config.js) nor ``moka servers add --url`` shows the spelling, and a caller of
the bridge may send ``type: "http"`` where the CLI sends none; so while a replacement keeps the
transport, the entry keeps its own spelling of it (or its lack of one), and both surfaces give the
same entry.

One kept setting is about *which* server it is: ``trustAnnotations`` (the person goes by its tool
annotations) is kept only while the server is started or reached as before (the same ``command``
and ``args``, ``url`` and transport); a replacement that points elsewhere is a server the person has
not said to trust, unless the new entry says so itself. An import never brings it: a file from
another host does not speak for the person here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from moka_shell.config import MokaConfig, ServerConfig
from moka_shell.errors import InvalidParamsError, ServerExistsError, UnknownServerError

# How a server is started or reached: what the Add/Edit dialog and `moka servers add` set.
CONNECTION_FIELDS = frozenset({"command", "args", "env", "cwd", "url", "headers", "type"})
IDENTITY_FIELDS = ("command", "args", "url", "transport_id")  # which server it is (env, cwd, headers tune it)
TRUST_KEY = "trustAnnotations"
TAKEN_REASON = "a server with this name already exists"


def same_server(a: ServerConfig, b: ServerConfig) -> bool:
    """Are ``a`` and ``b`` started or reached the same way (the same program and arguments, or URL, by the
    same transport, however its ``type`` is spelt)?"""
    return all(getattr(a, f) == getattr(b, f) for f in IDENTITY_FIELDS)


def replaced(old: ServerConfig | None, new: ServerConfig) -> ServerConfig:
    """``new`` as a replacement of ``old``: its connection fields, and old's other settings unless new sets them."""
    if old is None:
        return ServerConfig.model_validate(new.to_json())
    kept = {k: v for k, v in old.to_json().items() if k not in CONNECTION_FIELDS}
    if not same_server(old, new):
        kept.pop(TRUST_KEY, None)  # trust was given to the server as it was reached (module docstring)
    given = new.to_json()
    if old.transport_id == new.transport_id:  # the same transport: the entry's own spelling of it stays
        given.pop("type", None)
        if old.type is not None:
            given["type"] = old.type
    return ServerConfig.model_validate({**kept, **given})


def untrusted(entry: ServerConfig) -> ServerConfig:
    """``entry`` without a trust it brought along (an imported file's)."""
    return entry.model_copy(update={"trust_annotations": None}) if entry.trust_annotations is not None else entry


@dataclass
class Imported:
    """What an import added, and what it skipped with the reason."""

    added: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


class ServerConfigs:
    """The servers of one config, edited and saved.

    ``save`` persists the config (the running app's save, or ``ConfigFile.save`` in the CLI);
    ``in_use`` says whether a name belongs to a server that runs although the config lacks it, so it
    is taken as well.
    """

    def __init__(self, config: MokaConfig, save: Callable[[], object], *,
                 in_use: Callable[[str], bool] = lambda _name: False) -> None:
        self._config = config
        self._save = save
        self._in_use = in_use

    def _entries(self) -> dict[str, ServerConfig]:
        return self._config.mcp_servers

    def get(self, name: str) -> ServerConfig:
        """The entry named ``name``, or UnknownServerError."""
        entry = self._entries().get(name)
        if entry is None:
            raise UnknownServerError(name, sorted(self._entries()))
        return entry

    def taken(self, name: str) -> bool:
        """Whether a server of this name is configured or running."""
        return name in self._entries() or self._in_use(name)

    def add(self, name: str, entry: ServerConfig, *, replace: bool = False, taken_hint: str) -> ServerConfig:
        """Add ``entry`` as ``name`` and save; a taken name is refused (``taken_hint`` says how to go on)
        unless ``replace``, which keeps what the editor does not show (see the module's docstring)."""
        if not name.strip():
            raise InvalidParamsError("a server needs a name")
        if self.taken(name):
            if not replace:
                raise ServerExistsError(name, hint=taken_hint)
            entry = replaced(self._entries().get(name), entry)
        self._entries()[name] = entry
        self._save()
        return entry

    def add_new(self, found: dict[str, ServerConfig]) -> Imported:
        """Add the servers of another host's config (an import); names already taken are skipped."""
        out = Imported()
        for name, entry in found.items():
            if self.taken(name):
                out.skipped.append((name, TAKEN_REASON))
                continue
            self._entries()[name] = untrusted(entry)
            out.added.append(name)
        if out.added:
            self._save()
        return out

    def remove(self, name: str) -> ServerConfig | None:
        """Forget the entry and save; None when only a running server had the name."""
        if not self.taken(name):
            raise UnknownServerError(name, sorted(self._entries()))
        entry = self._entries().pop(name, None)
        if entry is not None:
            self._save()
        return entry

    def change(self, name: str, **settings: Any) -> ServerConfig:
        """Set some of an entry's own settings, by their config keys, and save; the rest stays.

        ``disabled`` (enable/disable), ``allowUnsafeEval``, ``trustAnnotations``, ``useInstructions``,
        ``logLevel``, ``roots``, ``timeout``, ``oauth`` (its secrets: ``core/mcp/oauth/client_setup.py``). How the
        server is started or reached changes by a replacement only.
        """
        wrong = CONNECTION_FIELDS.intersection(settings)
        if wrong:
            raise InvalidParamsError(f"{', '.join(sorted(wrong))} change by replacing the server (servers.add)")
        entry = ServerConfig.model_validate({**self.get(name).to_json(), **settings})
        self._entries()[name] = entry
        self._save()
        return entry
