"""Rendering: headings, params matching, enablement, visibility and overrides."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pytest

from weakincentives.errors import PromptRenderError
from weakincentives.prompt import (
    EmptyParams,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    SectionVisibility,
)


@dataclass(frozen=True)
class Goal:
    goal: str


@dataclass(frozen=True)
class Limits:
    limit: int = 3
    strict: bool = False


@dataclass(frozen=True)
class Needed:
    value: str


def tree() -> PromptTemplate:
    return PromptTemplate(
        ns="tests",
        key="tree",
        sections=[
            MarkdownSection[Goal](
                title="Task",
                template="Do $goal.",
                children=[
                    MarkdownSection[Limits](
                        title="Limits",
                        template="At most ${limit} steps.",
                        children=[
                            MarkdownSection(title="Deep", template="deep"),
                        ],
                    ),
                    MarkdownSection(title="Style", template="Be brief."),
                ],
            ),
            MarkdownSection(title="Closing", template="Thanks."),
        ],
    )


class TestHeadings:
    def test_headings_number_sections_depth_first(self) -> None:
        """Top-level sections are `## n`, children `### n.m`, deeper levels continue."""
        text = tree().render(Goal(goal="x")).text
        assert text == (
            "## 1 Task\nDo x.\n\n"
            "### 1.1 Limits\nAt most 3 steps.\n\n"
            "#### 1.1.1 Deep\ndeep\n\n"
            "### 1.2 Style\nBe brief.\n\n"
            "## 2 Closing\nThanks."
        )

    def test_numbering_skips_disabled_sections(self) -> None:
        """Numbers stay contiguous when a section in the middle is disabled."""
        template = PromptTemplate(
            ns="tests",
            key="gaps",
            sections=[
                MarkdownSection(title="A", template="a"),
                MarkdownSection(title="B", template="b", enabled=False),
                MarkdownSection(title="C", template="c"),
            ],
        )
        assert template.render().text == "## 1 A\na\n\n## 2 C\nc"

    def test_section_with_empty_body_renders_only_its_heading(self) -> None:
        """A grouping section with no text shows just its heading before its children."""
        template = PromptTemplate(
            ns="tests",
            key="group",
            sections=[
                MarkdownSection(
                    title="Group",
                    template="",
                    children=[MarkdownSection(title="Child", template="c")],
                )
            ],
        )
        assert template.render().text == "## 1 Group\n\n### 1.1 Child\nc"

    def test_headings_stop_growing_at_six_hashes(self) -> None:
        """Markdown has six heading levels; deeper sections reuse the last."""
        section = MarkdownSection(title="L6", template="six")
        for level in range(5, 0, -1):
            section = MarkdownSection(title=f"L{level}", template="", children=[section])
        text = PromptTemplate(ns="t", key="deep", sections=[section]).render().text
        assert text.splitlines()[-2] == "###### 1.1.1.1.1.1 L6"


class TestParams:
    def test_params_are_matched_by_exact_type(self) -> None:
        """Each params instance fills the sections declared with its type."""
        text = tree().render(Limits(limit=9), Goal(goal="y")).text
        assert "Do y." in text
        assert "At most 9 steps." in text

    def test_dollar_name_and_braced_placeholders_both_fill(self) -> None:
        """`$name` and `${name}` placeholders are both substituted; `$$` is a dollar sign."""
        template = PromptTemplate(
            ns="t",
            key="k",
            sections=[
                MarkdownSection[Limits](title="A", template="$limit/${limit} costs $$5, {kept}")
            ],
        )
        assert template.render().text == "## 1 A\n3/3 costs $5, {kept}"

    def test_default_params_fill_in_when_none_are_given(self) -> None:
        """A section's default_params render when render() gets no instance of its type."""
        template = PromptTemplate(
            ns="t",
            key="k",
            sections=[
                MarkdownSection[Needed](
                    title="A", template="$value", default_params=Needed(value="fallback")
                )
            ],
        )
        assert template.render().text == "## 1 A\nfallback"
        assert template.render(Needed(value="given")).text == "## 1 A\ngiven"

    def test_missing_required_params_name_section_and_dataclass(self) -> None:
        """A required params instance that is missing is reported with its fields."""
        template = PromptTemplate(
            ns="t",
            key="k",
            sections=[MarkdownSection[Needed](title="A", key="a", template="$value")],
        )
        with pytest.raises(PromptRenderError) as caught:
            template.render()
        assert caught.value.message == (
            "prompt 'k' is missing params: section ('a',) needs Needed (required fields: value); "
            "pass an instance to render() or set default_params on the section"
        )
        assert caught.value.section_path == ("a",)
        assert caught.value.dataclass_type is Needed

    def test_every_missing_params_type_is_reported_at_once(self) -> None:
        """All sections lacking params are listed in one error."""
        template = PromptTemplate(
            ns="t",
            key="k",
            sections=[
                MarkdownSection[Needed](title="A", key="a", template="$value"),
                MarkdownSection[Goal](title="B", key="b", template="$goal"),
            ],
        )
        with pytest.raises(PromptRenderError, match=r"\('a',\) needs Needed.*\('b',\) needs Goal"):
            template.render()

    def test_unknown_params_type_is_rejected(self) -> None:
        """Passing a dataclass no section uses is an error listing the accepted types."""
        with pytest.raises(PromptRenderError) as caught:
            tree().render(Goal(goal="x"), Needed(value="v"))
        assert caught.value.message == (
            "prompt 'tree' has no section taking Needed (params types: EmptyParams, Goal, Limits)"
        )
        assert caught.value.dataclass_type is Needed

    def test_duplicated_params_type_is_rejected(self) -> None:
        """Two instances of one params type are ambiguous."""
        with pytest.raises(PromptRenderError, match="received two Goal instances"):
            tree().render(Goal(goal="x"), Goal(goal="y"))

    def test_params_are_not_needed_for_disabled_subtrees(self) -> None:
        """A disabled section's subtree needs no params at all."""
        template = PromptTemplate(
            ns="t",
            key="k",
            sections=[
                MarkdownSection(
                    title="Off",
                    template="",
                    enabled=False,
                    children=[MarkdownSection[Needed](title="A", template="$value")],
                ),
                MarkdownSection(title="On", template="on"),
            ],
        )
        assert template.render().text == "## 1 On\non"


