"""The shared tool loop, driven by the offline adapter."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeClock
from weakincentives.adapters import (
    Adapter,
    LoopSettings,
    OfflineAdapter,
    OfflineModel,
    PromptResponse,
    ScriptedCall,
    ScriptedTurn,
    ToolOutputMessage,
    TurnRequest,
)
from weakincentives.adapters._answer import TOOLS_FIRST
from weakincentives.adapters.openai import default_openai_codecs
from weakincentives.errors import (
    ConfigValidationError,
    PromptEvaluationError,
    PromptValidationError,
    SessionError,
)
from weakincentives.prompt import (
    MarkdownSection,
    Prompt,
    PromptTemplate,
    Tool,
    ToolContext,
    ToolResult,
)
from weakincentives.runtime import (
    InProcessEventBus,
    PromptExecuted,
    PromptRendered,
    Session,
    TokenUsage,
    ToolInvoked,
)
from weakincentives.tools import WebSearchResult, web_search_tool

NO_OUTPUT_RETRIES = LoopSettings(output_retries=0)

FIXTURES = Path(__file__).parent.parent / "fixtures" / "hosted_tools"


@dataclass(frozen=True)
class AddParams:
    a: int
    b: int


@dataclass(frozen=True)
class Sum:
    value: int


@dataclass(frozen=True)
class Answer:
    summary: str
    confidence: float


@dataclass(frozen=True)
class TaskParams:
    goal: str


def add(params: AddParams, *, context: ToolContext) -> ToolResult[Sum]:
    return ToolResult(message=f"{params.a}+{params.b}", value=Sum(value=params.a + params.b))


def finish(params: AddParams, *, context: ToolContext) -> ToolResult[Sum]:
    return ToolResult(message="finished", value=Sum(value=0))


ADD = Tool(name="add", description="Add two numbers.", handler=add)
FINISH = Tool(name="finish", description="End the turn.", handler=finish, terminal=True)


def template(*tools: Tool[Any, Any]) -> PromptTemplate[Answer]:
    return PromptTemplate[Answer](
        ns="tests",
        key="loop",
        sections=[
            MarkdownSection[TaskParams](title="Task", template="Goal: $goal", tools=tools or (ADD,))
        ],
    )


def text_prompt() -> Prompt[None]:
    return Prompt(
        ns="tests",
        key="text",
        sections=[MarkdownSection(title="Task", template="Say hi.", tools=[ADD])],
    )


def call(name: str, **arguments: int) -> ScriptedCall:
    return ScriptedCall(name=name, arguments=dict(arguments))


class TestToolLoop:
    def test_multi_round_loop_reaches_a_structured_answer(
        self, bus: InProcessEventBus, session: Session
    ) -> None:
        """Tool calls run in order across rounds, results go back, the answer is parsed."""
        adapter = OfflineAdapter(
            [
                ScriptedTurn(calls=(call("add", a=1, b=2), call("add", a=3, b=4))),
                ScriptedTurn(calls=(call("add", a=10, b=20),)),
                ScriptedTurn(output=Answer(summary="done", confidence=0.9)),
            ]
        )
        response = adapter.evaluate(template(), TaskParams(goal="sum"), bus=bus, session=session)
        assert response.output == Answer(summary="done", confidence=0.9)
        assert [r.value for r in response.tool_results] == [
            Sum(value=3),
            Sum(value=7),
            Sum(value=30),
        ]
        assert response.rounds == 3
        assert response.halt is None
        third = adapter.provider.requests[2]
        outputs = [item for item in third.history if isinstance(item, ToolOutputMessage)]
        assert [o.content for o in outputs] == [
            '1+2\n\n{"value":3}',
            '3+4\n\n{"value":7}',
            '10+20\n\n{"value":30}',
        ]

    def test_session_records_rendered_tool_and_executed_events(
        self, bus: InProcessEventBus, session: Session
    ) -> None:
        """One evaluation publishes PromptRendered, a ToolInvoked per call, PromptExecuted."""
        adapter = OfflineAdapter(
            [
                ScriptedTurn(calls=(call("add", a=1, b=1),)),
                ScriptedTurn(output=Answer(summary="s", confidence=1.0)),
            ]
        )
        response = adapter.evaluate(template(), TaskParams(goal="g"), bus=bus, session=session)
        (rendered,) = session.select(PromptRendered)
        (invoked,) = session.select(ToolInvoked)
        (executed,) = session.select(PromptExecuted)
        schema = adapter.provider.requests[0].output_schema
        assert schema is not None
        # With a tool offered the prompt says to use it first; the shape comes later.
        assert rendered.text == f"## 1 Task\nGoal: g\n\n{TOOLS_FIRST}"
        assert rendered.tool_names == ("add",)
        assert invoked.adapter == "offline"
        assert {rendered.evaluation_id, invoked.evaluation_id, executed.evaluation_id} == {
            response.evaluation_id
        }
        assert (executed.tool_call_count, executed.rounds, executed.halted) == (1, 2, False)
        assert executed.output == Answer(summary="s", confidence=1.0)
        assert executed.usage == response.usage

    def test_failing_tool_result_reaches_the_next_request(self) -> None:
        """A bad call becomes a failed result the model reads, and the loop goes on."""
        adapter = OfflineAdapter(
            [
                ScriptedTurn(calls=(ScriptedCall(name="add", arguments='{"a": "x", "b": 1}'),)),
                ScriptedTurn(output=Answer(summary="recovered", confidence=0.5)),
            ]
        )
        response = adapter.evaluate(template(), TaskParams(goal="g"))
        (output,) = [
            i for i in adapter.provider.requests[1].history if isinstance(i, ToolOutputMessage)
        ]
        assert output.success is False
        assert output.content.startswith("Invalid arguments for tool 'add': expected an integer")
        assert response.output == Answer(summary="recovered", confidence=0.5)

    def test_text_prompts_return_text(self) -> None:
        """Prompts without an output type return the model's text and no output."""
        adapter = OfflineAdapter([ScriptedTurn(text="hello")])
        response = adapter.evaluate(text_prompt())
        assert (response.text, response.output) == ("hello", None)

    def test_usage_is_summed_over_rounds(self) -> None:
        """Token usage adds up across every request of the evaluation."""
        adapter = OfflineAdapter(
            [
                ScriptedTurn(
                    calls=(call("add", a=1, b=1),),
                    usage=TokenUsage(input_tokens=10, output_tokens=2, cached_input_tokens=4),
                ),
                ScriptedTurn(
                    text="ok",
                    usage=TokenUsage(input_tokens=20, output_tokens=3, reasoning_tokens=1),
                ),
            ]
        )
        usage = adapter.evaluate(text_prompt()).usage
        assert usage == TokenUsage(
            input_tokens=30, output_tokens=5, cached_input_tokens=4, reasoning_tokens=1
        )
        assert usage.total_tokens == 35

    def test_prompt_template_with_params_and_bound_prompt_both_evaluate(self) -> None:
        """evaluate accepts a template plus params, or a prompt with params bound."""
        script = [ScriptedTurn(output=Answer(summary="a", confidence=1.0))] * 2
        adapter = OfflineAdapter(script)
        first = adapter.evaluate(template(), TaskParams(goal="one"))
        second = adapter.evaluate(Prompt(template()).bind(TaskParams(goal="two")))
        assert first.rendered is not None
        assert first.rendered.text.endswith("one")
        assert second.rendered is not None
        assert second.rendered.text.endswith("two")

    def test_evaluate_rejects_other_objects(self) -> None:
        """Only prompts and templates can be evaluated."""
        adapter = OfflineAdapter([ScriptedTurn(text="x")])
        with pytest.raises(
            PromptValidationError, match="needs a Prompt or PromptTemplate, got str"
        ):
            adapter.evaluate("hello")  # type: ignore[arg-type]  # a non-prompt is the point


