"""Answers given up front to servers' questions (elicitation), for runs with nobody to ask.

``moka call``, ``moka chat`` and ``moka check`` have no person to show a form to. A script or CI job
gives the answers before the run, in a file (``--answers FILE``), one by one (``--answer JSON``), or
as "take the form's defaults" (``--answer-defaults``)::

    {"answers": [{"server": "forms", "message": "your name", "action": "accept",
                  "content": {"name": "Ada"}},
                 {"mode": "url", "action": "decline"}],
     "defaults": true}

Each answer is used once, in order, for the first question it fits: ``server`` (its name),
``message`` (words the question contains, any case) and ``mode`` (``form``, the default, or
``url``) narrow which; ``"repeat": true`` keeps it for every question it fits. An accepted form
gets the schema's defaults for the fields the answer leaves out, and is checked against the
schema like a person's. A form no answer fits is accepted with its defaults when ``defaults`` is
on and every required field has one; anything else is refused with the reason, as before. An
accepted URL question is never opened: nobody is there to use the page.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from moka_shell.core.mcp.forms import check_content
from moka_shell.errors import ElicitationRefusedError, InvalidParamsError, UsageError

ACTIONS = ("accept", "decline", "cancel")
KEYS = {"server", "message", "mode", "action", "content", "repeat"}
MAX_FILE_BYTES = 1024 * 1024
MAX_ANSWERS = 1000


@dataclass
class Answer:
    """One answer given up front, and which questions it fits."""

    action: str
    content: dict[str, Any] | None = None
    server: str | None = None
    message: str | None = None
    mode: str = "form"
    repeat: bool = False
    used: bool = False

    def fits(self, server: str, mode: str, message: str) -> bool:
        """Whether this answer is for that question."""
        return (not self.used or self.repeat) and self.mode == mode and self.server in (None, server) and \
            (self.message is None or self.message.casefold() in message.casefold())


def _answer(raw: Any, where: str) -> Answer:
    if not isinstance(raw, dict):
        raise UsageError(f"{where} must be a JSON object such as "
                         '{"action": "accept", "content": {"name": "Ada"}}, not ' + json.dumps(raw)[:80])
    unknown = sorted(set(raw) - KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(KEYS))})")
    action = raw.get("action", "accept")
    mode = raw.get("mode", "form")
    content = raw.get("content")
    if action not in ACTIONS:
        raise UsageError(f"{where}: 'action' must be accept, decline or cancel, not {action!r}")
    if mode not in ("form", "url"):
        raise UsageError(f"{where}: 'mode' must be form or url, not {mode!r}")
    if content is not None and (not isinstance(content, dict) or action != "accept" or mode != "form"):
        raise UsageError(f"{where}: 'content' is an object of form fields, and only an accepted form has one")
    for key in ("server", "message"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise UsageError(f"{where}: {key!r} must be text")
    if not isinstance(raw.get("repeat", False), bool):
        raise UsageError(f"{where}: 'repeat' must be true or false")
    return Answer(action, content, raw.get("server"), raw.get("message"), mode, raw.get("repeat", False))


def _schema_defaults(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties") or {}
    return {k: p["default"] for k, p in props.items() if isinstance(p, dict) and "default" in p}


class ScriptedAnswers:
    """The answers one run was given; ``reply`` answers a question or says why it cannot."""

    def __init__(self, answers: list[Answer], *, defaults: bool = False) -> None:
        self.answers = answers
        self.defaults = defaults
        self.answered: list[str] = []  # what was answered, for the run's report (field names, never values)

    @classmethod
    def from_options(cls, file: str | None, answers: list[str], defaults: bool) -> ScriptedAnswers | None:
        """The CLI's ``--answers FILE``, ``--answer JSON`` (repeatable) and ``--answer-defaults``; None if none given."""
        given: list[Answer] = []
        if file is not None:
            data = _read(file)
            if isinstance(data, dict):
                unknown = sorted(set(data) - {"answers", "defaults"})
                if unknown:
                    raise UsageError(f"--answers {file}: unknown key(s) {', '.join(unknown)} (known: answers, defaults)")
                defaults = defaults or data.get("defaults") is True
                data = data.get("answers", [])
            if not isinstance(data, list) or len(data) > MAX_ANSWERS:
                raise UsageError(f"--answers {file}: 'answers' must be a list of at most {MAX_ANSWERS} answers")
            given += [_answer(a, f"--answers {file}, answer {i + 1}") for i, a in enumerate(data)]
        for i, text in enumerate(answers):
            try:
                raw = json.loads(text)
            except json.JSONDecodeError as exc:
                raise UsageError(f"--answer {i + 1} is not JSON: {exc.msg}",
                                 hint='e.g. --answer \'{"action": "accept", "content": {"name": "Ada"}}\'') from None
            given.append(_answer(raw, f"--answer {i + 1}"))
        if not given and not defaults:
            return None
        return cls(given, defaults=defaults)

    def reply(self, server: str, mode: str, message: str,
              schema: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None]:
        """(action, content) for this question; ElicitationRefusedError when no answer fits or it does not fit the form."""
        found = next((a for a in self.answers if a.fits(server, mode, message)), None)
        asked = f"{server!r} asked {message[:160]!r} ({mode} elicitation)"
        if found is None:
            if mode == "form" and self.defaults and schema is not None:
                missing = [k for k in schema.get("required") or [] if k not in _schema_defaults(schema)]
                if missing:
                    raise ElicitationRefusedError(
                        f"{asked}; its form has no default for {', '.join(missing)}, so the defaults cannot answer it. "
                        'Give those with --answer \'{"content": {...}}\'.')
                return self._done(asked, "accept", check_content(schema, _schema_defaults(schema)))
            raise ElicitationRefusedError(
                f"{asked}, and none of the answers given fits it. Add one with --answer "
                "(action, content; message, server or mode to say which question)"
                + (" or --answer-defaults" if mode == "form" else "") + ".")
        found.used = True
        if found.action != "accept" or mode == "url":
            return self._done(asked, found.action, None)
        merged = {**_schema_defaults(schema or {}), **(found.content or {})}
        try:
            content = check_content(schema or {"type": "object"}, merged)
        except InvalidParamsError as exc:
            raise ElicitationRefusedError(f"{asked}; the answer given does not fit its form: {exc}") from None
        return self._done(asked, "accept", content)

    def _done(self, asked: str, action: str, content: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None]:
        fields = f" ({', '.join(sorted(content))})" if content else ""
        self.answered.append(f"{asked}: answered {action}{fields}")
        return action, content


def _read(file: str) -> Any:
    try:
        if file == "-":
            text = sys.stdin.read(MAX_FILE_BYTES + 1)
        else:
            path = Path(file).expanduser()
            if path.stat().st_size > MAX_FILE_BYTES:
                raise UsageError(f"--answers {file} is larger than {MAX_FILE_BYTES // 1024} KiB")
            text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--answers {file}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"--answers {file} is not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--answers {file} is not JSON: {exc.msg} (line {exc.lineno})") from None
