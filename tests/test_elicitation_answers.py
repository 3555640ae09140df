"""Answers given up front to servers' questions, for `moka call`, `moka chat` and `moka check` (findings:
truth-and-conformance "MCP client": elicitation with no person). Before, every question was refused."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from moka_shell.config import MokaConfig, ServerConfig
from moka_shell.core.mcp.answers import ScriptedAnswers
from moka_shell.errors import UsageError
from moka_shell.paths import Paths
from moka_shell.testing import start_app

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "servers" / "elicit_server.py"
ERAS = [pytest.param([], id="2026-07-28"), pytest.param(["--legacy"], id="legacy")]


def moka(tmp_path: Path, *args: str, flags: list[str] | None = None, extra: dict[str, object] | None = None,
         stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"mcpServers": {"e": {"command": sys.executable,
                                                       "args": [str(SERVER), str(tmp_path / "log"), *(flags or [])]}},
                                  **(extra or {})}))
    env = {**os.environ, "MOKA_CONFIG": str(config), "MOKA_DATA_DIR": str(tmp_path / "data")}
    return subprocess.run([sys.executable, "-m", "moka_shell", *args], capture_output=True, text=True, timeout=120,
                          env=env, input=stdin)


@pytest.mark.parametrize("flags", ERAS)
def test_call_answers_a_form_from_a_flag_with_the_schema_filling_the_rest(tmp_path: Path, flags: list[str]) -> None:
    """`--answer` gives what has no default; the form's defaults fill the rest; stderr says what was answered."""
    proc = moka(tmp_path, "call", "e", "ask_person", "--answer", '{"content": {"name": "Ada", "age": 36}}',
                flags=flags)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "accepted: name=Ada age=36 color=green subscribe=False" in proc.stdout
    assert "'e' asked 'Who are you?" in proc.stderr and "answered accept (age, color, name, subscribe)" in proc.stderr
    assert "Ada" not in proc.stderr  # what was answered is named by its fields, never its values


def test_call_takes_the_defaults_and_says_when_they_cannot_answer(tmp_path: Path) -> None:
    """`--answer-defaults` accepts a form whose fields all have defaults; one with required fields without is refused."""
    ok = moka(tmp_path, "call", "e", "pick_colour", "--answer-defaults")
    assert ok.returncode == 0 and "picked blue x3" in ok.stdout, ok.stdout + ok.stderr
    refused = moka(tmp_path, "call", "e", "ask_person", "--answer-defaults")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "has no default for name, age" in refused.stdout + refused.stderr


def test_answers_file_per_question_in_order_then_refuses(tmp_path: Path) -> None:
    """A file's answers are matched by the question's words and used once; a URL question needs its own."""
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"answers": [
        {"message": "colour", "action": "decline"},
        {"mode": "url", "action": "accept"},
        {"message": "who are you", "content": {"name": "Bo", "age": 7, "color": "red"}}]}))
    first = moka(tmp_path, "call", "e", "pick_colour", "--answers", str(answers))
    assert first.returncode == 0 and "declined" in first.stdout, first.stdout + first.stderr
    url = moka(tmp_path, "call", "e", "connect_account", "--answers", str(answers))
    assert url.returncode == 0 and "url accept" in url.stdout, url.stdout + url.stderr
    person = moka(tmp_path, "call", "e", "ask_person", "--answers", "-", stdin=answers.read_text())
    assert "accepted: name=Bo age=7 color=red" in person.stdout, person.stdout + person.stderr
    # The file's only URL answer is the one above; a form answer never fits a URL question.
    none_fits = moka(tmp_path, "call", "e", "connect_account", "--answer", '{"action": "accept"}')
    assert none_fits.returncode == 1
    assert "none of the answers given fits it" in none_fits.stdout + none_fits.stderr


def test_an_answer_that_does_not_fit_the_form_is_refused_with_the_reason(tmp_path: Path) -> None:
    """The answer is checked against the schema as a person's is: nothing invalid reaches the server."""
    proc = moka(tmp_path, "call", "e", "ask_person", "--answer", '{"content": {"name": "Ada", "age": 500}}')
    assert proc.returncode == 1
    assert "the answer given does not fit its form: age: 500 is greater than the maximum of 150" in \
        proc.stdout + proc.stderr


def test_bad_answers_are_usage_errors_that_say_what_is_wrong(tmp_path: Path) -> None:
    """Wrong JSON, unknown keys and content on a decline are refused before anything starts (exit 2)."""
    for arg, said in (("{", "--answer 1 is not JSON"), ('{"acton": "accept"}', "unknown key(s) acton"),
                      ('{"action": "decline", "content": {}}', "only an accepted form has one"),
                      ('{"action": "maybe"}', "'action' must be accept, decline or cancel")):
        with pytest.raises(UsageError, match=said.replace("(", r"\(").replace(")", r"\)")):
            ScriptedAnswers.from_options(None, [arg], False)
    (tmp_path / "a.json").write_text('{"answer": []}')
    proc = moka(tmp_path, "call", "e", "pick_colour", "--answers", str(tmp_path / "a.json"))
    assert proc.returncode == 2 and "unknown key(s) answer (known: answers, defaults)" in proc.stderr
    assert ScriptedAnswers.from_options(None, [], False) is None


def test_chat_answers_the_models_call(tmp_path: Path) -> None:
    """`moka chat --answer-defaults`: the model's tool call gets its answer and the transcript says so."""
    from moka_shell.testing.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer() as srv:
        srv.tool_then_reply("pick_colour", {}, "Blue it is.")
        proc = moka(tmp_path, "chat", "--approve", "all", "--answer-defaults", "pick one",
                    extra={"agent": {"backend": "ollama", "model": "m", "baseUrls": {"ollama": srv.base_url}}})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "tool call: e/pick_colour {} [done]" in proc.stdout and "result: picked blue x3" in proc.stdout
    assert "answered: 'e' asked 'Pick a colour" in proc.stdout


@pytest.mark.anyio
async def test_a_check_run_uses_the_answers_it_was_given(paths: Paths, tmp_path: Path) -> None:
    """`moka check --answer…`: the check's app answers from them instead of refusing."""
    answers = ScriptedAnswers.from_options(None, ['{"message": "colour", "content": {"color": "red"}}'], False)
    app = await start_app(paths, config=MokaConfig(mcpServers={"e": ServerConfig(
        command=sys.executable, args=[str(SERVER), str(tmp_path / "log")])}), mode="check", store=False,
        answers=answers)
    try:
        result = await asyncio.wait_for(app.servers.get("e").call_tool("pick_colour", {}), 30)
    finally:
        await app.stop()
    assert result["content"][0]["text"] == "picked red x3"
    assert answers is not None and answers.answered and app.elicitations.unanswered == []


def test_check_command_takes_the_answer_options() -> None:
    """The three options exist on the commands that run with nobody to ask."""
    from moka_shell.cli.main import build_parser

    for command in (["check", "s"], ["call", "s", "t"], ["chat", "m"]):
        args = build_parser().parse_args([*command, "--answer-defaults", "--answer", "{}", "--answers", "f"])
        assert (args.answer_defaults, args.answer, args.answers) == (True, ["{}"], "f")