class TestHalting:
    def test_terminal_tool_halts_and_skips_later_calls(self) -> None:
        """A successful terminal call ends the turn; later calls of the turn never run."""
        adapter = OfflineAdapter(
            [
                ScriptedTurn(
                    calls=(
                        call("add", a=1, b=1),
                        call("finish", a=0, b=0),
                        call("add", a=5, b=5),
                    )
                )
            ]
        )
        response = adapter.evaluate(template(ADD, FINISH), TaskParams(goal="g"))
        assert response.halt is not None
        assert response.halt.tool_name == "finish"
        assert response.halt.value == Sum(value=0)
        assert [e.call.name for e in response.tool_executions] == ["add", "finish"]
        assert [c.name for c in response.skipped_calls] == ["add"]
        assert (response.output, response.text, response.rounds) == (None, "", 1)

    def test_failed_terminal_call_does_not_halt(self) -> None:
        """A terminal tool that fails goes back to the model like any failure."""
        adapter = OfflineAdapter(
            [
                ScriptedTurn(calls=(ScriptedCall(name="finish", arguments="{}"),)),
                ScriptedTurn(output=Answer(summary="after", confidence=1.0)),
            ]
        )
        response = adapter.evaluate(template(ADD, FINISH), TaskParams(goal="g"))
        assert response.halt is None
        assert response.output == Answer(summary="after", confidence=1.0)

    def test_halted_evaluations_are_marked_in_the_executed_event(
        self, bus: InProcessEventBus, session: Session
    ) -> None:
        """PromptExecuted says the evaluation halted."""
        adapter = OfflineAdapter([ScriptedTurn(calls=(call("finish", a=0, b=0),))])
        adapter.evaluate(template(FINISH), TaskParams(goal="g"), bus=bus, session=session)
        (executed,) = session.select(PromptExecuted)
        assert executed.halted


