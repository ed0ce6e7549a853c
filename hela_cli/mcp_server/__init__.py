"""The MCP surface: the tools over stdio (tools.py) and over streamable HTTP (http.py)."""
