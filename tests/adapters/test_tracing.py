"""OpenTelemetry spans of an evaluation, recorded by the SDK's in-memory exporter.

The span tree follows the GenAI conventions: ``invoke_agent <prompt>`` for the
evaluation, ``chat <model>`` per request (retries as ``retry`` events), ``execute_tool
<tool>`` per call. The trace context reaches handlers wherever they run (the loop, a
worker thread, a batch's drain) and nested evaluations, and neither the durable runner
nor ``Recorded`` breaks the tree.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanContext, StatusCode

import weakincentives._tracing as tracing
from tests.adapters.conftest import OpenAILoopback, Reply, api_error, ok, response_body
from tests.conftest import RecordedSpans
from weakincentives.adapters import (
    Adapter,
    LoopSettings,
    OfflineAdapter,
    OfflineModel,
    Recorded,
    ScriptedCall,
    ScriptedTurn,
)
from weakincentives.errors import PromptEvaluationError, ProviderError
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from weakincentives.runtime import Session
from weakincentives.serde import JSONValue
from weakincentives.store import SQLiteStore, SyncStore


@dataclass(frozen=True)
class Lookup:
    key: str


seen: dict[str, SpanContext] = {}
"""The span context each handler saw, by call key (handlers run anywhere)."""


def sync_lookup(params: Lookup, *, context: ToolContext) -> ToolResult[str]:
    """A sync handler: runs on a worker thread."""
    seen[params.key] = trace.get_current_span().get_span_context()
    return ToolResult(message=f"value of {params.key}", value=params.key)


async def async_lookup(params: Lookup, *, context: ToolContext) -> ToolResult[str]:
    """An async handler: runs as a task on the loop."""
    seen[params.key] = trace.get_current_span().get_span_context()
    return ToolResult(message=f"value of {params.key}", value=params.key)


def broken(params: Lookup, *, context: ToolContext) -> ToolResult[str]:
    """A handler that fails."""
    raise RuntimeError("disk full")


def prompt_with(*tools: Tool[Any, Any], key: str = "traced") -> Prompt[Any]:
    return Prompt(
        ns="tests/tracing",
        key=key,
        sections=[MarkdownSection(title="Task", template="Look things up.", tools=list(tools))],
    )


def calls(*pairs: tuple[str, str]) -> ScriptedTurn:
    return ScriptedTurn(
        calls=tuple(
            ScriptedCall(name=name, arguments={"key": key}, call_id=f"call-{key}")
            for name, key in pairs
        )
    )


@pytest.fixture(autouse=True)
def _forget_seen() -> None:
    seen.clear()


def _parent(span: Any) -> int | None:
    return None if span.parent is None else span.parent.span_id


class TestSpanTree:
    def test_evaluation_requests_and_tool_calls_form_one_tree(self, spans: RecordedSpans) -> None:
        """invoke_agent is the root; each chat and execute_tool span is its child."""
        tools = (Tool.wrap(sync_lookup),)
        adapter = OfflineAdapter([calls(("sync_lookup", "a")), ScriptedTurn(text="Done.")])
        session = Session()
        response = adapter.evaluate(prompt_with(*tools), session=session)
        root = spans.one("invoke_agent traced")
        assert root.parent is None
        assert root.kind is trace.SpanKind.INTERNAL
        assert dict(root.attributes) == {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": "offline",
            "gen_ai.agent.name": "traced",
            "gen_ai.conversation.id": str(session.session_id),
            "weakincentives.evaluation.id": response.evaluation_id,
            "weakincentives.prompt.ns": "tests/tracing",
            "weakincentives.prompt.key": "traced",
            "gen_ai.usage.input_tokens": response.usage.input_tokens,
            "gen_ai.usage.output_tokens": response.usage.output_tokens,
            "weakincentives.rounds": 2,
            "weakincentives.tool_calls": 1,
        }
        chats = spans.named("chat")
        assert [(c.attributes["weakincentives.round"], _parent(c)) for c in chats] == [
            (1, root.context.span_id),
            (2, root.context.span_id),
        ]
        assert chats[0].kind is trace.SpanKind.CLIENT
        tool = spans.one("execute_tool sync_lookup")
        assert _parent(tool) == root.context.span_id
        assert dict(tool.attributes) == {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "sync_lookup",
            "gen_ai.tool.call.id": "call-a",
            "gen_ai.tool.type": "function",
            "gen_ai.tool.description": "A sync handler: runs on a worker thread.",
            "weakincentives.evaluation.id": response.evaluation_id,
        }
        assert tool.status.status_code is StatusCode.UNSET
        assert {span.context.trace_id for span in spans.all()} == {root.context.trace_id}

    @pytest.mark.parametrize(
        "turn",
        [
            calls(("sync_lookup", "a")),
            calls(("async_lookup", "a")),
            calls(("sync_lookup", "a"), ("sync_lookup", "b"), ("async_lookup", "c")),
        ],
        ids=["worker-thread", "task", "batch"],
    )
    def test_handlers_run_inside_their_call_span(
        self, spans: RecordedSpans, turn: ScriptedTurn
    ) -> None:
        """Wherever a handler runs, the current span is its own execute_tool span."""
        tools = (Tool.wrap(sync_lookup), Tool.wrap(async_lookup))
        OfflineAdapter([turn, ScriptedTurn(text="Done.")]).evaluate(prompt_with(*tools))
        by_call = {
            span.attributes["gen_ai.tool.call.id"]: span.context
            for span in spans.all()
            if span.name.startswith("execute_tool")
        }
        assert {f"call-{key}": context for key, context in seen.items()} == by_call

    def test_a_nested_evaluation_is_a_child_of_the_call_that_ran_it(
        self, spans: RecordedSpans
    ) -> None:
        """A handler evaluating another prompt puts its invoke_agent under its execute_tool."""
        inner_prompt = prompt_with(key="inner")

        def delegate(params: Lookup, *, context: ToolContext) -> ToolResult[str]:
            """Ask another agent."""
            assert context.adapter is not None
            answer = context.adapter.evaluate(inner_prompt, bus=context.event_bus)
            return ToolResult(message=answer.text, value=answer.text)

        script = [
            calls(("delegate", "x")),
            ScriptedTurn(text="inner says hi"),
            ScriptedTurn(text="ok"),
        ]
        OfflineAdapter(script).evaluate(prompt_with(Tool.wrap(delegate), key="outer"))
        outer = spans.one("invoke_agent outer")
        call = spans.one("execute_tool delegate")
        inner = spans.one("invoke_agent inner")
        assert _parent(call) == outer.context.span_id
        assert _parent(inner) == call.context.span_id
        assert inner.context.trace_id == outer.context.trace_id

    def test_a_failed_call_marks_its_span(self, spans: RecordedSpans) -> None:
        """A handler's exception is the span's error.type, its message the status."""
        adapter = OfflineAdapter([calls(("broken", "a")), ScriptedTurn(text="Sorry.")])
        adapter.evaluate(prompt_with(Tool.wrap(broken)))
        span = spans.one("execute_tool broken")
        assert span.attributes["error.type"] == "RuntimeError"
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == "Tool 'broken' failed: RuntimeError: disk full"

    def test_an_unknown_tool_is_a_tool_error(self, spans: RecordedSpans) -> None:
        """A call of a tool that does not exist fails with error.type tool_error."""
        adapter = OfflineAdapter([calls(("nope", "a")), ScriptedTurn(text="Sorry.")])
        adapter.evaluate(prompt_with())
        span = spans.one("execute_tool nope")
        assert span.attributes["error.type"] == "tool_error"
        assert "gen_ai.tool.description" not in span.attributes

    def test_a_failed_evaluation_names_its_phase(self, spans: RecordedSpans) -> None:
        """An evaluation that raises: error.type, the phase and the message on invoke_agent."""
        adapter = OfflineAdapter([ScriptedTurn(text="Hi")])
        prompt = prompt_with()
        adapter.evaluate(prompt)
        with pytest.raises(PromptEvaluationError, match="script exhausted"):
            adapter.evaluate(prompt)
        failed = spans.named("invoke_agent traced")[1]
        assert failed.attributes["error.type"] == "PromptEvaluationError"
        assert failed.attributes["weakincentives.error.phase"] == "response"
        assert failed.status.status_code is StatusCode.ERROR
        assert failed.status.description == "offline script exhausted after 1 turns"
        assert spans.named("chat")[1].attributes["error.type"] == "PromptEvaluationError"


class TestRequests:
    def test_retries_are_events_of_the_request_span(
        self, spans: RecordedSpans, openai_loopback: OpenAILoopback
    ) -> None:
        """Two 500s then a reply: one chat span with two retry events, the model and usage."""
        failure = api_error("try again", kind="server_error")
        usage: JSONValue = {"input_tokens": 11, "output_tokens": 3, "total_tokens": 14}
        body = response_body(
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "Hi", "annotations": []}],
            },
            usage=usage,
            model="gpt-test-2026-01-01",
        )
        openai_loopback.reply(
            Reply(status=500, body=failure, headers={"retry-after-ms": "1"}),
            Reply(status=500, body=failure, headers={"retry-after-ms": "2"}),
            ok(body),
        )

        async def no_wait(seconds: float) -> None:
            del seconds

        adapter = openai_loopback.adapter(max_retries=2, settings=LoopSettings(sleep=no_wait))
        adapter.evaluate(prompt_with())
        chat = spans.one("chat gpt-test")
        host, port = openai_loopback.base_url.removeprefix("http://").split("/")[0].split(":")
        assert {k: v for k, v in chat.attributes.items() if k.startswith(("gen_ai", "server"))} == {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-test",
            "gen_ai.request.max_tokens": 4096,
            "server.address": host,
            "server.port": int(port),
            "gen_ai.response.id": "resp_test",
            "gen_ai.response.model": "gpt-test-2026-01-01",
            "gen_ai.usage.input_tokens": 11,
            "gen_ai.usage.output_tokens": 3,
        }
        retries = [(e.name, dict(e.attributes)) for e in chat.events]
        assert [attributes["weakincentives.retry.attempt"] for _, attributes in retries] == [1, 2]
        assert [attributes["weakincentives.retry.delay_s"] for _, attributes in retries] == [
            0.001,
            0.002,
        ]
        assert {name for name, _ in retries} == {"retry"}
        assert {attributes["error.type"] for _, attributes in retries} == {"500"}
        agent = spans.one("invoke_agent traced")
        assert agent.attributes["gen_ai.response.model"] == "gpt-test-2026-01-01"

    def test_a_request_that_fails_carries_the_status(
        self, spans: RecordedSpans, openai_loopback: OpenAILoopback
    ) -> None:
        """A 401 ends the evaluation: the chat span's error.type is the status."""
        openai_loopback.reply(Reply(status=401, body=api_error("bad key", kind="auth")))
        with pytest.raises(ProviderError):
            openai_loopback.adapter().evaluate(prompt_with())
        chat = spans.one("chat gpt-test")
        assert chat.attributes["error.type"] == "401"
        assert chat.status.status_code is StatusCode.ERROR
        assert spans.one("invoke_agent traced").attributes["weakincentives.error.phase"] == (
            "request"
        )


