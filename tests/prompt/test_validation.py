"""Construction-time validation of sections and templates, with exact messages."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from weakincentives.errors import PromptValidationError, UnknownSectionError
from weakincentives.prompt import MarkdownSection, PromptTemplate, SectionVisibility


@dataclass
class TaskParams:
    goal: str
    limit: int = 3


class TestSectionKeys:
    def test_key_defaults_to_a_slug_of_the_title(self) -> None:
        """Sections without a key get one derived from the title."""
        assert MarkdownSection(title="Project Context!", template="").key == "project-context"

    @pytest.mark.parametrize("key", ["a.b", "Upper", "", "-lead", "with space"])
    def test_invalid_keys_are_rejected(self, key: str) -> None:
        """Keys are lowercase slugs without dots, since dots join paths."""
        with pytest.raises(PromptValidationError, match="no dots"):
            MarkdownSection(title="T", key=key, template="")

    def test_title_that_cannot_make_a_key_says_to_pass_one(self) -> None:
        """A title with no usable characters asks for an explicit key."""
        with pytest.raises(PromptValidationError, match=r"derived from title '\?\?'; pass key="):
            MarkdownSection(title="??", template="")

    def test_empty_title_is_rejected(self) -> None:
        """Every section needs a heading."""
        with pytest.raises(PromptValidationError, match="title must be non-empty"):
            MarkdownSection(title=" ", key="k", template="")

    def test_children_must_be_sections(self) -> None:
        """A non-section child is named by position."""
        with pytest.raises(PromptValidationError, match="child 0 of section 'p' is a str"):
            MarkdownSection(title="P", template="", children=["oops"])  # type: ignore[list-item]  # a non-section child is the point

    def test_tools_must_be_tools(self) -> None:
        """A non-tool in `tools` is named by position."""
        with pytest.raises(PromptValidationError, match="tool 0 of section 'p' is a int"):
            MarkdownSection(title="P", template="", tools=[1])  # type: ignore[list-item]  # a non-tool is the point


class TestPlaceholders:
    def test_unknown_placeholder_names_section_path_and_fields(self) -> None:
        """A placeholder that is not a params field is reported where it is."""
        with pytest.raises(PromptValidationError) as caught:
            PromptTemplate(
                ns="t",
                key="k",
                sections=[
                    MarkdownSection(
                        title="Task",
                        template="",
                        children=[
                            MarkdownSection[TaskParams](
                                title="Details", template="Do ${goal} as ${user}"
                            )
                        ],
                    )
                ],
            )
        error = caught.value
        assert error.message == (
            "placeholder ${user} in template of section ('task', 'details') is not a field "
            "of TaskParams (fields: goal, limit)"
        )
        assert error.section_path == ("task", "details")
        assert error.placeholder == "user"
        assert error.dataclass_type is TaskParams

    def test_summary_placeholders_are_checked_too(self) -> None:
        """Summary templates obey the same placeholder rule."""
        with pytest.raises(PromptValidationError, match=r"\$\{missing\} in summary of section"):
            PromptTemplate(
                ns="t",
                key="k",
                sections=[
                    MarkdownSection[TaskParams](title="A", template="$goal", summary="see $missing")
                ],
            )

    def test_placeholders_in_a_section_without_params_are_rejected(self) -> None:
        """A section without a params type has no fields to fill placeholders."""
        with pytest.raises(PromptValidationError, match="is not a field of EmptyParams"):
            PromptTemplate(
                ns="t", key="k", sections=[MarkdownSection(title="A", template="$question")]
            )

    def test_invalid_dollar_syntax_is_rejected(self) -> None:
        """A `$` that starts no valid placeholder must be written `$$`."""
        with pytest.raises(PromptValidationError, match=r"invalid placeholder '\$ 5'"):
            PromptTemplate(ns="t", key="k", sections=[MarkdownSection(title="A", template="$ 5")])

    def test_summary_suffix_only_knows_the_section_key(self) -> None:
        """`summary_suffix` may only use `${section_key}`."""
        with pytest.raises(PromptValidationError, match=r"\$\{title\} in summary_suffix"):
            PromptTemplate(
                ns="t",
                key="k",
                sections=[
                    MarkdownSection(title="A", template="", summary="s", summary_suffix="${title}")
                ],
            )


class TestTemplate:
    def test_every_problem_is_reported_at_once(self) -> None:
        """Construction collects all problems and raises a single error listing them."""
        with pytest.raises(PromptValidationError) as caught:
            PromptTemplate(
                ns="",
                key="k",
                sections=[
                    MarkdownSection(title="A", template="$x"),
                    MarkdownSection(title="A", template=""),
                ],
            )
        assert len(caught.value.problems) == 3
        assert caught.value.message.startswith("3 problems in prompt /k:\n- prompt ns must")

    def test_duplicate_sibling_keys_are_rejected(self) -> None:
        """Sibling keys must be unique so that paths are unambiguous."""
        with pytest.raises(PromptValidationError) as caught:
            PromptTemplate(
                ns="t",
                key="k",
                sections=[
                    MarkdownSection(
                        title="P",
                        template="",
                        children=[
                            MarkdownSection(title="Same", template=""),
                            MarkdownSection(title="Same", template=""),
                        ],
                    )
                ],
            )
        assert caught.value.message == (
            "duplicate section key 'same' under ('p',); sibling keys must be unique"
        )

    def test_same_key_in_different_branches_is_fine(self) -> None:
        """Keys only need to be unique among siblings."""
        template = PromptTemplate(
            ns="t",
            key="k",
            sections=[
                MarkdownSection(
                    title="A", template="", children=[MarkdownSection(title="X", template="")]
                ),
                MarkdownSection(
                    title="B", template="", children=[MarkdownSection(title="X", template="")]
                ),
            ],
        )
        assert template.section_paths() == (("a",), ("a", "x"), ("b",), ("b", "x"))

    def test_summary_visibility_needs_summary_text(self) -> None:
        """A section declared SUMMARY without a summary cannot render."""
        with pytest.raises(PromptValidationError, match="declared SUMMARY but has no summary"):
            PromptTemplate(
                ns="t",
                key="k",
                sections=[
                    MarkdownSection(title="A", template="x", visibility=SectionVisibility.SUMMARY)
                ],
            )

    def test_params_type_must_be_a_dataclass(self) -> None:
        """Sections render from dataclasses only."""

        class Plain:
            pass

        with pytest.raises(PromptValidationError, match="is not a dataclass") as caught:
            PromptTemplate(
                ns="t",
                key="k",
                sections=[MarkdownSection[Plain](title="A", template="")],
            )
        assert caught.value.dataclass_type is Plain

    def test_a_prompt_needs_sections(self) -> None:
        """An empty prompt is almost certainly a mistake."""
        with pytest.raises(PromptValidationError, match="at least one section"):
            PromptTemplate(ns="t", key="k", sections=[])

    @pytest.mark.parametrize(("ns", "key"), [("", "k"), ("t", " k"), ("t", "")])
    def test_ns_and_key_must_be_non_empty(self, ns: str, key: str) -> None:
        """Namespaces and keys identify prompts in events; they cannot be blank."""
        with pytest.raises(PromptValidationError, match="must be a non-empty string"):
            PromptTemplate(ns=ns, key=key, sections=[MarkdownSection(title="A", template="")])

    def test_blank_name_is_rejected(self) -> None:
        """An explicit name must say something."""
        with pytest.raises(PromptValidationError, match="prompt name must be non-empty"):
            PromptTemplate(
                ns="t", key="k", name=" ", sections=[MarkdownSection(title="A", template="")]
            )

    def test_lookup_of_sections_by_path(self) -> None:
        """Unknown paths raise UnknownSectionError (a WinkError and a KeyError) naming them."""
        child = MarkdownSection(title="C", template="")
        template = PromptTemplate(
            ns="t", key="k", sections=[MarkdownSection(title="P", template="", children=[child])]
        )
        assert template.section(("p", "c")) is child
        with pytest.raises(UnknownSectionError) as caught:
            template.section(("c",))
        assert isinstance(caught.value, KeyError)
        assert str(caught.value) == ("prompt 'k' has no section at path ('c',) (sections: p, p.c)")
        assert caught.value.section_path == ("c",)
