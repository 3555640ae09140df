"""What the Moka bundles leave out, as plain functions over PyInstaller TOC entries.

``moka.spec`` imports this module; it does not import PyInstaller itself, so the test
suite can check the rules on made-up entries. A TOC entry is ``(dest, source, kind)``
where ``kind`` is e.g. ``'BINARY'``, ``'EXTENSION'``, ``'DATA'`` or ``'SYMLINK'`` (for a
symlink, ``source`` is the link target relative to ``dest``'s folder).

The recipes and every measurement behind them are in shared/docs/packaging.md:

* Qt (portable tarball), recipe Q5: three module excludes that stop the QtQml hook
  from dragging in the whole ``qml/`` tree; no Qt translations, no DevTools pak, only
  the ``en-US`` WebEngine locale; only the platform/input/TLS plugins pywebview needs;
  then a DT_NEEDED pass that drops the libraries only the dropped plugins used
  (libqgtk3 pulled GTK 3, libcupsprintersupport pulled CUPS and GnuTLS).
* GTK (.deb), recipe G4: nothing from the distribution (GTK, GLib, WebKitGTK, cairo,
  pango, X11, OpenSSL...) and none of the gi runtime hooks that would point GTK at
  files no longer in the bundle. The package ``Depends:`` on the distro's versions.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Iterable, Sequence
from typing import Any

Entry = tuple[str, str, str]

# -- modules ---------------------------------------------------------------------------

#: Never in any bundle: dev tools, test runners, and the Chromium driver of `moka check
#: --engine chromium` (the frozen app renders checks with its own webview).
COMMON_EXCLUDES = [
    "tkinter", "_tkinter", "playwright", "pytest", "_pytest", "mypy", "pip", "setuptools",
    "moka_shell.testing",
]

#: Qt: the first three keep PyInstaller's QtQml hook from running (−73 MB of qml/);
#: the rest are small or no-ops, all tested safe. QtPrintSupport, QtOpenGL and
#: QtOpenGLWidgets must stay: the QtWebEngineWidgets sip module imports them.
QT_EXCLUDES = [
    "PyQt6.QtQml", "PyQt6.QtQuick", "PyQt6.QtQuickWidgets", "PyQt6.QtPositioning", "PyQt6.QtDBus",
    "PyQt6.QtQuick3D", "PyQt6.QtWebEngineQuick", "PyQt6.QtDesigner", "PyQt6.QtHelp",
    "PyQt6.QtMultimedia", "PyQt6.QtMultimediaWidgets", "PyQt6.QtSpatialAudio", "PyQt6.QtBluetooth",
    "PyQt6.QtNfc", "PyQt6.QtPdf", "PyQt6.QtPdfWidgets", "PyQt6.QtSql", "PyQt6.QtTest", "PyQt6.QtSvg",
    "PyQt6.QtSvgWidgets", "PyQt6.QtSensors", "PyQt6.QtSerialPort", "PyQt6.QtTextToSpeech",
    "PyQt6.QtRemoteObjects", "PyQt6.QtStateMachine", "PyQt6.QtWebSockets", "PyQt6.Qt3DCore",
    "PyQt6.Qt3DRender", "PyQt6.Qt3DInput", "PyQt6.Qt3DLogic", "PyQt6.Qt3DAnimation", "PyQt6.Qt3DExtras",
    "PyQt6.QtCharts", "PyQt6.QtDataVisualization", "PyQt6.QtXml", "PyQt6.QtConcurrent",
    "PyQt6.QtNetworkAuth", "PyQt6.QtQuickControls2", "PyQt6.uic", "PyQt6.lupdate",
    # the other toolkit
    "gi", "cairo",
]

#: GTK: the other toolkit must not sneak in (moka-shell's Linux deps name PyQt6).
GTK_EXCLUDES = ["PyQt6", "PyQt5", "PySide6", "PySide2", "qtpy"]

# -- Qt data files and plugins -----------------------------------------------------------

QT = "PyQt6/Qt6/"
#: Qt plugins pywebview needs: X11, Wayland and offscreen platforms, input methods,
#: TLS through OpenSSL (pywebview imports QSslCertificate), the desktop portal theme.
QT_KEEP_PLUGINS = re.compile(
    QT + r"plugins/(platforms/libq(xcb|wayland|offscreen)\.so"
    r"|xcbglintegrations/|wayland-[^/]+/|platforminputcontexts/"
    r"|tls/libqopensslbackend|platformthemes/libqxdgdesktopportal)"
)
#: WebEngine UI locales kept (Chromium's own strings: context menus, error pages).
QT_LOCALES = ("en-US",)


def _dest(entry: Sequence[Any]) -> str:
    return str(entry[0]).replace(os.sep, "/")


def qt_keep(entry: Sequence[Any], locales: Iterable[str] = QT_LOCALES) -> bool:
    """Whether a Qt bundle keeps this binary or data entry (recipe Q5's filter)."""
    dest = _dest(entry)
    if not dest.startswith(QT):
        return True
    if dest.startswith(QT + "translations/qtwebengine_locales/"):
        return any(dest.endswith(f"/{loc}.pak") for loc in locales)
    if dest.startswith(QT + "translations/") and dest.endswith(".qm"):
        return False
    if dest.endswith("qtwebengine_devtools_resources.pak"):
        return False  # only the DevTools inspector (webview.start(debug=True)) needs it
    if dest.startswith(QT + "plugins/"):
        return bool(QT_KEEP_PLUGINS.match(dest))
    if dest.startswith(QT + "qml/"):
        return False
    return True


#: Files the Qt WebEngine cannot run without (each one tested by deleting it).
QT_REQUIRED = (
    QT + "resources/qtwebengine_resources.pak",
    QT + "resources/v8_context_snapshot.bin",
    QT + "resources/icudtl.dat",
    QT + "libexec/QtWebEngineProcess",
    QT + "translations/qtwebengine_locales/en-US.pak",
)

#: Libraries loaded with dlopen() (NSS's modules, libpython): roots of the closure.
DLOPENED = re.compile(r"^(libnssckbi|libsoftokn3|libfreeblpriv3|libfreebl3|libnssdbm3|libpython)")


#: Libraries every Linux desktop that runs this bundle already has, and that are risky to
#: carry: the graphics and font stack must match the system's drivers and config files
#: (an old bundled libstdc++ or fontconfig breaks Mesa or newer fonts.conf), and the
#: rest are ABI-stable basics. This is the reasoning of AppImage's exclude list; the
#: set is the part of it this bundle pulls in, plus libdbus (which drags libsystemd,
#: libgcrypt, lz4 and zstd with it). NSS, OpenSSL, SQLite, Kerberos and the xcb
#: utility libraries stay in the bundle: minimal desktops do not always have them.
SYSTEM_BASELINE = re.compile(
    r"^(libstdc\+\+\.so\.6|libgcc_s\.so\.1|libz\.so\.1|libexpat\.so\.1|libuuid\.so\.1"
    r"|libX11\.so\.6|libX11-xcb\.so\.1|libxcb\.so\.1|libICE\.so\.6|libSM\.so\.6"
    r"|libGL\.so\.1|libGLX\.so\.0|libEGL\.so\.1|libOpenGL\.so\.0|libGLdispatch\.so\.0|libglapi\.so\.0"
    r"|libgbm\.so\.1|libdrm\.so\.2|libasound\.so\.2|libfontconfig\.so\.1|libfreetype\.so\.6"
    r"|libharfbuzz\.so\.0|libfribidi\.so\.0|libthai\.so\.0|libglib-2\.0\.so\.0|libgobject-2\.0\.so\.0"
    r"|libgio-2\.0\.so\.0|libgmodule-2\.0\.so\.0|libgthread-2\.0\.so\.0|libgpg-error\.so\.0"
    r"|libdbus-1\.so\.3|libp11-kit\.so\.0|libcom_err\.so\.2|libusb-1\.0\.so\.0)$"
)


#: Also left to the system: libraries with a stable ABI that every distribution able to
#: run this bundle at all (glibc >= 2.36) installs with its desktop: OpenSSL 3, SQLite 3,
#: libffi 8, the compression libraries and the X11 extension libraries. Together with
#: the list above this saves 4 MiB of the download (recipe Q7 of the measurements).
SYSTEM_COMMON = re.compile(
    r"^(libssl\.so\.3|libcrypto\.so\.3|libsqlite3\.so\.0|libffi\.so\.8|libzstd\.so\.1|liblzma\.so\.5"
    r"|libbz2\.so\.1\.0|libbrotli(common|dec|enc)\.so\.1|libudev\.so\.1"
    r"|libX(ext|render|randr|fixes|damage|composite|tst|i|cursor|inerama|au|dmcp)\.so\.\d+)$"
)


def is_baseline(entry: Sequence[Any]) -> bool:
    """Whether a top-level library is one the system provides (``SYSTEM_BASELINE``/``_COMMON``)."""
    dest = _dest(entry)
    return "/" not in dest and bool(SYSTEM_BASELINE.match(dest) or SYSTEM_COMMON.match(dest))


def readelf_needed(path: str) -> list[str]:
    """The DT_NEEDED sonames of an ELF file."""
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=False).stdout
    return re.findall(r"\(NEEDED\).*?\[(.+?)\]", out)


