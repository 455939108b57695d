"""PromptResponse as a stored value: what round-trips today, and the one field that cannot.

A response holds the tools it ran (``ToolExecution.tool``) and the render it used
(``rendered``, which holds tools too); tools carry handlers, which are never stored.
Until those fields record tool names instead (see the durable-evaluations issue), these
properties cover every other part of a response: conversation items, tool executions of
unknown tools (``tool=None``) with params, results and events, skipped calls, halt,
hosted outputs, usage and the structured output.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.serde.typed_models import assert_identical
from tests.strategies import (
    LookupQuery,
    json_values,
    stored_values,
    token_usage,
    tool_invocations,
    tool_results,
)
from weakincentives.adapters import (
    AssistantMessage,
    FeedbackMessage,
    Halt,
    ModelTurn,
    OfflineAdapter,
    PromptMessage,
    PromptResponse,
    ScriptedCall,
    ScriptedTurn,
    ToolOutputMessage,
)
from weakincentives.errors import SchemaError
from weakincentives.prompt import MarkdownSection, Prompt, ToolContext, ToolResult, tool
from weakincentives.runtime import ToolCall, ToolExecution
from weakincentives.serde import DocumentKind, dump_document, dump_typed, load_document
from weakincentives.tools import CodeInterpreterResult, WebSearchResult

RESPONSES: DocumentKind[object] = DocumentKind(name="tests.response", value_type=object)

_text = st.text(max_size=8)
_counts = st.integers(min_value=0, max_value=10**6)
_payloads = stored_values()
_results = tool_results()
_raw = st.dictionaries(_text, json_values(), max_size=2).map(MappingProxyType)
_calls = st.builds(
    ToolCall,
    call_id=_text,
    name=_text,
    arguments=_text | _raw,
    parent_message_id=st.none() | _text,
)
_executions = st.builds(
    ToolExecution,
    call=_calls,
    tool=st.none(),
    params=st.none() | st.builds(LookupQuery, query=_text),
    result=_results,
    event=tool_invocations(),
    exception=st.none() | st.builds(RuntimeError, _text),
)
_turns = st.builds(
    ModelTurn,
    text=_text,
    tool_calls=st.lists(_calls, max_size=2).map(tuple),
    raw_items=st.lists(_raw, max_size=2).map(tuple),
    usage=token_usage(),
    response_id=st.none() | _text,
    refusal=st.none() | _text,
    request=st.none() | _raw,
)
_items = st.one_of(
    st.builds(PromptMessage, text=_text),
    st.builds(AssistantMessage, turn=_turns),
    st.builds(ToolOutputMessage, call_id=_text, name=_text, content=_text, success=st.booleans()),
    st.builds(FeedbackMessage, text=_text),
)
RESPONSE_VALUES = st.builds(
    PromptResponse,
    prompt_name=_text,
    evaluation_id=_text,
    text=_text,
    output=st.none() | _payloads,
    tool_executions=st.lists(_executions, max_size=2).map(tuple),
    skipped_calls=st.lists(_calls, max_size=2).map(tuple),
    hosted_outputs=st.dictionaries(
        _text, st.builds(WebSearchResult) | st.builds(CodeInterpreterResult), max_size=2
    ).map(MappingProxyType),
    halt=st.none() | st.builds(Halt, tool_name=_text, call_id=_text, result=_results),
    usage=token_usage(),
    rounds=_counts,
    model=st.none() | _text,
    conversation=st.lists(_items, max_size=4).map(tuple),
)


@given(RESPONSE_VALUES)
def test_responses_without_tool_objects_load_back_identical(response: PromptResponse[Any]) -> None:
    """Every part of a response but the tool objects stores and loads back identical."""
    loaded = load_document(RESPONSES, dump_document(RESPONSES, response))
    assert_identical(loaded, response)


@dataclass(frozen=True, slots=True, kw_only=True)
class Question:
    """The lookup tool's params."""

    topic: str


@tool(name="lookup", description="Look a topic up.")
def lookup(params: Question, *, context: ToolContext) -> ToolResult[str]:
    """Answer with the topic."""
    return ToolResult(message="ok", value=params.topic)


def test_a_response_that_ran_a_tool_names_the_handler_it_cannot_store() -> None:
    """Today a real response holds its tools: dumping it says where (the field to change)."""
    prompt = Prompt(
        ns="tests/responses",
        key="lookup",
        sections=[MarkdownSection(title="Task", key="task", template="Look.", tools=[lookup])],
    )
    model = OfflineAdapter(
        [
            ScriptedTurn(calls=(ScriptedCall(name="lookup", arguments={"topic": "tea"}),)),
            ScriptedTurn(text="done"),
        ]
    )
    response = model.evaluate(prompt)
    with pytest.raises(
        SchemaError,
        match=r"cannot dump a value of type function at \$\.tool_executions\[0\]\.tool\.handler$",
    ):
        dump_typed(response, PromptResponse)
    stored = dump_typed(response.tool_executions[0].event)  # the event of the same call stores
    assert isinstance(stored, dict)
    assert stored["params"] == {
        "$type": "tests.adapters.test_response_documents:Question",
        "topic": "tea",
    }
