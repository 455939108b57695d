"""The smaller public surface: Prompt construction, output types, params resolution, context."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from tests.conftest import FakeClock
from weakincentives.errors import PromptValidationError
from weakincentives.prompt import (
    EmptyParams,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    StructuredOutput,
    Tool,
    ToolContext,
    ToolInvocationContext,
    ToolResult,
    build_tool_context,
)
from weakincentives.prompt._visibility import dotted, parse_dotted
from weakincentives.runtime import InProcessEventBus, Session


@dataclass(frozen=True)
class Answer:
    text: str


@dataclass(frozen=True)
class Topic:
    name: str


def section() -> MarkdownSection:
    return MarkdownSection(title="A", template="a")


class TestPromptConstruction:
    def test_inline_form_needs_ns_key_and_sections(self) -> None:
        """Without a template, the inline arguments are all required."""
        with pytest.raises(PromptValidationError, match="or ns=, key= and sections="):
            Prompt(ns="t", key="k")  # type: ignore[call-overload]  # the incomplete call is the point

    def test_template_must_be_a_template(self) -> None:
        """A wrong positional argument is named."""
        with pytest.raises(PromptValidationError, match="needs a PromptTemplate, got str"):
            Prompt("t")  # type: ignore[call-overload]  # the wrong argument is the point

    def test_template_and_inline_arguments_are_exclusive(self) -> None:
        """Mixing both forms is ambiguous."""
        template = PromptTemplate(ns="t", key="k", sections=[section()])
        with pytest.raises(PromptValidationError, match="not both"):
            Prompt(template, ns="x")  # type: ignore[call-overload]  # mixing both forms is the point

    def test_repr_names_the_prompt(self) -> None:
        """Reprs show identity, not contents."""
        prompt = Prompt(ns="t", key="k", sections=[section()]).bind()
        assert repr(prompt) == "Prompt(ns='t', key='k', params=0)"
        assert repr(prompt.template) == "PromptTemplate(ns='t', key='k', name='k')"
        assert repr(section()) == "MarkdownSection(key='a', title='A')"


class TestOutputTypes:
    def test_text_prompts_have_no_structured_output(self) -> None:
        """Without a subscript a prompt answers in text."""
        prompt = Prompt(ns="t", key="k", sections=[section()])
        assert (prompt.output_type, prompt.structured_output) == (None, None)

    def test_prompt_subscript_declares_a_dataclass_output(self) -> None:
        """`Prompt[Answer]` asks for one Answer object."""
        prompt = Prompt[Answer](ns="t", key="k", sections=[section()])
        assert prompt.output_type is Answer
        assert prompt.structured_output == StructuredOutput(
            dataclass_type=Answer, container="object"
        )
        assert prompt.render().structured_output == prompt.structured_output

    def test_template_subscript_carries_over_to_prompts(self) -> None:
        """A prompt built from `PromptTemplate[list[Answer]]` inherits its output."""
        template = PromptTemplate[list[Answer]](ns="t", key="k", sections=[section()])
        prompt = Prompt(template)
        assert prompt.output_type == list[Answer]
        assert template.structured_output == StructuredOutput(
            dataclass_type=Answer, container="array"
        )
        assert prompt.bind().structured_output == template.structured_output

    def test_str_output_means_text(self) -> None:
        """`Prompt[str]` is a text prompt."""
        assert Prompt[str](ns="t", key="k", sections=[section()]).structured_output is None

    @pytest.mark.parametrize("output", [int, list[int], dict[str, Answer]])
    def test_unsupported_output_types_are_rejected_at_construction(self, output: object) -> None:
        """Only dataclasses, lists of them, str and None are outputs; others fail when built."""
        with pytest.raises(
            PromptValidationError, match="must be a dataclass, a list of dataclasses"
        ):
            Prompt[output](ns="t", key="k", sections=[section()])  # type: ignore[valid-type]  # unsupported output types are the point
        with pytest.raises(PromptValidationError, match=r"prompt t/k: output type"):
            PromptTemplate[output](ns="t", key="k", sections=[section()])  # type: ignore[valid-type]  # same, on the template

    def test_prompts_are_immutable(self) -> None:
        """A prompt cannot be changed after construction; bind returns a new one."""
        prompt = Prompt(ns="t", key="k", sections=[section()])
        with pytest.raises(AttributeError, match="Prompt is immutable"):
            prompt._params = ("x",)


class WithBase(MarkdownSection[Topic]):
    """A subclass fixes its params type in its base."""

    def __init__(self) -> None:
        super().__init__(title="Topic", template="About $name.")


class TestParamsTypes:
    def test_subclass_bases_declare_the_params_type(self) -> None:
        """`class X(MarkdownSection[Topic])` renders from Topic."""
        template = PromptTemplate(ns="t", key="k", sections=[WithBase()])
        assert template.params_types == (Topic,)
        assert template.render(Topic(name="tea")).text == "## 1 Topic\nAbout tea."

    def test_default_params_declare_the_params_type(self) -> None:
        """Without a subscript the default params' type is used."""
        built = MarkdownSection(title="T", template="$name", default_params=Topic(name="d"))
        assert built.params_type is Topic
        assert built.default_params == Topic(name="d")

    def test_sections_without_params_take_empty_params(self) -> None:
        """A plain section renders from EmptyParams."""
        assert section().params_type is EmptyParams

    def test_section_exposes_its_template_and_options(self) -> None:
        """Compiled text and flags are readable."""
        built = MarkdownSection(title="T", template="  body  ", accepts_overrides=False)
        assert built.template.source == "body"
        assert built.accepts_overrides is False
        assert built.summary is None


