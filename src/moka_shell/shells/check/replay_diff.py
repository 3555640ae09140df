"""Comparing a replay with its recording: which requests the recording answers, and each divergence.

A divergence is a request (or notification) the view sent that the recording does not have, one
whose parameters differ, an error the view threw, or a tool input or result the replay gave the
view that is not what the recorded view was given. Recorded messages the replay never reached
(a click the person made while recording) are listed, not counted: nobody clicks in a replay.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any

from moka_shell.core.views.recording import DATA_METHODS

# Chatter that varies with the engine, the window and the clock: never compared.
IGNORED = ("notifications/message", "ui/notifications/size-changed")
VOLATILE_KEYS = ("progressToken",)


def normalize(value: Any) -> Any:
    """``value`` without the keys that differ between any two runs."""
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [normalize(v) for v in value]
    return value


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Where two JSON values first differ, as ``path: recorded → replayed``; None when equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in a or key not in b or a[key] != b[key]:
                if key in a and key in b:
                    return first_difference(a[key], b[key], f"{path}.{key}" if path else str(key))
                return f"{path + '.' if path else ''}{key}: {_short(a.get(key, '(absent)'))} → {_short(b.get(key, '(absent)'))}"
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return first_difference(x, y, f"{path}[{i}]")
        return None
    return None if a == b else f"{path or 'value'}: {_short(a)} → {_short(b)}"


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) and value == "(absent)" else json.dumps(value, default=str)
    return text if len(text) <= limit else text[:limit - 1] + "…"


@dataclass
class Exchange:
    """One recorded request of the view and the reply it got."""

    method: str
    params: Any
    reply: dict[str, Any] | None


def recorded_exchanges(messages: list[dict[str, Any]]) -> dict[str, deque[Exchange]]:
    """The view's recorded requests by method, each with its recorded reply, in order."""
    out: dict[str, deque[Exchange]] = defaultdict(deque)
    waiting: dict[Any, Exchange] = {}
    for m in messages:
        msg = m.get("message")
        if not isinstance(msg, dict):
            continue
        if m.get("direction") == "in" and isinstance(msg.get("method"), str) and msg.get("id") is not None:
            ex = Exchange(msg["method"], normalize(msg.get("params") or {}), None)
            out[ex.method].append(ex)
            waiting[msg["id"]] = ex
        elif m.get("direction") == "out" and "method" not in msg and msg.get("id") in waiting:
            waiting.pop(msg["id"]).reply = msg
    return out


def _sent(messages: list[dict[str, Any]], direction: str) -> list[dict[str, Any]]:
    return [m["message"] for m in messages if m.get("direction") == direction and isinstance(m.get("message"), dict)
            and isinstance(m["message"].get("method"), str) and m["message"]["method"] not in IGNORED]


@dataclass
class Comparison:
    """The outcome: divergences (fail the replay) and what was not reached (does not)."""

    divergences: list[str] = field(default_factory=list)
    not_reached: list[str] = field(default_factory=list)
    compared: int = 0


def compare(recorded: list[dict[str, Any]], replayed: list[dict[str, Any]], problems: list[str]) -> Comparison:
    """Compare the view's messages (and the data it was given) in a replay with the recording's."""
    result = Comparison()
    queues: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
    for msg in _sent(recorded, "in"):
        queues[msg["method"]].append(msg)
    for msg in _sent(replayed, "in"):
        result.compared += 1
        method = msg["method"]
        if not queues[method]:
            result.divergences.append(f"the view sent {method}, which is not in the recording"
                                      + (f" (params {_short(msg.get('params'), 200)})" if msg.get("params") else ""))
            continue
        want = queues[method].popleft()
        diff = first_difference(normalize(want.get("params") or {}), normalize(msg.get("params") or {}))
        if diff:
            result.divergences.append(f"{method}: different params than recorded, {diff}")
    for method, left in queues.items():
        for _ in left:
            result.not_reached.append(method)
    given_then = {m["method"]: m for m in _sent(recorded, "out") if m["method"] in DATA_METHODS}
    for msg in _sent(replayed, "out"):
        then = given_then.get(msg["method"])
        if msg["method"] in DATA_METHODS and then is not None:
            diff = first_difference(normalize(then.get("params")), normalize(msg.get("params")))
            if diff:
                result.divergences.append(f"{msg['method']}: the view was given a different "
                                          f"{msg['method'].rsplit('-', 1)[-1]} than when recorded, {diff}")
    result.divergences.extend(problems)
    return result