class TestEnablement:
    def test_disabled_section_hides_its_subtree_and_tools_text(self) -> None:
        """enabled=False removes the section and all descendants."""
        template = PromptTemplate(
            ns="t",
            key="k",
            sections=[
                MarkdownSection(
                    title="Off",
                    template="off",
                    enabled=False,
                    children=[MarkdownSection(title="Child", template="child")],
                ),
                MarkdownSection(title="On", template="on"),
            ],
        )
        rendered = template.render()
        assert rendered.text == "## 1 On\non"
        assert set(rendered.visibility) == {("on",)}

    def test_enabled_predicate_receives_the_params(self) -> None:
        """A predicate decides per render from the section's params."""
        template = PromptTemplate(
            ns="t",
            key="k",
            sections=[
                MarkdownSection[Limits](
                    title="Strict", template="strict", enabled=lambda p: p.strict
                ),
            ],
        )
        assert template.render(Limits(strict=True)).text == "## 1 Strict\nstrict"
        assert template.render(Limits(strict=False)).text == ""

    def test_raising_predicate_becomes_a_render_error(self) -> None:
        """An exception in an enabled predicate names the section and keeps the cause."""

        def explode(params: Limits) -> bool:
            raise ValueError("boom")

        template = PromptTemplate(
            ns="t",
            key="k",
            sections=[MarkdownSection[Limits](title="A", key="a", template="", enabled=explode)],
        )
        with pytest.raises(PromptRenderError) as caught:
            template.render()
        assert caught.value.message == "enabled function of section ('a',) raised ValueError: boom"
        assert isinstance(caught.value.__cause__, ValueError)


def summarized_tree() -> PromptTemplate:
    return PromptTemplate(
        ns="t",
        key="k",
        sections=[
            MarkdownSection(
                title="Context",
                key="context",
                template="All the context.",
                summary="Context is available.",
                visibility=SectionVisibility.SUMMARY,
                children=[
                    MarkdownSection(title="Examples", key="examples", template="ex"),
                    MarkdownSection(
                        title="History",
                        key="history",
                        template="long history",
                        summary="History exists.",
                        visibility=SectionVisibility.SUMMARY,
                    ),
                ],
            ),
            MarkdownSection(
                title="Reference",
                key="reference",
                template="API details",
                summary="Overview of APIs.",
                summary_suffix="Call `open_sections` with key '${section_key}' for signatures.",
                visibility=SectionVisibility.SUMMARY,
            ),
        ],
    )


