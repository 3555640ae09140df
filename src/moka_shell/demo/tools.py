"""moka-demo's tool handlers, as wire JSON results; shared by the stdio and the SDK mode."""

from __future__ import annotations

from typing import Any

from moka_shell.demo import catalog, dice

PLAYGROUND_TEXT = "Opened the moka-demo playground. The person can now try each host method from its buttons."


class ArgumentsInvalid(ValueError):
    """Tool arguments that do not fit the tool's input schema."""


def _text_result(text: str, structured: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False, "structuredContent": structured}


def error_result(tool: str, message: str) -> dict[str, Any]:
    """A failed call as the SDK gives it: an `isError` result the model can read, not a protocol error."""
    return {"content": [{"type": "text", "text": f"Error executing tool {tool}: {message}"}], "isError": True}


def _as_integer(value: Any) -> int | None:
    # The SDK's validation is lax here: booleans, whole floats and digit strings count as integers.
    if isinstance(value, bool | int):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def coerce(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments checked against the tool's input schema, defaults filled; else ArgumentsInvalid."""
    properties: dict[str, Any] = catalog.TOOLS_BY_NAME[tool]["inputSchema"]["properties"]
    values: dict[str, Any] = {}
    problems: list[str] = []
    for field, schema in properties.items():
        if field not in arguments:
            values[field] = schema["default"]
            continue
        number = _as_integer(arguments[field])
        if number is None:
            problems.append(f"{field}\n  Input should be a valid integer (got {arguments[field]!r})")
        values[field] = number
    if problems:
        count = f"{len(problems)} validation error{'s' if len(problems) > 1 else ''}"
        raise ArgumentsInvalid(f"{count} for {tool}Arguments\n" + "\n".join(problems))
    return values


def call(tool: str, arguments: dict[str, Any], log: dice.RollLog) -> dict[str, Any]:
    """Run one tool with coerced arguments; DiceError for values out of range."""
    if tool in ("roll_dice", "reroll_dice"):
        result = dice.roll(arguments["sides"], arguments["count"])
        log.record(result, "model" if tool == "roll_dice" else "app")
        return _text_result(dice.describe(result), dict(result))
    if tool == "open_playground":
        return _text_result(PLAYGROUND_TEXT, {"result": PLAYGROUND_TEXT})
    if tool == "dice_history":
        history = log.snapshot()
        lines = [dice.describe(entry) for entry in history["entries"]] or ["No rolls yet."]
        return _text_result("\n".join(lines), dict(history))
    if tool == "summarize_rolls":
        summary = dice.summarize(log.snapshot()["entries"])
        return _text_result(summary, {"result": summary})
    raise KeyError(tool)
