"""The built-in open_sections tool: registration, schema, validation, results."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from weakincentives.errors import PromptRenderError, PromptValidationError
from weakincentives.prompt import (
    ExecutionScope,
    MarkdownSection,
    OpenedSections,
    OpenSectionsResult,
    Prompt,
    PromptTemplate,
    Section,
    SectionVisibility,
    ToolResult,
)
from weakincentives.prompt._open_sections import OPEN_SECTIONS, OPEN_SECTIONS_INLINE
from weakincentives.runtime import (
    InProcessEventBus,
    Session,
    ToolCall,
    execute_tool_call,
)


@dataclass(frozen=True)
class Project:
    name: str


def sections() -> list[Section[Any]]:
    return [
        MarkdownSection(title="Task", key="task", template="Refactor."),
        MarkdownSection[Project](
            title="Context",
            key="context",
            template="Docs for $name.",
            summary="Docs for $name exist.",
            visibility=SectionVisibility.SUMMARY,
            children=[
                MarkdownSection(
                    title="Examples",
                    key="examples",
                    template="Example one.",
                    summary="Examples exist.",
                    visibility=SectionVisibility.SUMMARY,
                ),
            ],
        ),
        MarkdownSection(title="Rules", key="rules", template="Be careful."),
    ]


def template(open_sections: str = "halt") -> PromptTemplate[None]:
    return PromptTemplate(
        ns="t",
        key="disclosure",
        sections=sections(),
        open_sections=open_sections,  # type: ignore[arg-type]  # tests also pass an invalid mode
    )


PARAMS = Project(name="wink")


class TestRegistration:
    def test_tool_is_injected_after_user_tools_when_a_section_is_summarized(self) -> None:
        """A summarized section makes the prompt offer open_sections, last."""
        rendered = template().render(PARAMS)
        assert [tool.name for tool in rendered.tools] == ["open_sections"]
        assert rendered.tools[-1] is OPEN_SECTIONS
        assert OPEN_SECTIONS.accepts_overrides is False
        assert OPEN_SECTIONS.terminal

    def test_tool_is_absent_when_every_section_renders_full(self) -> None:
        """Opening every summarized section removes the tool from the render."""
        rendered = template().render(
            PARAMS,
            visibility_overrides={
                ("context",): SectionVisibility.FULL,
                ("context", "examples"): SectionVisibility.FULL,
            },
        )
        assert rendered.tools == ()
        assert "open_sections" not in rendered.tool_param_descriptions

    def test_tool_is_absent_from_prompts_without_summaries(self) -> None:
        """All-FULL prompts never expose the tool."""
        prompt = PromptTemplate(
            ns="t", key="k", sections=[MarkdownSection(title="A", template="a")]
        )
        assert prompt.render().tools == ()

    def test_nested_summary_still_offers_the_tool(self) -> None:
        """Opening the parent leaves the nested summary, so the tool stays."""
        rendered = template().render(
            PARAMS, visibility_overrides={("context",): SectionVisibility.FULL}
        )
        assert rendered.summarized_paths == (("context", "examples"),)
        assert [tool.name for tool in rendered.tools] == ["open_sections"]

    def test_schema_carries_the_seed_descriptions(self) -> None:
        """The model sees what the keys and the reason are for, and the limits."""
        schema = OPEN_SECTIONS.spec.parameters_schema
        properties = schema["properties"]
        assert isinstance(properties, dict)
        keys, reason = properties["section_keys"], properties["reason"]
        assert isinstance(keys, dict)
        assert isinstance(reason, dict)
        assert str(keys["description"]).startswith("Section keys to open.")
        assert keys["minItems"] == 1
        assert str(reason["description"]).startswith("Brief explanation")
        assert str(reason["description"]).endswith("At most 256 characters.")
        assert OPEN_SECTIONS.spec.strict
        assert schema["required"] == ["section_keys", "reason"]
        descriptions = template().render(PARAMS).tool_param_descriptions["open_sections"]
        assert set(descriptions) == {"section_keys", "reason"}

    def test_inline_mode_offers_the_non_halting_tool(self) -> None:
        """`open_sections="inline"` swaps in the variant that returns content."""
        rendered = template("inline").render(PARAMS)
        assert rendered.tools == (OPEN_SECTIONS_INLINE,)
        assert not OPEN_SECTIONS_INLINE.terminal

    def test_unknown_open_sections_mode_is_rejected(self) -> None:
        """Only halt and inline exist."""
        with pytest.raises(PromptValidationError, match="open_sections must be 'halt' or 'inline'"):
            template("lazy")


def call(
    prompt: Prompt[None],
    keys: list[str],
    reason: str = "need it",
    visibility: dict[tuple[str, ...], SectionVisibility] | None = None,
) -> ToolResult[Any]:
    bus = InProcessEventBus()
    rendered = prompt.render(visibility_overrides=visibility)
    scope = ExecutionScope(
        prompt=prompt, session=Session(bus=bus), event_bus=bus, rendered_prompt=rendered
    )
    tool_call = ToolCall(
        call_id="c1",
        name="open_sections",
        arguments=json.dumps({"section_keys": keys, "reason": reason}),
    )
    return asyncio.run(execute_tool_call(tool_call, scope)).result


class TestHandler:
    def prompt(self, disclosure: str = "halt") -> Prompt[None]:
        return Prompt(template(disclosure)).bind(PARAMS)

    def test_valid_keys_become_full_overrides(self) -> None:
        """Dot-notation keys turn into paths mapped to FULL, with a summary message."""
        result = call(self.prompt(), ["context"], reason="architecture details")
        assert result.success
        value = result.value
        assert isinstance(value, OpenSectionsResult)
        assert dict(value.requested_overrides) == {("context",): SectionVisibility.FULL}
        assert value.reason == "architecture details"
        assert value.render() == (
            "Sections requested for expansion: context. They open when the prompt is "
            "rendered again."
        )
        assert result.message == (
            "Opening 1 section: context. The prompt will be re-rendered with it open."
        )

    def test_nested_keys_use_dot_notation(self) -> None:
        """A summarized child is opened by its dotted key."""
        result = call(
            self.prompt(),
            ["context.examples"],
            visibility={("context",): SectionVisibility.FULL},
        )
        assert isinstance(result.value, OpenSectionsResult)
        assert dict(result.value.requested_overrides) == {
            ("context", "examples"): SectionVisibility.FULL
        }

    def test_unknown_key_lists_the_valid_keys(self) -> None:
        """An unknown key is refused with the keys that can be opened."""
        result = call(self.prompt(), ["history"])
        assert result.success is False
        assert result.message == (
            "Tool 'open_sections' rejected the call: cannot open: 'history' is not a section "
            "of this prompt. Summarized sections you can open: context."
        )

    def test_already_full_key_is_refused(self) -> None:
        """Opening a section that is already FULL is an error, listing valid keys."""
        result = call(self.prompt(), ["task"])
        assert "cannot open: 'task' is already shown in full" in result.message

    def test_hidden_child_opens_with_its_enclosing_sections(self) -> None:
        """A key listed among a summary's subsections opens the parent down to it."""
        result = call(self.prompt(), ["context.examples"])
        assert isinstance(result.value, OpenSectionsResult)
        assert list(result.value.requested_overrides) == [("context",), ("context", "examples")]
        assert result.message == (
            "Opening 2 sections: context, context.examples. "
            "The prompt will be re-rendered with them open."
        )

    def test_disabled_sections_cannot_be_opened(self) -> None:
        """A section that does not render at all is refused."""
        prompt = Prompt(
            ns="t",
            key="k",
            sections=[
                MarkdownSection(
                    title="On", template="on", summary="s", visibility=SectionVisibility.SUMMARY
                ),
                MarkdownSection(title="Off", template="off", enabled=False),
            ],
        )
        result = call(prompt, ["off"])
        assert "'off' is not shown in this render (it is disabled)" in result.message

    @pytest.mark.parametrize(
        ("keys", "reason", "fragment"),
        [
            ([], "r", "$.section_keys"),
            (["context"], "x" * 257, "reason must be at most 256 characters, got 257"),
        ],
    )
    def test_schema_limits_are_enforced(self, keys: list[str], reason: str, fragment: str) -> None:
        """At least one key, and a reason of at most 256 characters."""
        result = call(self.prompt(), keys, reason=reason)
        assert result.success is False
        assert fragment in result.message

    def test_duplicate_keys_are_opened_once(self) -> None:
        """Repeating a key does not repeat the override."""
        result = call(self.prompt(), ["context", "context"])
        assert isinstance(result.value, OpenSectionsResult)
        assert list(result.value.requested_overrides) == [("context",)]

    def test_ten_thousand_unknown_keys_give_a_short_refusal(self) -> None:
        """The issue's example: the refusal names five keys and counts the rest."""
        keys = [f"missing{index}" for index in range(10_000)]
        result = call(self.prompt(), keys)
        assert result.message == (
            "Tool 'open_sections' rejected the call: cannot open: 'missing0' is not a section "
            "of this prompt; 'missing1' is not a section of this prompt; 'missing2' is not a "
            "section of this prompt; 'missing3' is not a section of this prompt; 'missing4' is "
            "not a section of this prompt; and 9,995 more refused keys. Summarized sections "
            "you can open: context."
        )

    def test_a_long_key_is_quoted_cut(self) -> None:
        """A megabyte key appears as its first characters; a repeated key once."""
        result = call(self.prompt(), ["k" * 1_000_000] * 3)
        assert result.message == (
            "Tool 'open_sections' rejected the call: cannot open: "
            f"'{'k' * 37}...' is not a section of this prompt. "
            "Summarized sections you can open: context."
        )

    def test_many_summarized_sections_are_listed_up_to_twenty(self) -> None:
        """The keys the model could open are listed, twenty at most, then counted."""
        prompt = Prompt(
            ns="t",
            key="many",
            sections=[
                MarkdownSection(
                    title=f"S{index}",
                    key=f"s{index}",
                    template="body",
                    summary="sum",
                    visibility=SectionVisibility.SUMMARY,
                )
                for index in range(30)
            ],
        )
        result = call(prompt, ["nope"])
        listed = ", ".join(f"s{index}" for index in range(20))
        assert result.message.endswith(f"Summarized sections you can open: {listed} and 10 more.")

    @given(keys=st.lists(st.text(max_size=300), min_size=1, max_size=200))
    @settings(max_examples=50)
    def test_any_keys_give_a_bounded_message(self, keys: list[str]) -> None:
        """Whatever keys the model sends, the message it reads stays short and encodable."""
        result = call(self.prompt(), keys)
        assert len(result.model_content()) < 1_500
        result.model_content().encode("utf-8")

    def test_inline_variant_returns_the_full_markdown(self) -> None:
        """The inline tool answers with the sections' content, numbered as in the prompt."""
        result = call(self.prompt("inline"), ["context"])
        value = result.value
        assert isinstance(value, OpenedSections)
        assert value.render() == (
            "## 2 Context\nDocs for wink.\n\n### 2.1 Examples\nExamples exist.\n\n---\n"
            "[This section is summarized. To view full content, call `open_sections` with key "
            '"context.examples".]'
        )
        assert result.message == "Opening 1 section: context. Its full content follows."

    def test_inline_variant_opens_nested_sections_through_their_parent(self) -> None:
        """Asking for a hidden child returns the parent's content with the child open."""
        result = call(self.prompt("inline"), ["context.examples"])
        assert isinstance(result.value, OpenedSections)
        assert result.value.render() == (
            "## 2 Context\nDocs for wink.\n\n### 2.1 Examples\nExample one."
        )

    def test_telemetry_describes_the_request(self) -> None:
        """Results add the requested keys, the reason and the visibility state to events."""
        result = call(self.prompt(), ["context"], reason="why")
        assert isinstance(result.value, OpenSectionsResult)
        assert result.value.telemetry() == {
            "requested_sections": ["context"],
            "reason": "why",
            "current_visibility_state": {"task": "full", "context": "summary", "rules": "full"},
        }


class TestRenderSections:
    def test_render_sections_opens_and_numbers_like_the_full_prompt(self) -> None:
        """Subtrees render as the full prompt would show them once opened."""
        texts = Prompt(template()).bind(PARAMS).render_sections([("context",), ("rules",)])
        assert texts[("rules",)] == "## 3 Rules\nBe careful."
        assert texts[("context",)].startswith("## 2 Context\nDocs for wink.")

    def test_unknown_paths_are_errors(self) -> None:
        """Only existing paths can be rendered."""
        with pytest.raises(PromptRenderError, match=r"no section at \('nope',\)"):
            template().render_sections([("nope",)], PARAMS)
