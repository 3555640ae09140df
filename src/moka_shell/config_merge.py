"""Three-way merging of config JSON, so a save applies only this process's changes.

Several writers share one config file: the running app, ``moka servers add`` in a terminal,
a second Moka, a person with an editor. Each keeps the file's content as it last read it (the
base); its changes are the difference between that base and what it holds now, and a save
applies exactly those to whatever the file holds at that moment.
"""

from __future__ import annotations

from typing import Any

Path = tuple[str, ...]
# A change: the key path, and the new value (or DELETE when the key went away).
Change = tuple[Path, Any]


class _Delete:
    def __repr__(self) -> str:
        return "DELETE"


DELETE: Any = _Delete()


def _atomic(path: Path) -> bool:
    # One server entry is one thing: a writer that changed it means its whole version, so an
    # edit here never mixes with an edit there into an entry nobody wrote (a command and a url).
    return len(path) == 2 and path[0] == "mcpServers"


def diff(base: dict[str, Any], current: dict[str, Any], path: Path = ()) -> list[Change]:
    """The changes that turn ``base`` into ``current``; lists and scalars change whole."""
    changes: list[Change] = []
    for key in base.keys() - current.keys():
        changes.append(((*path, key), DELETE))
    for key, value in current.items():
        sub = (*path, key)
        old = base.get(key, DELETE)
        if isinstance(old, dict) and isinstance(value, dict) and not _atomic(sub):
            changes.extend(diff(old, value, sub))
        elif old is DELETE or old != value:
            changes.append((sub, value))
    return changes


def apply(target: dict[str, Any], changes: list[Change]) -> dict[str, Any]:
    """A copy of ``target`` with ``changes`` applied (missing parents are created)."""
    out = _copy(target)
    for path, value in changes:
        node = out
        for key in path[:-1]:
            child = node.get(key)
            if not isinstance(child, dict):
                if value is DELETE:
                    break  # the parent is gone already, and so is the key
                child = node[key] = {}
            node = child
        else:
            if value is DELETE:
                node.pop(path[-1], None)
            else:
                node[path[-1]] = _copy(value)
    return out


def changed_servers(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    """Names of the servers added, removed or changed between two config JSONs."""
    old, new = before.get("mcpServers") or {}, after.get("mcpServers") or {}
    return {name for name in old.keys() | new.keys() if old.get(name) != new.get(name)}


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