class TestRunners:
    def test_a_durable_evaluation_keeps_the_tree(
        self, spans: RecordedSpans, tmp_path: Path
    ) -> None:
        """With a store the calls are steps; their spans still hang under invoke_agent."""
        adapter = OfflineAdapter([calls(("sync_lookup", "a")), ScriptedTurn(text="Done.")])
        with SyncStore(SQLiteStore(tmp_path / "traced.db")) as store:
            adapter.evaluate(prompt_with(Tool.wrap(sync_lookup)), store=store)
        root = spans.one("invoke_agent traced")
        assert _parent(spans.one("execute_tool sync_lookup")) == root.context.span_id
        assert [_parent(chat) for chat in spans.named("chat")] == [root.context.span_id] * 2
        assert seen["a"] == spans.one("execute_tool sync_lookup").context

    def test_a_recorded_provider_keeps_the_tree(self, spans: RecordedSpans, tmp_path: Path) -> None:
        """Recording through Recorded, and replaying, both give the same span names."""
        cassette = tmp_path / "tape.json"
        script = [ScriptedTurn(text="Hi")]
        recording = Adapter(Recorded(OfflineModel(script), cassette, mode="record"))
        recording.evaluate(prompt_with())
        replaying = Adapter(Recorded(OfflineModel(responder=_refuse), cassette, mode="replay"))
        replaying.evaluate(prompt_with())
        assert [span.name for span in spans.all()] == ["chat", "invoke_agent traced"] * 2


