"""Moka's UI files from memory: the right bytes and types, fresh after an edit, nothing outside the folder."""

from __future__ import annotations

import os
import re
from pathlib import Path

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from moka_shell.web.server import STATIC
from moka_shell.web.static_files import StaticFilesInMemory

pytestmark = pytest.mark.anyio


def client(folder: Path) -> httpx2.AsyncClient:
    app = Starlette(routes=[Mount("/static", StaticFilesInMemory(folder))])
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1")


async def test_files_are_served_with_their_type_and_validator(tmp_path: Path) -> None:
    (tmp_path / "js").mkdir()
    (tmp_path / "js" / "a.js").write_text("export const a = 1;\n", encoding="utf-8")
    (tmp_path / "s.css").write_text("body{}", encoding="utf-8")
    async with client(tmp_path) as http:
        js = await http.get("/static/js/a.js")
        css = await http.get("/static/s.css")
        head = await http.head("/static/js/a.js")
        again = await http.get("/static/js/a.js", headers={"if-none-match": js.headers["etag"]})
        post = await http.post("/static/js/a.js")
    assert js.status_code == 200 and js.text == "export const a = 1;\n"
    assert js.headers["content-type"] == "text/javascript; charset=utf-8"
    assert css.headers["content-type"] == "text/css; charset=utf-8"
    assert head.status_code == 200 and head.content == b"" and head.headers["content-length"] == str(len(js.content))
    assert again.status_code == 304 and again.content == b""
    assert post.status_code == 405


async def test_an_edited_file_is_served_fresh(tmp_path: Path) -> None:
    # People working on Moka's page edit these files while it runs: the copy kept must not hide it.
    page = tmp_path / "x.js"
    page.write_text("one", encoding="utf-8")
    async with client(tmp_path) as http:
        first = await http.get("/static/x.js")
        page.write_text("two, longer", encoding="utf-8")
        os.utime(page, ns=(page.stat().st_atime_ns, page.stat().st_mtime_ns + 1_000_000))
        second = await http.get("/static/x.js")
        stale = await http.get("/static/x.js", headers={"if-none-match": first.headers["etag"]})
    assert (first.text, second.text) == ("one", "two, longer")
    assert stale.status_code == 200 and stale.text == "two, longer"


async def test_nothing_outside_the_folder_is_served(tmp_path: Path) -> None:
    inside = tmp_path / "static"
    inside.mkdir()
    (tmp_path / "secret.txt").write_text("not for pages", encoding="utf-8")
    (inside / "link.txt").symlink_to(tmp_path / "secret.txt")
    (inside / "sub").mkdir()
    async with client(inside) as http:
        for path in ("/static/../secret.txt", "/static/%2e%2e/secret.txt", "/static/link.txt", "/static/sub",
                     "/static/", "/static/missing.js", "/static/sub/../../secret.txt"):
            reply = await http.get(path)
            assert reply.status_code == 404 and "not for pages" not in reply.text, path


def test_the_page_preloads_exactly_the_modules_it_imports() -> None:
    # index.html names every module app.js reaches (rel=modulepreload) so the browser asks for them at
    # once instead of level by level (six levels deep); a stale entry would cost a request for nothing.
    js = STATIC / "js"
    found = re.compile(r"""^\s*import\s+(?:[^'";]*?from\s+)?['"](\.[^'"]+)['"]""", re.M)
    reached: set[Path] = set()
    todo = [js / "app.js"]
    while todo:
        module = todo.pop().resolve()
        if module in reached:
            continue
        reached.add(module)
        todo += [(module.parent / name) for name in found.findall(module.read_text(encoding="utf-8"))]
    index = (STATIC / "index.html").read_text(encoding="utf-8")
    preloaded = {(STATIC / href.removeprefix("/static/")).resolve()
                 for href in re.findall(r'<link rel="modulepreload" href="([^"]+)">', index)}
    assert preloaded == reached - {(js / "app.js").resolve()}
