"""The runtime parses JSON arguments in one pass and records them once, as the text.

``prepare`` gives JSON text to ``parse_json``'s one pass; ``prepare_in_two_steps``
(``decode_arguments``, then ``parse``) is the reference it falls back to. For generated
params types and generated text, valid and not, both must give the same params, the
same message for the model, the same recorded arguments and the same exception.

A call whose text parsed records that text, not a decoded copy: ``ToolInvoked.arguments``
decodes it on every read, and everything that reads the field (equality, ``repr``,
``replace``, pickling, stored documents) sees the decoded JSON as before.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import typing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.strategies import dataclass_types, hostile_json_texts, json_values, values_of
from weakincentives.errors import ParseError
from weakincentives.prompt import (
    ExecutionScope,
    MarkdownSection,
    Prompt,
    Tool,
    ToolContext,
    ToolResult,
)
from weakincentives.runtime import (
    EVENT_DOCUMENT,
    InProcessEventBus,
    Session,
    ToolCall,
    ToolExecution,
    ToolInvoked,
    execute_tool_call,
)
from weakincentives.runtime._events import _ARGUMENTS_SLOT, ArgumentsText, make_tool_invoked
from weakincentives.runtime._steps import PreparedCall, finish, invoke, prepare_in_two_steps
from weakincentives.serde import JSONValue, dump, dump_document, load_document, parse_json

WHEN = datetime(2026, 2, 3, 4, 5, 6, tzinfo=UTC)


async def _echo(params: object, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message=repr(params))


def _scope(tool: Tool[Any, Any]) -> ExecutionScope:
    bus = InProcessEventBus()
    prompt: Prompt[None] = Prompt(
        ns="t", key="k", sections=[MarkdownSection(title="T", template="", tools=(tool,))]
    )
    return ExecutionScope(prompt=prompt, session=Session(bus=bus), event_bus=bus)


def _one_pass(tool: Tool[Any, Any], arguments: str) -> ToolExecution:
    call = ToolCall(call_id="c", name=tool.name, arguments=arguments)
    return asyncio.run(execute_tool_call(call, _scope(tool), tools=[tool]))


def _two_steps(tool: Tool[Any, Any], arguments: str) -> ToolExecution:
    """The runtime as it was before the one pass: decode, parse, run, finish."""
    scope = _scope(tool)
    call = ToolCall(call_id="c", name=tool.name, arguments=arguments)
    state = PreparedCall(scope.clock(), tool)
    prepare_in_two_steps(state, call, scope, [tool])
    if state.result is None:
        asyncio.run(invoke(state, scope))
    return finish(call, state, scope)


def _report(execution: ToolExecution) -> tuple[object, ...]:
    """Everything a call leaves behind, with reprs so that ``1`` never passes for ``1.0``."""
    event, error = execution.event, execution.exception
    described: tuple[object, ...] = (type(error),)
    if isinstance(error, ParseError):
        described += (error.path, error.expected, error.got, error.message)
    return (
        execution.params,
        repr(execution.params),
        execution.result.success,
        execution.result.message,
        event.arguments,
        repr(event.arguments),
        event.params,
        repr(event.params),
        described,
    )


def _tool_for(cls: type) -> Tool[Any, Any]:
    return Tool(name="echo", description="Echo the params.", handler=_echo, params_type=cls)


def _member_texts(hint: object) -> st.SearchStrategy[str]:
    """A member's value: valid for ``hint``, any JSON, or a trap for the decoder."""
    valid = values_of(hint).map(lambda value: json.dumps(dump(value)))
    traps = st.sampled_from(["1e999", "NaN", "-Infinity", "1" * 5000, '"\\ud800"', "[" * 130])
    return valid | json_values().map(json.dumps) | traps


