"""Fakes and helpers for testing Moka and Moka plugins.

``running_app`` / ``start_app`` start a real core with the servers and plugins a test names,
``EventRecorder`` keeps what it pushed, ``RecordingShell`` what it asked its shell to do;
``InMemoryTransport`` serves an MCP server from the test's own process; the fake model servers
are in ``moka_shell.testing.fake_openai`` and ``fake_anthropic``.
"""

from moka_shell.testing.app import EventRecorder, running_app, start_app
from moka_shell.testing.memory import InMemoryTransport, TransportPlugin
from moka_shell.testing.shell import FAKE_ENDPOINTS, RecordingShell

__all__ = ["FAKE_ENDPOINTS", "EventRecorder", "InMemoryTransport", "RecordingShell", "TransportPlugin", "running_app",
           "start_app"]
