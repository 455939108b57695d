"""A nested async tool run by discovery's call_tool awaits on the evaluation's own loop."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from weakincentives.adapters import OfflineAdapter, ScriptedCall, ScriptedTurn
from weakincentives.discovery import ToolCatalog, ToolDiscovery, ToolDiscoverySection
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult


@dataclass(frozen=True)
class Probe:
    label: str


def test_a_nested_async_tool_runs_on_the_callers_loop() -> None:
    """call_tool runs on a worker thread; the async tool it runs still uses the caller's loop."""
    seen: list[asyncio.AbstractEventLoop] = []

    async def probe(params: Probe, *, context: ToolContext) -> ToolResult[None]:
        seen.append(asyncio.get_running_loop())
        return ToolResult(message=f"probed {params.label}")

    tool = Tool(name="probe", description="Probe the loop.", handler=probe)
    discovery = ToolDiscovery(
        ToolCatalog.from_tools([(("Diagnostics",), tool)]), require_expansion=False
    )
    prompt: Prompt[None] = Prompt(
        ns="tests/discovery",
        key="nested",
        sections=[
            MarkdownSection(title="Task", template="Probe."),
            ToolDiscoverySection(discovery),
        ],
    )
    adapter = OfflineAdapter(
        [
            ScriptedTurn(
                calls=(
                    ScriptedCall(
                        name="call_tool",
                        arguments={"tool_id": "probe", "arguments": {"label": "x"}},
                    ),
                )
            ),
            ScriptedTurn(text="done"),
        ]
    )

    async def main() -> tuple[str, asyncio.AbstractEventLoop]:
        response = await adapter.evaluate_async(prompt)
        return response.tool_results[0].message, asyncio.get_running_loop()

    message, caller = asyncio.run(main())
    assert message.startswith("probed x")
    assert seen == [caller]
