"""MCP transports beyond stdio: streamable HTTP (docs/daemon.md)."""
