# PyInstaller hook for moka_shell: package data, lazily imported modules, and the
# distribution metadata that entry-point plugins are discovered through.
# The lists come from moka_shell._pyinstaller so tests can check them without PyInstaller.
import json
import tempfile
from pathlib import Path

from PyInstaller.utils.hooks import collect_data_files, collect_submodules, copy_metadata, logger

from moka_shell._pyinstaller import (
    DATA_GLOBS,
    bundled_distributions,
    data_files,
    keep_submodule,
    metadata_distributions,
    plugin_distributions,
    plugin_packages,
)

# Static UI files (index.html, js/, css/, sandbox/) and the demo server's views.
datas = collect_data_files("moka_shell", includes=list(DATA_GLOBS))
if not datas or len(datas) < len(data_files()):
    raise SystemExit(f"hook-moka_shell: collected {len(datas)} data files, expected {len(data_files())}")

# Shells, commands and the demo server are imported inside functions; take every
# submodule except the test doubles and this build helper.
hiddenimports = collect_submodules("moka_shell", filter=keep_submodule)

# moka-shell's own metadata (version, entry points) and each bundled plugin's, so
# importlib.metadata finds the `moka` entry points in the frozen app.
for dist in metadata_distributions():
    datas += copy_metadata(dist)

# What the app carries, by distribution and version: `moka plugins install` checks a plugin's
# requirements against it (the app has no pip, and ships only the plugins' .dist-info).
manifest = Path(tempfile.mkdtemp(prefix="moka-hook-")) / "bundled-distributions.json"
manifest.write_text(json.dumps(bundled_distributions(), indent=1), encoding="utf-8")
datas.append((str(manifest), "moka_shell"))

# The plugins themselves: nothing imports them statically.
for package in plugin_packages():
    hiddenimports += collect_submodules(package)
    datas += collect_data_files(package)

logger.info("moka_shell hook: %d data files, plugins bundled: %s", len(datas),
            ", ".join(plugin_distributions()) or "none")
