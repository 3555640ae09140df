"""The plugin folder of the packaged apps: real wheel files in, pure Python only, nothing half-done.

The wheels are made here in the wheel format itself (a zip with METADATA, WHEEL, RECORD and its
hashes), so each test says exactly what its plugin carries; the planner, the installer and the plugin
host are Moka's own, on real files. The packaged app itself runs the same code in
tests/test_packaging.py (the unpacked Qt tarball).
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from moka_shell.errors import PluginInstallError
from moka_shell.plugin_install import folder
from moka_shell.plugin_install.kind import activate
from moka_shell.plugin_install.resolve import Planner, carried
from moka_shell.plugin_install.wheel import open_wheel
from moka_shell.plugins import PluginHost

PLUGIN = '''from moka_shell import BaseBackend, Done, TextDelta, hookimpl
{imports}

class Backend(BaseBackend):
    backend_id = "{backend}"
    default_model = "m"

    async def stream(self, request):
        yield TextDelta(text="{backend} says " + request.messages[-1].content)
        yield Done(stop_reason="end_turn")


@hookimpl
def register_agent_backends(register):
    register(Backend())
'''


def make_wheel(where: Path, name: str, version: str = "1.0", *, files: dict[str, str] | None = None,
               requires: tuple[str, ...] = (), plugin: str | None = None, tag: str = "py3-none-any",
               purelib: bool = True) -> Path:
    """A wheel file as a build backend writes it (RECORD with sha256 of every file)."""
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    contents = dict(files or {})
    contents[f"{info}/METADATA"] = "\n".join(["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}",
                                              *(f"Requires-Dist: {r}" for r in requires)]) + "\n"
    contents[f"{info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: {str(purelib).lower()}\n"
                                 f"Tag: {tag}\n")
    if plugin:
        contents[f"{info}/entry_points.txt"] = f"[moka]\n{plugin} = {dist}\n"
    record = []
    for path, text in contents.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    contents[f"{info}/RECORD"] = "\n".join(record) + "\n"
    path = where / f"{dist}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for member, text in contents.items():
            zf.writestr(member, text)
    return path


def backend_wheel(where: Path, name: str, backend: str, *, imports: str = "", **kw: object) -> Path:
    module = name.replace("-", "_")
    return make_wheel(where, name, files={f"{module}/__init__.py": PLUGIN.format(backend=backend, imports=imports)},
                      plugin=backend, **kw)  # type: ignore[arg-type]


def plan_and_install(root: Path, requests: list[Path | str], index: str | None = None, tmp: Path | None = None) -> list[str]:
    have = {k: d.version for k, d in folder.distributions(root).items()}
    planner = Planner(carried=carried(), installed=have, downloads=tmp or root.parent, index=index)
    plan = planner.run([str(r) for r in requests]).ordered()
    folder.install(root, plan)
    return [w.key for w, _ in plan]


@pytest.fixture
def clean_path() -> Iterator[None]:
    before = list(sys.path)
    yield
    sys.path[:] = before
    for name in [m for m in sys.modules if m.startswith("moka_t_")]:
        del sys.modules[name]


def test_a_pure_plugin_installs_loads_and_uninstalls(tmp_path: Path, clean_path: None) -> None:
    root = tmp_path / "plugins"
    wheel = backend_wheel(tmp_path, "moka-t-echo", "techo")
    assert plan_and_install(root, [wheel]) == ["moka-t-echo"]
    assert (root / "moka-t-echo" / "moka_t_echo" / "__init__.py").is_file()
    record = (root / "moka-t-echo" / "moka_t_echo-1.0.dist-info" / "RECORD").read_text()
    assert "moka_t_echo/__init__.py,sha256=" in record and "INSTALLER" in record
    activate(root)  # what PluginHost does at start in a packaged app (this test venv has pip)
    host = PluginHost(plugin_folder=root)
    backends = host.registry("backends")
    info = next(i for i in host.list() if i.name == "techo")
    assert "techo" in backends and info.in_folder and info.error is None and info.distribution == "moka-t-echo"
    removed = folder.uninstall(root, "moka-t-echo")
    assert [d.key for d in removed] == ["moka-t-echo"] and not (root / "moka-t-echo").exists()


def test_compiled_code_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    root = tmp_path / "plugins"
    so = make_wheel(tmp_path, "moka-t-fast", files={"moka_t_fast/_speed.cpython-311-x86_64-linux-gnu.so": "ELF"},
                    plugin="fast", tag="cp311-cp311-linux_x86_64", purelib=False)
    with pytest.raises(PluginInstallError, match="only take pure-Python plugins.*compiled code"):
        plan_and_install(root, [so])
    # A pure plugin whose dependency is compiled: the plan stops at the dependency, nothing is written.
    dep = make_wheel(tmp_path, "t-native", files={"t_native/core.so": "ELF"}, tag="py3-none-any")
    plugin = backend_wheel(tmp_path, "moka-t-uses", "tuses", requires=("t-native>=1",))
    with pytest.raises(PluginInstallError, match=r"t_native-1.0-py3-none-any.whl.*compiled code \(t_native/core.so\)"):
        plan_and_install(root, [plugin, dep])
    assert not root.exists() or [p.name for p in root.iterdir()] == []


def test_requirements_the_app_cannot_meet_are_refused_with_the_reason(tmp_path: Path) -> None:
    root = tmp_path / "plugins"
    old_pydantic = backend_wheel(tmp_path, "moka-t-old", "told", requires=("pydantic<2",))
    with pytest.raises(PluginInstallError, match=r"needs pydantic<2, and this Moka app carries pydantic 2\."):
        plan_and_install(root, [old_pydantic])
    missing = backend_wheel(tmp_path, "moka-t-needs", "tneeds", requires=("t-not-here",))
    with pytest.raises(PluginInstallError, match="needs t-not-here, which is neither in this Moka app nor given"):
        plan_and_install(root, [missing])
    not_a_plugin = make_wheel(tmp_path, "t-lib", files={"t_lib.py": "X = 1\n"})
    with pytest.raises(PluginInstallError, match="no entry point in the group 'moka'"):
        plan_and_install(root, [not_a_plugin])
    with pytest.raises(PluginInstallError, match="can't build a package from its source folder"):
        plan_and_install(root, [str(tmp_path)])
    assert not root.exists()


def test_a_damaged_wheel_is_refused(tmp_path: Path) -> None:
    wheel = backend_wheel(tmp_path, "moka-t-bad", "tbad")
    with zipfile.ZipFile(wheel, "a") as zf:
        zf.writestr("moka_t_bad/extra.py", "print('not in RECORD')\n")
    with pytest.raises(PluginInstallError, match="extra.py is not listed in its RECORD"):
        plan_and_install(tmp_path / "plugins", [wheel])
    assert not (tmp_path / "plugins" / "moka-t-bad").exists()


class _Index(http.server.SimpleHTTPRequestHandler):
    """A PEP 503 simple index over real HTTP: /simple/NAME/ lists the wheels in the served folder."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        folder_ = Path(self.directory)
        if self.path.startswith("/simple/"):
            name = self.path.split("/")[2].replace("-", "_")
            links = "".join(f'<a href="/files/{p.name}#sha256={hashlib.sha256(p.read_bytes()).hexdigest()}">{p.name}</a>'
                            for p in folder_.glob(f"{name}-*.whl"))
            if not links:
                self.send_error(404)
                return
            body = f"<html><body>{links}</body></html>".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.path = self.path.removeprefix("/files")
        super().do_GET()

    def log_message(self, *args: object) -> None:
        pass