@st.composite
def _argument_texts(draw: st.DrawFn, cls: type) -> str:
    """Argument text for ``cls``: members valid or not, left out, unknown; hostile text."""
    hints = typing.get_type_hints(cls)
    members = [
        (item.name, draw(_member_texts(hints[item.name])))
        for item in dataclasses.fields(cls)
        if draw(st.integers(0, 4)) > 0
    ]
    if draw(st.integers(0, 4)) == 0:
        members.append((draw(st.text(max_size=4)), draw(_member_texts(Any))))
    text = "{" + ",".join(f"{json.dumps(name)}: {value}" for name, value in members) + "}"
    padded = draw(st.sampled_from(["", " ", "\n"])) + text + draw(st.sampled_from(["", " ", "x"]))
    return draw(st.just(padded) | hostile_json_texts() | st.sampled_from(["", "  ", "null"]))


class TestAgainstTheTwoSteps:
    @given(data=st.data())
    def test_valid_arguments_give_the_same_params_and_record(self, data: st.DataObject) -> None:
        """Dumped values of generated params types: equal params, recorded as sent."""
        cls = data.draw(dataclass_types())
        text = json.dumps(dump(data.draw(values_of(cls))))
        tool = _tool_for(cls)
        ours = _report(_one_pass(tool, text))
        assert ours[2] is True
        assert ours == _report(_two_steps(tool, text))

    @given(data=st.data())
    def test_any_arguments_get_the_same_report(self, data: st.DataObject) -> None:
        """Wrong, missing, unknown members, traps, broken text: the same failure, word for word."""
        cls = data.draw(dataclass_types())
        text = data.draw(_argument_texts(cls))
        tool = _tool_for(cls)
        assert _report(_one_pass(tool, text)) == _report(_two_steps(tool, text))


@dataclass(frozen=True, slots=True)
class Search:
    query: str
    tags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Loose:
    """Params holding raw JSON: the handler gets the decoded containers themselves."""

    body: JSONValue = None


class TestTheOnePass:
    def test_text_that_parses_is_recorded_as_the_calls_own_string(self) -> None:
        """The event holds the very str of the ToolCall, and decodes it on each read."""
        text = '{"query": "tea", "tags": ["green"]}'
        call = ToolCall(call_id="c", name="echo", arguments=text)
        tool = _tool_for(Search)
        execution = asyncio.run(execute_tool_call(call, _scope(tool), tools=[tool]))
        event = execution.event
        stored = _ARGUMENTS_SLOT.__get__(event, ToolInvoked)
        assert isinstance(stored, ArgumentsText)
        assert stored.text is call.arguments
        first, second = event.arguments, event.arguments
        assert first == {"query": "tea", "tags": ["green"]}
        assert first is not second
        assert execution.params == Search(query="tea", tags=["green"])

    def test_a_record_of_raw_json_params_shares_nothing_with_the_handler(self) -> None:
        """The handler changing its JSONValue field changes neither arguments nor params."""
        seen: list[Loose] = []

        async def change(params: Loose, *, context: ToolContext) -> ToolResult[None]:
            seen.append(params)
            typing.cast(dict[str, Any], params.body)["added"] = True
            return ToolResult(message="changed")

        tool = Tool(name="change", description="Change.", handler=change, params_type=Loose)
        execution = _one_pass(tool, '{"body": {"k": [1]}}')
        assert seen[0].body == {"k": [1], "added": True}
        assert execution.event.arguments == {"body": {"k": [1]}}
        assert execution.event.params == Loose(body={"k": [1]})

    def test_text_the_one_pass_refuses_takes_the_two_steps(self) -> None:
        """Blank text is no JSON to parse_json, and the empty object to the two steps."""
        with pytest.raises(ParseError, match="invalid JSON"):
            parse_json(Search, " ")
        execution = _one_pass(_tool_for(Search), " ")
        assert execution.result.message == (
            "Invalid arguments for tool 'echo': expected a value (required field), got nothing "
            "at $.query while parsing Search."
        )
        assert execution.event.arguments == {}
        assert isinstance(execution.exception, ParseError)
        assert execution.exception.path == "$.query"

    def test_an_unknown_tool_records_the_decoded_arguments(self) -> None:
        scope = _scope(_tool_for(Search))
        call = ToolCall(call_id="c", name="nope", arguments='{"query": "tea"}')
        execution = asyncio.run(execute_tool_call(call, scope, tools=[_tool_for(Search)]))
        assert execution.result.message == "Unknown tool 'nope'. Available tools: echo."
        assert _ARGUMENTS_SLOT.__get__(execution.event, ToolInvoked) == {"query": "tea"}

    def test_a_tool_without_handler_records_the_decoded_arguments(self) -> None:
        tool: Tool[Search, None] = Tool(name="idle", description="Idle.", params_type=Search)
        scope = _scope(tool)
        call = ToolCall(call_id="c", name="idle", arguments='{"query": "tea"}')
        execution = asyncio.run(execute_tool_call(call, scope, tools=[tool]))
        assert execution.result.message == "Tool 'idle' cannot run: it has no handler."
        assert _ARGUMENTS_SLOT.__get__(execution.event, ToolInvoked) == {"query": "tea"}


