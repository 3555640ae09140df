"""The form of a server's question (elicitation): its requested schema and an answer to it, checked.

A person's answer (``core/mcp/elicitation.py``) and one given up front (``core/mcp/answers.py``) are
checked by the same rules, here, so neither of those modules needs the other for them.
"""

from __future__ import annotations

import json
from typing import Any

from moka_shell.errors import ElicitationRefusedError, InvalidParamsError

MAX_CONTENT = 64 * 1024  # bytes of JSON in one answer


def check_schema(schema: Any) -> dict[str, Any]:
    """The requested schema, if it is the flat object of primitive fields the spec allows."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object" or \
            not isinstance(schema.get("properties", {}), dict):
        raise ElicitationRefusedError("the server's form (requestedSchema) is not an object with properties")
    import jsonschema  # only when a server asks for input: 2 MiB and ~80 ms nobody else needs at start

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ElicitationRefusedError(f"the server's form (requestedSchema) is not a valid JSON Schema: "
                                      f"{exc.message}") from None
    return schema


def check_content(schema: dict[str, Any], content: Any) -> dict[str, Any]:
    """The person's answer, validated against the requested schema (InvalidParamsError says what is wrong)."""
    if not isinstance(content, dict):
        raise InvalidParamsError("'content' must be an object with the form's fields")
    if len(json.dumps(content, default=str)) > MAX_CONTENT:
        raise InvalidParamsError(f"the answer is larger than {MAX_CONTENT // 1024} KiB")
    for key, value in content.items():
        ok = isinstance(value, (str, int, float, bool)) or value is None or \
            (isinstance(value, list) and all(isinstance(v, str) for v in value))
        if not ok:
            raise InvalidParamsError(f"field {key!r}: only text, numbers, true/false and lists of choices can be sent")
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(content), key=lambda e: list(e.path))
    if errors:
        where = ".".join(str(p) for p in errors[0].path) or "the form"
        raise InvalidParamsError(f"{where}: {errors[0].message}")
    return content
