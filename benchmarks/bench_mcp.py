"""Tokens a model sees for the tools of N MCP servers: flat tools/list vs one discovery round.

Servers: ToolBench's 49 categories, each treated as one MCP server whose tools are
the category's endpoints (about 50 per server; 2,490 in all). Each tool is an MCP
``Tool`` (name, description, ``inputSchema``) with its ToolBench API as
``_meta.category``, so it is imported exactly as ``MCPToolbox`` imports a live
server (``server_entries``; the connections themselves are not what is measured).

- **flat**: every tool of the N servers as a client forwards it to the model (name,
  description, ``inputSchema``; not ``_meta``), as JSON.
- **discovery**: the five served tools' definitions (same three fields), read from ``tools/list`` of
  ``build_server`` through the official in-process client, plus one round over that
  server: ``search_tool_by_category`` (limit 5) and ``expand_tool`` on the top two
  results, counting the text blocks the client receives. Queries are the ToolBench
  queries whose relevant tools all sit in the N servers (the first 100 per N);
  ``hit@5`` says how often a relevant tool was among the five results, so the
  small round is shown to find what the query needs.

Counts are o200k_base BPE tokens (``_tokens.py``). Run:
``.venv/bin/python benchmarks/bench_mcp.py`` (needs the ``bench`` and ``mcp`` extras).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from _tokens import count_tokens
from _toolbench import Query, load_queries, load_records
from mcp import Client, types

from weakincentives.discovery import ToolCatalog, ToolDiscovery
from weakincentives.mcp import build_server
from weakincentives.mcp._import import server_entries

SERVER_COUNTS = (1, 3, 5, 10, 25)
"""Then every server."""
QUERIES_PER_COUNT = 100


@dataclass(frozen=True, slots=True)
class Server:
    name: str
    tools: tuple[types.Tool, ...]
    ids: dict[str, str]
    """ToolBench id -> catalogue tool id."""


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower() or "x"


def build_servers() -> list[Server]:
    """One server per ToolBench category, largest first (ties by name)."""
    grouped: dict[str, list[dict[str, object]]] = defaultdict(list)
    for record in load_records():
        path = record["path"]
        assert isinstance(path, list)
        grouped[str(path[0])].append(record)
    servers = []
    for category, records in sorted(grouped.items(), key=lambda item: (-len(item[1]), item[0])):
        name = _slug(category)
        tools: list[types.Tool] = []
        ids: dict[str, str] = {}
        used: set[str] = set()
        for record in records:
            path = record["path"]
            assert isinstance(path, list)
            base = f"{_slug(str(path[1]))}_{_slug(str(record['name']))}"[:60]
            tool_name, number = base, 2
            while tool_name in used:
                tool_name, number = f"{base}_{number}", number + 1
            used.add(tool_name)
            schema = record.get("args_schema") or {"type": "object", "properties": {}}
            assert isinstance(schema, dict)
            tools.append(
                types.Tool(
                    name=tool_name,
                    description=str(record.get("summary") or record["name"]),
                    input_schema=schema,
                    _meta={"category": str(path[1])},
                )
            )
            ids[str(record["tool_id"])] = f"{name}.{tool_name}"
        servers.append(Server(name=name, tools=tuple(tools), ids=ids))
    return servers


def flat_tokens(servers: Sequence[Server]) -> int:
    return count_tokens(json.dumps([_shown(tool) for server in servers for tool in server.tools]))


def _shown(tool: types.Tool) -> dict[str, object]:
    """What a client forwards to a model per tool: name, description and input schema."""
    return {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema}


def _text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


@dataclass(frozen=True, slots=True)
class Round:
    tokens: int
    hit: bool
    """Whether a relevant tool was among the five results."""


async def discovery_rounds(
    servers: Sequence[Server], queries: Sequence[Query]
) -> tuple[int, list[Round]]:
    nodes, tools = [], []
    for server in servers:
        node, entries, problems = server_entries(server.name, "", server.tools)
        assert not problems, problems[:3]
        nodes.append(node)
        tools.extend(entries)
    service = ToolDiscovery(ToolCatalog(tools=tools, nodes=nodes))
    async with Client(build_server(service)) as client:
        listed = await client.list_tools()
        definitions = [_shown(tool) for tool in listed.tools]
        ids = {key: value for server in servers for key, value in server.ids.items()}
        rounds = []
        for query in queries:
            found = await client.call_tool(
                "search_tool_by_category", {"query": query.query, "limit": 5}
            )
            text = _text(found)
            results = (found.structured_content or {}).get("results", [])
            for pointer in results[:2]:
                expanded = await client.call_tool("expand_tool", {"tool_id": pointer["tool_id"]})
                text += _text(expanded)
            wanted = {ids[tool_id] for tool_id in query.relevant}
            hit = any(pointer["tool_id"] in wanted for pointer in results)
            rounds.append(Round(tokens=count_tokens(text), hit=hit))
    return count_tokens(json.dumps(definitions)), rounds


def queries_within(servers: Sequence[Server], queries: Sequence[Query]) -> list[Query]:
    known = {tool_id for server in servers for tool_id in server.ids}
    return [q for q in queries if set(q.relevant) <= known][:QUERIES_PER_COUNT]


def main() -> None:
    servers = build_servers()
    queries = load_queries()
    sizes = sorted(len(server.tools) for server in servers)
    print(
        f"{len(servers)} servers (ToolBench categories), tools per server: min {sizes[0]}, "
        f"median {sizes[len(sizes) // 2]}, max {sizes[-1]}; largest servers first"
    )
    print("servers  tools  flat_tokens  ops_tokens  round_mean  round_max  ratio  hit@5  queries")
    for count in (*SERVER_COUNTS, len(servers)):
        chosen = servers[:count]
        picked = queries_within(chosen, queries)
        flat = flat_tokens(chosen)
        operations, rounds = asyncio.run(discovery_rounds(chosen, picked))
        tokens = [item.tokens for item in rounds]
        mean = sum(tokens) / len(tokens)
        hits = sum(item.hit for item in rounds) / len(rounds)
        ratio = (operations + mean) / flat
        size = sum(len(server.tools) for server in chosen)
        print(
            f"{count:>7}  {size:>5}  {flat:>11,}  {operations:>10,}  {mean:>10,.0f}  "
            f"{max(tokens):>9,}  {ratio:>5.3f}  {hits:>5.2f}  {len(picked):>7}"
        )


if __name__ == "__main__":
    main()
