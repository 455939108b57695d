"""Messages API bodies shaped as the ``anthropic`` SDK's types and Anthropic's guides document.

Used by the Anthropic tests and the cross-wire suite: ``message`` bodies, content blocks
(text with ``web_search_result_location`` citations, ``tool_use``, ``server_tool_use``,
web search and code execution results) and streamed events.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from tests.adapters.conftest import OpenAILoopback, Reply
from weakincentives.serde import JSONValue

type Body = dict[str, JSONValue]


def root_url(loopback: OpenAILoopback) -> str:
    """The loopback's address as the anthropic SDK wants it (it adds ``/v1/messages``)."""
    return loopback.base_url.removesuffix("/v1")


def usage(
    input_tokens: int,
    output_tokens: int,
    *,
    cache_read: int = 0,
    cache_write: int = 0,
    searches: int = 0,
) -> Body:
    """A ``usage`` object: input tokens exclude cache reads and writes, as Anthropic counts."""
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": cache_write,
        "cache_read_input_tokens": cache_read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": cache_write,
            "ephemeral_1h_input_tokens": 0,
        },
        "server_tool_use": {"web_search_requests": searches, "web_fetch_requests": 0},
        "service_tier": "standard",
    }


def message(
    *content: Body,
    stop_reason: str | None = None,
    usage_: JSONValue = None,
    message_id: str = "msg_test",
    **extra: JSONValue,
) -> Body:
    """A ``message`` body; the stop reason defaults to ``tool_use`` or ``end_turn``."""
    uses_tools = any(block.get("type") == "tool_use" for block in content)
    body: Body = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": list(content),
        "stop_reason": stop_reason or ("tool_use" if uses_tools else "end_turn"),
        "stop_sequence": None,
        "usage": usage_ if usage_ is not None else usage(100, 20),
    }
    body.update(extra)
    return body


def text(value: str, *citations: Body) -> Body:
    """A text block, with citations when given."""
    block: Body = {"type": "text", "text": value}
    if citations:
        block["citations"] = list(citations)
    return block


def tool_use(call_id: str, name: str, arguments: Body) -> Body:
    """A ``tool_use`` block asking the client to run a tool."""
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def server_tool_use(call_id: str, name: str, arguments: Body) -> Body:
    """A ``server_tool_use`` block: a tool Anthropic runs itself."""
    return {"type": "server_tool_use", "id": call_id, "name": name, "input": arguments}


def search_result(url: str, title: str, page_age: str | None = "April 30, 2025") -> Body:
    """One ``web_search_result`` (its content is encrypted, as the API sends it)."""
    return {
        "type": "web_search_result",
        "url": url,
        "title": title,
        "encrypted_content": "EqgfCioIARgBIiQ3YTAw...",
        "page_age": page_age,
    }


def search_results(call_id: str, *results: Body) -> Body:
    """A ``web_search_tool_result`` block listing results."""
    return {"type": "web_search_tool_result", "tool_use_id": call_id, "content": list(results)}


def search_error(call_id: str, code: str) -> Body:
    """A ``web_search_tool_result`` block carrying an error object."""
    return {
        "type": "web_search_tool_result",
        "tool_use_id": call_id,
        "content": {"type": "web_search_tool_result_error", "error_code": code},
    }


def cited(url: str, title: str, cited_text: str) -> Body:
    """A ``web_search_result_location`` citation."""
    return {
        "type": "web_search_result_location",
        "url": url,
        "title": title,
        "cited_text": cited_text,
        "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm...",
    }


def api_error(kind: str, message_text: str) -> Body:
    """An error body as the Messages API sends it with 4xx/5xx statuses."""
    return {"type": "error", "error": {"type": kind, "message": message_text}}


def events(*items: Body) -> Reply:
    """A server-sent event stream, each event named after its ``type`` as Anthropic sends."""
    lines = [f"event: {item['type']}\ndata: {json.dumps(item)}\n\n" for item in items]
    return Reply(raw="".join(lines).encode(), headers={"content-type": "text/event-stream"})


def streamed(body: Body, *, text_pieces: Sequence[str] = ()) -> list[Body]:
    """The events that stream ``body``: text blocks in ``text_pieces`` (or whole), tool
    inputs as JSON in two pieces, other blocks whole at their start."""
    counts = body["usage"]
    assert isinstance(counts, dict)
    start_usage = {**counts, "output_tokens": 1}
    stream: list[Body] = [
        {
            "type": "message_start",
            "message": {**body, "content": [], "stop_reason": None, "usage": start_usage},
        },
        {"type": "ping"},
    ]
    content = body["content"]
    assert isinstance(content, list)
    for index, block in enumerate(content):
        assert isinstance(block, dict)
        stream.extend(_block_events(index, block, text_pieces))
    stream.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": body["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": counts["output_tokens"]},
        }
    )
    stream.append({"type": "message_stop"})
    return stream


def _block_events(index: int, block: Body, text_pieces: Sequence[str]) -> list[Body]:
    kind = block["type"]
    if kind == "text":
        value = block["text"]
        assert isinstance(value, str)
        pieces = list(text_pieces) if "".join(text_pieces) == value else [value]
        events_: list[Body] = [
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            }
        ]
        events_.extend(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": piece},
            }
            for piece in pieces
        )
        citations = block.get("citations")
        for citation in citations if isinstance(citations, list) else []:
            events_.append(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "citations_delta", "citation": citation},
                }
            )
    elif kind in {"tool_use", "server_tool_use"}:
        encoded = json.dumps(block["input"])
        half = len(encoded) // 2
        events_ = [
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {**block, "input": {}},
            },
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": encoded[:half]},
            },
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": encoded[half:]},
            },
        ]
    else:
        events_ = [{"type": "content_block_start", "index": index, "content_block": block}]
    events_.append({"type": "content_block_stop", "index": index})
    return events_
