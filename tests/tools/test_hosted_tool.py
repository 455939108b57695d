"""HostedTool construction and the marker protocols."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from weakincentives.errors import PromptValidationError
from weakincentives.prompt import HostedTool, HostedToolConfig, HostedToolOutput
from weakincentives.tools import (
    WebSearchConfig,
    WebSearchResult,
    code_interpreter_tool,
    web_search_tool,
)


@dataclass(frozen=True, slots=True)
class _FrozenSlotted:
    depth: int = 1


@dataclass(frozen=True)
class _FrozenOnly:
    depth: int = 1


@dataclass(slots=True)
class _SlottedOnly:
    depth: int = 1


def test_valid_hosted_tool_keeps_its_fields() -> None:
    """A well-formed hosted tool stores kind, name, description and config as given."""
    config = _FrozenSlotted(depth=3)
    tool = HostedTool(kind="deep_research", name="research", description="Dig.", config=config)
    assert (tool.kind, tool.name, tool.description, tool.config) == (
        "deep_research",
        "research",
        "Dig.",
        config,
    )


def test_hosted_tool_is_immutable() -> None:
    """Fields cannot be reassigned after validation."""
    tool = web_search_tool()
    with pytest.raises(AttributeError):
        tool.name = "other"  # type: ignore[misc]  # proving the frozen dataclass refuses writes


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"name": "Web Search"},
            "hosted tool 'Web Search': tool name 'Web Search' must match "
            "^[a-z0-9_-]{1,64}$ (1-64 lowercase letters, digits, '_' or '-')",
        ),
        ({"description": ""}, "hosted tool 'probe': description must be 1-200 characters, got 0"),
        (
            {"description": "caf\u00e9"},
            "hosted tool 'probe': description must be ASCII, so that every provider receives "
            "it unchanged; '\u00e9' at index 3 is not: write it in plain ASCII, e.g. 'cafe'",
        ),
        (
            {"kind": "WebSearch"},
            "hosted tool 'probe': kind 'WebSearch' must be a non-empty snake_case identifier "
            "such as 'web_search'",
        ),
        (
            {"kind": ""},
            "hosted tool 'probe': kind '' must be a non-empty snake_case identifier "
            "such as 'web_search'",
        ),
        ({"kind": 3}, "hosted tool 'probe': kind must be a string, got int"),
        (
            {"config": {"a": 1}},
            "hosted tool 'probe': config must be a dataclass instance, got dict",
        ),
        (
            {"config": _FrozenSlotted},
            "hosted tool 'probe': config must be a dataclass instance, got type",
        ),
        (
            {"config": _FrozenOnly()},
            "hosted tool 'probe': config _FrozenOnly must be declared with "
            "@dataclass(frozen=True, slots=True) so it cannot change after validation",
        ),
        (
            {"config": _SlottedOnly()},
            "hosted tool 'probe': config _SlottedOnly must be declared with "
            "@dataclass(frozen=True, slots=True) so it cannot change after validation",
        ),
    ],
)
def test_invalid_field_is_rejected_with_exact_message(
    kwargs: dict[str, object], message: str
) -> None:
    """Each construction rule produces its own message naming the tool."""
    fields: dict[str, object] = {
        "kind": "probe_kind",
        "name": "probe",
        "description": "Probe things.",
        "config": _FrozenSlotted(),
    }
    fields.update(kwargs)
    with pytest.raises(PromptValidationError) as caught:
        HostedTool(**fields)  # type: ignore[arg-type]  # deliberately ill-typed inputs
    assert caught.value.message == message
    expected_name = fields["name"] if isinstance(fields["name"], str) else None
    assert caught.value.tool_name == expected_name


def test_every_problem_is_reported_at_once() -> None:
    """Several bad fields yield one error listing each problem."""
    with pytest.raises(PromptValidationError) as caught:
        HostedTool(kind="Bad", name="Bad", description="", config=_FrozenSlotted())
    assert caught.value.message == (
        "3 problems in hosted tool 'Bad':\n"
        "- hosted tool 'Bad': tool name 'Bad' must match ^[a-z0-9_-]{1,64}$ "
        "(1-64 lowercase letters, digits, '_' or '-')\n"
        "- hosted tool 'Bad': description must be 1-200 characters, got 0\n"
        "- hosted tool 'Bad': kind 'Bad' must be a non-empty snake_case identifier "
        "such as 'web_search'"
    )
    assert len(caught.value.problems) == 3


def test_non_string_name_leaves_tool_name_unset() -> None:
    """A name that is not a string is reported without pretending it is a tool name."""
    with pytest.raises(PromptValidationError) as caught:
        HostedTool(kind="k", name=7, description="d", config=_FrozenSlotted())  # type: ignore[arg-type]  # deliberately ill-typed
    assert caught.value.message == "hosted tool 7: tool name must be a string, got int"
    assert caught.value.tool_name is None


def test_factories_build_expected_tools() -> None:
    """The factories set kind, default name and description, and accept a custom name."""
    search = web_search_tool(WebSearchConfig(max_uses=2), name="cached_search")
    code = code_interpreter_tool()
    assert (search.kind, search.name, search.config.max_uses) == ("web_search", "cached_search", 2)
    assert search.description == "Search the web for current information and cite sources."
    assert (code.kind, code.name, code.description) == (
        "code_interpreter",
        "code_interpreter",
        "Execute code in a sandboxed environment.",
    )
    assert web_search_tool().config == WebSearchConfig()


def test_configs_and_outputs_satisfy_marker_protocols() -> None:
    """Configs and outputs are recognised by the runtime-checkable markers."""
    assert isinstance(WebSearchConfig(), HostedToolConfig)
    assert isinstance(WebSearchResult(text=""), HostedToolOutput)
