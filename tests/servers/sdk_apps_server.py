"""Views built on the official view SDK (inlined by sdk_view.py), for what only a real app shows.

Run it as `python tests/servers/sdk_apps_server.py` (stdio). It imports only `mcp`.

Tools:
- `note` (text): shows the newest `tool-input-partial`, the input and the result it got
  (`#partial`, `#input`, `#result`); `window.seen` lists the notifications in order.
- `late_note` (text): the same, but it connects (starts its handshake) only when the test
  calls `window.go()` in its frame: a view whose handshake ends after arguments streamed.
- `counter`: a count kept in memory (`#more` adds one, and tells the model the count as its
  model context), saved to localStorage only when the view is torn down and read back at start.
- `themed`: applies the host's style variables and fonts with the SDK's helpers, but never
  `applyDocumentTheme` (so nothing of its own sets `color-scheme`), and paints with them.
"""

from __future__ import annotations

from typing import Any

from mcp.server import MCPServer
from mcp.types import ToolAnnotations

from sdk_view import sdk_page

APP_MIME = "text/html;profile=mcp-app"
BASE = "ui://sdk-apps"

NOTE_BODY = "<h1>Note</h1><pre id='partial'></pre><pre id='input'></pre><pre id='result'></pre>"


def note_script(*, late: bool) -> str:
    """The note view's code: it records what it is sent; ``late`` waits for ``window.go()`` to connect."""
    start = "window.go = () => app.connect();" if late else "app.connect();"
    return ("const { App } = window.ExtApps;"
            "const app = new App({ name: 'sdk-note', version: '1.0.0' }, {});"
            "window.seen = [];"
            "const show = (id, v) => { document.getElementById(id).textContent = JSON.stringify(v); };"
            "app.ontoolinputpartial = (p) => { window.seen.push('partial'); show('partial', p.arguments); };"
            "app.ontoolinput = (p) => { window.seen.push('input'); show('input', p.arguments); };"
            "app.ontoolresult = (r) => { window.seen.push('result'); show('result', r.content[0].text); };"
            + start)


THEMED_BODY = ("<style>body { margin: 0; padding: 16px; background: var(--color-background-primary);"
               " color: var(--color-text-primary); font-family: var(--font-sans); }</style>"
               "<h1 id='title'>Themed</h1><p>Painted with the host's variables.</p>")
THEMED_SCRIPT = ("const { App, applyHostStyleVariables, applyHostFonts } = window.ExtApps;"
                 "const app = new App({ name: 'sdk-themed', version: '1.0.0' }, {});"
                 "const apply = (ctx) => { if (ctx && ctx.styles) { applyHostStyleVariables(ctx.styles.variables);"
                 " if (ctx.styles.css && ctx.styles.css.fonts) applyHostFonts(ctx.styles.css.fonts); } };"
                 "app.onhostcontextchanged = () => apply(app.getHostContext());"
                 "app.ontoolresult = () => { document.body.dataset.result = 'yes'; };"
                 "app.connect().then(() => { apply(app.getHostContext()); document.body.dataset.themed = 'yes'; });")


COUNTER_BODY = "<h1>Counter</h1><p id='count'>0</p><button id='more'>+1</button>"
COUNTER_SCRIPT = ("const { App } = window.ExtApps;"
                  "const app = new App({ name: 'sdk-counter', version: '1.0.0' }, {});"
                  "let count = Number(localStorage.getItem('count') || 0);"
                  "const show = () => { document.getElementById('count').textContent = String(count); };"
                  "show();"
                  "document.getElementById('more').onclick = () => { count += 1; show();"
                  " app.updateModelContext({ content: [{ type: 'text', text: `count ${count}` }] }); };"
                  "app.onteardown = async () => { localStorage.setItem('count', String(count)); return {}; };"
                  "app.ontoolresult = () => { document.body.dataset.result = 'yes'; };"
                  "app.connect();")


def build_server() -> MCPServer:
    """The server: one resource and one tool per view."""
    server = MCPServer("sdk-apps", version="0.0.1", log_level="WARNING")
    for name, late in (("note", False), ("late_note", True)):
        uri = f"{BASE}/{name}"
        html = sdk_page(name, NOTE_BODY, note_script(late=late))
        server.resource(uri, name=name, mime_type=APP_MIME)(_document(html))
        # Read-only, so a chat runs it unasked (the approval card is tested elsewhere).
        server.add_tool(_note, name=name, description=f"Write a note ({name} view)",
                        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
                        meta={"ui": {"resourceUri": uri}})
    server.resource(f"{BASE}/counter", name="counter", mime_type=APP_MIME)(
        _document(sdk_page("counter", COUNTER_BODY, COUNTER_SCRIPT)))
    server.add_tool(_themed, name="counter", description="A counter that saves when it is torn down",
                    annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
                    meta={"ui": {"resourceUri": f"{BASE}/counter"}})
    server.resource(f"{BASE}/themed", name="themed", mime_type=APP_MIME)(
        _document(sdk_page("themed", THEMED_BODY, THEMED_SCRIPT)))
    server.add_tool(_themed, name="themed", description="A view painted with the host's theme",
                    annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
                    meta={"ui": {"resourceUri": f"{BASE}/themed"}})
    return server


def _themed() -> str:
    return "themed"


def _note(text: str) -> str:
    return f"noted: {text}"


def _document(html: str) -> Any:
    def read() -> str:
        return html

    return read


if __name__ == "__main__":
    build_server().run("stdio")
