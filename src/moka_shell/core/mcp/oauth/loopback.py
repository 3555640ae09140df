"""The loopback redirect receiver: a one-shot HTTP listener on 127.0.0.1 for the authorization redirect.

Why its own port and not a route of Moka's web server: the CLI (``moka servers login``) has no
web server, the web server's port changes each run while a registered redirect URI should not,
and a route there would have to bypass the per-run token. RFC 8252 §7.3 has native apps do
exactly this: ``http://127.0.0.1:PORT/callback``, any port. Moka asks for the port it registered
with last time, so strict authorization servers keep matching; when that port is taken it takes
a free one and registers again.
"""

from __future__ import annotations

import asyncio
import html
import secrets
from urllib.parse import parse_qs, urlsplit

from mcp.shared.auth import AuthorizationCodeResult

from moka_shell.errors import SignInError

CALLBACK_PATH = "/callback"
MAX_HEAD = 16 * 1024
READ_TIMEOUT = 10.0

_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="color-scheme" content="light dark"><style>
body{{font:15px/1.5 system-ui,sans-serif;display:grid;place-items:center;min-height:90vh;margin:0}}
main{{max-width:28rem;padding:2rem;text-align:center}}h1{{font-size:1.25rem;margin:0 0 .5rem}}
p{{color:GrayText;margin:0}}</style></head><body><main><h1>{title}</h1><p>{text}</p></main>
<script>setTimeout(function(){{window.close()}},{close_ms})</script></body></html>"""


def _page(title: str, text: str, close_ms: int) -> bytes:
    return _PAGE.format(title=html.escape(title), text=html.escape(text), close_ms=close_ms).encode("utf-8")


class LoopbackReceiver:
    """Listens on 127.0.0.1 until the authorization server redirects the browser back with a code."""

    def __init__(self, label: str, port: int = 0) -> None:
        self.label = label
        self.wanted_port = port
        self.port = 0
        self.expected_state: str | None = None
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None

    @property
    def redirect_uri(self) -> str:
        """The URI the authorization server sends the browser back to."""
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def start(self) -> str:
        """Listen (on the wanted port if it is free, else any); returns the redirect URI."""
        self._result = asyncio.get_running_loop().create_future()
        try:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.wanted_port)
        except OSError:
            if not self.wanted_port:
                raise
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.redirect_uri

    async def wait(self) -> AuthorizationCodeResult:
        """The redirect's parameters, once the browser arrives (the SDK's callback handler)."""
        assert self._result is not None, "start() first"
        return await self._result

    async def close(self) -> None:
        """Stop listening."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        if self._result is not None and not self._result.done():
            self._result.cancel()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT)
            status, body = self._answer(head[:MAX_HEAD].split(b"\r\n", 1)[0].decode("latin-1"))
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError, ConnectionError):
            writer.close()
            return
        try:
            writer.write(f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                         f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\nReferrer-Policy: no-referrer\r\n"
                         "Connection: close\r\n\r\n".encode("latin-1") + body)
            await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    def _answer(self, request_line: str) -> tuple[str, bytes]:
        parts = request_line.split(" ")
        if len(parts) != 3 or parts[0] != "GET":
            return "405 Method Not Allowed", _page("Not here", "Moka only waits for a sign-in redirect.", 60000)
        url = urlsplit(parts[1])
        if url.path != CALLBACK_PATH:
            return "404 Not Found", _page("Not here", "Moka only waits for a sign-in redirect.", 60000)
        query = {k: v[0] for k, v in parse_qs(url.query).items() if v}
        state = query.get("state", "")
        # Only the browser we sent may answer: a stray local request with another state is ignored.
        if self.expected_state is None or not secrets.compare_digest(state, self.expected_state):
            return "400 Bad Request", _page("Not this sign-in", "This link does not belong to the sign-in Moka "
                                            "is waiting for. Start the sign-in again.", 60000)
        done = self._result is None or self._result.done()
        if done:
            return "200 OK", _page(f"Signed in to {self.label}", "You can close this window.", 300)
        assert self._result is not None
        if "error" in query:
            why = query.get("error_description") or query["error"]
            self._result.set_exception(SignInError(f"the authorization server refused the sign-in: {why}",
                                                   hint="try again, or check the account you signed in with"))
            return "200 OK", _page("Sign-in refused", f"{self.label}: {why}. You can close this window.", 60000)
        if not query.get("code"):
            self._result.set_exception(SignInError("the authorization server sent the browser back without a code"))
            return "400 Bad Request", _page("Sign-in failed", "No authorization code came back.", 60000)
        self._result.set_result(AuthorizationCodeResult(code=query["code"], state=state, iss=query.get("iss")))
        return "200 OK", _page(f"Signed in to {self.label}", "You can close this window and go back to Moka.", 800)
