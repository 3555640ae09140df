"""``Registered``: an object a plugin registered, with the plugin it came from.

Its own module so the core can name the registries' entries without importing the plugin host.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass
class Registered(Generic[T]):
    """An object a plugin registered, with the plugin it came from."""

    obj: T
    plugin: str
