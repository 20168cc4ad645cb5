"""Tools from MCP servers (the official ``mcp`` SDK as the client): their configuration, the
servers' connections, the tools as the providers take them, approval and results in words."""
