"""One wheel file, read and installed with the standard library alone (the frozen app has no pip).

Only what a frozen Moka can load is accepted: a pure-Python wheel (``Root-Is-Purelib: true``, tags
``py3-none-any``), no extension modules, every file listed in its RECORD with a matching hash.
Anything else is refused with the reason before a single file is written.
"""

from __future__ import annotations

import base64
import configparser
import hashlib
import re
import zipfile
from dataclasses import dataclass, field
from email.parser import Parser
from pathlib import Path, PurePosixPath

from moka_shell.errors import PluginInstallError

COMPILED = (".so", ".pyd", ".dylib", ".dll")
WHEEL_NAME = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)(-(?P<build>\d[^-]*))?"
                        r"-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$")
MAX_WHEEL_BYTES = 200 * 2**20  # unpacked, all files together: a plugin is small


def normalize(name: str) -> str:
    """A distribution name as PEP 503 compares it (``Moka_Foo`` → ``moka-foo``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class Wheel:
    """A wheel file that passed the checks: its name, version, requirements and entry points."""

    path: Path
    name: str
    version: str
    requires: list[str] = field(default_factory=list)
    requires_python: str | None = None
    moka_entry_points: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """The normalized distribution name: the plugin folder's subfolder for it."""
        return normalize(self.name)


def _tags_are_pure(py: str, abi: str, plat: str) -> bool:
    return abi == "none" and plat == "any" and any(t.startswith("py3") for t in py.split("."))


def _compiled_files(names: list[str]) -> list[str]:
    return [n for n in names if n.lower().endswith(COMPILED) or ".so." in PurePosixPath(n).name]


def open_wheel(path: Path) -> Wheel:
    """Read and check ``path``; raise PluginInstallError saying why it can't go into the app."""
    match = WHEEL_NAME.match(path.name)
    if not match:
        raise PluginInstallError(f"{path.name} is not a wheel file name (NAME-VERSION-PY-ABI-PLATFORM.whl)")
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise PluginInstallError(f"{path} could not be read as a wheel: {exc}") from exc
    with archive:
        names = archive.namelist()
        compiled = _compiled_files(names)
        if compiled or not _tags_are_pure(match["py"], match["abi"], match["plat"]):
            what = f"it carries compiled code ({', '.join(compiled[:3])})" if compiled else \
                f"it is built for {match['py']}-{match['abi']}-{match['plat']}, not for any Python 3"
            raise PluginInstallError(
                f"{path.name}: the Moka app can only take pure-Python plugins, and {what}",
                hint="install Moka with pipx (docs/install.md) to use plugins with compiled code")
        info = _dist_info(names, path.name)
        wheel_meta = Parser().parsestr(_read(archive, f"{info}/WHEEL"))
        if (wheel_meta.get("Root-Is-Purelib") or "").strip().lower() != "true" or \
                any(n.startswith(f"{info[:-len('.dist-info')]}.data/platlib/") for n in names):
            raise PluginInstallError(f"{path.name} installs into platlib (compiled code): the Moka app "
                                     "can only take pure-Python plugins",
                                     hint="install Moka with pipx (docs/install.md) to use it")
        if not (wheel_meta.get("Wheel-Version") or "").startswith("1."):
            raise PluginInstallError(f"{path.name}: unsupported Wheel-Version {wheel_meta.get('Wheel-Version')!r}")
        meta = Parser().parsestr(_read(archive, f"{info}/METADATA"))
        entry_points = _moka_entry_points(archive, info, names)
        total = sum(i.file_size for i in archive.infolist())
        if total > MAX_WHEEL_BYTES:
            raise PluginInstallError(f"{path.name} unpacks to {total // 2**20} MiB; a plugin may have at most "
                                     f"{MAX_WHEEL_BYTES // 2**20} MiB")
    return Wheel(path, meta.get("Name") or match["name"], meta.get("Version") or match["version"],
                 list(meta.get_all("Requires-Dist") or []), meta.get("Requires-Python"), entry_points)


def _dist_info(names: list[str], wheel_name: str) -> str:
    tops = {n.split("/", 1)[0] for n in names if n.split("/", 1)[0].endswith(".dist-info")}
    if len(tops) != 1:
        raise PluginInstallError(f"{wheel_name} has {len(tops)} .dist-info folders; a wheel has exactly one")
    return tops.pop()


def _read(archive: zipfile.ZipFile, member: str) -> str:
    try:
        return archive.read(member).decode("utf-8")
    except KeyError:
        raise PluginInstallError(f"the wheel has no {member}") from None


def _moka_entry_points(archive: zipfile.ZipFile, info: str, names: list[str]) -> dict[str, str]:
    if f"{info}/entry_points.txt" not in names:
        return {}
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # entry point names keep their case
    parser.read_string(_read(archive, f"{info}/entry_points.txt"))
    return dict(parser["moka"]) if parser.has_section("moka") else {}


def _safe(member: str) -> PurePosixPath:
    rel = PurePosixPath(member)
    if rel.is_absolute() or ".." in rel.parts or member.startswith(("/", "\\")) or ":" in rel.parts[0]:
        raise PluginInstallError(f"the wheel holds an unsafe path {member!r}; nothing was installed")
    return rel


def _record_hashes(archive: zipfile.ZipFile, info: str) -> dict[str, str]:
    hashes: dict[str, str] = {}
    for line in _read(archive, f"{info}/RECORD").splitlines():
        path, _, rest = line.partition(",")
        digest = rest.partition(",")[0]
        if path:
            hashes[path] = digest
    return hashes


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def extract(wheel: Wheel, target: Path, *, requested: bool) -> None:
    """Unpack ``wheel`` into the empty folder ``target``, checking every file against its RECORD.

    ``.data/purelib`` goes to the root as pip does; scripts, headers and data files are left out
    (a frozen app has no bin/ to put them in). RECORD is rewritten to list what was written.
    """
    with zipfile.ZipFile(wheel.path) as archive:
        info = _dist_info(archive.namelist(), wheel.path.name)
        data_prefix = info[: -len(".dist-info")] + ".data/"
        hashes = _record_hashes(archive, info)
        written: list[str] = []
        for item in archive.infolist():
            if item.is_dir():
                continue
            rel = _safe(item.filename)
            data = archive.read(item)
            if item.filename not in (f"{info}/RECORD", f"{info}/RECORD.jws", f"{info}/RECORD.p7s"):
                expected = hashes.get(item.filename)
                if expected is None:
                    raise PluginInstallError(f"{wheel.path.name}: {item.filename} is not listed in its RECORD")
                if expected and expected != _digest(data):
                    raise PluginInstallError(f"{wheel.path.name}: {item.filename} does not match its RECORD hash "
                                             "(a damaged or altered wheel)")
            if item.filename.startswith(data_prefix):
                kind, _, rest = item.filename[len(data_prefix):].partition("/")
                if kind != "purelib" or not rest:
                    continue
                rel = _safe(rest)
            if rel.parts[0] == info and rel.name.startswith("RECORD"):
                continue
            dest = target.joinpath(*rel.parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
            written.append(f"{rel.as_posix()},{_digest(data)},{len(data)}")
        meta_dir = target / info
        (meta_dir / "INSTALLER").write_text("moka\n", encoding="utf-8")
        written.append(f"{info}/INSTALLER,,")
        if requested:
            (meta_dir / "REQUESTED").write_text("", encoding="utf-8")
            written.append(f"{info}/REQUESTED,,")
        written.append(f"{info}/RECORD,,")
        (meta_dir / "RECORD").write_text("\n".join(written) + "\n", encoding="utf-8")
