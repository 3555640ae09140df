"""Signing in to MCP servers: the SDK's OAuth provider with Moka's token store, the browser round trip, sign-out."""
