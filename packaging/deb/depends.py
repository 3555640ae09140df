"""Print the Depends: line of the Moka .deb for the bundle in ``sys.argv[1]``.

Like dpkg-shlibdeps, without a debian/ source tree: every shared library an ELF file in
the bundle links (DT_NEEDED) but the bundle does not carry must come from a distro
package; ``dpkg -S`` names it. GObject introspection loads GTK and WebKitGTK at run time
(no DT_NEEDED), so their typelib packages are added by name, and ``libc6`` gets the
highest GLIBC symbol version any file needs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

#: Loaded through gi.require_version() at run time; each pulls its library package.
TYPELIBS = ["gir1.2-gtk-3.0", "gir1.2-webkit2-4.1"]


def elf_files(root: Path) -> list[Path]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as fh:
                if fh.read(4) == b"\x7fELF":
                    found.append(path)
    return found


def needed(path: Path) -> list[str]:
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=False).stdout
    return re.findall(r"\(NEEDED\).*?\[(.+?)\]", out)


def glibc_versions(path: Path) -> list[tuple[int, ...]]:
    out = subprocess.run(["objdump", "-T", str(path)], capture_output=True, text=True, check=False).stdout
    return [tuple(int(x) for x in v.split(".")) for v in re.findall(r"GLIBC_(\d+(?:\.\d+)+)", out)]


def system_paths() -> dict[str, str]:
    """soname -> path of the library the dynamic loader would pick on this machine."""
    flag = {"x86_64": "x86-64", "aarch64": "AArch64"}.get(os.uname().machine)
    out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    paths: dict[str, str] = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) \((.*?)\) => (\S+)", line)
        if m and (flag is None or flag in m.group(2)):
            paths.setdefault(m.group(1), m.group(3))
    return paths


def owner(path: str) -> str | None:
    candidates = [path, os.path.realpath(path)]
    for p in list(candidates):  # merged /usr: dpkg may know either spelling
        if p.startswith("/usr/lib/"):
            candidates.append(p[len("/usr"):])
        elif p.startswith("/lib/"):
            candidates.append("/usr" + p)
    for p in candidates:
        res = subprocess.run(["dpkg", "-S", p], capture_output=True, text=True, check=False)
        if res.returncode == 0:
            return res.stdout.split(":", 1)[0].split(",")[0].strip()
    return None


def main() -> int:
    root = Path(sys.argv[1])
    files = elf_files(root)
    carried = {p.name for p in root.rglob("*")}
    sonames = sorted({n for f in files for n in needed(f)} - carried)
    where = system_paths()
    packages: set[str] = set(TYPELIBS)
    unknown = []
    for soname in sonames:
        path = where.get(soname)
        pkg = owner(path) if path else None
        if pkg is None:
            unknown.append(soname)
        else:
            packages.add(pkg)
    if unknown:
        print(f"depends.py: no installed package provides {', '.join(unknown)}", file=sys.stderr)
        return 1
    glibc = max((v for f in files for v in glibc_versions(f)), default=None)
    deps = []
    for pkg in sorted(packages):
        if pkg == "libc6" and glibc:
            deps.append(f"libc6 (>= {'.'.join(map(str, glibc))})")
        else:
            deps.append(pkg)
    print(", ".join(deps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
