"""A view's lifecycle has one writer, the View, and it keeps view.py's order rules.

The views are real ones of the demo server (in this process), created and fed through the ViewHost
as the chat and the Tool runner feed them; what reaches the page is read from the pushed events.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import moka_shell
from moka_shell.config import ServerConfig
from moka_shell.core.app import MokaApp
from moka_shell.core.views.view import View
from moka_shell.demo.server import build_server
from moka_shell.errors import ViewOrderError
from moka_shell.paths import Paths
from moka_shell.plugins import PluginHost
from moka_shell.testing import EventRecorder, start_app
from moka_shell.testing.memory import InMemoryTransport

pytestmark = pytest.mark.anyio
LIFECYCLE = ("_state", "_initialized", "_arguments", "_result", "_cancelled", "_ended", "_failure", "_parking",
             "_released")


@pytest.fixture
async def app(paths: Paths):  # type: ignore[no-untyped-def]
    app = await start_app(paths, servers={"moka-demo": ServerConfig(type="memory")}, store=False,
                          plugins=PluginHost(extra=[InMemoryTransport(build_server).plugin()]))
    yield app
    await app.stop()


async def ready_view(app: MokaApp, posts: EventRecorder) -> View:
    """A roll_dice view that finished its handshake; ``posts`` records what it is sent."""
    app.subscribe(posts)
    view = await app.view_host.open_view("moka-demo", "roll_dice")
    assert view is not None
    handle = app.view_host.dispatcher.handle
    await handle(view.id, {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {
        "protocolVersion": "2026-01-26", "appInfo": {"name": "t", "version": "1"}, "appCapabilities": {}}})
    await handle(view.id, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
    assert view.state == "ready"
    return view


def methods(posts: EventRecorder) -> list[str]:
    return [d["message"]["method"] for d in posts.data() if "method" in d["message"]]


async def test_a_result_before_its_input_is_refused(app: MokaApp) -> None:
    """tool-result comes after tool-input: a result with no input is a caller's bug, refused, nothing sent."""
    posts = EventRecorder("view.post")
    view = await ready_view(app, posts)
    with pytest.raises(ViewOrderError, match="tool-result before its tool-input"):
        app.view_host.set_result(view, {"content": [{"type": "text", "text": "early"}]})
    assert view.result is None and not view.ended
    assert "ui/notifications/tool-result" not in methods(posts)
    app.view_host.set_input(view, {"sides": 6})
    app.view_host.set_result(view, {"content": [{"type": "text", "text": "4"}]})
    assert methods(posts)[-2:] == ["ui/notifications/tool-input", "ui/notifications/tool-result"]


async def test_input_once_and_the_first_end_wins(app: MokaApp) -> None:
    """A second tool-input and an end after the end are ignored: the view hears each once, in order."""
    posts = EventRecorder("view.post")
    view = await ready_view(app, posts)
    app.view_host.set_input(view, {"sides": 6})
    app.view_host.set_input(view, {"sides": 20})
    app.view_host.set_result(view, {"content": [{"type": "text", "text": "4"}]})
    app.view_host.cancel(view, "too late")
    app.view_host.set_result(view, {"content": [{"type": "text", "text": "5"}]})
    assert view.arguments == {"sides": 6} and view.cancelled is None
    assert methods(posts).count("ui/notifications/tool-input") == 1
    assert methods(posts).count("ui/notifications/tool-result") == 1
    assert "ui/notifications/tool-cancelled" not in methods(posts)
    assert view.give_input({"sides": 8}) is False and view.give_cancelled("no") is False


async def test_a_cancellation_without_input_sends_an_empty_input_first(app: MokaApp) -> None:
    """A call that failed before its arguments were complete still ends in order: input {}, then cancelled."""
    posts = EventRecorder("view.post")
    view = await ready_view(app, posts)
    app.view_host.cancel(view, "The tool call failed: boom")
    assert methods(posts)[-2:] == ["ui/notifications/tool-input", "ui/notifications/tool-cancelled"]
    assert view.arguments == {} and view.cancelled == "The tool call failed: boom"


async def test_an_ended_view_cannot_come_back(app: MokaApp) -> None:
    """closed is final and only a parked view is mounted again: other moves are refused."""
    posts = EventRecorder("view.post")
    view = await ready_view(app, posts)
    await app.view_host.close(view, "test")
    assert view.state == "closed" and not view.initialized
    with pytest.raises(ViewOrderError, match="from closed to ready"):
        view.handshake_done()
    with pytest.raises(ViewOrderError, match="from closed to loading"):
        view.remount()
    assert view.fail("late") is False and view.state == "closed"


async def test_lifecycle_fields_are_read_only(app: MokaApp) -> None:
    """Nobody but the View writes them: assigning one is an error."""
    view = await ready_view(app, EventRecorder("view.post"))
    for name in ("state", "initialized", "arguments", "result", "cancelled", "failure", "parking", "released"):
        with pytest.raises(AttributeError):
            setattr(view, name, None)


def test_only_view_py_writes_the_lifecycle() -> None:
    """No module but core/views/view.py assigns a view's private lifecycle fields (another object's own
    fields of the same names, ``self._result`` of a class of its own, are not a view's)."""
    src = Path(moka_shell.__file__).parent
    offenders = []
    for path in sorted(src.rglob("*.py")):
        if path == src / "core" / "views" / "view.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for target in targets:
                for el in (target.elts if isinstance(target, ast.Tuple) else [target]):
                    if isinstance(el, ast.Attribute) and el.attr in LIFECYCLE and \
                            not (isinstance(el.value, ast.Name) and el.value.id == "self"):
                        offenders.append(f"{path.relative_to(src)}:{el.lineno} {ast.unparse(el)}")
    assert offenders == []
