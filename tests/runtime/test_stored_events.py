"""Every event the library publishes, and the user's own, stores and loads back equal."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any
from uuid import UUID

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.serde.typed_models import Box, Record, assert_identical
from tests.strategies import json_values, typed_values
from weakincentives.discovery import (
    DiscoveryCalled,
    DiscoveryExpanded,
    DiscoveryFailed,
    DiscoverySearched,
)
from weakincentives.errors import DocumentError, RecordedError
from weakincentives.prompt import SectionVisibility, ToolResult
from weakincentives.runtime import (
    EVENT_DOCUMENT,
    OutputRejected,
    PromptExecuted,
    PromptFailed,
    PromptRendered,
    SessionSnapshot,
    TextDelta,
    TokenUsage,
    ToolInvoked,
)
from weakincentives.serde import dump_document, dump_typed, load_document
from weakincentives.tools import CodeInterpreterResult, WebSearchResult

WHEN = datetime(2026, 2, 3, 4, 5, 6, tzinfo=UTC)
SESSION = UUID("00000000-0000-0000-0000-00000000abcd")


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchParams:
    """A tool's params dataclass."""

    query: str
    limit: int = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderShipped:
    """A user's own event, with an open payload."""

    order_id: str
    carrier: str | None = None
    details: object = None


def _invoked(**changes: Any) -> ToolInvoked:
    fields: dict[str, Any] = {
        "evaluation_id": "ev-1",
        "prompt_name": "support",
        "adapter": "offline",
        "session_id": SESSION,
        "name": "search",
        "call_id": "call-1",
        "arguments": {"query": "tea"},
        "params": SearchParams(query="tea"),
        "result": ToolResult(message="found 1", value=Record(name="tea", payload=(1, 2))),
        "rendered_output": '{"name":"tea"}',
        "started_at": WHEN,
        "finished_at": WHEN,
        "telemetry": MappingProxyType({"hits": 1}),
    }
    return ToolInvoked(**{**fields, **changes})


class TestForms:
    """What the library's events look like stored."""

    def test_visibility_keyed_by_section_paths_is_pairs(self) -> None:
        """PromptRendered.visibility, keyed by path tuples, is an array of [path, visibility]."""
        event = PromptRendered(
            evaluation_id="ev-1",
            prompt_ns="demo",
            prompt_key="support",
            prompt_name="support",
            adapter="offline",
            session_id=None,
            text="# Task",
            tool_names=("search",),
            hosted_tool_names=(),
            visibility=MappingProxyType(
                {("task",): SectionVisibility.FULL, ("task", "notes"): SectionVisibility.SUMMARY}
            ),
            created_at=WHEN,
        )
        stored = dump_typed(event)
        assert isinstance(stored, dict)
        assert stored["$type"] == "weakincentives.runtime:PromptRendered"
        assert stored["visibility"] == [[["task"], "full"], [["task", "notes"], "summary"]]
        assert_identical(load_document(EVENT_DOCUMENT, dump_document(EVENT_DOCUMENT, event)), event)

    def test_tool_invoked_names_params_and_result_types(self) -> None:
        """Params and the result's payload carry their type names; arguments stay JSON."""
        stored = dump_typed(_invoked())
        assert isinstance(stored, dict)
        assert stored["params"] == {
            "$type": "tests.runtime.test_stored_events:SearchParams",
            "query": "tea",
            "limit": 10,
        }
        assert stored["arguments"] == {"query": "tea"}
        assert stored["result"] == {
            "message": "found 1",
            "value": {
                "$type": "tests.serde.typed_models:Record",
                "name": "tea",
                "payload": {"$type": "tuple", "value": [1, 2]},
                "extra": None,
                "visibility": [],
                "labels": [],
                "error": None,
            },
            "success": True,
            "exclude_value_from_context": False,
        }

    def test_tool_invoked_keeps_the_exception_as_name_and_message(self) -> None:
        """The exception object is not stored; its type name and message are."""
        event = _invoked(
            result=ToolResult(message="search failed", success=False),
            exception=TimeoutError("upstream timed out"),
        )
        text = dump_document(EVENT_DOCUMENT, event)
        assert '"exception":{"type":"builtins:TimeoutError","message":"upstream timed out"}' in text
        loaded = load_document(EVENT_DOCUMENT, text)
        assert loaded == event  # the exception does not take part in equality
        assert isinstance(loaded, ToolInvoked)
        assert isinstance(loaded.exception, RecordedError)
        assert (loaded.exception.type_name, str(loaded.exception)) == (
            "builtins:TimeoutError",
            "upstream timed out",
        )

    def test_an_event_document_is_not_a_snapshot(self) -> None:
        """The kinds are told apart."""
        text = dump_document(
            EVENT_DOCUMENT,
            TextDelta(evaluation_id="e", prompt_name="p", round=1, index=0, text="hi"),
        )
        with pytest.raises(
            DocumentError,
            match=(
                r"^expected a 'weakincentives\.session_snapshot' document, "
                r"got a 'weakincentives\.event' document$"
            ),
        ):
            SessionSnapshot.from_json(text)


