"""Finding and fetching a pure-Python wheel on a package index (PyPI's simple API), for the app.

The simple API in either form: JSON (PEP 691), which PyPI serves, and HTML (PEP 503), which most
mirrors and ``pip``'s ``--index-url`` servers do. Downloads are bounded and checked against the
index's sha256.
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import Version

from moka_shell.errors import PluginInstallError
from moka_shell.plugin_install.wheel import MAX_WHEEL_BYTES, normalize

DEFAULT_INDEX = "https://pypi.org/simple/"
TIMEOUT = 30.0
ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"


def index_url(given: str | None = None) -> str:
    """The index to use: ``--index-url``, then pip's own ``PIP_INDEX_URL``, then PyPI."""
    url = given or os.environ.get("PIP_INDEX_URL") or DEFAULT_INDEX
    return url if url.endswith("/") else url + "/"


@dataclass(frozen=True)
class IndexFile:
    """One wheel the index lists."""

    filename: str
    url: str
    sha256: str | None
    version: Version


class _Links(HTMLParser):
    """The anchors of a PEP 503 page: (href, text, yanked)."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str, bool]] = []
        self._open: tuple[str, bool] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            a = dict(attrs)
            self._open = (a.get("href") or "", "data-yanked" in a)

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self.links.append((self._open[0], data.strip(), self._open[1]))
            self._open = None


def _is_pure(filename: str) -> Version | None:
    try:
        _name, version, _build, tags = parse_wheel_filename(filename)
    except InvalidWheelFilename:
        return None
    ok = any(t.abi == "none" and t.platform == "any" and t.interpreter.startswith("py3") for t in tags)
    return version if ok else None


def list_files(name: str, index: str) -> tuple[list[IndexFile], int]:
    """The pure wheels the index has for ``name``, and how many files it lists in all."""
    url = urllib.parse.urljoin(index, normalize(name) + "/")
    request = urllib.request.Request(url, headers={"Accept": ACCEPT, "User-Agent": "moka plugins install"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            kind = response.headers.get("Content-Type", "")
            body = response.read(32 * 2**20).decode("utf-8", "replace")
            base = response.geturl()
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise PluginInstallError(f"no package named {name!r} on {index}",
                                     hint="check the name (`moka plugins install ./file.whl` takes a local wheel)") from None
        raise PluginInstallError(f"{url} answered {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise PluginInstallError(f"could not reach the package index {index}: {getattr(exc, 'reason', exc)}",
                                 hint="check the network, or download the wheel and install the file") from None
    entries: list[tuple[str, str, str | None, bool]] = []  # filename, url, sha256, yanked
    if "json" in kind:
        for f in json.loads(body).get("files", []):
            entries.append((f.get("filename", ""), urllib.parse.urljoin(base, f.get("url", "")),
                            (f.get("hashes") or {}).get("sha256"), bool(f.get("yanked"))))
    else:
        parser = _Links()
        parser.feed(body)
        for href, text, yanked in parser.links:
            link, _, fragment = href.partition("#")
            digest = fragment[len("sha256="):] if fragment.startswith("sha256=") else None
            entries.append((text or link.rsplit("/", 1)[-1], urllib.parse.urljoin(base, link), digest, yanked))
    files = [IndexFile(fn, u, digest, v) for fn, u, digest, yanked in entries
             if not yanked and (v := _is_pure(fn)) is not None]
    return files, len(entries)


def best(name: str, specifier: SpecifierSet, index: str) -> IndexFile:
    """The newest pure wheel of ``name`` whose version ``specifier`` allows."""
    files, listed = list_files(name, index)
    fitting = [f for f in files if specifier.contains(f.version)]  # pre-releases only when asked for
    if not fitting:
        if listed and not files:
            raise PluginInstallError(f"{name} has no pure-Python wheel on {index} (only source or compiled "
                                     "files), and the Moka app can only take pure-Python plugins",
                                     hint="install Moka with pipx (docs/install.md) to use it")
        raise PluginInstallError(f"no version of {name} on {index} matches {str(specifier) or 'any version'}")
    return max(fitting, key=lambda f: f.version)


def download(file: IndexFile, folder: Path) -> Path:
    """Fetch ``file`` into ``folder`` (bounded), checking the index's sha256."""
    dest = folder / file.filename
    request = urllib.request.Request(file.url, headers={"User-Agent": "moka plugins install"})
    digest = hashlib.sha256()
    size = 0
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response, dest.open("wb") as out:
            while chunk := response.read(1 << 16):
                size += len(chunk)
                if size > MAX_WHEEL_BYTES:
                    raise PluginInstallError(f"{file.filename} is larger than {MAX_WHEEL_BYTES // 2**20} MiB")
                digest.update(chunk)
                out.write(chunk)
    except (urllib.error.URLError, OSError) as exc:
        raise PluginInstallError(f"could not download {file.url}: {getattr(exc, 'reason', exc)}") from None
    if file.sha256 and digest.hexdigest() != file.sha256.lower():
        raise PluginInstallError(f"{file.filename} does not match the index's sha256; nothing was installed")
    return dest
