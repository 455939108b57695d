"""Bounds on every channel of a result, as a model reads it and as a served reply carries it.

Pure functions over the SDK's own result values: no server is needed to check that
a reply stays within its allowance however large the upstream answer.
"""

from __future__ import annotations

import mcp.types as types

from weakincentives.discovery import CallOutcome, CallResponse
from weakincentives.mcp._replies import (
    MAX_BLOCKS,
    bounded_prompt,
    bounded_read,
    bounded_tool_result,
    direct_reply,
    operation_reply,
)
from weakincentives.mcp._results import (
    MAX_MEDIA_CHARS,
    MAX_RESULT_CHARS,
    MAX_VALUE_CHARS,
    describe_block,
    outcome_of,
)


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def _image(size: int) -> types.ImageContent:
    return types.ImageContent(type="image", data="A" * size, mime_type="image/png")


def _texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


class TestOutcomes:
    def test_a_value_over_the_bound_is_left_out_with_a_note(self) -> None:
        """Structured content whose JSON passes the bound becomes a note in the message."""
        big = {"blob": "y" * MAX_VALUE_CHARS}
        outcome = outcome_of(
            types.CallToolResult(content=[_text("done")], structured_content=big), tool_name="t"
        )
        assert outcome == CallOutcome(
            success=True,
            message="done\n(the structured result, 20,011 characters of JSON, is over the "
            "20,000-character limit and was left out)",
        )

    def test_a_failure_without_words_says_so(self) -> None:
        """isError with no text gets a message naming the tool."""
        outcome = outcome_of(types.CallToolResult(content=[], is_error=True), tool_name="t")
        assert outcome == CallOutcome(
            success=False, message="t reported an error without saying why"
        )

    def test_an_empty_result_says_it_returned_nothing(self) -> None:
        """No blocks and no structure: the model still reads a sentence."""
        outcome = outcome_of(types.CallToolResult(content=[]), tool_name="t")
        assert outcome == CallOutcome(success=True, message="t returned nothing")

    def test_blocks_are_described_not_pasted(self) -> None:
        """Blobs by size, links as sent; the bytes never reach the model."""
        blob = types.EmbeddedResource(
            type="resource", resource=types.BlobResourceContents(uri="file:///a.bin", blob="QUJD")
        )
        link = types.ResourceLink(type="resource_link", uri="file:///b.txt", name="b")
        outcome = outcome_of(types.CallToolResult(content=[blob, link]), tool_name="t")
        assert outcome.value == [
            {"type": "resource", "uri": "file:///a.bin", "bytes": 3},
            {"type": "resource_link", "name": "b", "uri": "file:///b.txt"},
        ]
        assert describe_block(_text("x")) == {"type": "text", "text": "x"}