_text = st.text(max_size=8)
_times = st.datetimes(timezones=st.none() | st.just(UTC))
_sessions = st.none() | st.uuids()
_counts = st.integers(min_value=0, max_value=10**9)
_usage = st.builds(
    TokenUsage,
    input_tokens=_counts,
    output_tokens=_counts,
    cached_input_tokens=_counts,
    reasoning_tokens=_counts,
    cache_write_tokens=_counts,
)


def _wrapped(inner: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return st.builds(Box, item=inner) | st.builds(Record, name=_text, payload=inner)


_payloads = typed_values(_wrapped)
_paths = st.lists(_text, max_size=3).map(tuple)
_results = st.builds(
    ToolResult,
    message=_text,
    value=_payloads,
    success=st.booleans(),
    exclude_value_from_context=st.booleans(),
)
_exceptions = st.none() | st.builds(ValueError, _text) | st.builds(KeyError, _text)

EVENTS: st.SearchStrategy[object] = st.one_of(
    st.builds(
        PromptRendered,
        evaluation_id=_text,
        prompt_ns=_text,
        prompt_key=_text,
        prompt_name=_text,
        adapter=_text,
        session_id=_sessions,
        text=st.text(),
        tool_names=st.lists(_text, max_size=3).map(tuple),
        hosted_tool_names=st.lists(_text, max_size=2).map(tuple),
        visibility=st.dictionaries(_paths, st.sampled_from(SectionVisibility), max_size=3).map(
            MappingProxyType
        ),
        created_at=_times,
    ),
    st.builds(
        ToolInvoked,
        evaluation_id=_text,
        prompt_name=_text,
        adapter=_text,
        session_id=_sessions,
        name=_text,
        call_id=_text,
        arguments=json_values(),
        params=st.none() | st.builds(SearchParams, query=_text, limit=st.integers()),
        result=_results,
        rendered_output=_text,
        started_at=_times,
        finished_at=_times,
        telemetry=st.dictionaries(_text, json_values(), max_size=2).map(MappingProxyType),
        exception=_exceptions,
    ),
    st.builds(
        PromptExecuted,
        evaluation_id=_text,
        prompt_name=_text,
        adapter=_text,
        session_id=_sessions,
        text=_text,
        output=_payloads,
        tool_calls=_counts,
        rounds=_counts,
        halted=st.booleans(),
        usage=_usage,
        started_at=_times,
        finished_at=_times,
        model=st.none() | _text,
    ),
    st.builds(
        PromptFailed, usage=_usage, session_id=_sessions, started_at=_times, failed_at=_times
    ),
    st.builds(TextDelta, text=st.text()),
    st.builds(OutputRejected),
    st.builds(DiscoverySearched, path=_paths, node_paths=st.lists(_paths, max_size=2).map(tuple)),
    st.builds(DiscoveryExpanded),
    st.builds(
        DiscoveryCalled,
        arguments=st.dictionaries(_text, json_values(), max_size=2).map(MappingProxyType),
    ),
    st.builds(DiscoveryFailed, path=st.none() | _paths),
    st.builds(OrderShipped, order_id=_text, carrier=st.none() | _text, details=_payloads),
    st.builds(WebSearchResult),
    st.builds(CodeInterpreterResult),
)


def _recorded_exception_matches(original: object, loaded: object) -> None:
    """A loaded ToolInvoked holds a RecordedError naming the original exception."""
    if isinstance(original, ToolInvoked) and original.exception is not None:
        assert isinstance(loaded, ToolInvoked)
        assert isinstance(loaded.exception, RecordedError)
        cls = type(original.exception)
        assert loaded.exception.type_name == f"{cls.__module__}:{cls.__qualname__}"
        assert loaded.exception.message == str(original.exception)


@given(EVENTS)
def test_every_event_loads_back_identical(event: object) -> None:
    """Library events, hosted outputs and a user's event: as a document and as typed JSON."""
    loaded = load_document(EVENT_DOCUMENT, dump_document(EVENT_DOCUMENT, event))
    assert_identical(loaded, event)
    _recorded_exception_matches(event, loaded)
    again = json.loads(json.dumps(dump_typed(event)))
    assert again == dump_typed(loaded)  # a loaded event dumps to the same JSON
