"""Chat Completions bodies shaped as the ``openai`` SDK's ``chat_completion.py`` documents.

Used by the Chat Completions tests and the cross-wire suite to build canned replies:
non-streamed ``chat.completion`` bodies and streamed ``chat.completion.chunk`` events.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from tests.adapters.conftest import Reply
from weakincentives.serde import JSONValue

type Body = dict[str, JSONValue]


def chat_call(call_id: str, name: str, arguments: str) -> Body:
    """One ``tool_calls`` entry of an assistant message."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def chat_usage(prompt: int, completion: int, *, cached: int = 0, reasoning: int = 0) -> Body:
    """A ``usage`` object with the details OpenAI reports."""
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": reasoning, "audio_tokens": 0},
    }


def completion(
    content: str | None = None,
    *,
    calls: Sequence[Body] = (),
    finish_reason: str | None = None,
    usage: JSONValue = None,
    refusal: str | None = None,
    completion_id: str = "chatcmpl-test",
) -> Body:
    """A ``chat.completion`` body with one choice."""
    message: Body = {
        "role": "assistant",
        "content": content,
        "refusal": refusal,
        "annotations": [],
    }
    if calls:
        message["tool_calls"] = list(calls)
    reason = finish_reason or ("tool_calls" if calls else "stop")
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": 1760000000,
        "model": "gpt-test",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reason}],
        "usage": usage if usage is not None else chat_usage(120, 30),
        "service_tier": "default",
        "system_fingerprint": "fp_test",
    }


def chunk(
    delta: Body | None = None, *, finish_reason: str | None = None, usage: JSONValue = None
) -> Body:
    """One ``chat.completion.chunk``; without ``delta`` it is the final usage-only chunk."""
    choices: list[JSONValue] = []
    if delta is not None:
        choices.append(
            {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        )
    return {
        "id": "chatcmpl-stream",
        "object": "chat.completion.chunk",
        "created": 1760000000,
        "model": "gpt-test",
        "choices": choices,
        "usage": usage,
    }


def chat_stream(chunks: Sequence[Body], *, done: bool = True) -> Reply:
    """Server-sent events as OpenAI sends them: ``data:`` lines, then ``data: [DONE]``."""
    lines = [f"data: {json.dumps(item)}\n\n" for item in chunks]
    if done:
        lines.append("data: [DONE]\n\n")
    return Reply(raw="".join(lines).encode(), headers={"content-type": "text/event-stream"})


def text_chunks(text_parts: Sequence[str], *, usage: JSONValue = None) -> list[Body]:
    """The chunks of a streamed text answer: role, text pieces, finish, usage."""
    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks.extend(chunk({"content": part}) for part in text_parts)
    chunks.append(chunk({}, finish_reason="stop"))
    chunks.append(chunk(usage=usage if usage is not None else chat_usage(120, 30)))
    return chunks
