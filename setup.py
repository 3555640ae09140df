"""The one build step pyproject.toml cannot say: the user docs (docs/*.md) go into the package.

They become ``moka_shell/docs/`` in the wheel, so every install (pip, pipx, the packaged apps) serves
them at ``/docs/`` from its own files: Help → Documentation works offline and names no web page that
might not exist. A source checkout serves ``docs/`` itself (``moka_shell.web.docs_pages``).
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

DOCS = Path(__file__).resolve().parent / "docs"


class BuildWithDocs(build_py):
    """build_py, then the user docs copied beside the package's other data."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "moka_shell" / "docs"
        target.mkdir(parents=True, exist_ok=True)
        for page in sorted(DOCS.glob("*.md")):
            self.copy_file(str(page), str(target / page.name))


setup(cmdclass={"build_py": BuildWithDocs})
