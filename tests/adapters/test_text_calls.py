"""Opt-in recovery of tool calls written as JSON text, as small local models write them.

The loop-level behaviour on all three wires is in ``test_local_servers.py``.
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.adapters.conftest import OpenAILoopback, ok
from tests.adapters.openai.chat_bodies import completion
from tests.adapters.openai.test_chat import chat_adapter
from tests.adapters.openai.test_responses import TRIP, WEATHER, trip_prompt
from weakincentives.adapters import LoopSettings, ModelTurn
from weakincentives.adapters._text_calls import (
    RECOVERED_FORMAT,
    HeldText,
    holds_only_empty_markup,
    recover_text_calls,
    with_recovered_calls,
)

pytest.importorskip("openai")

OFFERED = frozenset({"get_weather", "convert_currency"})
RECOVERING = LoopSettings(recover_text_tool_calls=True)
LISBON = {"city": "Lisbon"}


def recovered(text: str) -> list[tuple[str, Any]]:
    found = recover_text_calls(text, OFFERED, id_prefix="t")
    return [(call.name, json.loads(call.arguments)) for call in found.calls]


class TestEmptyMarkup:
    """A reply of empty tool-call blocks only is wordless, like an empty reply."""

    @pytest.mark.parametrize(
        "text",
        [
            "<tools></tools>",
            " <tool_call>\n</tool_call>\n",
            "```json\n```",
            "``` tool_call ```",
            "<tools></tools>\n<tool_call> </tool_call>",
        ],
    )
    def test_empty_blocks_alone_are_wordless(self, text: str) -> None:
        assert holds_only_empty_markup(text)

    @pytest.mark.parametrize(
        "text",
        [
            "",
            "   ",
            "All good.",
            "<tools>x</tools>",
            "Checking. <tools></tools>",
            "<tool_call></tools>",
            "```\n```done",
            "```" + " " * 50_000 + "x",  # a long run the block pattern must not backtrack over
            "<tools></tools>" + " " * 100_000,  # past the searched length
        ],
    )
    def test_anything_else_is_not(self, text: str) -> None:
        assert not holds_only_empty_markup(text)


class TestRecoveringCalls:
    @pytest.mark.parametrize(
        "text",
        [
            '```json\n{"name": "get_weather", "arguments": {"city": "Lisbon"}}\n```',
            '```\n{"name": "get_weather", "arguments": {"city": "Lisbon"}}\n```',
            '```tool_call\n{"name": "get_weather", "parameters": {"city": "Lisbon"}}\n```',
            '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lisbon"}}\n</tool_call>',
            '{"name": "get_weather", "arguments": "{\\"city\\": \\"Lisbon\\"}"}',
        ],
        ids=["json-fence", "bare-fence", "parameters-key", "tags", "whole-reply"],
    )
    def test_the_usual_ways_of_writing_a_call_are_read(self, text: str) -> None:
        """Fences, tags and a reply that is only the call; arguments may be JSON text."""
        assert recovered(text) == [("get_weather", LISBON)]

    def test_several_calls_in_one_block_or_several_blocks_keep_their_order(self) -> None:
        """A list of calls, then a second fence, give calls in reading order."""
        text = (
            "Checking both.\n```json\n"
            '[{"name": "get_weather", "arguments": {"city": "Lisbon"}},'
            ' {"name": "get_weather", "arguments": {"city": "Porto"}}]\n```\n'
            'and\n```json\n{"name": "convert_currency", "arguments": {}}\n```'
        )
        found = recover_text_calls(text, OFFERED, id_prefix="text_call_1")
        assert [(c.call_id, c.name, c.arguments) for c in found.calls] == [
            ("text_call_1_1", "get_weather", '{"city": "Lisbon"}'),
            ("text_call_1_2", "get_weather", '{"city": "Porto"}'),
            ("text_call_1_3", "convert_currency", "{}"),
        ]
        assert found.text == "Checking both.\n\nand"

    @pytest.mark.parametrize(
        "text",
        [
            '```json\n{"name": "delete_everything", "arguments": {}}\n```',
            '```json\n[{"name": "get_weather", "arguments": {}},\n {"name": "rm"}]\n```',
            '```json\n{"city": "Lisbon"}\n```',
            '```json\n{"name": "get_weather", "arguments": [1]}\n```',
            "```json\n[]\n```",
            '```json\n{"name": "get_weather", "arguments": \n```',
            "The weather in Lisbon is sunny.",
            '```python\nprint({"name": "get_weather"})\n```',
        ],
        ids=[
            "not-offered",
            "one-not-offered",
            "no-name",
            "bad-arguments",
            "empty-list",
            "broken-json",
            "prose",
            "other-language",
        ],
    )
    def test_anything_else_stays_text(self, text: str) -> None:
        """Only calls to offered tools are read, and only when the whole block is calls."""
        found = recover_text_calls(text, OFFERED, id_prefix="t")
        assert found.calls == ()
        assert found.text == text

    @pytest.mark.parametrize(
        "text",
        [
            "```" + " " * 40_000 + "x",
            "<tool_call>" * 9_000,
        ],
        ids=["fence-then-spaces", "many-unclosed-tags"],
    )
    def test_the_search_takes_linear_time(self, text: str) -> None:
        """A reply the length the search allows is searched in linear time, not quadratic.

        The fence pattern had two runs of spaces around the optional language, tried at
        every split (40,000 spaces took about 8 s of CPU, 100,000 about 48 s), and each
        unclosed ``<tool_call>`` tag was searched to the end of the reply (9,000 of
        them took about 4 s). The bound is generous so only a quadratic search misses it.
        """
        started = time.process_time()
        found = recover_text_calls(text, OFFERED, id_prefix="t")
        assert time.process_time() - started < 1.0
        assert (found.calls, found.text) == ((), text)

    def test_a_tag_inside_a_tagged_block_belongs_to_the_block(self) -> None:
        """Blocks are read as before: a block runs from its tag to the first closing tag."""
        text = (
            '<tool_call>{"name": "get_weather", "arguments": {}}<tool_call></tool_call>\n'
            '<tool_call>{"name": "get_weather", "arguments": {"city": "Lisbon"}}</tool_call>'
        )
        found = recover_text_calls(text, OFFERED, id_prefix="t")
        assert [json.loads(call.arguments) for call in found.calls] == [LISBON]
        assert found.text.startswith('<tool_call>{"name": "get_weather", "arguments": {}}')

    def test_nothing_is_read_when_no_tool_was_offered(self) -> None:
        """Without offered tools there is nothing a call could name."""
        text = '{"name": "get_weather", "arguments": {}}'
        assert recover_text_calls(text, frozenset(), id_prefix="t").calls == ()


class TestRecoveryInTheLoop:
    def test_a_fenced_call_runs_and_is_replayed_as_a_structured_call(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """The call runs; the next request shows it as tool_calls answered by a tool message."""
        written = (
            'Let me check.\n```json\n{"name": "get_weather", "arguments": {"city": "Lisbon"}}\n```'
        )
        openai_loopback.reply(ok(completion(written)), ok(completion("Sunny in Lisbon.")))
        adapter = chat_adapter(openai_loopback, settings=RECOVERING)
        response = adapter.evaluate(trip_prompt((WEATHER,)), TRIP)
        assert response.text == "Sunny in Lisbon."
        (execution,) = response.tool_executions
        assert execution.call.call_id == "text_call_1_1"
        assert execution.result.success is True
        messages = openai_loopback.bodies[1]["messages"]
        assert messages[1] == {
            "role": "assistant",
            "content": "Let me check.",
            "tool_calls": [
                {
                    "id": "text_call_1_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Lisbon"}'},
                }
            ],
        }
        assert messages[2]["role"] == "tool"
        assert messages[2]["tool_call_id"] == "text_call_1_1"

    def test_recovered_arguments_are_validated_like_any_others(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """A wrong argument becomes a failed tool result the model reads, not a crash."""
        written = '```json\n{"name": "get_weather", "arguments": {"town": "Lisbon"}}\n```'
        openai_loopback.reply(ok(completion(written)), ok(completion("Sorry.")))
        adapter = chat_adapter(openai_loopback, settings=RECOVERING)
        response = adapter.evaluate(trip_prompt((WEATHER,)), TRIP)
        assert response.tool_results[0].success is False
        assert "city" in openai_loopback.bodies[1]["messages"][2]["content"]

    def test_without_opting_in_the_text_is_the_answer(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """Recovery is off by default: the written call is returned as text, unrun."""
        written = '```json\n{"name": "get_weather", "arguments": {"city": "Lisbon"}}\n```'
        openai_loopback.reply(ok(completion(written)))
        response = chat_adapter(openai_loopback).evaluate(trip_prompt((WEATHER,)), TRIP)
        assert response.text == written
        assert response.tool_executions == ()


SEGMENTS = st.sampled_from(
    [
        "Let me check.",
        "The weather is fine",
        " ",
        "\n\n",
        "Use `ls` here.",
        "<b>bold</b>",
        '```json\n{"name": "get_weather", "arguments": {"city": "Lisbon"}}\n```',
        '<tool_call>{"name": "convert_currency", "arguments": {}}</tool_call>',
        "```python\nprint(1)\n```",
        '{"city": "Lisbon"}',
    ]
)


def streamed(text: str, cuts: list[int]) -> list[str]:
    """``text`` cut at ``cuts`` (positions, any order), as a stream would deliver it."""
    points = sorted({0, len(text), *(cut % (len(text) + 1) for cut in cuts)})
    return [text[start:end] for start, end in itertools.pairwise(points)]


class TestHeldText:
    @given(
        text=st.lists(SEGMENTS, max_size=6).map("".join),
        cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
    )
    def test_the_shown_pieces_join_to_the_final_text_and_never_show_a_call(
        self, text: str, cuts: list[int]
    ) -> None:
        """However the reply is chunked, what was shown is the turn's final text exactly."""
        shown: list[str] = []
        held = HeldText(shown.append, hold=True)
        for piece in streamed(text, cuts):
            held.feed(piece)
        found = recover_text_calls(text, OFFERED, id_prefix="t")
        held.finish(found.text)
        assert "".join(shown) == found.text
        if found.calls:
            assert all('"name"' not in piece for piece in shown)

    def test_text_before_a_call_streams_before_the_reply_ends(self) -> None:
        """Prose is shown as it comes; only the possible call waits."""
        shown: list[str] = []
        held = HeldText(shown.append, hold=True)
        for piece in ["Let me ", "check.\n", "``", "`json\n{", '"name": "get_weather"}']:
            held.feed(piece)
        assert shown == ["Let me", " check."]

    def test_a_reply_that_starts_like_json_is_held_whole(self) -> None:
        """A bare call is the whole reply: nothing shows until the turn is read."""
        shown: list[str] = []
        held = HeldText(shown.append, hold=True)
        for piece in ["  ", '{"name": ', '"get_weather"}']:
            held.feed(piece)
        assert shown == []
        held.finish('  {"name": "get_weather"}')
        assert shown == ['  {"name": "get_weather"}']

    def test_without_holding_every_piece_goes_on_at_once(self) -> None:
        """Recovery off (or no tools): the stream is passed through as it comes."""
        shown: list[str] = []
        held = HeldText(shown.append, hold=False)
        for piece in ["```json\n", '{"a": 1}', "\n```"]:
            held.feed(piece)
        held.finish('```json\n{"a": 1}\n```')
        assert shown == ["```json\n", '{"a": 1}', "\n```"]