def needed_closure(
    binaries: list[Entry], datas: list[Entry], needed: Callable[[str], list[str]] = readelf_needed,
) -> tuple[list[Entry], list[Entry]]:
    """Keep only the libraries reachable through DT_NEEDED from what is really loaded.

    Roots: Python extension modules, Qt plugins, QtWebEngineProcess and dlopen()ed
    libraries. Dropping a plugin from the TOC does not drop the libraries dependency
    analysis already added for it; this pass does. Symlinks (PyInstaller records
    ``libfoo.so.1 -> libfoo.so.1.2`` as SYMLINK data) follow their target.
    """
    by_name: dict[str, list[Entry]] = {}
    by_dest: dict[str, Entry] = {}
    for e in binaries:
        by_name.setdefault(os.path.basename(e[0]), []).append(e)
        by_dest[e[0]] = e
    links = {
        e[0]: os.path.normpath(os.path.join(os.path.dirname(e[0]), e[1])) for e in datas if e[2] == "SYMLINK"
    }
    link_by_name = {os.path.basename(k): v for k, v in links.items()}
    roots = [
        e for e in binaries
        if e[2] == "EXTENSION" or ".abi3." in e[0] or _dest(e).startswith(QT + "plugins/")
        or e[0].endswith("QtWebEngineProcess") or DLOPENED.match(os.path.basename(e[0]))
    ]
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        e = todo.pop()
        if e[0] in seen:
            continue
        seen.add(e[0])
        for soname in needed(e[1]):
            todo += by_name.get(soname, [])
            target = link_by_name.get(soname)
            if target in by_dest:
                todo.append(by_dest[target])
    kept_bins = [e for e in binaries if e[0] in seen]
    kept_datas = [e for e in datas if e[2] != "SYMLINK" or links[e[0]] in seen or links[e[0]] not in by_dest]
    return kept_bins, kept_datas


