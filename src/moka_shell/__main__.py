"""`python -m moka_shell` runs the `moka` command."""

from moka_shell.cli.main import entry

entry()