class TestRecoveredTurns:
    def test_a_turn_with_hosted_tool_items_is_left_as_it_is(self) -> None:
        """Rebuilding it for the next request would lose the hosted items: no recovery."""
        written = '```json\n{"name": "get_weather", "arguments": {}}\n```'
        turn = ModelTurn(text=written, untranslatable=("web_search_call",))
        assert with_recovered_calls(turn, OFFERED, round_number=1) is turn

    def test_a_recovered_turn_is_rebuilt_not_replayed(self) -> None:
        """Its raw items still hold the text; its format says no provider replays them."""
        written = 'Checking.\n```json\n{"name": "get_weather", "arguments": {"city": "Porto"}}\n```'
        raw = {"role": "assistant", "content": written}
        turn = ModelTurn(text=written, raw_items=(raw,), raw_format="openai-chat", response_id="r1")
        found = with_recovered_calls(turn, OFFERED, round_number=2)
        assert (found.text, found.raw_format, found.raw_items) == (
            "Checking.",
            RECOVERED_FORMAT,
            (raw,),
        )
        (call,) = found.tool_calls
        assert (call.call_id, call.name, call.arguments, call.parent_message_id) == (
            "text_call_2_1",
            "get_weather",
            '{"city": "Porto"}',
            "r1",
        )

    @pytest.mark.parametrize(
        "turn",
        [ModelTurn(text=""), ModelTurn(text="Sunny.")],
        ids=["empty", "prose"],
    )
    def test_a_turn_without_written_calls_is_unchanged(self, turn: ModelTurn) -> None:
        """Nothing to read: the very same turn comes back."""
        assert with_recovered_calls(turn, OFFERED, round_number=1) is turn
