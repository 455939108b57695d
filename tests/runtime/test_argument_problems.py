"""Bad tool arguments: every field's problem reported at once, each with its path."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from weakincentives.discovery._section import CallToolParams
from weakincentives.prompt import (
    ExecutionScope,
    MarkdownSection,
    Prompt,
    Tool,
    ToolContext,
    ToolResult,
)
from weakincentives.runtime import InProcessEventBus, Session, ToolCall, execute_tool_call
from weakincentives.runtime._arguments import field_problems


@dataclass(frozen=True)
class Assign:
    owner: str
    count: int
    tags: list[str] = field(default_factory=list)
    note: str = field(default="", metadata={"max_length": 3})


def assign(params: Assign, *, context: ToolContext) -> ToolResult[None]:
    """Assign a ticket."""
    return ToolResult(message="assigned", value=None)


def _run(arguments: str) -> str:
    tool = Tool.wrap(assign)
    prompt = Prompt(ns="t", key="k", sections=[MarkdownSection(title="T", template="x")])
    bus = InProcessEventBus()
    scope = ExecutionScope(prompt=prompt, session=Session(bus=bus), event_bus=bus)
    call = ToolCall(call_id="c", name="assign", arguments=arguments)
    execution = asyncio.run(execute_tool_call(call, scope, tools=[tool]))
    assert execution.result.success is False
    return execution.result.message


def test_every_field_problem_is_listed_with_its_path() -> None:
    """Unknown, missing and ill-typed fields, nested paths included, in one message."""
    assert _run('{"owner": 3, "tags": ["a", 2], "zz": 1}') == (
        "Invalid arguments for tool 'assign': 4 problems: unknown field 'zz' (fields: owner, "
        "count, tags, note) at $.zz; expected a string, got integer 3 at $.owner; expected a "
        "value (required field), got nothing at $.count; expected a string, got integer 2 at "
        "$.tags[1]."
    )


def test_one_problem_keeps_the_parse_message() -> None:
    """A single problem reads as before: the parser's own message."""
    assert _run('{"owner": "ada"}') == (
        "Invalid arguments for tool 'assign': expected a value (required field), got nothing "
        "at $.count while parsing Assign."
    )


def test_a_constraint_only_parsing_sees_is_kept() -> None:
    """A field bound (max_length) that the per-field check misses still leads the list."""
    assert _run('{"owner": "ada", "count": 1, "note": "toolong", "zz": 1}') == (
        "Invalid arguments for tool 'assign': 2 problems: expected a string with at most 3 "
        'characters, got string "toolong" at $.note while parsing Assign; unknown field '
        "'zz' (fields: owner, count, tags, note) at $.zz."
    )


@dataclass(frozen=True)
class Unresolvable:
    owner: NotDefinedAnywhere  # type: ignore[name-defined]  # noqa: F821 - unresolvable on purpose


def test_annotations_that_cannot_be_resolved_leave_the_parse_error_alone() -> None:
    """No per-field list (and no crash) when the field types cannot be resolved."""
    assert field_problems(Unresolvable, {"owner": 1, "extra": 2}) == []


def test_a_published_class_resolves_its_annotations_where_it_was_written() -> None:
    """CallToolParams is published as weakincentives.discovery; its JSONValue is not there."""
    assert CallToolParams.__module__ == "weakincentives.discovery"
    assert field_problems(CallToolParams, {"tool_id": 3, "arguments": "x"}) == [
        "expected a string, got integer 3 at $.tool_id",
        'expected an object, got string "x" at $.arguments',
    ]