class TestLimitsAndErrors:
    def test_round_limit_is_a_tool_phase_error(self) -> None:
        """A model that never stops calling tools is stopped with a clear error."""
        adapter = Adapter(
            OfflineModel([ScriptedTurn(calls=(call("add", a=1, b=1),))] * 3),
            settings=LoopSettings(max_rounds=2),
        )
        with pytest.raises(PromptEvaluationError) as caught:
            adapter.evaluate(template(), TaskParams(goal="g"))
        assert caught.value.phase == "tool"
        assert "no final answer after 2 rounds" in caught.value.message
        assert "(last: add)" in caught.value.message

    def test_passed_deadline_is_a_request_phase_error(self, clock: FakeClock) -> None:
        """No request is sent after the deadline."""
        adapter = Adapter(
            OfflineModel([ScriptedTurn(text="never")]), settings=LoopSettings(clock=clock)
        )
        deadline = clock.now - timedelta(seconds=1)
        with pytest.raises(PromptEvaluationError, match="passed before round 1") as caught:
            adapter.evaluate(text_prompt(), deadline=deadline)
        assert caught.value.phase == "request"
        assert adapter.provider.requests == ()

    def test_render_problems_are_render_phase_errors(self) -> None:
        """Missing params surface as PromptEvaluationError(phase='render') with the cause."""
        adapter = OfflineAdapter([ScriptedTurn(text="never")])
        with pytest.raises(PromptEvaluationError) as caught:
            adapter.evaluate(template())
        assert caught.value.phase == "render"
        assert "missing params" in caught.value.message
        assert adapter.provider.requests == ()

    @pytest.mark.parametrize(
        ("text", "fragment"),
        [
            ("not json", "final answer is not valid JSON for Answer"),
            ('{"summary": 3, "confidence": 1}', "expected a string, got integer 3 at $.summary"),
        ],
    )
    def test_unparseable_answer_is_a_parse_error_with_the_text(
        self, text: str, fragment: str
    ) -> None:
        """With output retries off, an answer in the final turn that does not fit fails at once.

        The first answer after the tools only ends the tools' part (it costs no try): the
        final turn asks for the answer in its shape, with the tools off.
        """
        turns = [ScriptedTurn(text="Done."), ScriptedTurn(text=text)]
        adapter = Adapter(OfflineModel(turns), settings=NO_OUTPUT_RETRIES)
        with pytest.raises(PromptEvaluationError) as caught:
            adapter.evaluate(template(), TaskParams(goal="g"))
        assert caught.value.phase == "parse"
        assert fragment in caught.value.message
        assert caught.value.provider_payload == {"text": text}
        final = adapter.provider.requests[1]
        assert (final.allow_tool_calls, final.constrain_output) == (False, True)

    def test_fenced_json_answers_are_accepted(self) -> None:
        """Answers wrapped in a markdown code fence still parse."""
        fenced = '```json\n{"summary": "s", "confidence": 0.1}\n```'
        adapter = OfflineAdapter([ScriptedTurn(text=fenced)])
        assert adapter.evaluate(template(), TaskParams(goal="g")).output == Answer(
            summary="s", confidence=0.1
        )

    def test_exhausted_script_is_a_response_error(self) -> None:
        """Running past the script is reported, not looped."""
        adapter = OfflineAdapter([ScriptedTurn(calls=(call("add", a=1, b=1),))])
        with pytest.raises(PromptEvaluationError, match="offline script exhausted after 1 turns"):
            adapter.evaluate(template(), TaskParams(goal="g"))

    def test_session_on_another_bus_is_rejected(self) -> None:
        """A session that would miss the evaluation's events is refused up front."""
        adapter = OfflineAdapter([ScriptedTurn(text="x")])
        session = Session(bus=InProcessEventBus())
        with pytest.raises(SessionError, match="listens to a different bus"):
            adapter.evaluate(text_prompt(), bus=InProcessEventBus(), session=session)
        assert adapter.provider.requests == ()

    def test_session_without_a_bus_records_the_evaluation(self) -> None:
        """A bus-less session listens to the evaluation's bus only while it runs."""
        bus = InProcessEventBus()
        session = Session()
        OfflineAdapter([ScriptedTurn(text="x")]).evaluate(text_prompt(), bus=bus, session=session)
        assert len(session.select(PromptExecuted)) == 1
        bus.publish(Item(name="after the evaluation"))
        assert session.select(Item) == ()
        alone = Session()
        OfflineAdapter([ScriptedTurn(text="y")]).evaluate(text_prompt(), session=alone)
        assert len(alone.select(PromptRendered)) == 1

    def test_session_alone_brings_its_bus(self) -> None:
        """Passing only a session publishes on the session's own bus."""
        bus = InProcessEventBus()
        session = Session(bus=bus)
        OfflineAdapter([ScriptedTurn(text="x")]).evaluate(text_prompt(), session=session)
        assert len(session.select(PromptExecuted)) == 1


