"""The client the official conformance suite drives: ``python tests/mcp/conformance_client.py URL``.

The suite starts a test server for one scenario (named in ``MCP_CONFORMANCE_SCENARIO``),
runs this command with the server's URL as the last argument, and checks what the
server saw. The client is an ordinary :class:`MCPToolbox`: it connects, reads the
catalogue, and calls every tool with arguments sampled from its schema. Elicitation
requests are accepted with an empty form, so the toolbox's SEP-1034 defaults fill
it in. Exit status 0 means every call returned; 1 means something raised.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script from anywhere

from mcp import types

from tests.mcp.conformance_auth import auth_for
from weakincentives.mcp import HttpServer, MCPToolbox
from weakincentives.serde import sample


def _accept(server: str, request: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={})


def main(url: str) -> int:
    """Connect, call every tool once, close."""
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    server = HttpServer(url=url, auth=auth_for(scenario, url))
    with MCPToolbox.open([server], elicitation=_accept, call_timeout=20.0) as toolbox:
        discovery = toolbox.discovery()
        for entry in toolbox.catalog.tools:
            arguments = sample(entry.args_schema)
            assert isinstance(arguments, dict)
            response = discovery.call_tool(entry.tool_id, arguments)
            sys.stderr.write(
                f"{scenario}: {entry.tool_id} -> {response.success} {response.message}\n"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[-1]))
