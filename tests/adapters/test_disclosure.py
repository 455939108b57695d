"""Progressive disclosure end to end on the offline adapter: halt, re-render, answer."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from weakincentives.adapters import (
    Adapter,
    AssistantMessage,
    Disclosure,
    LoopSettings,
    OfflineAdapter,
    OfflineModel,
    PromptMessage,
    ScriptedCall,
    ScriptedTurn,
    ToolOutputMessage,
    evaluate_with_disclosure,
)
from weakincentives.adapters._disclosure import merge_overrides
from weakincentives.errors import ConfigValidationError, PromptEvaluationError
from weakincentives.prompt import (
    MarkdownSection,
    OpenSectionsResult,
    PromptTemplate,
    SectionPath,
    SectionVisibility,
    Tool,
    ToolContext,
    ToolResult,
)
from weakincentives.prompt._open_sections import OpenSectionsMode
from weakincentives.runtime import InProcessEventBus, Session, ToolInvoked


@dataclass
class TaskParams:
    objective: str


@dataclass
class ContextParams:
    project_name: str


@dataclass(frozen=True)
class Done:
    ok: bool


def finish(params: Done, *, context: ToolContext) -> ToolResult[Done]:
    return ToolResult(message="done", value=params)


def template(
    open_sections: OpenSectionsMode = "halt", *, extra_tool: bool = False
) -> PromptTemplate[None]:
    tools = [Tool(name="finish", description="Finish.", handler=finish, terminal=True)]
    return PromptTemplate(
        ns="agents/assistant",
        key="task-executor",
        name="task_executor",
        open_sections=open_sections,
        sections=[
            MarkdownSection[TaskParams](
                title="Task",
                template="Complete the following: ${objective}",
                key="task",
                tools=tools if extra_tool else (),
            ),
            MarkdownSection[ContextParams](
                title="Project Context",
                template="""
                Detailed documentation for ${project_name}:
                - Architecture overview
                """,
                summary="Documentation for ${project_name} is available.",
                key="context",
                visibility=SectionVisibility.SUMMARY,
            ),
            MarkdownSection(
                title="Reference",
                key="reference",
                template="API signatures.",
                summary="APIs exist.",
                visibility=SectionVisibility.SUMMARY,
            ),
        ],
    )


PARAMS = (
    TaskParams(objective="Refactor the authentication module"),
    ContextParams(project_name="WeakIncentives"),
)


def open_call(
    *keys: str, reason: str = "Need architecture details for refactoring"
) -> ScriptedCall:
    return ScriptedCall(
        name="open_sections", arguments={"section_keys": list(keys), "reason": reason}
    )


MANUAL = LoopSettings(disclosure=Disclosure(policy="manual"))


class TestHaltingFlow:
    def test_open_sections_halts_and_skips_the_rest_of_the_turn(self) -> None:
        """Under the manual policy the call ends the evaluation with the request on `halt`."""
        adapter = Adapter(
            OfflineModel(
                [
                    ScriptedTurn(
                        calls=(
                            open_call("context"),
                            ScriptedCall(name="finish", arguments={"ok": True}),
                        )
                    )
                ]
            ),
            settings=MANUAL,
        )
        response = adapter.evaluate(template(extra_tool=True), *PARAMS)
        assert response.halt is not None
        assert isinstance(response.halt.value, OpenSectionsResult)
        assert dict(response.halt.value.requested_overrides) == {
            ("context",): SectionVisibility.FULL
        }
        assert [call.name for call in response.skipped_calls] == ["finish"]

    def test_full_flow_reaches_expanded_content(self) -> None:
        """Initial render -> open_sections -> retry with overrides -> full content is seen."""
        adapter = OfflineAdapter(
            [ScriptedTurn(calls=(open_call("context"),)), ScriptedTurn(text="Refactored.")]
        )
        response = adapter.evaluate(template(), *PARAMS, disclosure=Disclosure())
        assert response.text == "Refactored."
        first, second = (request.rendered.text for request in adapter.provider.requests)
        assert "Documentation for WeakIncentives is available." in first
        assert "Detailed documentation for WeakIncentives:\n- Architecture overview" in second
        assert response.rendered is not None
        assert dict(response.rendered.visibility_overrides) == {
            ("context",): SectionVisibility.FULL
        }

    def test_caller_overrides_merge_under_tool_requests(self) -> None:
        """Tool requests win over the caller's overrides; other caller overrides stay."""
        caller: dict[SectionPath, SectionVisibility] = {
            ("context",): SectionVisibility.SUMMARY,
            ("reference",): SectionVisibility.FULL,
        }
        merged = merge_overrides(caller, {("context",): SectionVisibility.FULL})
        assert merged == {
            ("context",): SectionVisibility.FULL,
            ("reference",): SectionVisibility.FULL,
        }
        adapter = OfflineAdapter(
            [ScriptedTurn(calls=(open_call("context"),)), ScriptedTurn(text="ok")]
        )
        adapter.evaluate(template(), *PARAMS, visibility_overrides=caller, disclosure=Disclosure())
        assert dict(adapter.provider.requests[1].rendered.visibility_overrides) == merged
        assert adapter.provider.requests[1].rendered.tools == ()

    def test_conservative_policy_opens_one_section_per_retry(self) -> None:
        """Only the first requested section opens; the model asks again for the next."""
        adapter = OfflineAdapter(
            [
                ScriptedTurn(calls=(open_call("context", "reference"),)),
                ScriptedTurn(calls=(open_call("reference"),)),
                ScriptedTurn(text="ok"),
            ]
        )
        response = adapter.evaluate(
            template(), *PARAMS, disclosure=Disclosure(policy="conservative")
        )
        assert [execution.result.message for execution in response.tool_executions] == [
            "Opened sections: context; the prompt was rendered again with them in full "
            "(re-render 1).",
            "Opened sections: reference; the prompt was rendered again with them in full "
            "(re-render 2).",
        ]
        assert response.tool_executions[0].event.rendered_output == (
            response.tool_executions[0].result.message
        )
        assert [dict(r.rendered.visibility_overrides) for r in adapter.provider.requests] == [
            {},
            {("context",): SectionVisibility.FULL},
            {("context",): SectionVisibility.FULL, ("reference",): SectionVisibility.FULL},
        ]

    def test_batched_policy_remembers_opened_sections_across_evaluations(self) -> None:
        """Sections opened in one evaluation start open in the next one of the session."""
        bus = InProcessEventBus()
        session = Session(bus=bus)
        adapter = OfflineAdapter(
            [
                ScriptedTurn(calls=(open_call("context"),)),
                ScriptedTurn(text="one"),
                ScriptedTurn(text="two"),
            ]
        )
        adapter.evaluate(
            template(), *PARAMS, bus=bus, session=session, disclosure=Disclosure(policy="batched")
        )
        adapter.evaluate(
            template(), *PARAMS, bus=bus, session=session, disclosure=Disclosure(policy="batched")
        )
        assert dict(adapter.provider.requests[2].rendered.visibility_overrides) == {
            ("context",): SectionVisibility.FULL
        }
        (key,) = session.storage.keys()
        assert key.startswith("disclosure_task_executor_")
        assert session.storage.get(key, tuple) == ("context",)

    def test_batched_policy_forgets_sections_the_prompt_no_longer_has(self) -> None:
        """A remembered path that disappeared from the prompt is ignored, not an error."""
        bus = InProcessEventBus()
        session = Session(bus=bus)
        adapter = OfflineAdapter(
            [ScriptedTurn(calls=(open_call("reference"),)), ScriptedTurn(text="one")]
        )
        adapter.evaluate(
            template(), *PARAMS, session=session, disclosure=Disclosure(policy="batched")
        )
        trimmed = PromptTemplate(
            ns="agents/assistant",
            key="task-executor",
            sections=[MarkdownSection[TaskParams](title="Task", key="task", template="$objective")],
        )
        second = OfflineAdapter([ScriptedTurn(text="two")])
        response = second.evaluate(
            trimmed, PARAMS[0], session=session, disclosure=Disclosure(policy="batched")
        )
        assert response.text == "two"
        assert dict(second.provider.requests[0].rendered.visibility_overrides) == {}

    def test_retry_limit_is_a_tool_phase_error(self) -> None:
        """A model that keeps asking is stopped after max_retries re-renders."""
        adapter = OfflineAdapter(
            [
                ScriptedTurn(calls=(open_call("context"),)),
                ScriptedTurn(calls=(open_call("reference"),)),
            ]
        )
        with pytest.raises(PromptEvaluationError) as caught:
            adapter.evaluate(template(), *PARAMS, disclosure=Disclosure(max_retries=1))
        assert caught.value.phase == "tool"
        assert "still asked to open sections (reference) after 1 re-renders" in caught.value.message

    def test_other_halts_are_returned_unchanged(self) -> None:
        """A user terminal tool's halt is the caller's business, not a disclosure retry."""
        adapter = OfflineAdapter(
            [ScriptedTurn(calls=(ScriptedCall(name="finish", arguments={"ok": True}),))]
        )
        response = adapter.evaluate(template(extra_tool=True), *PARAMS, disclosure=Disclosure())
        assert response.halt is not None
        assert response.halt.tool_name == "finish"
        assert len(adapter.provider.requests) == 1

    def test_unknown_policy_is_rejected(self) -> None:
        """Policies are eager, conservative or batched."""
        with pytest.raises(ConfigValidationError, match="got 'lazy'"):
            Disclosure(policy="lazy")  # type: ignore[arg-type]  # an unknown policy is the point

    def test_invalid_request_goes_back_to_the_model(self) -> None:
        """A bad key is a failed tool result listing valid keys; the model can retry."""
        adapter = OfflineAdapter(
            [
                ScriptedTurn(calls=(open_call("history"),)),
                ScriptedTurn(calls=(open_call("context"),)),
                ScriptedTurn(text="ok"),
            ]
        )
        response = adapter.evaluate(template(), *PARAMS, disclosure=Disclosure())
        assert response.text == "ok"
        outputs = [
            item
            for item in adapter.provider.requests[1].history
            if isinstance(item, ToolOutputMessage)
        ]
        assert outputs[0].content.endswith("Summarized sections you can open: context, reference.")