def _refuse(request: object) -> ScriptedTurn:
    raise AssertionError("replay must not reach the model")


class TestTracingOff:
    def test_without_an_sdk_provider_no_span_is_started(self) -> None:
        """The API's proxy provider means tracing is off: start_span returns None."""
        assert tracing.available() is True
        assert tracing.active() is False
        assert tracing.start_span("x") is None
        assert tracing.inject() == {}
        assert tracing.extract({"traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"}) is None
        response = OfflineAdapter([calls(("sync_lookup", "a")), ScriptedTurn(text="ok")]).evaluate(
            prompt_with(Tool.wrap(sync_lookup))
        )
        assert response.text == "ok"
        assert seen["a"].is_valid is False

    def test_without_the_api_installed_evaluations_run_untraced(self) -> None:
        """With opentelemetry unimportable, the library imports and evaluates as usual."""
        script = (
            "import sys; sys.modules['opentelemetry'] = None\n"
            "from weakincentives import _tracing\n"
            "from weakincentives.adapters import OfflineAdapter, ScriptedTurn\n"
            "from weakincentives.prompt import MarkdownSection, Prompt\n"
            "p = Prompt(ns='n', key='k', sections=[MarkdownSection(title='T', template='x')])\n"
            "r = OfflineAdapter([ScriptedTurn(text='hi')]).evaluate(p)\n"
            "print(_tracing.available(), _tracing.active(), _tracing.start_span('s'),"
            " _tracing.inject(), r.text)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == "False False None {} hi\n"


def test_evaluate_async_keeps_the_callers_span_as_parent(spans: RecordedSpans) -> None:
    """An evaluation started inside an application span is a child of it."""
    tracer = trace.get_tracer("app")

    async def main() -> None:
        with tracer.start_as_current_span("request handler"):
            await OfflineAdapter([ScriptedTurn(text="ok")]).evaluate_async(prompt_with())

    asyncio.run(main())
    handler = spans.one("request handler")
    assert _parent(spans.one("invoke_agent traced")) == handler.context.span_id
