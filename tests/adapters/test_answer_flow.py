"""How the loop gets a usable final answer: the tools' part, the final turn, empty answers.

On the offline model, whose ``requests`` show exactly what each turn was asked; the
same flow over the three SDK wires is in ``test_local_servers.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from weakincentives.adapters import (
    Adapter,
    FeedbackMessage,
    LoopSettings,
    OfflineModel,
    ScriptedCall,
    ScriptedTurn,
)
from weakincentives.adapters._answer import TOOLS_FIRST
from weakincentives.errors import ConfigValidationError, EmptyAnswerError, PromptEvaluationError
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from weakincentives.runtime import InProcessEventBus, OutputRejected, Session


@dataclass(frozen=True, slots=True)
class Query:
    topic: str


@dataclass(frozen=True, slots=True)
class Answer:
    value: int


def lookup(params: Query, *, context: ToolContext) -> ToolResult[Answer]:
    """Look a topic up."""
    return ToolResult(message="found", value=Answer(value=7))


LOOKUP = Tool.wrap(lookup)


def prompt(*, tools: bool = True) -> Prompt[Answer]:
    section = MarkdownSection(
        title="Task", key="task", template="Find the value.", tools=[LOOKUP] if tools else []
    )
    return Prompt[Answer](ns="flow", key="answer", sections=[section])


def text_prompt() -> Prompt[None]:
    """A prompt whose answer is text, without tools."""
    return Prompt(ns="flow", key="text", sections=[MarkdownSection(title="T", template="Hi")])


def evaluate(
    turns: list[ScriptedTurn], settings: LoopSettings | None = None
) -> Adapter[OfflineModel]:
    """An adapter over ``turns`` (evaluate it to run them)."""
    return Adapter(OfflineModel(turns), settings=settings)


CALL = ScriptedTurn(calls=(ScriptedCall(name="lookup", arguments={"topic": "x"}),))


class TestTheFinalTurn:
    def test_prose_after_the_tools_is_followed_by_the_final_turn(self) -> None:
        """The hand-over costs no retry: with output_retries=0 the final answer still counts."""
        adapter = evaluate(
            [CALL, ScriptedTurn(text="Found 7."), ScriptedTurn(text='{"value": 7}')],
            LoopSettings(output_retries=0),
        )
        bus = InProcessEventBus()
        session = Session(bus=bus)
        response = adapter.evaluate(prompt(), bus=bus, session=session)
        assert response.output == Answer(value=7)
        requests = adapter.provider.requests
        assert [(r.constrain_output, r.allow_tool_calls) for r in requests] == [
            (False, True),
            (False, True),
            (True, False),
        ]
        asked = requests[2].history[-1]
        assert isinstance(asked, FeedbackMessage)
        assert asked.text.startswith("You are done with the tools. Now give your final answer")
        assert '"value"' in asked.text
        assert session.select(OutputRejected) == ()
        assert requests[0].history[0].text.endswith(TOOLS_FIRST)  # type: ignore[union-attr]

    def test_an_answer_that_fits_at_once_needs_no_final_turn(self) -> None:
        """A model that answers in the right shape after its tools is taken at its word."""
        adapter = evaluate([CALL, ScriptedTurn(text='{"value": 7}')])
        assert adapter.evaluate(prompt()).output == Answer(value=7)
        assert len(adapter.provider.requests) == 2

    def test_retries_after_the_final_turn_stay_tools_free(self) -> None:
        """A final answer that does not fit goes back once, still with the tools off."""
        turns = [
            CALL,
            ScriptedTurn(text="Done."),
            ScriptedTurn(text='{"value": "seven"}'),
            ScriptedTurn(text='{"value": 7}'),
        ]
        adapter = evaluate(turns)
        assert adapter.evaluate(prompt()).output == Answer(value=7)
        last = adapter.provider.requests[3]
        assert (last.constrain_output, last.allow_tool_calls) == (True, False)
        feedback = last.history[-1]
        assert isinstance(feedback, FeedbackMessage)
        assert feedback.text.startswith("Your answer could not be used: ")

    def test_a_refusal_is_not_handed_over_to_a_final_turn(self) -> None:
        """The model declined: that is the outcome, with phase parse."""
        adapter = evaluate([ScriptedTurn(refusal="I cannot help with that.")])
        with pytest.raises(PromptEvaluationError, match="the model refused to answer") as caught:
            adapter.evaluate(prompt())
        assert caught.value.phase == "parse"
        assert len(adapter.provider.requests) == 1

    def test_without_tools_the_schema_is_sent_from_the_first_request(self) -> None:
        """Nothing to keep the model from: the shape is shown and sent at once."""
        adapter = evaluate([ScriptedTurn(text='{"value": 1}')])
        assert adapter.evaluate(prompt(tools=False)).output == Answer(value=1)
        (request,) = adapter.provider.requests
        assert (request.constrain_output, request.allow_tool_calls) == (True, True)
        assert "Reply with one JSON value only" in request.history[0].text  # type: ignore[union-attr]

    @pytest.mark.parametrize(
        ("mode", "sent"), [("always", True), ("never", False)], ids=["always", "never"]
    )
    def test_always_and_never_show_the_shape_up_front_and_ask_no_final_turn(
        self, mode: str, sent: bool
    ) -> None:
        """The prompt carries the schema; a bad answer gets the usual retry, tools on."""
        turns = [CALL, ScriptedTurn(text="Done."), ScriptedTurn(text='{"value": 7}')]
        adapter = evaluate(turns, LoopSettings(answer_schema=mode))  # type: ignore[arg-type]
        assert adapter.evaluate(prompt()).output == Answer(value=7)
        requests = adapter.provider.requests
        assert [(r.constrain_output, r.allow_tool_calls) for r in requests] == [(sent, True)] * 3
        assert "Reply with one JSON value only" in requests[0].history[0].text  # type: ignore[union-attr]

    def test_an_unknown_mode_is_refused(self) -> None:
        """A typo fails at construction, naming the field and the choices."""
        with pytest.raises(
            ConfigValidationError, match="'without_tools', 'always' or 'never', got 'later'"
        ) as caught:
            LoopSettings(answer_schema="later")  # type: ignore[arg-type]  # the wrong value is the point
        assert (caught.value.field_name, caught.value.value) == ("answer_schema", "later")


class TestEmptyAnswers:
    def test_an_empty_final_answer_in_the_final_turn_gets_its_own_feedback(self) -> None:
        """Structured: the model is told its reply was empty and what to send."""
        turns = [
            ScriptedTurn(text=""),
            ScriptedTurn(text="   "),
            ScriptedTurn(text='{"value": 2}'),
        ]
        adapter = evaluate(turns)
        assert adapter.evaluate(prompt()).output == Answer(value=2)
        feedback = adapter.provider.requests[2].history[-1]
        assert isinstance(feedback, FeedbackMessage)
        assert feedback.text == (
            "Your reply was empty: it had no text and no tool call. Reply with the JSON value "
            "the response format asks for (this is your last try)."
        )

    def test_with_recovery_an_empty_tool_block_is_an_empty_answer(self) -> None:
        """Text prompt: ``<tools></tools>`` (a small model's call it never made) goes back."""
        turns = [ScriptedTurn(text="<tools></tools>"), ScriptedTurn(text="All good.")]
        adapter = evaluate(turns, LoopSettings(recover_text_tool_calls=True))
        assert adapter.evaluate(text_prompt()).text == "All good."
        feedback = adapter.provider.requests[1].history[-1]
        assert isinstance(feedback, FeedbackMessage)
        assert feedback.text == (
            "Your reply was empty: it had no text and no tool call. Reply with your answer "
            "(this is your last try)."
        )

    def test_without_recovery_an_empty_tool_block_is_text(self) -> None:
        """Read as markup only where text tool calls are; otherwise the block is the answer."""
        adapter = evaluate([ScriptedTurn(text="<tools></tools>")])
        assert adapter.evaluate(text_prompt()).text == "<tools></tools>"
        assert len(adapter.provider.requests) == 1

    def test_empty_answers_past_the_retries_are_an_empty_answer_error(self) -> None:
        """Structured: phase parse, structured=True, and PromptFailed says why."""
        adapter = evaluate([ScriptedTurn(text="")] * 3)
        with pytest.raises(EmptyAnswerError) as caught:
            adapter.evaluate(prompt())
        assert (caught.value.phase, caught.value.structured) == ("parse", True)
        assert caught.value.reason.startswith("the model's final answer was empty")
        assert len(adapter.provider.requests) == 3

    def test_with_retries_off_an_empty_text_answer_fails_at_once(self) -> None:
        """Text prompt, output_retries=0: no second chance."""
        adapter = evaluate([ScriptedTurn(text="\n")], LoopSettings(output_retries=0))
        with pytest.raises(EmptyAnswerError, match="final answer was empty"):
            adapter.evaluate(text_prompt())
        assert len(adapter.provider.requests) == 1
