"""Sampling honours the server's maxTokens, temperature and stopSequences (issue 15 item 6; finding
"sampling fidelity"), through a real server, the real app and the fake OpenAI-compatible provider."""

from __future__ import annotations

import sys

import pytest

from test_chat import ROOT, make_app
from moka_shell.config import ServerConfig
from moka_shell.paths import Paths
from moka_shell.testing.fake_openai import FakeOpenAIServer, Text

pytestmark = pytest.mark.anyio


async def test_max_tokens_temperature_and_stop_sequences_are_honoured(paths: Paths) -> None:
    """The provider gets max_tokens 33 and temperature 0.25; the text ends before "STOP"."""
    fault = [sys.executable, str(ROOT / "tests" / "servers" / "fault_server.py")]
    with FakeOpenAIServer() as srv:
        srv.enqueue([[Text("forty-"), Text("two STOP and then more")]])
        app, _events = await make_app(paths, srv.base_url, servers={"fault": ServerConfig(command=fault[0], args=fault[1:])})
        app.config.consent.sampling = "allow"
        try:
            result = await app.servers.get("fault").call_tool("ask_model_tuned", {"question": "meaning?"})
        finally:
            await app.stop()
    assert result["content"][0]["text"] == "forty-two |stopSequence"
    sent = srv.requests[0]
    assert sent["max_tokens"] == 33 and sent["temperature"] == 0.25
