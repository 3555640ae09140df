"""``moka plugins install|uninstall``: plugins into every kind of Moka install.

A Moka in a venv or a pipx environment installs with pip into its own environment, as
``llm install`` does (``pip_env``). A frozen Moka (the Qt tarball, the .deb, the macOS and
Windows apps) has no pip: it puts pure-Python wheels into a per-user plugin folder that it puts
on ``sys.path`` at start (``folder``), reading each wheel itself with the standard library
(``wheel``) after working out what it needs that the app does not carry (``resolve``, ``index``).
"""
