"""Memory of a process tree: proportional set size (PSS) from /proc/<pid>/smaps_rollup.

PSS splits shared pages between the processes that map them, so a tree's PSS sum counts
each page once. Processes that vanish while being read are skipped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Proc:
    """One process: its id, parent, short name, PSS and USS in KiB."""

    pid: int
    ppid: int
    name: str
    pss_kb: int
    uss_kb: int = 0


def _stat(pid: int) -> tuple[int, str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = text[text.index("(") + 1:text.rindex(")")]
    ppid = int(text[text.rindex(")") + 2:].split()[1])
    return ppid, name


def rollup_kb(pid: int) -> dict[str, int]:
    """The KiB fields of a process's /proc/<pid>/smaps_rollup (empty if it is gone)."""
    out: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                out[parts[0].rstrip(":")] = int(parts[1])
    except OSError:
        pass
    return out


def pss_kb(pid: int) -> int:
    """A process's PSS in KiB (0 if it is gone)."""
    return rollup_kb(pid).get("Pss", 0)


def uss_kb(pid: int) -> int:
    """A process's unique set size in KiB: pages no other process maps (0 if it is gone).

    PSS shrinks when unrelated processes map the same libraries (another QtWebEngine app,
    another Chromium); USS does not, so it shows whether a change moved Moka's own memory.
    """
    r = rollup_kb(pid)
    return r.get("Private_Clean", 0) + r.get("Private_Dirty", 0)


def descendants(root: int) -> list[int]:
    """root and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st is not None:
                children.setdefault(st[0], []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def tree(roots: list[int], *, exclude: tuple[str, ...] = ()) -> list[Proc]:
    """Every process under the roots (names starting with an excluded prefix are left out)."""
    seen: set[int] = set()
    procs = []
    for root in roots:
        for pid in descendants(root):
            st = _stat(pid)
            if pid in seen or st is None or st[1].startswith(exclude):
                continue
            seen.add(pid)
            r = rollup_kb(pid)
            procs.append(Proc(pid, st[0], st[1], r.get("Pss", 0), r.get("Private_Clean", 0) + r.get("Private_Dirty", 0)))
    return procs


def mib(procs: list[Proc]) -> float:
    """Total PSS in MiB."""
    return sum(p.pss_kb for p in procs) / 1024


def uss_mib(procs: list[Proc]) -> float:
    """Total USS in MiB."""
    return sum(p.uss_kb for p in procs) / 1024


def by_kind(procs: list[Proc]) -> dict[str, float]:
    """PSS in MiB grouped by process name (QtWebEngineProc, chromium, python, node...)."""
    out: dict[str, float] = {}
    for p in procs:
        out[p.name] = round(out.get(p.name, 0) + p.pss_kb / 1024, 1)
    return out


def role(pid: int, root: int) -> str:
    """What a process is for, from its command line: the root, a renderer, a helper, the demo server."""
    if pid == root:
        return "app (Python core + browser process)"
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "gone"
    for arg in args:
        if arg.startswith(b"--type="):
            kind = arg[len(b"--type="):].decode(errors="replace")
            if kind == "utility":  # the network and storage services are utilities
                sub = next((a for a in args if a.startswith(b"--utility-sub-type=")), b"")
                return "utility " + sub.split(b"=", 1)[-1].decode(errors="replace").rsplit(".", 1)[-1]
            if kind == "zygote" and _parent_is_zygote(pid):
                return "renderer"  # forked by the zygote, its command line unchanged
            return kind
    if any(arg.endswith(b"demo-server") for arg in args):
        return "demo server"
    st = _stat(pid)
    return st[1] if st else "gone"


def _parent_is_zygote(pid: int) -> bool:
    st = _stat(pid)
    if st is None:
        return False
    try:
        return b"--type=zygote" in Path(f"/proc/{st[0]}/cmdline").read_bytes()
    except OSError:
        return False


GL_LIBRARIES = ("libLLVM", "swrast_dri", "libgallium", "llvmpipe", "libGLX_mesa", "libEGL_mesa", "libvulkan")


def gl_libraries(pid: int) -> list[str]:
    """Which software-GL libraries (Mesa's llvmpipe and friends) the process has mapped.

    On this headless machine QtWebEngine's GL either comes up on llvmpipe (~40 MiB more in the
    app process and the renderer) or falls back to software compositing; a reading says which.
    """
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return []
    return [name for name in GL_LIBRARIES if name in maps]


def others_mapping(library: str, ours: set[int]) -> int:
    """How many processes outside ``ours`` map ``library``: they share its pages, and lower our PSS (and USS)."""
    count = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in ours:
            continue
        try:
            if library in (entry / "maps").read_text():
                count += 1
        except OSError:
            continue
    return count


def top_mappings(pid: int, count: int = 8) -> dict[str, float]:
    """The process's largest mappings by PSS (MiB), grouped by file name or [heap]/[anon]: where a reading differs."""
    sizes: dict[str, int] = {}
    name = "?"
    try:
        lines = Path(f"/proc/{pid}/smaps").read_text().splitlines()
    except OSError:
        return {}
    for line in lines:
        parts = line.split()
        if parts and "-" in parts[0] and len(parts) >= 5 and not parts[0].endswith(":"):
            name = parts[5].rsplit("/", 1)[-1] if len(parts) > 5 else "[anon]"
        elif parts and parts[0] == "Pss:":
            sizes[name] = sizes.get(name, 0) + int(parts[1])
    top = sorted(sizes.items(), key=lambda item: -item[1])[:count]
    return {key: round(kb / 1024, 1) for key, kb in top}


def by_role(procs: list[Proc], root: int) -> dict[str, dict[str, float]]:
    """PSS (and USS) in MiB and a process count per role (see role())."""
    out: dict[str, dict[str, float]] = {}
    for p in procs:
        r = out.setdefault(role(p.pid, root), {"pss_mib": 0.0, "uss_mib": 0.0, "processes": 0})
        r["pss_mib"] = round(r["pss_mib"] + p.pss_kb / 1024, 1)
        r["uss_mib"] = round(r["uss_mib"] + p.uss_kb / 1024, 1)
        r["processes"] += 1
    return out


def chromium_roots(parent: int) -> list[int]:
    """Chromium browser processes started (through Playwright's driver) below parent."""
    roots = []
    for pid in descendants(parent):
        st = _stat(pid)
        if st is None or not st[1].startswith(("chrom", "headless")):
            continue
        parent_st = _stat(st[0])
        if parent_st is None or not parent_st[1].startswith(("chrom", "headless")):
            roots.append(pid)
    return roots
