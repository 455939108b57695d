"""The same tasks through pydantic-ai and the OpenAI Agents SDK, on the same server.

Neither is a dependency of weakincentives: install them only for this benchmark
(``pip install -e '.[bench-peers]'``). Each run gets the task's plain functions as
tools, its instructions, its output type, temperature 0 and the same token cap and
round budget as weakincentives. The task's text is the user message, as weakincentives
sends its rendered prompt. A tool's ``ToolFailedError`` becomes the framework's own
retry message to the model.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import agents
from _local_tasks import Env, Task, ToolFailedError
from openai import AsyncOpenAI
from pydantic_ai import Agent, ModelRetry, UsageLimits
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.openai import OpenAIProvider

__all__ = ["PeerOutcome", "run_agents_sdk", "run_pydantic_ai"]


@dataclass(frozen=True, slots=True)
class PeerOutcome:
    """What a peer run produced."""

    answer: object
    text: str
    rounds: int
    deltas: tuple[str, ...] = ()


def run_pydantic_ai(
    task: Task, env: Env, *, adapter: str, base_url: str, max_tokens: int, max_rounds: int
) -> PeerOutcome:
    """One run of ``task`` on pydantic-ai, over ``adapter``'s endpoint."""

    model = _pydantic_model(adapter, base_url)

    def wrapped(function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return function(*args, **kwargs)
            except ToolFailedError as exc:
                raise ModelRetry(str(exc)) from exc

        return call

    agent: Any = Agent(
        model,
        tools=[wrapped(tool) for tool in task.peer_tools(env)],
        output_type=task.output_type or str,
        model_settings={"temperature": 0.0, "max_tokens": max_tokens},
        retries=2,
    )
    limits = UsageLimits(request_limit=max_rounds)
    if not task.stream:
        result = agent.run_sync(task.instructions, usage_limits=limits)
        return PeerOutcome(
            answer=result.output, text=str(result.output), rounds=result.usage.requests
        )
    return asyncio.run(_pydantic_stream(agent, task.instructions, limits))


async def _pydantic_stream(agent: Any, text: str, limits: Any) -> PeerOutcome:
    deltas: list[str] = []
    async with agent.run_stream(text, usage_limits=limits) as run:
        async for piece in run.stream_output(debounce_by=None):
            deltas.append(str(piece))
        output = await run.get_output()
        rounds = run.usage.requests
    return PeerOutcome(answer=output, text=str(output), rounds=rounds, deltas=tuple(deltas))


def _pydantic_model(adapter: str, base_url: str) -> Any:
    if adapter == "anthropic":
        root = base_url.removesuffix("/v1")
        return AnthropicModel("local", provider=AnthropicProvider(base_url=root, api_key="local"))

    provider = OpenAIProvider(base_url=base_url, api_key="local")
    if adapter == "openai":
        return OpenAIResponsesModel("local", provider=provider)
    return OpenAIChatModel("local", provider=provider)


def run_agents_sdk(
    task: Task, env: Env, *, adapter: str, base_url: str, max_tokens: int, max_rounds: int
) -> PeerOutcome:
    """One run of ``task`` on the OpenAI Agents SDK (Responses or Chat Completions)."""
    return asyncio.run(_agents_run(task, env, adapter, base_url, max_tokens, max_rounds))


async def _agents_run(
    task: Task, env: Env, adapter: str, base_url: str, max_tokens: int, max_rounds: int
) -> PeerOutcome:

    agents.set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=base_url, api_key="local", timeout=600.0)
    model: Any = (
        agents.OpenAIResponsesModel(model="local", openai_client=client)
        if adapter == "openai"
        else agents.OpenAIChatCompletionsModel(model="local", openai_client=client)
    )

    def failure(context: Any, error: Exception) -> str:
        cause = error.__cause__ if isinstance(error.__cause__, ToolFailedError) else error
        return f"Tool failed: {cause}"

    tools = [_agents_tool(tool, failure) for tool in task.peer_tools(env)]
    agent: Any = agents.Agent(
        name="bench",
        tools=tools,
        output_type=task.output_type,
        model=model,
        model_settings=agents.ModelSettings(temperature=0.0, max_tokens=max_tokens),
    )
    try:
        if not task.stream:
            result = await agents.Runner.run(agent, task.instructions, max_turns=max_rounds)
            output = result.final_output
            return PeerOutcome(answer=output, text=str(output), rounds=len(result.raw_responses))
        return await _agents_stream(agent, task.instructions, max_rounds)
    finally:
        await client.close()


def _agents_tool(function: Callable[..., Any], failure: Callable[..., str]) -> Any:
    """A strict function tool, or a non-strict one when strict schemas cannot say it.

    The SDK's strict mode refuses free-form objects (``call_tool``'s ``arguments``).
    """
    try:
        return agents.function_tool(function, failure_error_function=failure)
    except agents.UserError:
        return agents.function_tool(function, failure_error_function=failure, strict_mode=False)


async def _agents_stream(agent: Any, text: str, max_rounds: int) -> PeerOutcome:

    deltas: list[str] = []
    run = agents.Runner.run_streamed(agent, text, max_turns=max_rounds)
    async for event in run.stream_events():
        data = getattr(event, "data", None)
        delta = getattr(data, "delta", None)
        if getattr(data, "type", "") == "response.output_text.delta" and isinstance(delta, str):
            deltas.append(delta)
    output = run.final_output
    return PeerOutcome(
        answer=output, text=str(output), rounds=len(run.raw_responses), deltas=tuple(deltas)
    )
