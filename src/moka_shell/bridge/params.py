"""Reading a bridge request's parameters: a wrong one is the caller's error (-32602), said plainly."""

from __future__ import annotations

from typing import Any

from moka_shell.errors import InvalidParamsError

Params = dict[str, Any]


def req_str(p: Params, key: str) -> str:
    """A required string parameter (numbers are accepted and turned into text)."""
    value = p.get(key)
    if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value) != "":
        return str(value)
    raise InvalidParamsError(f"{key!r} is required and must be a string" + ("" if value is None else f", not {value!r}"))


def opt_str(p: Params, key: str) -> str | None:
    """An optional string parameter (empty means not given)."""
    value = p.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidParamsError(f"{key!r} must be a string, not {value!r}")
    return value


def opt_int(p: Params, key: str, default: int | None = None) -> int | None:
    """An optional whole number (numeric strings are accepted)."""
    value = p.get(key)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InvalidParamsError(f"{key!r} must be a whole number, not {value!r}") from None


def opt_dict(p: Params, key: str) -> dict[str, Any]:
    """An optional JSON object ({} when not given)."""
    value = p.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidParamsError(f"{key!r} must be a JSON object, not {type(value).__name__}")
    return value
