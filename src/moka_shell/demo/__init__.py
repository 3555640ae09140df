"""moka-demo: the MCP server bundled with Moka, with dice and playground views."""
