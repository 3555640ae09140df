"""Runs one chat turn and prints every event the UI would be shown, then waits to be killed.

Used by tests/test_crash.py: the test kills this process with SIGKILL mid-turn and checks
that everything printed here is in the database.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from moka_shell.testing import FAKE_ENDPOINTS
from moka_shell.config import MokaConfig, ServerConfig
from moka_shell.core.app import MokaApp
from moka_shell.paths import Paths


async def main(data_dir: str, base_url: str) -> None:
    config = MokaConfig(mcpServers={"moka-demo": ServerConfig(command="moka", args=["demo-server"])})
    config.agent.backend, config.agent.model = "ollama", "fake-model"
    config.agent.base_urls = {"ollama": base_url}
    app = MokaApp(Paths(Path(data_dir) / "config.json", Path(data_dir)), config=config)
    app.subscribe(lambda ev, data: print(json.dumps({"event": ev, "data": data}, default=str), flush=True))
    await app.start(endpoints=FAKE_ENDPOINTS)
    await app.servers.wait_ready(timeout=30)
    cid = app.chat.start_turn(None, "tell me a long story and roll dice")
    await app.chat.wait(cid)
    await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