@dataclass(frozen=True)
class Item:
    name: str


class TestListOutput:
    def test_list_outputs_are_wrapped_for_providers_and_unwrapped(self) -> None:
        """`Prompt[list[Item]]` sends an object schema with `items` and returns a list."""
        prompt = Prompt[list[Item]](
            ns="t", key="list", sections=[MarkdownSection(title="T", template="List.")]
        )
        adapter = OfflineAdapter([ScriptedTurn(output=[Item(name="a"), Item(name="b")])])
        response = adapter.evaluate(prompt)
        assert response.output == [Item(name="a"), Item(name="b")]
        schema = adapter.provider.requests[0].output_schema
        assert schema is not None
        assert schema.wrapped
        assert schema.schema["required"] == ["items"]

    def test_list_item_errors_carry_their_index(self) -> None:
        """A bad item is reported with its position in the list."""
        prompt = Prompt[list[Item]](
            ns="t", key="list", sections=[MarkdownSection(title="T", template="List.")]
        )
        adapter = Adapter(
            OfflineModel([ScriptedTurn(text='{"items": [{"name": "a"}, {"name": 2}]}')]),
            settings=NO_OUTPUT_RETRIES,
        )
        with pytest.raises(PromptEvaluationError, match=r"at \$\.items\[1\]\.name"):
            adapter.evaluate(prompt)


class TestOfflineModes:
    def test_call_every_tool_uses_schema_valid_arguments(self) -> None:
        """The exercising mode calls each tool once, validly, then answers per the schema."""
        adapter = OfflineAdapter(call_every_tool=True)
        response = adapter.evaluate(template(), TaskParams(goal="g"))
        assert [e.result.success for e in response.tool_executions] == [True]
        assert isinstance(response.output, Answer)

    def test_call_every_tool_without_output_type_reports_the_calls(self) -> None:
        """For text prompts the exercising mode answers with a count."""
        response = OfflineAdapter(call_every_tool=True).evaluate(text_prompt())
        assert response.text == "Called 1 tools."

    def test_responder_sees_the_conversation(self) -> None:
        """A responder function plays the model with the whole request in view."""
        seen: list[int] = []

        def responder(request: TurnRequest) -> ScriptedTurn:
            seen.append(len(request.history))
            if request.round == 1:
                return ScriptedTurn(calls=(call("add", a=2, b=2),))
            return ScriptedTurn(text="four")

        response = OfflineAdapter(responder=responder).evaluate(text_prompt())
        assert (response.text, seen) == ("four", [1, 3])

    def test_exactly_one_mode_is_required(self) -> None:
        """Script, responder and call-every-tool are mutually exclusive."""
        with pytest.raises(ConfigValidationError, match="exactly one of"):
            OfflineAdapter()
        with pytest.raises(ConfigValidationError, match="exactly one of"):
            OfflineAdapter([ScriptedTurn(text="x")], call_every_tool=True)

    def test_hosted_fixture_items_parse_into_hosted_outputs(self) -> None:
        """Responses-format fixture items become typed hosted outputs."""
        body = json.loads((FIXTURES / "web_search_with_citations.json").read_text())
        prompt = Prompt(
            ns="t",
            key="search",
            sections=[
                MarkdownSection(
                    title="Research", template="Search.", hosted_tools=(web_search_tool(),)
                )
            ],
        )
        adapter = OfflineAdapter(
            [ScriptedTurn(raw_items=tuple(body["output"]))],
            hosted_tool_codecs=default_openai_codecs(),
        )
        response: PromptResponse[None] = adapter.evaluate(prompt)
        result = response.hosted_outputs["web_search"]
        assert isinstance(result, WebSearchResult)
        assert result.citations
        assert response.text == result.text
        assert adapter.provider.remaining_turns == 0