class TestServedReplies:
    def test_media_over_the_allowance_is_replaced_by_a_note(self) -> None:
        """The first image fits, the second would pass MAX_MEDIA_CHARS and is left out."""
        raw = types.CallToolResult(content=[_image(MAX_MEDIA_CHARS - 10), _image(100)])
        reply = operation_reply(CallResponse(tool_id="x", success=True, message="ok"), raw)
        assert [block.type for block in reply.content] == ["text", "image", "text"]
        assert _texts(reply)[-1] == (
            "(image of 100 base64 characters left out: a reply carries at most 1,000,000)"
        )

    def test_a_failed_call_reads_as_its_message_with_its_media(self) -> None:
        """isError, the tool's message first, the blocks after it."""
        raw = types.CallToolResult(content=[_image(8)], is_error=True)
        reply = operation_reply(CallResponse(tool_id="x", success=False, message=""), raw)
        assert reply.is_error is True
        assert _texts(reply) == ["the call failed"]
        assert reply.structured_content == {"tool_id": "x", "success": False, "message": ""}

    def test_a_direct_call_without_an_upstream_result_uses_the_response(self) -> None:
        """Entries run by another executor answer with the message and a dict value."""
        response = CallResponse(tool_id="x", success=True, message="hi", value={"n": 1})
        assert direct_reply(response, None) == types.CallToolResult(
            content=[_text("hi")], structured_content={"n": 1}
        )
        listed = CallResponse(tool_id="x", success=False, message="no", value=[1])
        assert direct_reply(listed, None).structured_content is None

    def test_text_beyond_the_allowance_is_counted_not_sent(self) -> None:
        """Text blocks share one allowance; what is past it becomes one note."""
        raw = types.CallToolResult(
            content=[_text("a" * (MAX_RESULT_CHARS - 10)), _text("b" * 50), _text("c" * 7)]
        )
        assert _texts(bounded_tool_result(raw)) == [
            "a" * (MAX_RESULT_CHARS - 10),
            "b" * 10 + "... (40 more characters not shown)",
            "(7 more characters of text not shown)",
        ]

    def test_embedded_text_resources_share_the_text_allowance(self) -> None:
        """A resource's text is cut like any text; once the allowance is gone it is dropped."""
        resource = types.EmbeddedResource(
            type="resource",
            resource=types.TextResourceContents(uri="file:///r", text="r" * (MAX_RESULT_CHARS + 1)),
        )
        reply = bounded_tool_result(types.CallToolResult(content=[resource, resource]))
        first = reply.content[0]
        assert isinstance(first, types.EmbeddedResource)
        assert isinstance(first.resource, types.TextResourceContents)
        assert first.resource.text.endswith("... (1 more characters not shown)")
        assert _texts(reply) == [f"({MAX_RESULT_CHARS + 1:,} more characters of text not shown)"]

    def test_the_number_of_blocks_is_bounded(self) -> None:
        """MAX_BLOCKS blocks pass; the rest are counted in a note."""
        raw = types.CallToolResult(
            content=[types.ResourceLink(type="resource_link", uri="file:///x", name="x")]
            * (MAX_BLOCKS + 3)
        )
        reply = bounded_tool_result(raw)
        assert len(reply.content) == MAX_BLOCKS + 1
        assert _texts(reply) == ["(3 more content items not shown)"]


class TestServedReads:
    def test_a_read_keeps_text_and_blobs_within_the_allowances(self) -> None:
        """Text is cut, a blob past the media allowance is replaced by a note."""
        huge_blob = types.BlobResourceContents(uri="file:///b", blob="B" * (MAX_MEDIA_CHARS + 1))
        text = types.TextResourceContents(uri="file:///t", text="t" * (MAX_RESULT_CHARS + 5))
        read = bounded_read(types.ReadResourceResult(contents=[text, huge_blob, text]))
        kept = [item.text for item in read.contents if isinstance(item, types.TextResourceContents)]
        assert kept == [
            "t" * MAX_RESULT_CHARS + "... (5 more characters not shown)",
            "(resource of 1,000,001 base64 characters left out: a reply carries at most 1,000,000)",
            f"({MAX_RESULT_CHARS + 5:,} more characters of text not shown)",
        ]
        assert [str(item.uri) for item in read.contents] == ["file:///t"] * 3

    def test_an_empty_read_stays_empty(self) -> None:
        """Nothing to bound, nothing added."""
        assert bounded_read(types.ReadResourceResult(contents=[])).contents == []

    def test_a_prompt_keeps_its_messages_within_the_allowances(self) -> None:
        """Media past the allowance in a prompt message becomes a user note."""
        prompt = types.GetPromptResult(
            description="d",
            messages=[
                types.PromptMessage(role="user", content=_image(MAX_MEDIA_CHARS + 1)),
                types.PromptMessage(role="assistant", content=_text("ok")),
            ],
        )
        bounded = bounded_prompt(prompt)
        assert [(m.role, m.content.type) for m in bounded.messages] == [
            ("assistant", "text"),
            ("user", "text"),
        ]
        assert bounded.description == "d"