class TestTelemetry:
    def test_tool_invoked_captures_the_expansion_request(self) -> None:
        """ToolInvoked for open_sections carries keys, reason and visibility state."""
        bus = InProcessEventBus()
        session = Session(bus=bus)
        adapter = Adapter(
            OfflineModel([ScriptedTurn(calls=(open_call("context", reason="why"),))]),
            settings=MANUAL,
        )
        adapter.evaluate(template(), *PARAMS, bus=bus, session=session)
        (event,) = session.select(ToolInvoked)
        assert dict(event.telemetry) == {
            "requested_sections": ["context"],
            "reason": "why",
            "current_visibility_state": {
                "task": "full",
                "context": "summary",
                "reference": "summary",
            },
        }
        assert event.rendered_output == (
            "Sections requested for expansion: context. They open when the prompt is "
            "rendered again."
        )


class TestInlineFlow:
    def test_inline_variant_delivers_content_in_the_same_evaluation(self) -> None:
        """No halt, no re-render: the content arrives as the tool result."""
        adapter = OfflineAdapter(
            [ScriptedTurn(calls=(open_call("context"),)), ScriptedTurn(text="Refactored.")]
        )
        response = adapter.evaluate(template("inline"), *PARAMS)
        assert response.halt is None
        assert response.text == "Refactored."
        (output,) = [
            i for i in adapter.provider.requests[1].history if isinstance(i, ToolOutputMessage)
        ]
        assert output.content == (
            "Opening 1 section: context. Its full content follows.\n\n"
            "## 2 Project Context\nDetailed documentation for WeakIncentives:\n"
            "- Architecture overview"
        )
        assert adapter.provider.requests[1].rendered is adapter.provider.requests[0].rendered


