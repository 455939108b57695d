"""A small server's tools as ordinary weakincentives tools, to attach to a section.

Discovery pays off for large catalogues; a server with a handful of tools can simply
be offered to the model directly. Each MCP tool becomes a :class:`Tool` whose params
dataclass is generated once from the top level of its ``inputSchema`` (property
names, JSON types, descriptions, required or optional), whose handler awaits
``tools/call`` on the server, and whose result is the call's outcome. Arguments are
checked against the server's own schema before the call, as discovery does.
"""

from __future__ import annotations

import dataclasses
import keyword
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from weakincentives.discovery import CatalogTool
from weakincentives.errors import ConfigValidationError
from weakincentives.mcp._import import MCPToolHandle
from weakincentives.prompt import Tool, ToolContext, ToolResult
from weakincentives.serde import JSONValue, dump, validate

if TYPE_CHECKING:
    from weakincentives.mcp._toolbox import MCPToolbox

__all__ = ["section_tools"]

_SCALARS: Mapping[str, type[Any]] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
}
_MAX_DESCRIPTION = 200


def section_tools(toolbox: MCPToolbox, entries: Sequence[CatalogTool]) -> list[Tool[Any, Any]]:
    """One tool per entry (entries must come from a server); names must not collide."""
    tools: list[Tool[Any, Any]] = []
    seen: dict[str, str] = {}
    for entry in entries:
        handle = entry.handle
        if not isinstance(handle, MCPToolHandle):
            raise ConfigValidationError(
                f"{entry.tool_id!r} does not come from an MCP server", field_name="tools"
            )
        name = _tool_name(handle.tool_name)
        if name in seen:
            raise ConfigValidationError(
                f"{entry.tool_id!r} and {seen[name]!r} would both be the tool {name!r}; "
                "take the tools of one server at a time",
                field_name="tools",
            )
        seen[name] = entry.tool_id
        tools.append(_tool(toolbox, entry, handle, name))
    return tools


def _tool(
    toolbox: MCPToolbox, entry: CatalogTool, handle: MCPToolHandle, name: str
) -> Tool[Any, Any]:
    params_type = _params_type(name, entry.args_schema)

    async def call_server(params: Any, *, context: ToolContext) -> ToolResult[JSONValue]:
        arguments = dump(params, exclude_none=True)
        assert isinstance(arguments, dict)
        problems = validate(entry.args_schema, arguments)
        if problems:
            listed = "; ".join(f"{problem.path}: {problem.message}" for problem in problems)
            return ToolResult(message=f"invalid arguments for {name}: {listed}", success=False)
        outcome = await toolbox.executor.execute(entry, arguments)
        return ToolResult(message=outcome.message, value=outcome.value, success=outcome.success)

    return Tool(
        name=name,
        description=_description(entry, handle),
        handler=call_server,
        params_type=params_type,
    )


def _tool_name(name: str) -> str:
    cleaned = re.sub(r"[^a-z0-9_-]+", "_", name.lower()).strip("_") or "tool"
    return cleaned[:64]


def _description(entry: CatalogTool, handle: MCPToolHandle) -> str:
    text = entry.summary.encode("ascii", "ignore").decode() or (
        f"Run {handle.tool_name} on MCP server {handle.server}."
    )
    if len(text) <= _MAX_DESCRIPTION:
        return text
    return text[: _MAX_DESCRIPTION - 3].rstrip() + "..."


def _params_type(name: str, args_schema: Mapping[str, JSONValue]) -> type[Any]:
    properties = args_schema.get("properties")
    required = args_schema.get("required")
    wanted = set(required) if isinstance(required, list) else set()
    fields: list[tuple[str, Any, Any]] = []
    optional: list[tuple[str, Any, Any]] = []
    used: set[str] = set()
    for wire, prop in properties.items() if isinstance(properties, Mapping) else ():
        python = _identifier(wire, used)
        metadata: dict[str, object] = {"alias": wire}
        if isinstance(prop, Mapping) and isinstance(prop.get("description"), str):
            metadata["description"] = prop["description"]
        kind = _field_type(prop)
        if wire in wanted:
            fields.append((python, kind, dataclasses.field(metadata=metadata)))
        else:
            optional.append(
                (python, kind | None, dataclasses.field(default=None, metadata=metadata))
            )
    class_name = "".join(part.capitalize() for part in re.split(r"[_-]+", name)) + "Params"
    return dataclasses.make_dataclass(class_name, [*fields, *optional], frozen=True)


def _identifier(wire: str, used: set[str]) -> str:
    base = re.sub(r"\W+", "_", wire).strip("_") or "field"
    if base[0].isdigit() or keyword.iskeyword(base):
        base = f"f_{base}"
    name, number = base, 2
    while name in used:
        name, number = f"{base}_{number}", number + 1
    used.add(name)
    return name


def _field_type(prop: object) -> Any:
    if not isinstance(prop, Mapping):
        return JSONValue
    declared = prop.get("type")
    names = [t for t in declared if t != "null"] if isinstance(declared, list) else [declared]
    kind = names[0] if len(names) == 1 else None
    enum = prop.get("enum")
    if (
        kind == "string"
        and isinstance(enum, list)
        and enum
        and all(isinstance(v, str) for v in enum)
    ):
        return cast(Any, Literal)[tuple(enum)]
    if isinstance(kind, str) and kind in _SCALARS:
        return _SCALARS[kind]
    if kind == "array":
        items = prop.get("items")
        item_kind = items.get("type") if isinstance(items, Mapping) else None
        inner = _SCALARS.get(item_kind) if isinstance(item_kind, str) else None
        return list.__class_getitem__(inner if inner is not None else JSONValue)
    if kind == "object":
        return dict[str, JSONValue]
    return JSONValue
