"""The sandbox proxy page: its one script inline, admitted by hash and by nothing else."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import pytest

from moka_shell.web.proxy_page import build_proxy_page
from moka_shell.web.server import STATIC


def test_the_page_carries_proxy_js_and_its_csp_admits_exactly_that_script() -> None:
    page = build_proxy_page(STATIC / "sandbox")
    script = (STATIC / "sandbox" / "proxy.js").read_text(encoding="utf-8")
    assert 'src="proxy.js"' not in page.html and f"<script>{script}</script>" in page.html
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert re.search(r"script-src '([^']+)'", page.csp).group(1) == f"sha256-{digest}"  # type: ignore[union-attr]
    assert "default-src 'none'" in page.csp and "'self'" not in page.csp.split("script-src")[1].split(";")[0]


def test_a_proxy_html_without_the_script_tag_is_refused(tmp_path: Path) -> None:
    (tmp_path / "proxy.html").write_text("<html><body></body></html>", encoding="utf-8")
    (tmp_path / "proxy.js").write_text("1", encoding="utf-8")
    with pytest.raises(ValueError, match="must load proxy.js"):
        build_proxy_page(tmp_path)


def test_a_script_that_would_close_its_tag_is_refused(tmp_path: Path) -> None:
    (tmp_path / "proxy.html").write_text('<script src="proxy.js"></script>', encoding="utf-8")
    (tmp_path / "proxy.js").write_text("var x = '</SCRIPT>';", encoding="utf-8")
    with pytest.raises(ValueError, match="closing script tag"):
        build_proxy_page(tmp_path)


def test_the_page_is_named_by_its_content() -> None:
    page = build_proxy_page(STATIC / "sandbox")
    again = build_proxy_page(STATIC / "sandbox")
    assert page.version == again.version and page.path == f"/proxy.html?v={page.version}"
    assert re.fullmatch(r"[0-9a-f]{16}", page.version)


def test_another_script_gives_another_name(tmp_path: Path) -> None:
    (tmp_path / "proxy.html").write_text('<script src="proxy.js"></script>', encoding="utf-8")
    names = set()
    for text in ("var a = 1;", "var a = 2;"):
        (tmp_path / "proxy.js").write_text(text, encoding="utf-8")
        names.add(build_proxy_page(tmp_path).version)
    assert len(names) == 2  # a changed proxy is a new URL, never a stale cached copy


def test_other_host_ports_give_another_name() -> None:
    # The cached page carries frame-ancestors: a copy from a run on other ports must never be reused.
    one = build_proxy_page(STATIC / "sandbox", frame_ancestors="http://127.0.0.1:1111 http://localhost:1111")
    two = build_proxy_page(STATIC / "sandbox", frame_ancestors="http://127.0.0.1:2222 http://localhost:2222")
    assert one.version != two.version
    assert one.csp.endswith("; frame-ancestors http://127.0.0.1:1111 http://localhost:1111")
