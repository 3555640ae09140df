"""What the CLI prints is inert text: a server, view or recording cannot drive the terminal.

Tool names, results, a view's errors, log lines and recordings reach ``moka check``, ``replay``,
``call``, ``tools``, ``inspect`` and ``chat`` output. A raw ESC there can clear the screen, paint
"ALL CHECKS PASSED" in green over a CI log, set the window title (OSC) or worse (finding G5). So
every control character but newline and tab is written as a visible escape (``\\x1b``), and so are
the bidi controls that reorder what a line seems to say. ``inert`` is the one helper;
``InertStream`` applies it to everything the CLI writes to stdout and stderr, and the reports use
``one_line`` for fields that must not start a line of their own either.
"""

from __future__ import annotations

import re
import sys
from typing import IO, Any

# C0 controls but tab and newline, DEL, C1 controls, and the bidi embeddings, overrides and isolates.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_LINE_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\x85]")


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def line(text: object) -> str:
    """``text`` (a server's or view's field) as part of one line: inert, its line breaks escaped too."""
    return inert(str(text), one_line=True)


def inert(text: str, *, one_line: bool = False) -> str:
    """``text`` with every control character written as a visible escape (``one_line``: newlines too)."""
    if not one_line:
        text = text.replace("\r\n", "\n")  # a Windows line end is a line end, not a carriage return
    return (_LINE_CONTROLS if one_line else _CONTROLS).sub(_escape, text)


class InertStream:
    """A text stream that writes ``inert`` text to the stream it wraps (sys.stdout, sys.stderr)."""

    def __init__(self, stream: IO[str]) -> None:
        self.wrapped = stream

    def write(self, text: str) -> int:
        """Write ``text`` with its control characters escaped."""
        self.wrapped.write(inert(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, encoding, fileno…: the real stream's
        return getattr(self.wrapped, name)


def guard_output() -> tuple[IO[str], IO[str]]:
    """Make sys.stdout and sys.stderr inert; returns the streams they were, to put back."""
    before = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, InertStream):
        sys.stdout = InertStream(sys.stdout)  # type: ignore[assignment]
    if not isinstance(sys.stderr, InertStream):
        sys.stderr = InertStream(sys.stderr)  # type: ignore[assignment]
    return before