# -- GTK: the distribution provides the toolkit --------------------------------------------

#: A binary whose source is here belongs to the distribution (GTK, GLib, WebKitGTK...).
SYSTEM_PREFIXES = ("/lib/", "/usr/lib/", "/lib64/", "/usr/lib64/", "/usr/share/")
#: Data the gi hooks collect for a self-contained GTK; the distro has all of it.
GTK_DATA_PREFIXES = ("share/", "gi_typelibs/", "lib/gdk-pixbuf", "gio_modules/", "etc/")
#: Runtime hooks that point GI/GTK at the (now absent) bundled copies.
GTK_RTHOOKS = frozenset({"pyi_rth_gi", "pyi_rth_gtk", "pyi_rth_glib", "pyi_rth_gdkpixbuf", "pyi_rth_gio"})
#: gi hooks' options: skip icons, themes and translations altogether (they are dropped anyway).
GTK_HOOKSCONFIG = {
    "gi": {"icons": [], "themes": [], "languages": ["en_US"], "module-versions": {"Gtk": "3.0", "Gdk": "3.0"}},
}


def is_system_binary(entry: Sequence[Any]) -> bool:
    """Whether a binary comes from the distribution rather than from a Python wheel/venv."""
    return str(entry[1]).startswith(SYSTEM_PREFIXES)


def gtk_system_split(binaries: list[Entry], datas: list[Entry]) -> tuple[list[Entry], list[Entry], list[Entry]]:
    """Recipe G4: (binaries kept, datas kept, binaries dropped because the distro has them)."""
    dropped = [e for e in binaries if is_system_binary(e)]
    dropped_dests = {e[0] for e in dropped}
    kept_bins = [e for e in binaries if not is_system_binary(e)]
    kept_datas = [
        e for e in datas
        if not _dest(e).startswith(GTK_DATA_PREFIXES) and not (e[2] == "SYMLINK" and e[0] in dropped_dests)
    ]
    return kept_bins, kept_datas, dropped


def drop_rthooks(scripts: list[Entry], names: frozenset[str] = GTK_RTHOOKS) -> list[Entry]:
    """The app's scripts without the named runtime hooks."""
    return [e for e in scripts if e[0] not in names]
