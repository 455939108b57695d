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

from tests.serde.typed_models import Record, assert_identical
from tests.strategies import recorded_events
from weakincentives.errors import RecordedError, UnreadableDocumentError
from weakincentives.prompt import SectionVisibility, ToolResult
from weakincentives.runtime import (
    EVENT_DOCUMENT,
    PromptRendered,
    SessionSnapshot,
    TextDelta,
    ToolInvoked,
)
from weakincentives.serde import dump_document, dump_typed, load_document

WHEN = datetime(2026, 2, 3, 4, 5, 6, tzinfo=UTC)
SESSION = UUID("00000000-0000-0000-0000-00000000abcd")


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchParams:
    """A tool's params dataclass."""

    query: str
    limit: int = 10


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
            UnreadableDocumentError,
            match=(
                r"^expected a 'weakincentives\.session_snapshot' document, "
                r"got a 'weakincentives\.event' document$"
            ),
        ):
            SessionSnapshot.from_json(text)


EVENTS = recorded_events()


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