class TestContinuation:
    def test_retries_continue_the_conversation(self) -> None:
        """After the halt, the model sees the new render, then everything it already did."""
        adapter = OfflineAdapter(
            [
                ScriptedTurn(
                    calls=(
                        ScriptedCall(name="lookup_ticket"),
                        open_call("context"),
                        ScriptedCall(name="lookup_ticket"),
                    )
                ),
                ScriptedTurn(text="Done."),
            ]
        )
        response = adapter.evaluate(template(extra_tool=False), *PARAMS, disclosure=Disclosure())
        second = adapter.provider.requests[1].history
        assert isinstance(second[0], PromptMessage)
        assert "Detailed documentation for WeakIncentives" in second[0].text
        assert isinstance(second[1], AssistantMessage)
        outputs = [item for item in second if isinstance(item, ToolOutputMessage)]
        assert [(o.name, o.success) for o in outputs] == [
            ("lookup_ticket", False),
            ("open_sections", True),
            ("lookup_ticket", False),
        ]
        assert outputs[0].content.startswith("Unknown tool 'lookup_ticket'")
        assert outputs[1].content == (
            "Opened sections: context. The prompt above now shows them in full; continue "
            "with the task."
        )
        assert outputs[2].content.startswith("Not run: the turn ended before this call")
        last = response.conversation[-1]
        assert isinstance(last, AssistantMessage)
        assert last.turn.text == "Done."

    def test_fresh_retries_when_asked(self) -> None:
        """continue_conversation=False starts each retry from the new render alone."""
        adapter = OfflineAdapter(
            [ScriptedTurn(calls=(open_call("context"),)), ScriptedTurn(text="ok")]
        )
        adapter.evaluate(template(), *PARAMS, disclosure=Disclosure(continue_conversation=False))
        assert len(adapter.provider.requests[1].history) == 1


class TestDeprecatedHelper:
    def test_evaluate_with_disclosure_warns_and_still_evaluates(self) -> None:
        """The old helper names its replacement in a DeprecationWarning and still works."""
        adapter = OfflineAdapter(
            [
                ScriptedTurn(calls=(open_call("context", "reference"),)),
                ScriptedTurn(calls=(open_call("reference"),)),
                ScriptedTurn(text="ok"),
            ]
        )
        with pytest.warns(
            DeprecationWarning,
            match=r"evaluate_with_disclosure is deprecated; call adapter\.evaluate\(prompt, "
            r"disclosure=Disclosure\(",
        ):
            response = evaluate_with_disclosure(
                adapter, template(), *PARAMS, policy="conservative", max_retries=2
            )
        assert response.text == "ok"
        assert [dict(r.rendered.visibility_overrides) for r in adapter.provider.requests] == [
            {},
            {("context",): SectionVisibility.FULL},
            {("context",): SectionVisibility.FULL, ("reference",): SectionVisibility.FULL},
        ]