class TestDottedKeys:
    @pytest.mark.parametrize(
        ("key", "path"),
        [
            ("context", ("context",)),
            ("context.examples", ("context", "examples")),
            ("a..b", ()),
            ("", ()),
        ],
    )
    def test_dotted_keys_split_into_paths(self, key: str, path: tuple[str, ...]) -> None:
        """Dot notation addresses nested sections; blank segments make no path."""
        assert parse_dotted(key) == path

    def test_paths_join_with_dots(self) -> None:
        """Paths render in the model's notation."""
        assert dotted(("a", "b")) == "a.b"


def handler(params: Topic, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message="ok")


class TestBuildToolContext:
    def test_invocation_is_generated_from_clock_and_ids(self, clock: FakeClock) -> None:
        """Without an invocation record, one is created from the injected sources."""
        bus = InProcessEventBus()
        tool = Tool(name="t", description="d", handler=handler)
        prompt = Prompt(ns="t", key="k", sections=[section()])
        context = build_tool_context(
            prompt=prompt,
            tool=tool,
            session=Session(bus=bus),
            event_bus=bus,
            clock=clock,
            new_id=lambda: "call-9",
            extras={"trace_id": "abc"},
        )
        assert context.invocation == ToolInvocationContext(
            invocation_id="call-9", timestamp=datetime(2026, 1, 1, tzinfo=UTC)
        )
        assert dict(context.extras) == {"trace_id": "abc"}

    def test_the_context_reads_every_fact_from_its_scope(self) -> None:
        """Each seed field of the context is the scope's fact of the same name."""
        bus = InProcessEventBus()
        prompt = Prompt(ns="t", key="k", sections=[section()])
        context = build_tool_context(
            prompt=prompt,
            tool=Tool(name="t", description="d", handler=handler),
            session=Session(bus=bus),
            event_bus=bus,
            rendered_prompt=prompt.render(),
            request={"model": "m"},
        )
        scope = context.scope
        names = ("prompt", "rendered_prompt", "adapter", "session", "event_bus", "request")
        for name in (*names, "response_accumulator", "extras"):
            assert getattr(context, name) is getattr(scope, name), name
        assert context.request == {"model": "m"}
        assert (scope.adapter_name, scope.evaluation_id, scope.executor) == ("direct", "", None)

    def test_default_invocation_uses_uuid_and_now(self) -> None:
        """Outside tests, ids are random and timestamps timezone-aware."""
        bus = InProcessEventBus()
        context = build_tool_context(
            prompt=Prompt(ns="t", key="k", sections=[section()]),
            tool=Tool(name="t", description="d", handler=handler),
            session=Session(bus=bus),
            event_bus=bus,
        )
        assert context.invocation.invocation_id.startswith("call_")
        assert context.invocation.timestamp.tzinfo is not None

    def test_extras_keys_must_be_snake_case(self) -> None:
        """Extension keys stay portable."""
        bus = InProcessEventBus()
        with pytest.raises(PromptValidationError, match="snake_case ASCII, got 'Bad-Key'"):
            build_tool_context(
                prompt=Prompt(ns="t", key="k", sections=[section()]),
                tool=Tool(name="t", description="d", handler=handler),
                session=Session(bus=bus),
                event_bus=bus,
                extras={"Bad-Key": 1},
            )
