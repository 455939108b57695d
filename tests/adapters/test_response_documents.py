"""PromptResponse as a stored document: generated responses, and real evaluations with tools.

A response refers to its tools by name (``ToolExecution.call.name``) and to its prompt
by ``prompt_ns``/``prompt_key``; the tool objects and the render (which hold handlers)
stay in the process, so a stored response loads back equal, with those left empty.
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
from weakincentives.errors import RecordedError, UnreadableDocumentError
from weakincentives.prompt import MarkdownSection, Prompt, ToolContext, ToolResult, tool
from weakincentives.runtime import EVENT_DOCUMENT, ToolCall, ToolExecution
from weakincentives.serde import dump_typed, load_document
from weakincentives.tools import CodeInterpreterResult, WebSearchResult


@dataclass(frozen=True, slots=True, kw_only=True)
class Question:
    """The lookup tool's params."""

    topic: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """The prompt's structured output."""

    summary: str
    sources: tuple[str, ...]


@tool(name="lookup", description="Look a topic up.")
def lookup(params: Question, *, context: ToolContext) -> ToolResult[str]:
    """Answer with the topic."""
    return ToolResult(message="ok", value=params.topic)


@tool(name="fail", description="Always fails.")
def fail(params: Question, *, context: ToolContext) -> ToolResult[str]:
    """Raise, so the execution carries an exception."""
    raise RuntimeError(f"no {params.topic}")


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
    tool=st.none() | st.just(lookup),
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
    prompt_ns=_text,
    prompt_key=_text,
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
    pending_approvals=st.lists(_calls, max_size=2).map(tuple),
)


@given(RESPONSE_VALUES)
def test_generated_responses_load_back_identical(response: PromptResponse[Any]) -> None:
    """Every part of a response stores and loads back identical; tools are named, not kept."""
    loaded = PromptResponse.from_json(response.to_json())
    assert_identical(loaded, response)
    assert all(execution.tool is None for execution in loaded.tool_executions)


def _prompt() -> Prompt[Answer]:
    return Prompt[Answer](
        ns="tests/responses",
        key="lookup",
        sections=[
            MarkdownSection(title="Task", key="task", template="Look.", tools=[lookup, fail])
        ],
    )


def _evaluate() -> PromptResponse[Answer]:
    model = OfflineAdapter(
        [
            ScriptedTurn(
                calls=(
                    ScriptedCall(name="lookup", arguments={"topic": "tea"}),
                    ScriptedCall(name="fail", arguments={"topic": "milk"}),
                    ScriptedCall(name="missing", arguments="{not json"),
                )
            ),
            ScriptedTurn(output=Answer(summary="tea", sources=("lookup",))),
        ]
    )
    return model.evaluate(_prompt())


def test_a_real_evaluation_with_tools_round_trips() -> None:
    """A response that ran real tools (one failing, one unknown) stores and loads back equal."""
    response = _evaluate()
    loaded = PromptResponse.from_json(response.to_json())
    assert loaded == response
    assert loaded.output == Answer(summary="tea", sources=("lookup",))
    assert (loaded.prompt_ns, loaded.prompt_key) == ("tests/responses", "lookup")
    assert [e.call.name for e in loaded.tool_executions] == ["lookup", "fail", "missing"]
    assert [e.tool for e in loaded.tool_executions] == [None, None, None]
    assert [e.tool for e in response.tool_executions] == [lookup, fail, None]
    assert loaded.tool_executions[0].params == Question(topic="tea")
    assert loaded.rendered is None
    assert response.rendered is not None
    error = loaded.tool_executions[1].event.exception
    assert isinstance(error, RecordedError)
    assert (error.type_name, error.message) == ("builtins:RuntimeError", "no milk")


def test_the_stored_tool_execution_names_its_tool_and_its_params_type() -> None:
    """What is stored for a call: its tool's name and its params under their type name."""
    stored = dump_typed(_evaluate(), PromptResponse)
    assert isinstance(stored, dict)
    executions = stored["tool_executions"]
    assert isinstance(executions, list)
    assert isinstance(executions[0], dict)
    assert "tool" not in executions[0]
    assert executions[0]["call"] == {
        "call_id": "call_1_0",
        "name": "lookup",
        "arguments": '{"topic": "tea"}',
        "parent_message_id": "offline_1",
    }
    assert executions[0]["params"] == {
        "$type": "tests.adapters.test_response_documents:Question",
        "topic": "tea",
    }
    assert "rendered" not in stored


def test_a_response_document_names_its_kind_and_version() -> None:
    """The envelope says what the document is, so another kind is refused, never misread."""
    text = _evaluate().to_json()
    assert text.startswith('{"kind":"weakincentives.prompt_response","version":1,"body":{')
    with pytest.raises(UnreadableDocumentError, match=r"expected a 'weakincentives\.event'"):
        load_document(EVENT_DOCUMENT, text)
