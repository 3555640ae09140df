"""Packaging: the PyInstaller hook, the spec's slimming rules, the scripts, the builds.

The cheap tests always run: they check what a frozen Moka will carry (UI files, demo
views, plugin metadata) and run the spec's logic against made-up TOC entries, without
PyInstaller. The real builds take minutes and run only with MOKA_TEST_PACKAGING=1:
each `bash packaging/build.sh qt|deb` builds, checks its size budget and smoke-tests
the artifact with packaging/smoke.sh.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import runpy
import shutil
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from moka_shell import _pyinstaller

ROOT = Path(__file__).resolve().parents[1]
PACKAGING = ROOT / "packaging"
SPEC = PACKAGING / "moka.spec"

sys.path.insert(0, str(PACKAGING))
import slim  # noqa: E402  (packaging/slim.py)

sys.path.remove(str(PACKAGING))


# ---- the hook --------------------------------------------------------------------------------


def test_hook_dir_is_registered_and_holds_the_hook() -> None:
    eps = [ep for ep in importlib.metadata.entry_points(group="pyinstaller40") if ep.name == "hook-dirs"]
    assert any(ep.value == "moka_shell._pyinstaller:get_hook_dirs" for ep in eps)
    (hook_dir,) = _pyinstaller.get_hook_dirs()
    hook = Path(hook_dir) / "hook-moka_shell.py"
    assert hook.is_file()
    compile(hook.read_text(encoding="utf-8"), str(hook), "exec")


def test_data_files_cover_the_ui_and_the_demo_views() -> None:
    files = _pyinstaller.data_files()
    for needed in ("web/static/index.html", "web/static/js/app.js", "web/static/sandbox/proxy.html",
                   "web/static/sandbox/proxy.js", "demo/views/dice.html", "demo/views/playground.html"):
        assert needed in files
    assert not any(f.endswith((".py", ".pyc")) for f in files)
    # every file the package declares as package data is collected
    static = ROOT / "src" / "moka_shell" / "web" / "static"
    on_disk = {p.relative_to(static.parent.parent).as_posix() for p in static.rglob("*") if p.is_file()}
    assert on_disk <= set(files)


def test_metadata_covers_moka_and_installed_plugins() -> None:
    dists = _pyinstaller.metadata_distributions()
    assert dists[0] == "moka-shell"
    plugins = _pyinstaller.plugin_distributions()
    installed = {d.metadata["Name"] for d in importlib.metadata.distributions()
                 if any(ep.group == "moka" for ep in d.entry_points)} - {"moka-shell"}
    assert set(plugins) == installed
    for name, modules in plugins.items():
        assert name in dists and modules
    if "moka-anthropic" in plugins:  # installed by scripts/setup.sh
        assert plugins["moka-anthropic"] == ["moka_anthropic"]
        assert "moka_anthropic" in _pyinstaller.plugin_packages()


def test_test_doubles_and_the_build_helper_stay_out() -> None:
    keep = _pyinstaller.keep_submodule
    assert keep("moka_shell.shells.check.webview_engine") and keep("moka_shell.demo.server")
    assert not keep("moka_shell.testing") and not keep("moka_shell.testing.fake_openai")
    assert not keep("moka_shell._pyinstaller")
    assert keep("moka_shell.testingx")


def test_hook_runs_under_pyinstaller_when_available() -> None:
    pytest.importorskip("PyInstaller")
    (hook_dir,) = _pyinstaller.get_hook_dirs()
    ns = runpy.run_path(str(Path(hook_dir) / "hook-moka_shell.py"))
    dests = {Path(dest).as_posix() for _src, dest in ns["datas"]}
    assert "moka_shell/web/static" in dests and "moka_shell/demo/views" in dests
    assert any(d.startswith("moka_shell-") and d.endswith(".dist-info") for d in dests)
    assert "moka_shell.shells.check.webview_engine" in ns["hiddenimports"]
    assert not any(m.startswith("moka_shell.testing") for m in ns["hiddenimports"])


# ---- slimming rules ------------------------------------------------------------------------------

Q = "PyQt6/Qt6/"


def test_qt_keeps_what_webengine_needs_and_drops_the_rest() -> None:
    def keep(dest: str) -> bool:
        return slim.qt_keep((dest, "/src/" + dest, "DATA"))

    for dest in slim.QT_REQUIRED:
        assert keep(dest), dest
    for dest in (Q + "plugins/platforms/libqxcb.so", Q + "plugins/platforms/libqoffscreen.so",
                 Q + "plugins/platforms/libqwayland.so", Q + "plugins/tls/libqopensslbackend.so",
                 Q + "plugins/xcbglintegrations/libqxcb-glx-integration.so", Q + "lib/libQt6Core.so.6",
                 "libpython3.11.so.1.0", "moka_shell/web/static/index.html"):
        assert keep(dest), dest
    for dest in (Q + "translations/qt_de.qm", Q + "translations/qtwebengine_locales/de.pak",
                 Q + "resources/qtwebengine_devtools_resources.pak", Q + "plugins/platformthemes/libqgtk3.so",
                 Q + "plugins/printsupport/libcupsprintersupport.so", Q + "plugins/imageformats/libqjpeg.so",
                 Q + "plugins/platforms/libqeglfs.so", Q + "plugins/tls/libqcertonlybackend.so", Q + "qml/QtQuick/x.so"):
        assert not keep(dest), dest


def test_qt_module_excludes_keep_the_modules_webengine_imports() -> None:
    for must in ("PyQt6.QtQml", "PyQt6.QtQuick", "PyQt6.QtQuickWidgets"):
        assert must in slim.QT_EXCLUDES
    for needed in ("QtCore", "QtGui", "QtWidgets", "QtNetwork", "QtWebChannel", "QtWebEngineCore",
                   "QtWebEngineWidgets", "QtPrintSupport", "QtOpenGL", "QtOpenGLWidgets"):
        assert f"PyQt6.{needed}" not in slim.QT_EXCLUDES
    assert "playwright" in slim.COMMON_EXCLUDES and "PyQt6" in slim.GTK_EXCLUDES


def test_system_baseline_only_matches_top_level_system_libraries() -> None:
    def base(dest: str) -> bool:
        return slim.is_baseline((dest, "/usr/lib/x86_64-linux-gnu/" + dest, "BINARY"))

    for lib in ("libstdc++.so.6", "libX11.so.6", "libglib-2.0.so.0", "libfontconfig.so.1", "libssl.so.3",
                "libXrandr.so.2", "libgbm.so.1", "libdbus-1.so.3"):
        assert base(lib), lib
    for lib in ("libnss3.so", "libxcb-icccm.so.4", "libxkbcommon.so.0", "libpython3.11.so.1.0",
                "libicudata.so.73", Q + "lib/libQt6Core.so.6", "PyQt6/Qt6/lib/libX11.so.6"):
        assert not base(lib), lib


def test_needed_closure_drops_what_only_removed_plugins_needed() -> None:
    binaries = [
        ("_ssl.cpython-311.so", "/s/_ssl.so", "EXTENSION"),
        (Q + "plugins/platforms/libqxcb.so", "/s/libqxcb.so", "BINARY"),
        (Q + "libexec/QtWebEngineProcess", "/s/QtWebEngineProcess", "BINARY"),
        ("libssl.so.3", "/s/libssl.so.3", "BINARY"),
        ("libcrypto.so.3", "/s/libcrypto.so.3", "BINARY"),
        ("libxcb-icccm.so.4.0.0", "/s/libxcb-icccm.so.4.0.0", "BINARY"),
        ("libgtk-3.so.0", "/s/libgtk-3.so.0", "BINARY"),  # only the dropped libqgtk3 needed it
        ("libatk-1.0.so.0", "/s/libatk-1.0.so.0", "BINARY"),
        ("libnssckbi.so", "/s/libnssckbi.so", "BINARY"),  # dlopen()ed: a root
    ]
    datas = [
        ("libxcb-icccm.so.4", "libxcb-icccm.so.4.0.0", "SYMLINK"),
        ("libgtk-3.so", "libgtk-3.so.0", "SYMLINK"),
        ("moka_shell/web/static/index.html", "/s/index.html", "DATA"),
    ]
    graph = {
        "/s/_ssl.so": ["libssl.so.3"], "/s/libssl.so.3": ["libcrypto.so.3"],
        "/s/libqxcb.so": ["libxcb-icccm.so.4"], "/s/libgtk-3.so.0": ["libatk-1.0.so.0"],
    }
    kept_bins, kept_datas = slim.needed_closure(binaries, datas, needed=lambda p: graph.get(p, []))
    kept = {e[0] for e in kept_bins}
    assert kept == {"_ssl.cpython-311.so", Q + "plugins/platforms/libqxcb.so", Q + "libexec/QtWebEngineProcess",
                    "libssl.so.3", "libcrypto.so.3", "libxcb-icccm.so.4.0.0", "libnssckbi.so"}
    assert {e[0] for e in kept_datas} == {"libxcb-icccm.so.4", "moka_shell/web/static/index.html"}


def test_gtk_split_leaves_the_toolkit_to_the_distribution() -> None:
    binaries = [
        ("libgtk-3.so.0", "/usr/lib/x86_64-linux-gnu/libgtk-3.so.0", "BINARY"),
        ("libglib-2.0.so.0", "/lib/x86_64-linux-gnu/libglib-2.0.so.0", "BINARY"),
        ("gi/_gi.cpython-311-x86_64-linux-gnu.so", "/venv/lib/python3.11/site-packages/gi/_gi.so", "EXTENSION"),
        ("libpython3.11.so.1.0", "/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0", "BINARY"),
    ]
    datas = [
        ("share/icons/Adwaita/index.theme", "/usr/share/icons/Adwaita/index.theme", "DATA"),
        ("gi_typelibs/Gtk-3.0.typelib", "/usr/lib/girepository-1.0/Gtk-3.0.typelib", "DATA"),
        ("lib/gdk-pixbuf/loaders.cache", "/tmp/loaders.cache", "DATA"),
        ("libgtk-3.so.0", "libgtk-3.so.0.2409.32", "SYMLINK"),
        ("moka_shell/demo/views/dice.html", "/src/dice.html", "DATA"),
    ]
    bins, kept_datas, dropped = slim.gtk_system_split(binaries, datas)
    assert [e[0] for e in bins] == ["gi/_gi.cpython-311-x86_64-linux-gnu.so", "libpython3.11.so.1.0"]
    assert {e[0] for e in dropped} == {"libgtk-3.so.0", "libglib-2.0.so.0"}
    assert [e[0] for e in kept_datas] == ["moka_shell/demo/views/dice.html"]
    scripts = [("pyi_rth_gi", "", "PYSOURCE"), ("pyi_rth_gtk", "", "PYSOURCE"), ("entry", "", "PYSOURCE")]
    assert [e[0] for e in slim.drop_rthooks(scripts)] == ["entry"]


# ---- the spec ------------------------------------------------------------------------------------


def test_spec_parses() -> None:
    ast.parse(SPEC.read_text(encoding="utf-8"), str(SPEC))


class _Recorder:
    """Stand-ins for PyInstaller's spec classes: record what the spec asks for."""

    def __init__(self, analysis_entries: dict[str, list[Any]]) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self.entries = analysis_entries

    def namespace(self) -> dict[str, Any]:
        rec = self

        def make(kind: str) -> Any:
            def build(*args: Any, **kwargs: Any) -> Any:
                rec.calls.append((kind, args, kwargs))
                obj = types.SimpleNamespace(kind=kind, args=args, kwargs=kwargs)
                if kind == "Analysis":
                    obj.binaries = list(rec.entries["binaries"])
                    obj.datas = list(rec.entries["datas"])
                    obj.scripts = list(rec.entries["scripts"])
                    obj.pure = []
                return obj
            return build

        return {name: make(name) for name in ("Analysis", "PYZ", "EXE", "COLLECT", "BUNDLE")} | {
            "SPECPATH": str(PACKAGING), "__file__": str(SPEC), "__name__": "__main__"}

    def first(self, kind: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return next((a, k) for c, a, k in self.calls if c == kind)


def _run_spec(flavor: str | None, monkeypatch: pytest.MonkeyPatch, platform: str = "linux") -> _Recorder:
    if flavor is None:
        monkeypatch.delenv("MOKA_FLAVOR", raising=False)
    else:
        monkeypatch.setenv("MOKA_FLAVOR", flavor)
    monkeypatch.delenv("MOKA_BUNDLE_SYSTEM_LIBS", raising=False)
    monkeypatch.setattr(sys, "platform", platform)
    required = [(d, "/nonexistent/" + d, "DATA") for d in slim.QT_REQUIRED]
    rec = _Recorder({
        "binaries": [(Q + "libexec/QtWebEngineProcess", "/nonexistent/QtWebEngineProcess", "BINARY"),
                     ("libstdc++.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "BINARY"),
                     ("libgtk-3.so.0", "/usr/lib/x86_64-linux-gnu/libgtk-3.so.0", "BINARY")],
        "datas": required + [(Q + "translations/qt_de.qm", "/nonexistent/qt_de.qm", "DATA"),
                             ("share/icons/x.png", "/usr/share/icons/x.png", "DATA")],
        "scripts": [("pyi_rth_gi", "", "PYSOURCE"), ("entry", "", "PYSOURCE")],
    })
    path_before = list(sys.path)
    try:
        exec(compile(SPEC.read_text(encoding="utf-8"), str(SPEC), "exec"), rec.namespace())
    finally:
        sys.path[:] = path_before
    return rec


def test_spec_qt_flavor(monkeypatch: pytest.MonkeyPatch) -> None:
    rec = _run_spec("qt", monkeypatch)
    args, kwargs = rec.first("Analysis")
    assert Path(args[0][0]) == PACKAGING / "entry.py"
    assert {"PyQt6.QtQml", "PyQt6.QtQuick", "PyQt6.QtQuickWidgets", "playwright", "gi"} <= set(kwargs["excludes"])
    assert [Path(p).name for p in kwargs["runtime_hooks"]] == ["pyi_rth_moka_qt.py"]
    assert all(Path(p).is_file() for p in kwargs["runtime_hooks"])
    exe_args, exe = rec.first("EXE")
    assert exe["name"] == "moka" and exe["strip"] is True and exe["upx"] is False and exe["console"] is True
    coll_args, coll = rec.first("COLLECT")
    assert coll["name"] == "moka" and coll["strip"] is True and coll["upx"] is False
    datas = next(a for a in coll_args if isinstance(a, list) and any("qtwebengine" in e[0] for e in a))
    assert not any(e[0].endswith(".qm") for e in datas)
    assert not any(c == "BUNDLE" for c, _a, _k in rec.calls)


def test_spec_gtk_flavor(monkeypatch: pytest.MonkeyPatch) -> None:
    rec = _run_spec("gtk", monkeypatch)
    _args, kwargs = rec.first("Analysis")
    assert {"PyQt6", "qtpy", "playwright"} <= set(kwargs["excludes"])
    assert kwargs["hooksconfig"]["gi"]["icons"] == []
    exe_args, exe = rec.first("EXE")
    scripts = exe_args[1]
    assert [e[0] for e in scripts] == ["entry"]  # the gi runtime hooks are gone
    coll_args, _coll = rec.first("COLLECT")
    binaries, datas = coll_args[1], coll_args[2]
    assert not any(e[1].startswith("/usr/") for e in binaries)
    assert not any(e[0].startswith("share/") for e in datas)


def test_spec_rejects_an_unknown_flavor(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SystemExit, match="MOKA_FLAVOR"):
        _run_spec("electron", monkeypatch)
    with pytest.raises(SystemExit, match="for Linux"):
        _run_spec("qt", monkeypatch, platform="darwin")


def test_spec_macos_makes_an_app_bundle(monkeypatch: pytest.MonkeyPatch) -> None:
    rec = _run_spec(None, monkeypatch, platform="darwin")  # default flavour there: native
    _args, kwargs = rec.first("Analysis")
    assert {"PyQt6", "gi", "playwright"} <= set(kwargs["excludes"]) and kwargs["runtime_hooks"] == []
    exes = [k for c, _a, k in rec.calls if c == "EXE"]
    assert [(e["name"], e["strip"], e["upx"]) for e in exes] == [("moka", False, False)]
    bundle_args, bundle = rec.first("BUNDLE")
    assert bundle["name"] == "Moka.app" and bundle["bundle_identifier"]
    assert Path(bundle["icon"]).is_file()
    assert bundle["info_plist"]["CFBundleShortVersionString"] == bundle["version"]


def test_spec_windows_has_a_console_and_a_windowed_exe(monkeypatch: pytest.MonkeyPatch) -> None:
    rec = _run_spec(None, monkeypatch, platform="win32")
    exes = [k for c, _a, k in rec.calls if c == "EXE"]
    assert [(e["name"], e["console"]) for e in exes] == [("moka", True), ("mokaw", False)]
    assert all(e["strip"] is False and e["upx"] is False and Path(e["icon"]).is_file() for e in exes)
    coll_args, coll = rec.first("COLLECT")
    assert coll["name"] == "moka" and sum(1 for a in coll_args if getattr(a, "kind", "") == "EXE") == 2
    assert not any(c == "BUNDLE" for c, _a, _k in rec.calls)


# ---- scripts and release files ------------------------------------------------------------------


@pytest.mark.parametrize("script", ["build.sh", "smoke.sh", "tarball/install.sh"])
def test_shell_scripts_parse(script: str) -> None:
    subprocess.run(["bash", "-n", str(PACKAGING / script)], check=True)


def test_build_script_explains_itself() -> None:
    done = subprocess.run(["bash", str(PACKAGING / "build.sh"), "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "packaging/dist/moka_VERSION_ARCH.deb" in done.stderr and "MOKA_WHEELS" in done.stderr


def test_the_app_knows_which_distributions_it_carries() -> None:
    carried = _pyinstaller.bundled_distributions()
    assert {"moka-shell", "mcp", "pydantic", "pluggy", "packaging", "pywebview"} <= set(carried)
    assert carried["moka-shell"] == importlib.metadata.version("moka-shell")
    assert not {"pytest", "mypy", "playwright", "build", "pyinstaller"} & {k.lower() for k in carried}


def test_the_tarball_install_script_adds_and_removes_a_menu_entry(tmp_path: Path) -> None:
    app = tmp_path / "opt" / "moka"
    app.mkdir(parents=True)
    (app / "moka").write_text("#!/bin/sh\necho moka 9.9\n", encoding="utf-8")
    (app / "moka").chmod(0o755)
    (app / "moka.svg").write_text((PACKAGING / "icons" / "moka.svg").read_text(encoding="utf-8"), encoding="utf-8")
    script = app / "install.sh"
    script.write_text((PACKAGING / "tarball" / "install.sh").read_text(encoding="utf-8"), encoding="utf-8")
    env = {"HOME": str(tmp_path / "home"), "PATH": os.environ["PATH"]}
    done = subprocess.run(["sh", str(script)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    entry = tmp_path / "home" / ".local" / "share" / "applications" / "moka.desktop"
    assert f"Exec={app}/moka\n" in entry.read_text(encoding="utf-8")
    assert (tmp_path / "home" / ".local" / "share" / "icons" / "hicolor" / "scalable" / "apps" / "moka.svg").is_file()
    link = tmp_path / "home" / ".local" / "bin" / "moka"
    assert subprocess.run([str(link)], capture_output=True, text=True).stdout == "moka 9.9\n"
    if shutil.which("desktop-file-validate"):
        subprocess.run(["desktop-file-validate", str(entry)], check=True)
    done = subprocess.run(["sh", str(script), "--uninstall"], capture_output=True, text=True, env=env)
    assert done.returncode == 0 and not entry.exists() and not link.is_symlink()


def test_smoke_script_rejects_a_missing_artifact(tmp_path: Path) -> None:
    res = subprocess.run(["bash", str(PACKAGING / "smoke.sh"), str(tmp_path / "nope")], capture_output=True, text=True)
    assert res.returncode == 2 and "no such file" in res.stderr


def test_smoke_script_runs_every_step_against_a_fake_binary(tmp_path: Path) -> None:
    fake = tmp_path / "app" / "moka"
    fake.parent.mkdir()
    fake.write_text(
        "#!/usr/bin/env bash\n"
        'case "$1" in\n'
        '  --version) echo "moka 9.9.9" ;;\n'
        '  tools) echo "moka-demo/roll_dice  [model,app]" ;;\n'
        '  call) echo "Rolled 3d6: 1, 2, 3 (total 6)" ;;\n'
        '  plugins) echo "moka.transports  0.1.0  built-in  register_transports" ;;\n'
        '  check) echo "OK: 2 of 2 views passed, 0 metadata problem(s)" ;;\n'
        "esac\n"
        'echo "$@" >> "$(dirname "$0")/calls"\n', encoding="utf-8")
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["DISPLAY"] = ":0"  # no Xvfb needed for a fake binary
    res = subprocess.run(["bash", str(PACKAGING / "smoke.sh"), str(fake.parent)], capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "5 passed, 0 failed" in res.stdout
    calls = (fake.parent / "calls").read_text(encoding="utf-8").splitlines()
    assert calls == ["--version", "tools moka-demo", 'call moka-demo roll_dice {"sides":6,"count":3}', "plugins",
                     "check moka-demo --engine webview --timeout 60"]


def test_smoke_script_reads_the_kind_where_the_binary_really_lives(tmp_path: Path) -> None:
    """/usr/bin/moka is a link into /opt/moka: a python beside the link (as /usr/bin/python is on many
    machines) must not make the GTK package look like a venv install (Qt)."""
    app, bin_dir = tmp_path / "opt" / "moka", tmp_path / "usr" / "bin"
    app.mkdir(parents=True)
    bin_dir.mkdir(parents=True)
    fake = app / "moka"
    fake.write_text("#!/usr/bin/env bash\necho 'moka 9.9.9'\n", encoding="utf-8")
    fake.chmod(0o755)
    (bin_dir / "python").symlink_to(sys.executable)
    (bin_dir / "moka").symlink_to(fake)
    env = dict(os.environ, DISPLAY=":0")
    res = subprocess.run(["bash", str(PACKAGING / "smoke.sh"), str(bin_dir / "moka")], capture_output=True, text=True,
                         env=env)
    assert "smoke: kind=gtk" in res.stdout, res.stdout + res.stderr


def test_smoke_script_fails_when_a_plugin_reports_an_error(tmp_path: Path) -> None:
    fake = tmp_path / "moka"
    fake.write_text("#!/usr/bin/env bash\n"
                    'echo "moka 1.0 moka-demo/roll_dice Rolled 3d6: 1, 2, 3 (total 6)"\n'
                    'echo "OK: 1 of 1 views passed"\n'
                    '[ "$1" = plugins ] && printf "moka.transports x\\n    error: failed to import\\n"\n'
                    "exit 0\n", encoding="utf-8")
    fake.chmod(0o755)
    env = dict(os.environ, DISPLAY=":0")
    res = subprocess.run(["bash", str(PACKAGING / "smoke.sh"), str(fake)], capture_output=True, text=True, env=env)
    assert res.returncode == 1
    assert "FAIL  plugins" in res.stdout and "1 failed" in res.stdout


def test_deb_files_are_complete() -> None:
    control = (PACKAGING / "deb" / "control.in").read_text(encoding="utf-8")
    for field in ("Package: moka", "Version: @VERSION@", "Architecture: @ARCH@", "Depends: @DEPENDS@",
                  "Installed-Size: @INSTALLED_SIZE@", "Maintainer:", "Description:"):
        assert field in control
    desktop = (PACKAGING / "deb" / "moka.desktop").read_text(encoding="utf-8")
    assert "Exec=moka" in desktop and "Icon=moka" in desktop and desktop.startswith("[Desktop Entry]")
    svg = (PACKAGING / "icons" / "moka.svg").read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<svg") and "viewBox" in svg


def test_release_workflow_builds_every_os_and_smokes_each() -> None:
    text = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    try:
        import yaml
    except ImportError:  # PyYAML is not a dev dependency; check the text only
        yaml = None
    if yaml is not None:
        jobs = yaml.safe_load(text)["jobs"]
        assert {"linux-qt", "linux-deb", "macos", "windows", "release"} <= set(jobs)
    for needle in ("tags:", "packaging/build.sh qt", "packaging/build.sh deb", "packaging/smoke.sh",
                   "hdiutil create", "Moka.app", "moka.exe", "softprops/action-gh-release", "actions/upload-artifact",
                   "actions/download-artifact", "pyinstaller==6.22.3"):
        assert needle in text, needle


def test_the_workflows_pass_actionlint() -> None:
    """actionlint (pinned in the dev extra) checks every workflow: syntax, expressions, action inputs, runners."""
    actionlint = Path(sys.executable).parent / "actionlint"
    if not actionlint.exists():
        pytest.fail("actionlint is missing: scripts/setup.sh installs it with the dev extra")
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    done = subprocess.run([str(actionlint), "-color=false", *map(str, workflows)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_release_linux_steps_are_the_scripts_the_tests_run() -> None:
    text = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    assert 'bash packaging/build.sh qt' in text and 'bash packaging/build.sh deb' in text
    assert text.count("MOKA_WHEELS=") == 2  # both Linux builds bundle the wheel the python job built
    assert "python -m build --outdir dist ." in text and "sha256sum" in text
    assert "dist/*.whl" in text.split("action-gh-release", 1)[1]  # the wheel and sdist are release assets


# ---- the real builds (minutes each) -----------------------------------------------------------

BUILDS = os.environ.get("MOKA_TEST_PACKAGING") == "1"
needs_builds = pytest.mark.skipif(not BUILDS, reason="set MOKA_TEST_PACKAGING=1 to build and smoke-test the Linux artifacts")


@pytest.mark.slow
@needs_builds
@pytest.mark.parametrize("target,budgets", [
    ("qt", {"bundle_du_sm": 380, "artifact_bytes": 155 * 1048576}),
    ("deb", {"bundle_du_sm": 46, "artifact_bytes": 46_000_000}),
])
def test_build_and_smoke(target: str, budgets: dict[str, int], tmp_path_factory: pytest.TempPathFactory) -> None:
    res = _build(target, tmp_path_factory)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-4000:]
    assert "smoke: 5 passed, 0 failed" in res.stdout and "installing the given wheels" in res.stdout
    info = json.loads((PACKAGING / "dist" / f"{target}.json").read_text(encoding="utf-8"))
    assert info["smoke"] == "passed" and info["over_budget"] is None
    for key, limit in budgets.items():
        assert info[key] <= limit, (key, info[key], limit)
    assert (PACKAGING / "dist" / info["artifact"]).is_file()


_BUILDS: dict[str, subprocess.CompletedProcess[str]] = {}


def _build(target: str, tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """This run's build of ``target``, made once by whichever test asks first (the builds' tests share
    one xdist group, so one worker, but pytest-xdist does not keep their order)."""
    if target not in _BUILDS:
        from wheel_support import built_dist

        dist = built_dist(tmp_path_factory)  # the run's one wheel of Moka and of the bundled plugin
        (PACKAGING / "dist" / f"{target}.json").unlink(missing_ok=True)
        env = {**os.environ, "MOKA_WHEELS": f"{dist['wheel']} {dist['moka-anthropic']}"}
        _BUILDS[target] = subprocess.run(["bash", str(PACKAGING / "build.sh"), target], cwd=ROOT, capture_output=True,
                                         text=True, timeout=3600, env=env)
    return _BUILDS[target]


def _artifact(target: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The artifact this run built for ``target`` (building it now if no test has yet)."""
    res = _build(target, tmp_path_factory)
    record = PACKAGING / "dist" / f"{target}.json"
    if res.returncode != 0 or not record.is_file():
        pytest.fail(f"the {target} build failed (test_build_and_smoke[{target}] says why)")
    return PACKAGING / "dist" / json.loads(record.read_text(encoding="utf-8"))["artifact"]


def _frozen(binary: Path, home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "MOKA_"))}
    env.update(MOKA_CONFIG=str(home / "config.json"), MOKA_DATA_DIR=str(home / "data"), HOME=str(home),
               QT_QPA_PLATFORM="offscreen", PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
    done = subprocess.run([str(binary), *args], cwd=home, env=env, capture_output=True, text=True, timeout=300)
    if check:
        assert done.returncode == 0, f"moka {' '.join(args)}: rc={done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.mark.slow
@needs_builds
def test_plugins_and_the_menu_entry_in_the_unpacked_qt_tarball(tmp_path: Path,
                                                               tmp_path_factory: pytest.TempPathFactory) -> None:
    """The packaged app has no pip: a plugin wheel goes into its plugin folder, is listed, chats, uninstalls."""
    import tarfile

    from wheel_support import built_dist

    with tarfile.open(_artifact("qt", tmp_path_factory)) as tar:
        tar.extractall(tmp_path / "opt", filter="tar")
    binary = tmp_path / "opt" / "moka" / "moka"
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(["sh", str(binary.parent / "install.sh")], capture_output=True, text=True,
                          env={"HOME": str(home), "PATH": os.environ["PATH"]})
    assert done.returncode == 0, done.stderr
    entry = home / ".local" / "share" / "applications" / "moka.desktop"
    subprocess.run(["desktop-file-validate", str(entry)], check=True)
    assert _frozen(home / ".local" / "bin" / "moka", home, "--version").stdout.startswith("moka ")

    parrot = built_dist(tmp_path_factory)["moka-parrot"]
    out = _frozen(binary, home, "plugins", "install", str(parrot))
    assert f"into {home / 'data' / 'plugins' / 'moka-parrot'}" in out.stdout, out.stdout + out.stderr
    plugins = {p["name"]: p for p in json.loads(_frozen(binary, home, "plugins", "--json").stdout)}
    assert plugins["parrot"]["in_folder"] and plugins["parrot"]["error"] is None
    assert plugins["anthropic"]["error"] is None  # the bundled plugin is still there
    said = _frozen(binary, home, "chat", "--backend", "parrot", "hello from the tarball").stdout
    assert "hello from the tarball" in said.split("\n", 1)[-1], said
    # Compiled code is refused with the reason, and nothing is added.
    native = tmp_path / "moka_native-1.0-cp311-cp311-linux_x86_64.whl"
    shutil.copy(parrot, native)
    refused = _frozen(binary, home, "plugins", "install", str(native), check=False)
    assert refused.returncode == 1 and "can only take pure-Python plugins" in refused.stderr
    assert sorted(p.name for p in (home / "data" / "plugins").iterdir()) == ["moka-parrot"]
    assert "uninstalled moka-parrot" in _frozen(binary, home, "plugins", "uninstall", "parrot").stdout
    gone = _frozen(binary, home, "chat", "--backend", "parrot", "hi", check=False)
    assert gone.returncode != 0 and "unknown backend 'parrot'" in gone.stderr
    subprocess.run(["sh", str(binary.parent / "install.sh"), "--uninstall"], check=True, capture_output=True,
                   env={"HOME": str(home), "PATH": os.environ["PATH"]})
    assert not entry.exists()


@pytest.mark.slow
@needs_builds
def test_the_deb_installs_with_apt_and_removes_cleanly(tmp_path_factory: pytest.TempPathFactory) -> None:
    """`apt install ./moka_*.deb` on this machine: the program, its menu entry and icon; `apt remove` takes them."""
    if os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("CI runs as root: the .deb install test must run there")
        pytest.skip("installing the .deb needs root (CI runs this as root)")
    import fcntl

    deb = _artifact("deb", tmp_path_factory)
    apt = ["apt-get", "-y", "-q", "-o", "DPkg::Lock::Timeout=600"]
    files = [Path("/usr/bin/moka"), Path("/opt/moka/moka"), Path("/usr/share/applications/moka.desktop"),
             Path("/usr/share/icons/hicolor/scalable/apps/moka.svg")]
    # One machine may run several test runs: one of them installs and removes at a time.
    with open("/tmp/moka-deb-install-test.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if subprocess.run(["dpkg", "-s", "moka"], capture_output=True).returncode == 0:
            pytest.skip("a moka package is already installed on this machine; not touching it")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        try:
            done = subprocess.run([*apt, "install", f"./{deb.name}"], cwd=deb.parent, capture_output=True, text=True,
                                  env=env, timeout=900)
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
            assert all(f.exists() for f in files), [str(f) for f in files if not f.exists()]
            subprocess.run(["desktop-file-validate", "/usr/share/applications/moka.desktop"], check=True)
            smoke = subprocess.run(["bash", str(PACKAGING / "smoke.sh"), "/usr/bin/moka"], capture_output=True,
                                   text=True, timeout=900)
            assert smoke.returncode == 0 and "smoke: 5 passed, 0 failed" in smoke.stdout, smoke.stdout[-3000:]
        finally:
            removed = subprocess.run([*apt, "remove", "--purge", "moka"], capture_output=True, text=True, env=env,
                                     timeout=900)
        assert removed.returncode == 0, removed.stdout[-3000:] + removed.stderr[-3000:]
        assert not any(f.exists() or f.is_symlink() for f in files) and not Path("/opt/moka").exists()
        assert subprocess.run(["dpkg", "-s", "moka"], capture_output=True).returncode != 0