def _event(arguments: object) -> ToolInvoked:
    made = make_tool_invoked(
        evaluation_id="ev-1",
        prompt_name="p",
        adapter="offline",
        session_id=None,
        name="echo",
        call_id="c",
        arguments=arguments,
        params=Search(query="tea"),
        result=ToolResult(message="ok"),
        rendered_output="",
        started_at=WHEN,
        finished_at=WHEN,
    )
    assert isinstance(made, ToolInvoked)
    return made


TEXT = '{"query": "tea", "n": 1.0}'
DECODED: JSONValue = {"query": "tea", "n": 1.0}


class TestTheFieldKeepsItsContract:
    """An event holding text reads, compares, copies and stores as one holding JSON."""

    def test_reads_compare_and_print_as_the_decoded_json(self) -> None:
        lazy, eager = _event(ArgumentsText(TEXT)), _event(DECODED)
        assert lazy.arguments == DECODED
        assert repr(lazy.arguments) == repr(DECODED)
        assert lazy == eager
        assert repr(lazy) == repr(eager)
        assert dataclasses.replace(lazy, call_id="d").arguments == DECODED

    def test_the_field_is_still_a_frozen_dataclass_field(self) -> None:
        event = ToolInvoked(**{f.name: getattr(_event(DECODED), f.name) for f in _fields()})
        assert event.arguments == DECODED
        assert [f.name for f in _fields()].count("arguments") == 1
        with pytest.raises(dataclasses.FrozenInstanceError, match="arguments"):
            event.arguments = {}  # type: ignore[misc]  # frozen on purpose

    def test_a_copy_holds_the_decoded_json(self) -> None:
        """copy (like pickle) goes through the dataclass's __getstate__: it reads the field."""
        copied = copy.copy(_event(ArgumentsText(TEXT)))
        assert copied == _event(DECODED)
        assert _ARGUMENTS_SLOT.__get__(copied, ToolInvoked) == DECODED

    def test_the_stored_document_is_the_one_written_before(self) -> None:
        """Text or JSON, the event is stored as before; a document of that form loads equal."""
        assert dump_document(EVENT_DOCUMENT, _event(ArgumentsText(TEXT))) == STORED
        loaded = load_document(EVENT_DOCUMENT, STORED)
        assert loaded == _event(ArgumentsText(TEXT))
        assert isinstance(loaded, ToolInvoked)
        assert _ARGUMENTS_SLOT.__get__(loaded, ToolInvoked) == DECODED


STORED = (
    '{"kind":"weakincentives.event","version":1,"body":{"$type":"weakincentives.runtime:'
    'ToolInvoked","evaluation_id":"ev-1","prompt_name":"p","adapter":"offline","session_id":'
    'null,"name":"echo","call_id":"c","arguments":{"query":"tea","n":1.0},"params":{"$type":'
    '"tests.runtime.test_one_pass_arguments:Search","query":"tea","tags":[]},"result":'
    '{"message":"ok","value":null,"success":true,"exclude_value_from_context":false},'
    '"rendered_output":"","started_at":"2026-02-03T04:05:06+00:00","finished_at":'
    '"2026-02-03T04:05:06+00:00","telemetry":{},"exception":null}}'
)
"""An event document as the library wrote it before arguments could be kept as text."""


def _fields() -> tuple[dataclasses.Field[Any], ...]:
    return dataclasses.fields(ToolInvoked)