class TestVisibility:
    def test_summary_with_children_lists_subsections_in_the_suffix(self) -> None:
        """A summarized parent hides its children and names their keys."""
        text = summarized_tree().render().text
        assert text.split("\n\n## 2")[0] == (
            "## 1 Context\nContext is available.\n\n---\n"
            '[This section is summarized. Call `open_sections` with key "context" '
            "to view full content including subsections: examples, history.]"
        )

    def test_custom_suffix_substitutes_the_section_key(self) -> None:
        """`summary_suffix` replaces the default note and fills `${section_key}`."""
        text = summarized_tree().render().text
        assert text.split("\n\n## 2 ")[1] == (
            "Reference\nOverview of APIs.\n\n---\n"
            "Call `open_sections` with key 'reference' for signatures."
        )

    def test_custom_suffix_with_children_appends_the_subsection_keys(self) -> None:
        """Children keys are appended to a custom suffix too."""
        template = PromptTemplate(
            ns="t",
            key="k",
            sections=[
                MarkdownSection(
                    title="Docs",
                    template="body",
                    summary="Docs.",
                    summary_suffix="Open '${section_key}'.",
                    visibility=SectionVisibility.SUMMARY,
                    children=[MarkdownSection(title="Api", template="api")],
                )
            ],
        )
        assert template.render().text == (
            "## 1 Docs\nDocs.\n\n---\nOpen 'docs'.\n(Subsections: api.)"
        )

    def test_nested_summary_uses_the_dotted_key(self) -> None:
        """Opening a parent reveals a summarized child named by its dotted path."""
        rendered = summarized_tree().render(
            visibility_overrides={("context",): SectionVisibility.FULL}
        )
        assert (
            "### 1.2 History\nHistory exists.\n\n---\n[This section is summarized. To view "
            'full content, call `open_sections` with key "context.history".]'
        ) in rendered.text
        assert rendered.summarized_paths == (("context", "history"), ("reference",))

    def test_overrides_can_summarize_a_full_section(self) -> None:
        """An override to SUMMARY applies to sections declared FULL that have a summary."""
        template = PromptTemplate(
            ns="t",
            key="k",
            sections=[MarkdownSection(title="A", template="full", summary="short")],
        )
        rendered = template.render(visibility_overrides={("a",): SectionVisibility.SUMMARY})
        assert rendered.text.startswith("## 1 A\nshort\n\n---\n")

    def test_summary_override_without_summary_text_is_an_error(self) -> None:
        """A section with no summary cannot be summarized."""
        template = PromptTemplate(
            ns="t", key="k", sections=[MarkdownSection(title="A", template="full")]
        )
        with pytest.raises(PromptRenderError, match="has no summary text") as caught:
            template.render(visibility_overrides={("a",): SectionVisibility.SUMMARY})
        assert caught.value.section_path == ("a",)

    def test_override_for_an_unknown_path_is_an_error(self) -> None:
        """Overrides must name existing sections by full path."""
        with pytest.raises(PromptRenderError, match=r"unknown section \('history',\)"):
            summarized_tree().render(visibility_overrides={("history",): SectionVisibility.FULL})

    def test_override_value_must_be_a_visibility(self) -> None:
        """A misspelt visibility value is reported with the path."""
        with pytest.raises(PromptRenderError, match="must be a SectionVisibility, got 'open'"):
            summarized_tree().render(
                visibility_overrides={("context",): "open"}  # type: ignore[dict-item]  # a misspelt visibility is the point
            )

    def test_visibility_function_decides_from_params(self) -> None:
        """A callable visibility is evaluated with the section's params."""
        template = PromptTemplate(
            ns="t",
            key="k",
            sections=[
                MarkdownSection[Limits](
                    title="A",
                    template="full",
                    summary="short",
                    visibility=lambda p: (
                        SectionVisibility.SUMMARY if p.strict else SectionVisibility.FULL
                    ),
                )
            ],
        )
        assert template.render(Limits(strict=False)).text == "## 1 A\nfull"
        assert template.render(Limits(strict=True)).summarized_paths == (("a",),)

    def test_visibility_function_must_return_a_visibility(self) -> None:
        """A callable returning something else is a render error naming the section."""
        template = PromptTemplate(
            ns="t",
            key="k",
            sections=[
                MarkdownSection(
                    title="A",
                    template="full",
                    visibility=lambda p: "summary",  # type: ignore[arg-type,return-value]  # a wrong return value is the point
                )
            ],
        )
        with pytest.raises(PromptRenderError, match="returned 'summary', not a SectionVisibility"):
            template.render()

    def test_visibility_function_cannot_summarize_without_summary_text(self) -> None:
        """A callable choosing SUMMARY for a section without summary is an error."""
        template = PromptTemplate(
            ns="t",
            key="k",
            sections=[
                MarkdownSection(
                    title="A", template="full", visibility=lambda p: SectionVisibility.SUMMARY
                )
            ],
        )
        with pytest.raises(PromptRenderError, match="has no summary text"):
            template.render()

    def test_visibility_map_records_every_rendered_section(self) -> None:
        """`RenderedPrompt.visibility` lists each rendered path with its visibility."""
        rendered = summarized_tree().render()
        assert dict(rendered.visibility) == {
            ("context",): SectionVisibility.SUMMARY,
            ("reference",): SectionVisibility.SUMMARY,
        }


