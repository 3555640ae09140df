"""Run the moka-demo MCP server: `python -m moka_shell.demo [--http PORT]`."""

from moka_shell.demo.server import main

raise SystemExit(main())