def test_a_plugin_by_name_comes_from_the_index_with_its_pure_dependency(tmp_path: Path, clean_path: None) -> None:
    served = tmp_path / "served"
    served.mkdir()
    make_wheel(served, "t-helper", "2.0", files={"t_helper.py": "GREETING = 'hi from the helper'\n"})
    make_wheel(served, "t-helper", "1.0", files={"t_helper.py": "GREETING = 'old'\n"})
    backend_wheel(served, "moka-t-named", "tnamed", imports="import t_helper", requires=("t-helper>=1",))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: _Index(*a, directory=str(served)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        root = tmp_path / "plugins"
        downloads = tmp_path / "dl"
        downloads.mkdir()
        index = f"http://127.0.0.1:{server.server_address[1]}/simple/"
        assert plan_and_install(root, ["moka-t-named"], index=index, tmp=downloads) == ["moka-t-named", "t-helper"]
        assert folder.distributions(root)["t-helper"].version == "2.0"  # the newest that fits
        assert not folder.distributions(root)["t-helper"].requested
        with pytest.raises(PluginInstallError, match="no package named 'moka-t-nothing'"):
            plan_and_install(root, ["moka-t-nothing"], index=index, tmp=downloads)
    finally:
        server.shutdown()
    activate(root)
    host = PluginHost(plugin_folder=root)
    assert "tnamed" in host.registry("backends")
    # Uninstalling the plugin takes the dependency only it needed with it.
    assert {d.key for d in folder.uninstall(root, "moka-t-named")} == {"moka-t-named", "t-helper"}
    assert folder.distributions(root) == {}


def test_a_plugin_that_fails_to_import_is_named_and_moka_goes_on(tmp_path: Path, clean_path: None) -> None:
    root = tmp_path / "plugins"
    broken = make_wheel(tmp_path, "moka-t-broken", files={"moka_t_broken/__init__.py": "import t_absent_module\n"},
                        plugin="tbroken")
    exits = make_wheel(tmp_path, "moka-t-exits", files={"moka_t_exits/__init__.py": "raise SystemExit(3)\n"},
                       plugin="texits")
    plan_and_install(root, [broken, exits])
    activate(root)
    host = PluginHost(plugin_folder=root)
    infos = {i.name: i for i in host.list()}
    assert "ModuleNotFoundError: No module named 't_absent_module'" in (infos["tbroken"].error or "")
    assert "SystemExit: 3" in (infos["texits"].error or "")
    assert "openai" in host.registry("backends")  # the built-ins are all there


def test_an_upgrade_swaps_the_folder_and_a_failed_one_keeps_the_old(tmp_path: Path) -> None:
    root = tmp_path / "plugins"
    plan_and_install(root, [backend_wheel(tmp_path, "moka-t-up", "tup")])
    newer = make_wheel(tmp_path, "moka-t-up", "2.0", files={"moka_t_up/__init__.py": "V = 2\n"}, plugin="tup")
    wheel = open_wheel(newer)
    folder.install(root, [(wheel, True)])
    assert folder.distributions(root)["moka-t-up"].version == "2.0"
    bad = make_wheel(tmp_path, "moka-t-up", "3.0", files={"moka_t_up/__init__.py": "V = 3\n"}, plugin="tup")
    with zipfile.ZipFile(bad, "a") as zf:
        zf.writestr("moka_t_up/late.py", "x")  # not in RECORD: fails while unpacking, after the checks
    with pytest.raises(PluginInstallError):
        folder.install(root, [(open_wheel(bad), True)])
    assert folder.distributions(root)["moka-t-up"].version == "2.0"
    assert [p.name for p in root.iterdir()] == ["moka-t-up"]  # no staging or old copies left
