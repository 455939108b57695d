"""What a toolbox reads from each server, and the one catalogue built from all of it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from mcp import types

from weakincentives.discovery import CatalogNode, CatalogTool, ToolCatalog
from weakincentives.mcp._connection import MCPConnection
from weakincentives.mcp._import import ImportProblem, server_entries
from weakincentives.mcp._reads import ReadHandle, read_entries

__all__ = ["ServerListing", "build_catalog", "list_server"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerListing:
    """Everything one server listed: tools, resources, resource templates and prompts."""

    tools: tuple[types.Tool, ...] = ()
    resources: tuple[types.Resource, ...] = ()
    templates: tuple[types.ResourceTemplate, ...] = ()
    prompts: tuple[types.Prompt, ...] = ()


async def list_server(connection: MCPConnection) -> ServerListing:
    """Read every listing the server offers (each one whole, page after page)."""
    tools, resources, templates, prompts = await asyncio.gather(
        connection.list_tools(),
        connection.list_resources(),
        connection.list_resource_templates(),
        connection.list_prompts(),
    )
    return ServerListing(tools=tools, resources=resources, templates=templates, prompts=prompts)


def build_catalog(
    extra_tools: Iterable[CatalogTool],
    extra_nodes: Iterable[CatalogNode],
    listings: Mapping[str, ServerListing],
    connections: Mapping[str, MCPConnection],
) -> tuple[ToolCatalog, tuple[ImportProblem, ...]]:
    """One catalogue: the extra entries, then each server's category and entries.

    An entry whose id an earlier one has (``a`` listing ``b.echo`` and ``a.b``
    listing ``echo``) is left out with a problem; the first keeps the id.
    """
    tools = list(extra_tools)
    nodes = list(extra_nodes)
    problems: list[ImportProblem] = []
    taken = {tool.tool_id for tool in tools}
    for key, listing in listings.items():
        connection = connections[key]
        node, entries, skipped = server_entries(
            key, connection.summary, listing.tools, no_tasks=_no_tasks(connection)
        )
        reads, unread = read_entries(key, listing.resources, listing.templates, listing.prompts)
        nodes.append(node)
        problems.extend(skipped)
        problems.extend(unread)
        for entry in (*entries, *reads):
            if entry.tool_id in taken:
                problems.append(_taken(key, entry))
                continue
            taken.add(entry.tool_id)
            tools.append(entry)
    return ToolCatalog(tools=tools, nodes=nodes), tuple(problems)


def _taken(server: str, entry: CatalogTool) -> ImportProblem:
    """The problem of ``entry``, whose id an earlier entry already has."""
    handle = entry.handle
    name = handle.target if isinstance(handle, ReadHandle) else entry.name
    return ImportProblem(
        server=server,
        tool_name=name,
        reason=f"its catalogue id {entry.tool_id!r} is already taken by another entry",
    )


def _no_tasks(connection: MCPConnection) -> str | None:
    """Why tools that must run as tasks cannot on ``connection``, or None when they can.

    (On 2026-07-28 connections tools carry no ``execution``: tasks left the core.)
    """
    if connection.runs_task_tools:
        return None
    return (
        "the tool must be called as a task (execution.taskSupport: required), and the "
        "server does not offer task-augmented tools/call (capabilities.tasks.requests.tools.call)"
    )
