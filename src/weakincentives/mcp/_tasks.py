"""Call a tool that requires task-augmented execution (``execution.taskSupport: "required"``).

On the 2025-11-25 revision such a tool must be called with a ``task`` in its
``tools/call`` params; the server answers at once with a task, the client polls
``tasks/get`` (at the server's ``pollInterval``) until the task stops working and
then fetches the tool's result with ``tasks/result``, which waits for the end of
the task and carries any requests the task makes of the client meanwhile. The
whole flow is bounded by the call's timeout. Servers that do not offer task calls
(``capabilities.tasks.requests.tools.call``), and 2026-07-28 connections, where
tasks left the core protocol, cannot run these tools: they are listed as import
problems instead (see ``_import.py``).

The SDK types the tasks methods but does not send them; the ``tools/call`` with a
task goes through the dispatcher because the SDK validates a ``tools/call`` answer
as a ``CallToolResult``, which a task answer is not.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcp import ClientSession, types
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

__all__ = ["call_as_task", "runs_tasks"]

_POLL_SECONDS = (0.01, 2.0)
"""The shortest and longest wait between two ``tasks/get``, whatever the server suggests."""


def runs_tasks(session: ClientSession) -> bool:
    """Whether the server offers task-augmented ``tools/call`` on this (2025-era) session."""
    capabilities = session.server_capabilities
    tasks = capabilities.tasks if capabilities is not None else None
    requests = tasks.requests if tasks is not None else None
    return requests is not None and requests.tools is not None and requests.tools.call is not None


async def call_as_task(
    session: ClientSession,
    dispatcher: JSONRPCDispatcher[Any],
    name: str,
    arguments: dict[str, Any],
    *,
    limit: float,
) -> types.CallToolResult:
    """Run ``name`` as a task and return its result (the caller bounds the time)."""
    params = {"name": name, "arguments": arguments, "task": {"ttl": int(limit * 1000)}}
    options: Any = {
        "timeout": limit,
        "headers": {MCP_PROTOCOL_VERSION_HEADER: session.protocol_version or ""},
    }
    raw = await dispatcher.send_raw_request("tools/call", params, options)
    if "task" not in raw:  # the server ran the call at once
        return types.CallToolResult.model_validate(raw, by_name=False)
    task: types.Task = types.CreateTaskResult.model_validate(raw, by_name=False).task
    while task.status == "working":
        await asyncio.sleep(_wait(task))
        task = await session.send_request(
            types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task.task_id)),
            types.GetTaskResult,
        )
    if task.status in ("failed", "cancelled"):
        reason = f": {task.status_message}" if task.status_message else ""
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"the task {task.status}{reason}")],
            is_error=True,
        )
    return await session.send_request(
        types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task.task_id)),
        types.CallToolResult,
    )


def _wait(task: types.Task) -> float:
    suggested = (task.poll_interval or 100) / 1000
    low, high = _POLL_SECONDS
    return min(max(suggested, low), high)
