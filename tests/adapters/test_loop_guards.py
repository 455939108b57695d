"""How evaluations end when something goes wrong: PromptFailed, guards, deadlines, ids."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from weakincentives.adapters import (
    Adapter,
    Disclosure,
    LoopSettings,
    OfflineAdapter,
    OfflineModel,
    ScriptedCall,
    ScriptedTurn,
    ToolOutputMessage,
    TurnRequest,
)
from weakincentives.errors import ConfigValidationError, PromptEvaluationError
from weakincentives.prompt import (
    MarkdownSection,
    Prompt,
    PromptTemplate,
    SectionVisibility,
    Tool,
    ToolContext,
    ToolResult,
)
from weakincentives.runtime import (
    InProcessEventBus,
    PromptExecuted,
    PromptFailed,
    PromptRendered,
    Session,
    TokenUsage,
    ToolInvoked,
)


@dataclass(frozen=True)
class Query:
    text: str


@dataclass(frozen=True)
class Needed:
    topic: str


@dataclass(frozen=True)
class Report:
    finding: str


def lookup(params: Query, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message=f"found {params.text}")


LOOKUP = Tool(name="lookup", description="Look something up.", handler=lookup)


def prompt(*, output: bool = False, summarized: bool = False) -> Prompt[Any]:
    sections: list[Any] = [
        MarkdownSection(title="Task", key="task", template="Investigate.", tools=(LOOKUP,))
    ]
    if summarized:
        sections.append(
            MarkdownSection(
                title="Runbook",
                key="runbook",
                template="Step 1: check the graphs.",
                summary="The runbook says what to check.",
                visibility=SectionVisibility.SUMMARY,
            )
        )
    if output:
        return Prompt[Report](ns="t", key="report", sections=sections)
    return Prompt(ns="t", key="plain", sections=sections)


def look(text: str, call_id: str = "c") -> ScriptedCall:
    return ScriptedCall(name="lookup", arguments={"text": text}, call_id=call_id)


def failures_of(
    adapter: Adapter[OfflineModel], target: Prompt[Any], **kwargs: Any
) -> list[PromptFailed]:
    bus = InProcessEventBus()
    session = Session(bus=bus)
    with pytest.raises(PromptEvaluationError):
        adapter.evaluate(target, bus=bus, session=session, **kwargs)
    assert session.select(PromptExecuted) == ()
    return list(session.select(PromptFailed))


def render_case() -> tuple[Adapter[OfflineModel], Prompt[Any]]:
    needs = Prompt(
        ns="t",
        key="needs",
        sections=[MarkdownSection[Query](title="Q", template="${text}", key="q")],
    )
    return OfflineAdapter([ScriptedTurn(text="x")]), needs


def parse_case() -> tuple[Adapter[OfflineModel], Prompt[Any]]:
    no_retries = LoopSettings(output_retries=0)
    turns = [ScriptedTurn(text="Done."), ScriptedTurn(text="not json")]
    return Adapter(OfflineModel(turns), settings=no_retries), prompt(output=True)


def response_case() -> tuple[Adapter[OfflineModel], Prompt[Any]]:
    return OfflineAdapter([ScriptedTurn(calls=(look("a"),))]), prompt()


def tool_case() -> tuple[Adapter[OfflineModel], Prompt[Any]]:
    turns = [ScriptedTurn(calls=(look(str(n), f"c{n}"),)) for n in range(3)]
    return Adapter(OfflineModel(turns), settings=LoopSettings(max_rounds=2)), prompt()


class TestPromptFailed:
    @pytest.mark.parametrize(
        ("case", "phase"),
        [
            (render_case, "render"),
            (parse_case, "parse"),
            (response_case, "response"),
            (tool_case, "tool"),
        ],
        ids=["render", "parse", "response", "tool"],
    )
    def test_every_failing_phase_publishes_prompt_failed(
        self, case: Callable[[], tuple[Adapter[OfflineModel], Prompt[Any]]], phase: str
    ) -> None:
        """Each phase that raises leaves exactly one PromptFailed and no PromptExecuted."""
        adapter, target = case()
        (failed,) = failures_of(adapter, target)
        assert failed.phase == phase
        assert failed.error_type == "PromptEvaluationError"

    def test_the_deadline_passing_is_a_request_failure(self) -> None:
        """A deadline already past fails before the first request, phase request."""
        past = datetime(2000, 1, 1, tzinfo=UTC)
        (failed,) = failures_of(OfflineAdapter([ScriptedTurn(text="x")]), prompt(), deadline=past)
        assert failed.phase == "request"
        assert failed.message == "deadline 2000-01-01T00:00:00+00:00 passed before round 1"

    def test_a_cancelled_evaluation_is_recorded_as_cancelled(self) -> None:
        """Cancelling the task publishes PromptFailed(phase="cancelled") and re-raises."""
        started = asyncio.Event()

        async def wait_forever(request: TurnRequest) -> ScriptedTurn:
            started.set()
            await asyncio.Event().wait()
            raise AssertionError("never reached")

        bus = InProcessEventBus()
        session = Session(bus=bus)
        adapter = OfflineAdapter(responder=wait_forever)

        async def main() -> None:
            task = asyncio.create_task(adapter.evaluate_async(prompt(), bus=bus, session=session))
            await started.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(main())
        (failed,) = session.select(PromptFailed)
        assert (failed.phase, failed.error_type) == ("cancelled", "CancelledError")

    def test_an_unexpected_exception_is_recorded_as_internal(self) -> None:
        """A bug below the loop still ends the evaluation on the record, then propagates."""

        def broken(request: TurnRequest) -> ScriptedTurn:
            raise KeyError("bug")

        (failed,) = self._internal(OfflineAdapter(responder=broken))
        assert (failed.phase, failed.error_type) == ("internal", "KeyError")

    @staticmethod
    def _internal(adapter: Adapter[OfflineModel]) -> list[PromptFailed]:
        bus = InProcessEventBus()
        session = Session(bus=bus)
        with pytest.raises(KeyError):
            adapter.evaluate(prompt(), bus=bus, session=session)
        return list(session.select(PromptFailed))


class TestDeadlineArgument:
    @pytest.mark.parametrize(
        ("deadline", "message"),
        [
            (datetime(2030, 1, 1), "has no timezone"),
            ("tomorrow", "must be a timezone-aware datetime, got str"),
            (30, "must be a timezone-aware datetime, got int"),
        ],
        ids=["naive", "string", "seconds"],
    )
    def test_a_deadline_that_is_not_an_aware_datetime_is_a_clear_error(
        self, deadline: object, message: str
    ) -> None:
        """Wrong deadlines fail before anything runs, with a WinkError naming the problem."""
        adapter = OfflineAdapter([ScriptedTurn(text="x")])
        with pytest.raises(ConfigValidationError, match=message) as caught:
            adapter.evaluate(prompt(), deadline=deadline)  # type: ignore[arg-type]  # the wrong type is the point
        assert caught.value.field_name == "deadline"
        assert adapter.provider.requests == ()


class TestRepeatedCalls:
    def test_a_repeated_call_carries_a_note_for_the_model(self) -> None:
        """The second identical call runs, and its output says the result will not change."""
        adapter = OfflineAdapter(
            [
                ScriptedTurn(calls=(look("x", "c1"),)),
                ScriptedTurn(calls=(look("x", "c2"),)),
                ScriptedTurn(text="done"),
            ]
        )
        response = adapter.evaluate(prompt())
        assert [r.message for r in response.tool_results] == ["found x", "found x"]
        second = [
            i for i in adapter.provider.requests[2].history if isinstance(i, ToolOutputMessage)
        ][-1]
        assert second.content == (
            "found x\n\n(You have now made this exact call 2 times in this task; its result "
            "will not change. Use it, or call with different arguments.)"
        )

    def test_too_many_identical_calls_end_the_evaluation(self) -> None:
        """Past max_identical_calls the loop stops with phase tool instead of at max_rounds."""
        turns = [ScriptedTurn(calls=(look("x", f"c{n}"),)) for n in range(5)]
        adapter = Adapter(OfflineModel(turns), settings=LoopSettings(max_identical_calls=2))
        with pytest.raises(PromptEvaluationError) as caught:
            adapter.evaluate(prompt())
        assert caught.value.phase == "tool"
        assert caught.value.reason.startswith(
            "the model called 'lookup' with the same arguments 3 times; the limit is 2"
        )
        assert len(adapter.provider.requests) == 3


class TestDuplicateCallIds:
    def test_a_reused_call_id_is_refused_and_one_output_is_sent(self) -> None:
        """The second call with an id is not run; the model gets one output saying so."""
        bus = InProcessEventBus()
        session = Session(bus=bus)
        adapter = OfflineAdapter(
            [
                ScriptedTurn(calls=(look("a", "dup"), look("b", "dup"))),
                ScriptedTurn(text="done"),
            ]
        )
        response = adapter.evaluate(prompt(), bus=bus, session=session)
        assert [(r.success, r.message) for r in response.tool_results] == [
            (True, "found a"),
            (
                False,
                "Not run: call id 'dup' was already used by an earlier call in this turn. "
                "Give each call its own id.",
            ),
        ]
        assert len(session.select(ToolInvoked)) == 2
        outputs = [
            i for i in adapter.provider.requests[1].history if isinstance(i, ToolOutputMessage)
        ]
        assert [(o.call_id, o.content) for o in outputs] == [
            ("dup", "found a\n\n(Another call in this turn reused the id 'dup'; it was not run.)")
        ]


class TestDisclosureByDefault:
    def test_a_structured_prompt_with_summaries_gets_its_answer(self) -> None:
        """open_sections is handled by the default policy: the caller gets the output."""
        bus = InProcessEventBus()
        session = Session(bus=bus)
        adapter = OfflineAdapter(
            [
                ScriptedTurn(
                    calls=(
                        ScriptedCall(
                            name="open_sections",
                            arguments={"section_keys": ["runbook"], "reason": "steps"},
                        ),
                    )
                ),
                ScriptedTurn(text='{"finding": "graphs checked"}'),
            ]
        )
        response = adapter.evaluate(prompt(output=True, summarized=True), bus=bus, session=session)
        assert response.output == Report(finding="graphs checked")
        assert response.halt is None
        assert "Step 1: check the graphs." in adapter.provider.requests[1].rendered.text
        renders = session.select(PromptRendered)
        assert [dict(r.visibility)[("runbook",)] for r in renders] == ["summary", "full"]
        (executed,) = session.select(PromptExecuted)
        assert executed.usage == response.usage
        first, second = (request.history for request in adapter.provider.requests)
        assert response.usage.input_tokens > 0
        assert (response.rounds, len(first), len(second)) == (2, 1, 3)

    def test_usage_counts_every_attempt(self) -> None:
        """Tokens of the request that opened sections are part of the response's usage."""
        used = TokenUsage(input_tokens=10, output_tokens=1)
        adapter = OfflineAdapter(
            [
                ScriptedTurn(
                    calls=(
                        ScriptedCall(
                            name="open_sections",
                            arguments={"section_keys": ["runbook"], "reason": "steps"},
                        ),
                    ),
                    usage=used,
                ),
                ScriptedTurn(text='{"finding": "f"}', usage=used),
            ]
        )
        response = adapter.evaluate(prompt(output=True, summarized=True))
        assert response.usage == used + used

    def test_the_manual_policy_returns_the_halt(self) -> None:
        """Disclosure(policy="manual") hands the halt to the caller, as documented."""
        adapter = OfflineAdapter(
            [
                ScriptedTurn(
                    calls=(
                        ScriptedCall(
                            name="open_sections",
                            arguments={"section_keys": ["runbook"], "reason": "steps"},
                        ),
                    )
                )
            ]
        )
        response = adapter.evaluate(
            prompt(output=True, summarized=True), disclosure=Disclosure(policy="manual")
        )
        assert response.halt is not None
        assert response.output is None

    def test_a_deadline_in_the_future_does_not_get_in_the_way(self) -> None:
        """An aware deadline far ahead changes nothing."""
        later = datetime.now(UTC) + timedelta(hours=1)
        response = OfflineAdapter([ScriptedTurn(text="ok")]).evaluate(prompt(), deadline=later)
        assert response.text == "ok"


