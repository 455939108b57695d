"""Answer a server's ``sampling/createMessage`` with an evaluation on an adapter the user named.

The request's system prompt and messages become a prompt of two sections (the
instructions, then the conversation, one line per message, media shown as a
placeholder), evaluated on the adapter; its final text is the assistant message
the server receives. ``maxTokens``, temperature and model preferences are the
adapter's business: its settings decide them, not the server.
"""

from __future__ import annotations

from mcp import types

from weakincentives.errors import WinkError
from weakincentives.prompt import EvaluatingAdapter, EventPublisher, MarkdownSection, Prompt

__all__ = ["sample_with"]


async def sample_with(
    adapter: EvaluatingAdapter,
    server: str,
    params: types.CreateMessageRequestParams,
    *,
    bus: EventPublisher | None,
) -> types.CreateMessageResult | types.ErrorData:
    """Evaluate the request on ``adapter``; a failed evaluation is an error answer, not a raise."""
    prompt: Prompt[None] = Prompt(ns="mcp", key="sampling", sections=_sections(server, params))
    try:
        outcome = await adapter.evaluate_async(prompt, bus=bus)
    except WinkError as error:
        return types.ErrorData(
            code=types.INTERNAL_ERROR, message=f"sampling on {adapter.name} failed: {error}"
        )
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=outcome.text),
        model=adapter.name,
        stop_reason="endTurn",
    )


def _sections(server: str, params: types.CreateMessageRequestParams) -> list[MarkdownSection]:
    sections: list[MarkdownSection] = []
    if params.system_prompt:
        sections.append(
            MarkdownSection(
                title="Instructions", key="instructions", template=_literal(params.system_prompt)
            )
        )
    lines = [f"{message.role}: {_message_text(message)}" for message in params.messages]
    intro = f"The MCP server {server} asks for the next assistant message of this conversation."
    sections.append(
        MarkdownSection(
            title="Conversation",
            key="conversation",
            template=_literal("\n\n".join([intro, *lines])),
        )
    )
    return sections


def _message_text(message: types.SamplingMessage) -> str:
    content = message.content
    blocks = content if isinstance(content, list) else [content]
    return " ".join(_block_text(block) for block in blocks)


def _block_text(block: object) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        return f"[{block.type} {block.mime_type}]"
    return f"[{getattr(block, 'type', type(block).__name__)}]"


def _literal(text: str) -> str:
    """``text`` as a section template that renders unchanged (``$`` escaped)."""
    return text.replace("$", "$$")
