"""Views that remember: Moka's host-backed localStorage and sessionStorage, in real Chromium.

The view runs in an opaque origin, where the browser's own storage throws SecurityError; these
tests read the values back after every kind of remount (parked, popped out and back, reopened
after a restart of Moka), check that one server's views cannot read another's, the quota, the
`storage` event, and clearing from the server card.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from playwright.sync_api import Error as PlaywrightError

from browser_support import Moka, npm_stdio
from moka_shell.testing.fake_openai import FakeOpenAIServer
from support import SERVERS

SERVER = {"command": sys.executable, "args": [str(SERVERS / "storage_server.py")]}
SHOTS = Path("/tmp/moka-storage")


def boot(moka: Moka, view_id: str) -> dict[str, Any]:
    """What the view read from both storages before its own handshake (from the document alone)."""
    frame = moka.frame(view_id)
    frame.wait_for_selector('body[data-state="ready"]', state="attached", timeout=20000)
    return frame.evaluate("window.boot")  # type: ignore[no-any-return]


def write(moka: Moka, view_id: str, script: str) -> Any:
    """Run `script` in the view's own window (as the app's code would) and let the writes land."""
    frame = moka.frame(view_id)
    before = changes(moka, view_id)
    out = frame.evaluate(script)
    moka.wait(lambda: changes(moka, view_id) > before, what="the view's storage changes stored")
    return out


def changes(moka: Moka, view_id: str) -> int:
    """How many batches of storage changes the core stored for this view (the Inspector logs each)."""
    return sum(1 for e in moka.app.inspector.query(limit=100000)
               if e.get("view") == view_id and (e.get("message") or {}).get("event") == "storage-changed")


def stored(moka: Moka, server: str) -> dict[str, Any]:
    """What the core holds for a server (both areas), through the same bridge the card uses."""
    return moka.call("storage.usage", {"server": server})  # type: ignore[no-any-return]


def fed_in_order(moka: Moka, view_id: str) -> list[list[str]]:
    """After each handshake of the view, the input and result it was sent, in order."""
    rounds: list[list[str]] = []
    for e in moka.ui_rpc(view_id):
        method = e.get("method") or ""
        if e["direction"] == "in" and method == "ui/notifications/initialized":
            rounds.append([])
        elif rounds and e["direction"] == "out" and method.startswith("ui/notifications/tool-"):
            rounds[-1].append(method.rsplit("/", 1)[-1])
    return rounds


def remount_parked(moka: Moka, view: Any) -> None:
    """Park a view (torn down, frame removed, as off-screen views are) and bring it back."""
    host = moka.app.view_host
    moka.core.submit(host.close(view, "scrolled out of view", park=True)).result(20)
    moka.wait(lambda: view.state == "parked", what="parked")

    async def back() -> None:
        host.remount(view)
    moka.core.submit(back()).result(10)
    moka.wait(lambda: view.state == "ready" and "result_sent" in view.timings, 30, "remounted")


def test_values_survive_park_popout_restart_and_stay_per_server(moka_factory: Any, tmp_path: Path) -> None:
    """localStorage per server and sessionStorage per view come back after every remount."""
    with FakeOpenAIServer() as srv:
        srv.tool_then_reply("keeper__remember", {"topic": "colors"}, "Remembering.")
        settings = {"agent": {"backend": "ollama", "model": "fake-model", "baseUrls": {"ollama": srv.base_url}}}
        moka: Moka = moka_factory({"keeper": SERVER, "other": SERVER}, **settings)
        page = moka.open("chat")
        page.fill("#composer", "remember my colors")
        page.keyboard.press("Enter")
        page.locator('.tool-card [data-decision="once"]').click(timeout=20000)  # no annotations: Moka asks
        view = moka.wait_view_ready("remember")
        assert view.record_id  # a chat view: its sessionStorage is kept with the conversation
        first = boot(moka, view.id)
        assert first == {"local": {}, "session": {}}
        write(moka, view.id, "localStorage.setItem('color', 'blue'); localStorage.shape = 'round';"
                             "sessionStorage.setItem('draft', 'hello </script><!-- \\u2028 world');"
                             "[localStorage.length, Object.keys(localStorage).sort().join(','), 'shape' in localStorage]")
        assert json.loads(json.dumps(moka.frame(view.id).evaluate(
            "[localStorage.length, Object.keys(localStorage).sort(), localStorage.key(0), localStorage.getItem('x'),"
            " sessionStorage.draft]"))) == [3, ["color", "loads", "shape"], "loads", None, "hello </script><!-- \u2028 world"]
        assert stored(moka, "keeper")["localItems"] == 3 and stored(moka, "keeper")["sessionItems"] == 1

        # 1. parked and remounted
        remount_parked(moka, view)
        again = boot(moka, view.id)
        assert again["local"] == {"color": "blue", "shape": "round", "loads": "1"}
        assert again["session"] == {"draft": "hello </script><!-- \u2028 world"}

        # 2. popped out (a window of its own) and back inline
        with moka.context.expect_page() as popup_info:
            moka.call("view.setDisplayMode", {"viewId": view.id, "mode": "popout"})
        popup = popup_info.value
        popup.wait_for_load_state()
        frame = moka.wait(lambda: next((f for f in popup.frames if f"/view/{view.id}" in f.url), None), 20, "pop-out frame")
        frame.wait_for_selector('body[data-state="ready"]', state="attached", timeout=20000)
        out = frame.evaluate("window.boot")
        assert out["local"]["color"] == "blue" and out["local"]["loads"] == "2"
        assert out["session"] == {"draft": "hello </script><!-- \u2028 world"}
        frame.evaluate("sessionStorage.setItem('step', 'in the pop-out')")
        moka.wait(lambda: stored(moka, "keeper")["sessionItems"] == 2, what="the pop-out's write")
        popup.close()
        moka.wait(lambda: view.display_mode == "inline", 20, "back inline")
        moka.wait(lambda: any(f"/view/{view.id}" in f.url for f in page.frames), 20, "inline frame again")
        back = boot(moka, view.id)
        assert back["session"] == {"draft": "hello </script><!-- \u2028 world", "step": "in the pop-out"}
        assert back["local"]["loads"] == "3"
        # first mount, remounted after parking, the pop-out, inline again: the same feed each time
        # (a first handshake that ends while the call still waits for approval gets the arguments as
        # the newest tool-input-partial before that)
        rounds = fed_in_order(moka, view.id)
        assert rounds[0] in (["tool-input", "tool-result"], ["tool-input-partial", "tool-input", "tool-result"])
        assert rounds[1:] == [["tool-input", "tool-result"]] * 3

        # 3. a second server's view sees nothing of the first's, and writes its own
        moka.call("tools.run", {"server": "other", "tool": "remember", "arguments": {}})
        other = moka.wait(lambda: next((v for v in moka.views() if v.server == "other" and v.state == "ready"), None),
                          30, "the other server's view")
        assert boot(moka, other.id) == {"local": {}, "session": {}}
        write(moka, other.id, "localStorage.setItem('color', 'red')")
        assert moka.frame(view.id).evaluate("localStorage.color") == "blue"
        assert stored(moka, "other")["localItems"] == 2

    # 4. Moka restarts; the conversation is reopened and its view opened again
    record_id = view.record_id
    moka.close()
    moka.core.stop()
    moka2: Moka = moka_factory({"keeper": SERVER, "other": SERVER})
    page = moka2.open("chat")
    page.locator(".conv-item .conv-open").first.click()
    note = page.locator(f'.view-closed-note[data-record-id="{record_id}"] button')
    note.click()
    reopened = moka2.wait_view_ready("remember")
    assert reopened.record_id == record_id and reopened.id != view.id
    after = boot(moka2, reopened.id)
    assert after["local"] == {"color": "blue", "shape": "round", "loads": "4"}  # its fourth load
    assert after["session"] == {"draft": "hello </script><!-- \u2028 world", "step": "in the pop-out"}
    assert fed_in_order(moka2, reopened.id) == [["tool-input", "tool-result"]]
    assert reopened.arguments == {"topic": "colors"}


def test_quota_error_storage_event_and_clearing_from_the_card(moka_factory: Any) -> None:
    """Over 5 Mi characters is a QuotaExceededError; other views get `storage`; the card clears."""
    moka: Moka = moka_factory({"keeper": SERVER})
    page = moka.open("runner")
    moka.call("tools.run", {"server": "keeper", "tool": "remember", "arguments": {}})
    a = moka.wait_view_ready("remember")
    moka.call("tools.run", {"server": "keeper", "tool": "remember", "arguments": {"topic": "b"}})
    b = moka.wait(lambda: next((v for v in moka.views() if v.id != a.id and v.state == "ready"
                                and "result_sent" in v.timings), None), 30, "second view")
    boot(moka, a.id)
    boot(moka, b.id)
    outcome = write(moka, a.id, """(() => {
        const out = {};
        try { localStorage.setItem('big', 'x'.repeat(5 * 1024 * 1024)); out.big = 'stored'; }
        catch (e) { out.big = [e.name, e instanceof DOMException, e.code]; }
        localStorage.setItem('half', 'y'.repeat(2 * 1024 * 1024));
        try { sessionStorage.setItem('more', 'z'.repeat(4 * 1024 * 1024)); out.session = 'stored'; }
        catch (e) { out.session = e.name; }
        try { localStorage.setItem('more', 'z'.repeat(4 * 1024 * 1024)); out.more = 'stored'; }
        catch (e) { out.more = e.name; }
        try { indexedDB.open('x'); out.idb = 'opened'; } catch (e) { out.idb = [e.name, e.message]; }
        return out; })()""")
    assert outcome["big"] == ["QuotaExceededError", True, 22]
    assert outcome["session"] == "stored"  # sessionStorage has its own quota
    assert outcome["more"] == "QuotaExceededError"
    assert outcome["idb"][0] == "SecurityError" and "localStorage" in outcome["idb"][1]
    moka.wait(lambda: moka.frame(b.id).evaluate("window.events.map((e) => e.key).join(',')").endswith("half"),
              what="the storage event in the other view")
    assert moka.frame(b.id).evaluate("localStorage.half.length") == 2 * 1024 * 1024
    usage = stored(moka, "keeper")
    assert usage["localItems"] == 2 and usage["sessionItems"] == 1  # 'loads' and 'half'; 'more'

    moka.open("servers")
    card = page.locator('.server-card[data-server="keeper"] .server-storage')
    card.locator(".server-storage-text:has-text('3 items')").wait_for(timeout=10000)
    SHOTS.mkdir(exist_ok=True)
    moka.call("settings.set", {"key": "theme.mode", "value": "dark"})
    page.wait_for_timeout(300)  # the theme transition, for the picture only
    page.locator('.server-card[data-server="keeper"]').screenshot(path=str(SHOTS / "card-dark.png"))
    moka.call("settings.set", {"key": "theme.mode", "value": "light"})
    page.wait_for_timeout(300)
    SHOTS.mkdir(exist_ok=True)
    page.locator('.server-card[data-server="keeper"]').screenshot(path=str(SHOTS / "card.png"))
    card.locator('[data-action="clear-storage"]').click()
    page.locator("dialog[open] .btn-danger").click()
    card.locator(".server-storage-text:has-text('Nothing stored')").wait_for(timeout=10000)
    assert stored(moka, "keeper")["localItems"] == 0
    moka.wait(lambda: moka.frame(a.id).evaluate("[localStorage.length, sessionStorage.length]") == [0, 0],
              what="the live view's storage emptied")
    problems = [p for v in (a, b) for p in v.problems]
    assert problems == []  # storage traffic is never the view's fault
    assert not [e for e in moka.ui_rpc(a.id) if e.get("method") == "moka/storage"]  # not logged as app traffic


def test_a_view_writing_in_a_loop_is_never_refused(moka_factory: Any) -> None:
    """1,200 writes, each in its own task, and 700 in one go: the prelude keeps within the core's bounds (G1).

    The core takes 200 batches a second and 500 changes a batch; the prelude sends a batch at most
    every 10 ms and splits at 500, so a busy but honest app never sees its copy set back.
    """
    moka: Moka = moka_factory({"keeper": SERVER})
    moka.open("runner")
    moka.call("tools.run", {"server": "keeper", "tool": "remember", "arguments": {}})
    view = moka.wait_view_ready("remember")
    boot(moka, view.id)
    moka.frame(view.id).evaluate("""async () => {
        for (let i = 0; i < 1200; i++) { localStorage.setItem('tick', String(i)); await new Promise((r) => setTimeout(r, 0)); }
        for (let i = 0; i < 700; i++) localStorage.setItem('k' + i, 'v'); }""")
    moka.wait(lambda: stored(moka, "keeper")["localItems"] == 702, what="all of it stored")  # + 'loads'
    refused = [e for e in moka.app.inspector.query(limit=100000)
               if (e.get("message") or {}).get("event") == "storage-refused"]
    assert refused == []
    assert moka.frame(view.id).evaluate("localStorage.tick") == "1199"


def three_page_pdf(path: Path) -> Path:
    """A minimal three-page PDF, written by hand."""
    pages, objs = 3, ["<< /Type /Catalog /Pages 2 0 R >>"]
    objs.append(f"<< /Type /Pages /Kids [{' '.join(f'{3 + 2 * i} 0 R' for i in range(pages))}] /Count {pages} >>")
    for i in range(pages):
        content = f"BT /F1 48 Tf 72 700 Td (Page {i + 1}) Tj ET"
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 "
                    f"{3 + 2 * pages} 0 R >> >> /Contents {4 + 2 * i} 0 R >>")
        objs.append(f"<< /Length {len(content)} >>\nstream\n{content}\nendstream")
    objs.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out, offsets = b"%PDF-1.4\n", []
    for n, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n{obj}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode() + b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(out)
    return path


def test_official_pdf_viewer_gets_its_viewuuid_state_back_on_reopen(moka_factory: Any, tmp_path: Path) -> None:
    """@modelcontextprotocol/server-pdf keeps the page per viewUUID in localStorage; after a reopen it reads it back.

    The viewer renders the document (its PDF.js worker module is a data: script, which the view CSP
    allows since it adds no network path); the person turns to page 2 with the viewer's own Next
    button, the viewer saves the page itself, and its restore code reads it on the reopened view.
    """
    pdf_bin = npm_stdio("mcp-pdf-server")
    pdf = three_page_pdf(tmp_path / "three.pdf")
    with FakeOpenAIServer() as srv:
        srv.tool_then_reply("display_pdf", {"url": str(pdf)}, "Here it is.")
        moka: Moka = moka_factory({"pdf": {**pdf_bin, "args": [*pdf_bin["args"], str(pdf)]}},
                                  agent={"backend": "ollama", "model": "fake-model", "baseUrls": {"ollama": srv.base_url}})
        page = moka.open("chat")
        page.fill("#composer", "show me the PDF")
        page.keyboard.press("Enter")
        # It asks for the clipboard (a person's to grant) and, with no annotations to go by, to run.
        for selector in ("#consent-deny", '.tool-card [data-decision="once"]'):
            try:
                page.locator(selector).click(timeout=5000)
            except PlaywrightError:
                pass
        view = moka.wait_view_ready("display_pdf", timeout=60)
        uuid = view.result["_meta"]["viewUUID"]
        moka.wait(lambda: any(f"loadSavedPage: key= {uuid}" in line for line in moka.console), what="the viewer's read")
        assert any("loadSavedPage: saved value= null" in line for line in moka.console)
        moka.wait(lambda: any("PDF document ready, 3 pages" in line for line in moka.console), what="the PDF rendered")
        frame = moka.frame(view.id)
        frame.locator("#next-btn").click()
        moka.wait(lambda: frame.evaluate("(u) => localStorage.getItem(u)", uuid) is not None, what="the viewer saving its page")
        assert frame.evaluate("(u) => localStorage.getItem(u)", uuid) == "2"
        moka.wait(lambda: stored(moka, "pdf")["localItems"] >= 1, what="the page number stored")
        before = len(moka.console)
        moka.call("view.close", {"viewId": view.id})
        moka.call("views.reopen", {"recordId": view.record_id})  # what the stored view's "Open view" button calls
        again = moka.wait(lambda: next((v for v in moka.views() if v.record_id == view.record_id and v.id != view.id
                                        and v.state == "ready"), None), 60, "the reopened viewer")
        assert again.id != view.id
        moka.wait(lambda: any("loadSavedPage: saved value= 2" in line for line in moka.console[before:]),
                  what="the viewer reading its page back")
        assert any("Starting at page: 2" in line for line in moka.console[before:])
