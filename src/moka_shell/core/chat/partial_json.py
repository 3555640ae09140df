"""Best-effort parsing of a streamed JSON object prefix (tool-call arguments in flight).

Used to preview a tool call's arguments while the model is still writing them. The result
is *prefix-consistent*: every key it has is a key of the finished object, every string is a
prefix of the finished string, every array a prefix of the finished array, and every other
value (numbers, true/false/null) is already final. That is why a number at the very end
is left out: "12" may still become "125".

Never run a tool with a repaired object; only the complete arguments are fit for that.
"""

from __future__ import annotations

import json
import re
from typing import Any

_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NUMBER_CHARS = re.compile(r"[-+0-9.eE]*")
_NUMBER_PREFIX = re.compile(r"-?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?(?:[eE][+-]?[0-9]*)?)?")
_LITERALS = {"true": True, "false": False, "null": None}
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_WS = " \t\n\r"


class _Invalid(Exception):
    """The text is not a prefix of any JSON object."""


class _Missing:
    """Marks a value cut off before any usable part of it arrived."""


_MISSING = _Missing()


def is_valid_json(text: str) -> bool:
    """Is ``text`` one whole JSON document?"""
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def repair_partial_json(text: str) -> dict[str, Any] | None:
    """Turn a prefix of a JSON object into the best prefix-consistent object, or None."""
    parser = _Parser(text)
    parser.skip_ws()
    if parser.at_end() or parser.peek() != "{":
        return None
    try:
        value, _complete = parser.parse_object()
    except (_Invalid, RecursionError):
        return None
    return value


class _Parser:
    """A recursive-descent parser that stops gracefully at the end of the input."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def at_end(self) -> bool:
        return self.i >= len(self.s)

    def peek(self) -> str:
        return self.s[self.i]

    def skip_ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in _WS:
            self.i += 1

    def parse_value(self) -> tuple[Any, bool]:
        """Parse any value; returns (value, complete) or (_MISSING, False) at the end."""
        self.skip_ws()
        if self.at_end():
            return _MISSING, False
        ch = self.peek()
        if ch == "{":
            return self.parse_object()
        if ch == "[":
            return self.parse_array()
        if ch == '"':
            return self.parse_string()
        if ch == "-" or ch.isdigit():
            return self.parse_number()
        return self.parse_literal()

    def parse_object(self) -> tuple[dict[str, Any], bool]:
        self.i += 1  # the "{"
        obj: dict[str, Any] = {}
        self.skip_ws()
        if self.at_end():
            return obj, False
        if self.peek() == "}":
            self.i += 1
            return obj, True
        while True:
            self.skip_ws()
            if self.at_end():
                return obj, False  # after a trailing comma
            if self.peek() != '"':
                raise _Invalid
            key, key_done = self.parse_string()
            self.skip_ws()
            if not key_done or self.at_end():
                return obj, False  # a dangling (or half-written) key is dropped
            if self.peek() != ":":
                raise _Invalid
            self.i += 1
            value, done = self.parse_value()
            if value is _MISSING:
                return obj, False
            obj[key] = value
            if not done:
                return obj, False
            self.skip_ws()
            if self.at_end():
                return obj, False
            ch = self.peek()
            self.i += 1
            if ch == "}":
                return obj, True
            if ch != ",":
                raise _Invalid

    def parse_array(self) -> tuple[list[Any], bool]:
        self.i += 1  # the "["
        arr: list[Any] = []
        self.skip_ws()
        if self.at_end():
            return arr, False
        if self.peek() == "]":
            self.i += 1
            return arr, True
        while True:
            value, done = self.parse_value()
            if value is _MISSING:
                return arr, False
            arr.append(value)
            if not done:
                return arr, False
            self.skip_ws()
            if self.at_end():
                return arr, False
            ch = self.peek()
            self.i += 1
            if ch == "]":
                return arr, True
            if ch != ",":
                raise _Invalid

    def parse_string(self) -> tuple[str, bool]:
        """Parse a string; a cut-off one yields what was decoded so far."""
        self.i += 1  # the opening quote
        out: list[str] = []
        s, n = self.s, len(self.s)
        while self.i < n:
            ch = s[self.i]
            if ch == '"':
                self.i += 1
                return "".join(out), True
            if ch != "\\":
                out.append(ch)
                self.i += 1
                continue
            if self.i + 1 >= n:
                break  # a lone backslash at the end: wait for the rest
            esc = s[self.i + 1]
            if esc in _ESCAPES:
                out.append(_ESCAPES[esc])
                self.i += 2
                continue
            if esc != "u":
                raise _Invalid
            code = self._hex4(self.i + 2)
            if code is None:
                break  # an unfinished \uXXXX
            self.i += 6
            if 0xD800 <= code <= 0xDBFF:
                # A high surrogate waits for its low half: ending on a lone surrogate would
                # give a character the finished string does not have.
                if self.i >= n or (s[self.i] == "\\" and self.i + 1 >= n):
                    break
                if s.startswith("\\u", self.i):
                    low = self._hex4(self.i + 2)
                    if low is None:
                        break
                    if 0xDC00 <= low <= 0xDFFF:
                        out.append(chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)))
                        self.i += 6
                        continue
            out.append(chr(code))
        return "".join(out), False

    def _hex4(self, start: int) -> int | None:
        """The value of four hex digits at `start`, None if cut off; invalid digits raise."""
        digits = self.s[start : start + 4]
        if not all(c in "0123456789abcdefABCDEF" for c in digits):
            raise _Invalid
        return int(digits, 16) if len(digits) == 4 else None

    def parse_number(self) -> tuple[Any, bool]:
        run = _NUMBER_CHARS.match(self.s, self.i)
        end = run.end() if run else self.i
        token = self.s[self.i : end]
        if end >= len(self.s):
            # A number running into the end may still grow ("12" -> "125"), so wait.
            if _NUMBER_PREFIX.fullmatch(token):
                self.i = end
                return _MISSING, False
            raise _Invalid
        if not _NUMBER.fullmatch(token):
            raise _Invalid
        self.i = end
        is_float = any(c in token for c in ".eE")
        return (float(token) if is_float else int(token)), True

    def parse_literal(self) -> tuple[Any, bool]:
        rest = self.s[self.i : self.i + 5]
        for word, value in _LITERALS.items():
            if rest.startswith(word):
                self.i += len(word)
                return value, True
            if word.startswith(rest) and self.i + len(rest) >= len(self.s):
                self.i = len(self.s)
                return _MISSING, False
        raise _Invalid
