"""The public API is exactly ``__all__`` (httpx's habit): nothing exported by accident, nothing promised missing.

``moka_shell`` is the plugin author's API and ``moka_shell.testing`` the one their tests use: a name
either is in ``__all__`` or looks private (a leading underscore). Submodules are reached as modules
and are not names of the API.
"""

from __future__ import annotations

from types import ModuleType

import pytest

import moka_shell
import moka_shell.testing

FACES = [pytest.param(moka_shell, id="moka_shell"), pytest.param(moka_shell.testing, id="moka_shell.testing")]


def is_submodule(module: ModuleType, name: str) -> bool:
    value = getattr(module, name)
    return isinstance(value, ModuleType) and value.__name__ == f"{module.__name__}.{name}"


def public_names(module: ModuleType) -> list[str]:
    """Every name of ``module`` that does not start with an underscore, submodules left out."""
    return sorted(n for n in dir(module) if not n.startswith("_") and not is_submodule(module, n))


@pytest.mark.parametrize("module", FACES)
def test_the_public_names_are_exactly_all(module: ModuleType) -> None:
    """What the module shows is what ``__all__`` lists (``__version__`` is the one dunder it may list)."""
    assert public_names(module) == sorted(n for n in module.__all__ if n != "__version__")


@pytest.mark.parametrize("module", FACES)
def test_every_name_in_all_is_there_once(module: ModuleType) -> None:
    """``__all__`` names no name twice and none the module cannot give (the package face loads its names lazily)."""
    assert len(module.__all__) == len(set(module.__all__))
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert missing == []


def test_the_version_is_exported() -> None:
    """``moka_shell.__version__`` is the one in ``moka_shell/version.py``, and it is in ``__all__``."""
    from moka_shell.version import __version__

    assert moka_shell.__version__ == __version__ and "__version__" in moka_shell.__all__
