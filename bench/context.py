"""What every suite gets: the mode (quick or full) and a way to say what it is doing."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")


@dataclass
class Context:
    """Quick mode keeps the whole run under 2 minutes; full mode under 10."""

    full: bool = False
    started: float = field(default_factory=time.monotonic)

    def pick(self, quick: T, full: T) -> T:
        """The quick or the full value."""
        return full if self.full else quick

    def log(self, text: str) -> None:
        """Progress on stderr, stamped with seconds since the start."""
        print(f"[{time.monotonic() - self.started:6.1f}s] {text}", file=sys.stderr, flush=True)
