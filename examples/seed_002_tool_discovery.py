"""Seed 002 (tool discovery): the example interaction over a small catalogue.

The model's steps from the seed: list the root, list a category, search within it,
expand the tool, then call it with arguments that match the expanded schema.

Run: python examples/seed_002_tool_discovery.py
"""

from __future__ import annotations

from collections.abc import Mapping

from weakincentives.discovery import (
    CallableExecutor,
    CallOutcome,
    CatalogNode,
    CatalogTool,
    DiscoveryCalled,
    DiscoveryError,
    ToolCatalog,
    ToolDiscovery,
    audit_chain,
)
from weakincentives.serde import JSONValue

RENAME_SCHEMA: dict[str, JSONValue] = {
    "type": "object",
    "properties": {
        "project_root": {"type": "string"},
        "symbol": {"type": "string"},
        "new_name": {"type": "string"},
        "language": {"type": "string", "enum": ["ts", "js", "py", "go", "java"]},
        "dry_run": {"type": "boolean", "default": True},
    },
    "required": ["project_root", "symbol", "new_name"],
}

catalog = ToolCatalog(
    nodes=[
        CatalogNode(name="Coding", path=("Coding",), summary="Work on source code"),
        CatalogNode(
            name="Refactoring",
            path=("Coding", "Refactoring"),
            summary="Restructure code without changing behaviour",
        ),
        CatalogNode(name="Storage", path=("Storage",), summary="Files and object storage"),
        CatalogNode(name="User", path=("User",), summary="Accounts and identity"),
        CatalogNode(
            name="Auth", path=("User", "Auth"), summary="Authentication and authorization workflows"
        ),
    ],
    tools=[
        CatalogTool(
            tool_id="refactor.rename_symbol",
            name="rename_symbol",
            paths=(("Coding", "Refactoring"),),
            summary="Renames a symbol project-wide and updates references",
            tags=("refactor", "rename"),
            args_schema=RENAME_SCHEMA,
            result_schema={
                "type": "object",
                "properties": {
                    "changed_files": {"type": "integer"},
                    "diff_preview": {"type": "string"},
                },
                "required": ["changed_files"],
            },
        ),
        CatalogTool(
            tool_id="refactor.extract_function",
            name="extract_function",
            paths=(("Coding", "Refactoring"),),
            summary="Moves a block of code into a new function",
            tags=("refactor",),
        ),
        CatalogTool(
            tool_id="storage.put_object",
            name="put_object",
            paths=(("Storage", "Buckets"),),
            summary="Uploads an object to a bucket",
            tags=("storage", "upload"),
        ),
        CatalogTool(
            tool_id="auth.oauth_login",
            name="oauth_login",
            paths=(("User", "Auth"),),
            summary="Starts an OAuth login flow",
            tags=("auth", "oauth"),
        ),
    ],
)


def rename_symbol(arguments: Mapping[str, JSONValue]) -> CallOutcome:
    return CallOutcome(
        success=True,
        message=f"renamed {arguments['symbol']} to {arguments['new_name']}",
        value={"changed_files": 3, "diff_preview": "-old\n+new"},
    )


events: list[object] = []
discovery = ToolDiscovery(
    catalog,
    executor=CallableExecutor(functions={"refactor.rename_symbol": rename_symbol}),
    events=events.append,
)

# 1. list() -> root nodes
root = discovery.list()
print("root:", [node.name for node in root.nodes])
# 2. list(path=["Coding", "Refactoring"]) -> tool summaries
listing = discovery.list(path=("Coding", "Refactoring"))
print("refactoring tools:", [tool.tool_id for tool in listing.tools])
# 3. search_tool_by_category -> a pointer to refactor.rename_symbol
found = discovery.search_tool_by_category(
    query="rename symbol", category_path=("Coding", "Refactoring")
)
best = found.results[0]
print(f"best match: {best.tool_id} (confidence {best.confidence})")
# 4. expand_tool -> the full schema
expanded = discovery.expand_tool(best.tool_id)
print("required arguments:", expanded.args_schema["required"])
# 5. call_tool with arguments that follow the schema
result = discovery.call_tool(
    best.tool_id, {"project_root": "/repo", "symbol": "fetchUser", "new_name": "loadUser"}
)
print("called:", result.message, result.value)

# Errors carry a code, hints and the next action.
try:
    discovery.expand_tool("refactor.rename")
except DiscoveryError as error:
    print(f"{error.code}: {error.message} -> {error.next_action}")

# Every step was recorded; the chain behind the call can be reconstructed.
call_event = next(event for event in events if isinstance(event, DiscoveryCalled))
print("audit chain:", [type(step).__name__ for step in audit_chain(events, call_event)])