class TestPrompt:
    def test_bind_then_render(self) -> None:
        """`Prompt(template).bind(...)` renders with the bound params."""
        prompt = Prompt(tree()).bind(Goal(goal="bound"))
        assert "Do bound." in prompt.render().text

    def test_render_params_replace_bound_ones_of_the_same_type(self) -> None:
        """Params given to render() win over bound params of the same type."""
        prompt = Prompt(tree()).bind(Goal(goal="bound"), Limits(limit=1))
        text = prompt.render(Goal(goal="given")).text
        assert "Do given." in text
        assert "At most 1 steps." in text

    def test_bind_returns_a_new_prompt(self) -> None:
        """Prompts are immutable; bind leaves the original untouched."""
        original = Prompt(tree())
        bound = original.bind(Goal(goal="x"))
        assert original.params == ()
        assert bound.params == (Goal(goal="x"),)

    def test_duplicate_params_in_one_call_are_still_rejected(self) -> None:
        """Merging with bound params never hides a duplicate passed in one call."""
        with pytest.raises(PromptRenderError, match="two Goal instances"):
            Prompt(tree()).render(Goal(goal="a"), Goal(goal="b"))

    def test_inline_prompt_builds_its_template(self) -> None:
        """`Prompt(ns=..., key=..., sections=...)` is the inline form."""
        prompt = Prompt(ns="t", key="inline", sections=[MarkdownSection(title="A", template="a")])
        assert (prompt.ns, prompt.key, prompt.name) == ("t", "inline", "inline")
        assert prompt.render().text == "## 1 A\na"
        assert len(prompt.sections) == 1

    def test_empty_params_sections_render_without_params(self) -> None:
        """Sections without params take EmptyParams and need nothing at render time."""
        section = MarkdownSection(title="A", template="a")
        assert section.params_type is EmptyParams


class TestConcurrency:
    def test_many_threads_render_one_template_identically(self) -> None:
        """A template is safe to render from many threads at once."""
        template = tree()
        expected = template.render(Goal(goal="same")).text
        results: list[str] = []
        lock = threading.Lock()

        def work() -> None:
            for _ in range(50):
                text = template.render(Goal(goal="same")).text
                with lock:
                    results.append(text)

        threads = [threading.Thread(target=work) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == [expected] * 400


@dataclass
class Mutable:
    items: list[str] = field(default_factory=list)


def test_no_required_fields_params_are_created_per_render() -> None:
    """Params types whose fields all have defaults are instantiated for each render."""
    template = PromptTemplate(
        ns="t", key="k", sections=[MarkdownSection[Mutable](title="A", template="$items")]
    )
    assert template.render().text == "## 1 A\n[]"


def test_statically_disabled_sections_need_no_params() -> None:
    """enabled=False skips the section before its params are looked up."""
    template = PromptTemplate(
        ns="t",
        key="k",
        sections=[
            MarkdownSection[Needed](title="Off", template="$value", enabled=False),
            MarkdownSection(title="On", template="on"),
        ],
    )
    assert template.render().text == "## 1 On\non"
