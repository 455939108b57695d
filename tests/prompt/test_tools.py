"""Tools: construction checks, derived specs, results, the decorator and the registry."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import pytest

from weakincentives.errors import PromptValidationError, ToolResultError
from weakincentives.prompt import (
    MarkdownSection,
    PromptTemplate,
    SectionVisibility,
    Tool,
    ToolContext,
    ToolResult,
    tool,
)


@dataclass(frozen=True)
class SearchParams:
    query: str = field(metadata={"description": "What to look for"})
    limit: int = 5


@dataclass(frozen=True)
class Hit:
    title: str
    score: float | None = None


def search(params: SearchParams, *, context: ToolContext) -> ToolResult[Hit]:
    """Search the notes for a query.

    Longer explanation that the model never sees.
    """
    return ToolResult(message="ok", value=Hit(title=params.query))


class TestConstruction:
    def test_types_come_from_the_handler_annotations(self) -> None:
        """Params and result types are read from the handler's signature."""
        built = Tool(name="search", description="Search notes.", handler=search)
        assert built.params_type is SearchParams
        assert built.spec.result_type is Hit
        assert built.takes_context
        assert not built.terminal
        assert not built.is_async

    def test_spec_carries_the_strict_schema_and_descriptions(self) -> None:
        """The parameter schema is the serde schema, computed once and cached."""
        built = Tool(name="search", description="Search notes.", handler=search)
        assert built.spec.parameters_schema == {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for"},
                "limit": {"type": "integer"},
            },
            "required": ["query", "limit"],
            "additionalProperties": False,
        }
        assert built.spec.strict
        assert dict(built.spec.param_descriptions) == {"query": "What to look for"}
        assert built.spec is built.spec

    def test_strict_tools_have_no_strict_problem(self) -> None:
        """A strict tool carries no downgrade reason."""
        built = Tool(name="search", description="Search notes.", handler=search)
        assert built.spec.strict_problem is None

    def test_dict_params_are_sent_non_strict_with_the_reason(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A `dict` field makes the tool non-strict; the spec says why, a debug log records it."""

        @dataclass(frozen=True)
        class Labels:
            labels: dict[str, str]

        def label(params: Labels, *, context: ToolContext) -> ToolResult[None]:
            raise AssertionError

        with caplog.at_level(logging.DEBUG, logger="weakincentives.prompt"):
            built = Tool(
                name="label", description="Label things.", handler=label, params_type=Labels
            )
        spec = built.spec
        assert not spec.strict
        assert spec.strict_problem == "$.labels allows additional properties"
        assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
            (
                "weakincentives.prompt",
                logging.DEBUG,
                "tool 'label' is sent non-strict (strict: false): "
                "$.labels allows additional properties in "
                "TestConstruction.test_dict_params_are_sent_non_strict_with_the_reason.<locals>.Labels",
            )
        ]

    def test_subscript_declares_types_for_handlerless_tools(self) -> None:
        """`Tool[Params, Result](...)` works without a handler."""
        built = Tool[SearchParams, Hit](name="declared", description="Declared only.")
        assert built.handler is None
        assert built.params_type is SearchParams

    @pytest.mark.parametrize(
        ("name", "message"),
        [
            ("Bad Name", "must match"),
            ("x" * 65, "must match"),
            ("", "must match"),
        ],
    )
    def test_invalid_names_are_rejected(self, name: str, message: str) -> None:
        """Names are 1-64 lowercase letters, digits, '_' or '-'."""
        with pytest.raises(PromptValidationError, match=message) as caught:
            Tool(name=name, description="d", handler=search)
        assert caught.value.tool_name == name

    @pytest.mark.parametrize(
        ("description", "message"),
        [
            ("", "1-200 characters, got 0"),
            ("x" * 201, "got 201"),
            (
                "Résumé tool",
                "^tool 't': description must be ASCII, so that every provider receives it "
                "unchanged; 'é' at index 1 is not: write it in plain ASCII, e.g. 'Resume tool'$",
            ),
            (
                "Go → next",
                "^tool 't': description must be ASCII, so that every provider receives it "
                "unchanged; '→' at index 3 is not: write it in plain ASCII, e.g. 'Go  next'$",
            ),
            ("→", "'→' at index 0 is not: write it in plain ASCII$"),
        ],
    )
    def test_invalid_descriptions_are_rejected(self, description: str, message: str) -> None:
        """Descriptions are 1-200 ASCII characters."""
        with pytest.raises(PromptValidationError, match=message):
            Tool(name="t", description=description, handler=search)

    def test_positional_context_is_rejected(self) -> None:
        """`context` must be keyword-only so params stay the only positional argument."""

        def handler(params: SearchParams, context: ToolContext) -> ToolResult[Hit]:
            raise AssertionError

        with pytest.raises(PromptValidationError, match="'context' must be keyword-only"):
            Tool(name="t", description="d", handler=handler)

    def test_handler_without_params_is_rejected(self) -> None:
        """A handler needs a positional parameter for the params."""

        def handler(*, context: ToolContext) -> ToolResult[Hit]:
            raise AssertionError

        with pytest.raises(PromptValidationError, match="first positional parameter"):
            Tool(name="t", description="d", handler=handler)  # type: ignore[arg-type]  # the bad signature is the point

    def test_extra_required_parameters_are_rejected(self) -> None:
        """The runtime only supplies params and context."""

        def handler(params: SearchParams, other: int, *, context: ToolContext) -> ToolResult[Hit]:
            raise AssertionError

        with pytest.raises(PromptValidationError, match="cannot supply: other"):
            Tool(name="t", description="d", handler=handler)  # type: ignore[arg-type]  # the bad signature is the point

    def test_non_callable_handler_is_rejected(self) -> None:
        """A handler must be callable."""
        with pytest.raises(PromptValidationError, match="handler is not callable"):
            Tool(name="t", description="d", handler=42)  # type: ignore[arg-type]  # a non-callable handler is the point

    def test_every_problem_is_reported_together(self) -> None:
        """Name and description problems come in one error."""
        with pytest.raises(PromptValidationError) as caught:
            Tool(name="BAD", description="", handler=search)
        assert len(caught.value.problems) == 2

    def test_legacy_handler_is_detected(self) -> None:
        """A handler without `context` is accepted as legacy."""

        def legacy(params: SearchParams) -> ToolResult[Hit]:
            return ToolResult(message="legacy")

        with pytest.warns(DeprecationWarning, match=r"define it as handler\(params, \*, context\)"):
            legacy_tool = Tool(name="t", description="d", handler=legacy)  # type: ignore[arg-type,var-annotated]  # legacy handlers are deprecated and untyped on purpose
        assert not legacy_tool.takes_context

    def test_missing_params_type_fails_at_construction(self) -> None:
        """Without annotations or a subscript there is no schema to offer: the tool is refused."""

        def untyped(params, *, context):  # type: ignore[no-untyped-def]  # an unannotated handler is the point
            raise AssertionError

        with pytest.raises(PromptValidationError) as caught:
            Tool(name="t", description="d", handler=untyped)
        assert caught.value.message == (
            "tool 't' has no params type: annotate the handler's first parameter, "
            "pass params_type=..., or subscript Tool[Params, Result]"
        )

    def test_non_dataclass_params_type_fails_at_construction(self) -> None:
        """Params must be a dataclass."""
        with pytest.raises(PromptValidationError) as caught:
            Tool(name="t", description="d", params_type=int)
        assert caught.value.message == "tool 't' params type <class 'int'> is not a dataclass"

    def test_the_subscript_supplies_the_types_at_construction(self) -> None:
        """`Tool[Params, Result](...)` builds its spec from the subscript, immediately."""

        def handler(params, *, context):  # type: ignore[no-untyped-def]  # types come from the subscript
            raise AssertionError

        built = Tool[SearchParams, Hit](name="t", description="d", handler=handler)
        assert (built.params_type, built.spec.result_type) == (SearchParams, Hit)

    def test_an_unresolvable_annotation_says_what_failed_and_how_to_fix_it(self) -> None:
        """A params class the resolver cannot see is reported with the cause and the fix."""

        @dataclass(frozen=True)
        class LocalParams:
            text: str

        def handler(params: LocalParams, *, context: ToolContext) -> ToolResult[None]:
            raise AssertionError

        with pytest.raises(PromptValidationError) as caught:
            Tool(name="local", description="d", handler=handler)
        assert caught.value.message == (
            "tool 'local': the handler's parameter 'params' is annotated 'LocalParams', which "
            "cannot be resolved from the handler's module (NameError: name 'LocalParams' is "
            "not defined); define that class at module level, or pass params_type=... to Tool"
        )
        assert (
            Tool(
                name="local", description="d", handler=handler, params_type=LocalParams
            ).params_type
            is LocalParams
        )

    def test_tools_are_frozen(self) -> None:
        """A tool cannot be changed after construction."""
        built = make_tool("frozen")
        with pytest.raises(AttributeError):
            built.name = "other"  # type: ignore[misc]  # mutation is the point

    def test_unresolvable_annotations_fall_back_to_explicit_types(self) -> None:
        """Annotations naming unknown types do not break construction."""

        def handler(params: Missing, *, context: ToolContext) -> ToolResult[Hit]:  # type: ignore[name-defined]  # noqa: F821
            raise AssertionError

        built = Tool(name="t", description="d", handler=handler, params_type=SearchParams)
        assert built.params_type is SearchParams


class TestDecorator:
    def test_bare_decorator_uses_function_name_and_docstring(self) -> None:
        """`@tool` names the tool after the function and uses the docstring's first paragraph."""
        built = tool(search)
        assert (built.name, built.description) == ("search", "Search the notes for a query.")

    def test_decorator_with_arguments(self) -> None:
        """`@tool(name=..., description=...)` overrides both."""

        @tool(name="find", description="Find notes.")
        def handler(params: SearchParams, *, context: ToolContext) -> ToolResult[Hit]:
            raise AssertionError

        assert (handler.name, handler.description) == ("find", "Find notes.")

    def test_wrap_needs_a_description(self) -> None:
        """A function without a docstring must be described explicitly."""

        def bare(params: SearchParams, *, context: ToolContext) -> ToolResult[Hit]:
            raise AssertionError

        with pytest.raises(PromptValidationError, match="has no description: give the function"):
            Tool.wrap(bare)

    def test_wrap_needs_a_name_for_nameless_callables(self) -> None:
        """Callable objects without __name__ must be named explicitly."""

        class Handler:
            def __call__(self, params: SearchParams, *, context: ToolContext) -> ToolResult[Hit]:
                raise AssertionError

        with pytest.raises(PromptValidationError, match="pass name="):
            Tool.wrap(Handler(), description="d")


class Note:
    def __init__(self, text: str) -> None:
        self.text = text

    def render(self) -> str:
        return f"NOTE: {self.text}"


class BadRender:
    def render(self) -> int:
        return 3


class TestToolResult:
    def test_render_uses_compact_json_without_nones(self) -> None:
        """Dataclass payloads render as JSON of dump(value, exclude_none=True)."""
        result = ToolResult(message="m", value=Hit(title="a"))
        assert result.render() == '{"title":"a"}'

    def test_render_prefers_the_value_own_render(self) -> None:
        """A payload with render() chooses its own text."""
        assert ToolResult(message="m", value=Note("hi")).render() == "NOTE: hi"

    def test_render_of_no_value_is_empty(self) -> None:
        """Failures without a payload render as the empty string."""
        assert ToolResult(message="m", value=None, success=False).render() == ""

    def test_render_must_return_text(self) -> None:
        """A render() that returns something else is a ToolResultError naming the type."""
        with pytest.raises(ToolResultError, match=r"BadRender.render\(\) must return str, got int"):
            ToolResult(message="m", value=BadRender()).render()

    @pytest.mark.parametrize(
        ("result", "content"),
        [
            (ToolResult(message="done", value=Hit(title="a")), 'done\n\n{"title":"a"}'),
            (ToolResult(message="", value=Hit(title="a")), '{"title":"a"}'),
            (ToolResult(message="failed", success=False), "failed"),
            (
                ToolResult(
                    message="secret kept", value=Hit(title="a"), exclude_value_from_context=True
                ),
                "secret kept",
            ),
        ],
    )
    def test_model_content_combines_message_and_payload(
        self, result: ToolResult[Hit], content: str
    ) -> None:
        """The model reads the message, then the payload unless it is excluded."""
        assert result.model_content() == content


def _noop(params: SearchParams, *, context: ToolContext) -> ToolResult[Hit]:
    raise AssertionError


def make_tool(name: str) -> Tool[SearchParams, Hit]:
    return Tool(name=name, description="d", handler=_noop)


class TestRegistry:
    def test_tools_are_collected_depth_first_from_rendered_sections(self) -> None:
        """Enabled FULL sections contribute tools in declaration order, parents first."""
        template = PromptTemplate(
            ns="t",
            key="k",
            sections=[
                MarkdownSection(
                    title="A",
                    template="",
                    tools=[make_tool("a")],
                    children=[
                        MarkdownSection(title="A1", template="", tools=[make_tool("a1")]),
                        MarkdownSection(
                            title="Off", template="", enabled=False, tools=[make_tool("off")]
                        ),
                    ],
                ),
                MarkdownSection(
                    title="S",
                    template="",
                    summary="s",
                    visibility=SectionVisibility.SUMMARY,
                    tools=[make_tool("hidden")],
                    children=[MarkdownSection(title="S1", template="", tools=[make_tool("s1")])],
                ),
                MarkdownSection(title="B", template="", tools=[make_tool("b")]),
            ],
        )
        assert [t.name for t in template.declared_tools()] == [
            "a",
            "a1",
            "off",
            "hidden",
            "s1",
            "b",
        ]
        rendered = template.render()
        assert [t.name for t in rendered.tools] == ["a", "a1", "b", "open_sections"]
        assert rendered.tool("a1") is rendered.tools[1]
        assert rendered.tool("hidden") is None
        assert set(rendered.tool_param_descriptions) == {"a", "a1", "b", "open_sections"}
        opened = template.render(visibility_overrides={("s",): SectionVisibility.FULL})
        assert [t.name for t in opened.tools] == ["a", "a1", "hidden", "s1", "b"]

    def test_duplicate_tool_names_name_both_sections(self) -> None:
        """A second tool with a taken name is reported with both owners."""
        with pytest.raises(PromptValidationError) as caught:
            PromptTemplate(
                ns="t",
                key="k",
                sections=[
                    MarkdownSection(title="A", template="", tools=[make_tool("dup")]),
                    MarkdownSection(
                        title="B",
                        template="",
                        children=[
                            MarkdownSection(title="C", template="", tools=[make_tool("dup")])
                        ],
                    ),
                ],
            )
        assert caught.value.message == (
            "duplicate tool name 'dup': declared by section ('a',) and section ('b', 'c')"
        )
        assert caught.value.tool_name == "dup"

    def test_open_sections_is_a_reserved_name(self) -> None:
        """User tools cannot take the built-in tool's name."""
        with pytest.raises(PromptValidationError, match="reserved for the prompt's built-in tool"):
            PromptTemplate(
                ns="t",
                key="k",
                sections=[
                    MarkdownSection(title="A", template="", tools=[make_tool("open_sections")])
                ],
            )

    def test_tool_param_descriptions_are_exposed_per_tool(self) -> None:
        """RenderedPrompt.tool_param_descriptions maps tool name to field descriptions."""
        template = PromptTemplate(
            ns="t",
            key="k",
            sections=[MarkdownSection(title="A", template="", tools=[make_tool("s")])],
        )
        descriptions = template.render().tool_param_descriptions
        assert {name: dict(fields) for name, fields in descriptions.items()} == {
            "s": {"query": "What to look for"}
        }
