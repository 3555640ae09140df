"""`python -m moka_shell` runs the `moka` command."""

from moka_shell.cli.main import main

raise SystemExit(main())