def test_missing_params_from_evaluate_name_evaluate() -> None:
    """The fix offered is the call the user made: evaluate(prompt, Params(...))."""
    template = PromptTemplate(
        ns="t", key="needs", sections=[MarkdownSection[Goal](title="T", template="${goal}")]
    )
    with pytest.raises(PromptEvaluationError) as caught:
        OfflineAdapter([ScriptedTurn(text="x")]).evaluate(template)
    assert caught.value.phase == "render"
    assert caught.value.reason == (
        "prompt 'needs' is missing params: section ('t',) needs Goal (required fields: goal); "
        "pass an instance to evaluate() after the prompt, as in adapter.evaluate(prompt, "
        "Params(...)), or set default_params on the section"
    )


class TestUnknownKeywords:
    """A misspelt keyword is refused under the name of the method the user called."""

    def test_evaluate_names_itself(self) -> None:
        """Sync: refused before anything runs, no turn taken."""
        adapter = OfflineAdapter([ScriptedTurn(text="x")])
        with pytest.raises(
            TypeError, match=r"^evaluate\(\) got an unexpected keyword argument 'dedline'$"
        ):
            adapter.evaluate(prompt(), dedline=None)  # type: ignore[call-arg]  # under test
        assert adapter.evaluate(prompt()).text == "x"

    def test_evaluate_async_names_itself(self) -> None:
        """Async: the first unknown keyword in sorted order is named."""
        adapter = OfflineAdapter([ScriptedTurn(text="x")])
        with pytest.raises(
            TypeError, match=r"^evaluate_async\(\) got an unexpected keyword argument 'a'$"
        ):
            asyncio.run(adapter.evaluate_async(prompt(), b=1, a=2))  # type: ignore[call-arg]  # under test


@dataclass(frozen=True)
class Goal:
    goal: str
