"""repair_partial_json: every prefix of real tool arguments gives None or a consistent subset."""

from __future__ import annotations

import json
from typing import Any

import pytest

from moka_shell.core.chat.partial_json import repair_partial_json

ARGUMENTS: list[Any] = [
    {"location": "Paris, France", "unit": "celsius"},
    {"path": "/home/ana/notes/todo.md", "content": "line one\nline \"two\"\ttabbed\\end"},
    {"query": "SELECT * FROM t WHERE x > 10", "limit": 25, "offset": 0, "explain": False},
    {"points": [[1.5, -2.25], [3e2, 4E-1], [0, -0.0]], "closed": True, "label": None},
    {"nested": {"deep": {"deeper": {"list": [1, {"k": "v"}, [], {}], "empty": ""}}}},
    {"emoji": "caf\u00e9 \U0001f600 \u4e2d\u6587", "escaped_slash": "a/b", "ctrl": "\u0001\u001f"},
    {"items": [{"id": 1, "tags": ["a", "b"]}, {"id": 22, "tags": []}], "count": 123456789},
    {"big": -12345.678e-10, "small": 1e5, "t": True, "f": False, "n": None, "s": "0"},
    {},
    {"k": {}},
]


def _dumps_variants(obj: Any) -> list[str]:
    """The ways providers actually serialise: compact, spaced, pretty, and ASCII-escaped."""
    return [
        json.dumps(obj, separators=(",", ":"), ensure_ascii=False),
        json.dumps(obj),
        json.dumps(obj, indent=2, ensure_ascii=False),
        json.dumps(obj, ensure_ascii=True),
    ]


def consistent(partial: Any, full: Any) -> bool:
    """True if `partial` could grow into `full` (the prefix-consistency the module promises)."""
    if isinstance(full, dict):
        return isinstance(partial, dict) and all(k in full and consistent(v, full[k]) for k, v in partial.items())
    if isinstance(full, list):
        if not isinstance(partial, list) or len(partial) > len(full):
            return False
        if any(not _same(p, f) for p, f in zip(partial[:-1], full)):
            return False
        return not partial or consistent(partial[-1], full[len(partial) - 1])
    if isinstance(full, str):
        return isinstance(partial, str) and full.startswith(partial)
    return _same(partial, full)


def _same(a: Any, b: Any) -> bool:
    # True == 1 in Python; a repaired value must have the very same type too.
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("obj", ARGUMENTS, ids=[str(i) for i in range(len(ARGUMENTS))])
def test_every_prefix_is_none_or_consistent(obj: Any) -> None:
    for text in _dumps_variants(obj):
        for end in range(len(text) + 1):
            got = repair_partial_json(text[:end])
            assert got is None or consistent(got, obj), (text[:end], got)
        assert repair_partial_json(text) == obj


def test_results_only_grow_as_more_arrives() -> None:
    text = json.dumps(ARGUMENTS[6])
    seen = [repair_partial_json(text[:end]) for end in range(len(text) + 1)]
    keys = [len(r) for r in seen if r is not None]
    assert keys == sorted(keys)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", None),
        ("   ", None),
        ("[1, 2]", None),
        ('"just a string"', None),
        ("{", {}),
        ('{"pa', {}),
        ('{"path"', {}),
        ('{"path":', {}),
        ('{"path": ', {}),
        ('{"path": "/usr/lo', {"path": "/usr/lo"}),
        ('{"a": "x", ', {"a": "x"}),
        ('{"a": "x",', {"a": "x"}),
        ('{"n": 12', {}),
        ('{"n": 12,', {"n": 12}),
        ('{"n": 12 ', {"n": 12}),
        ('{"n": -', {}),
        ('{"n": 1.', {}),
        ('{"n": 1e', {}),
        ('{"t": tr', {}),
        ('{"t": true', {"t": True}),
        ('{"z": nul', {}),
        ('{"z": null}', {"z": None}),
        ('{"l": [1, 2, "th', {"l": [1, 2, "th"]}),
        ('{"l": [1, 2', {"l": [1]}),
        ('{"l": [', {"l": []}),
        ('{"o": {"p": {"q": "r', {"o": {"p": {"q": "r"}}}),
        ('{"s": "a\\', {"s": "a"}),
        ('{"s": "a\\n', {"s": "a\n"}),
        ('{"s": "a\\u00', {"s": "a"}),
        ('{"s": "a\\u00e9', {"s": "a\u00e9"}),
        ('{"s": "\\ud83d', {"s": ""}),
        ('{"s": "\\ud83d\\', {"s": ""}),
        ('{"s": "\\ud83d\\ude0', {"s": ""}),
        ('{"s": "\\ud83d\\ude00', {"s": "\U0001f600"}),
        ('{"s": "x\\ud83dy"}', {"s": "x\ud83dy"}),
        ('{"a": 1}', {"a": 1}),
        ('{"a": 1}  ', {"a": 1}),
    ],
)
def test_specific_prefixes(text: str, expected: dict[str, Any] | None) -> None:
    assert repair_partial_json(text) == expected


@pytest.mark.parametrize(
    "text",
    ['{"a" 1', "{a: 1}", '{"a": 1 2', '{"a": [1 2', '{"a": tx', '{"a": 01,', '{"s": "\\x', '{"s": "\\uZZ', "{,"],
)
def test_malformed_text_gives_none(text: str) -> None:
    assert repair_partial_json(text) is None


def test_deep_nesting_does_not_crash() -> None:
    result = repair_partial_json('{"a": ' + "[" * 5000)
    assert result is None or isinstance(result, dict)
