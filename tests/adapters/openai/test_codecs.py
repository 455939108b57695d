"""The shared hosted tool helpers, exercised with the OpenAI codec registry."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pytest

from weakincentives.adapters._hosted import (
    HostedOutputParseError,
    HostedToolCodec,
    parse_hosted_outputs,
    serialize_hosted_tools,
)
from weakincentives.adapters.openai._codec_reader import describe
from weakincentives.adapters.openai._codecs import (
    OpenAICodeInterpreterCodec,
    OpenAIWebSearchCodec,
    default_openai_codecs,
    openai_includes,
)
from weakincentives.errors import ConfigValidationError, PromptEvaluationError
from weakincentives.prompt._hosted import HostedTool, HostedToolConfig
from weakincentives.serde import JSONValue
from weakincentives.tools import (
    CodeInterpreterConfig,
    CodeInterpreterResult,
    DomainFilter,
    WebSearchConfig,
    WebSearchResult,
    code_interpreter_tool,
    web_search_tool,
)

FIXTURES = Path(__file__).parent.parent.parent / "fixtures" / "hosted_tools"

type Item = dict[str, JSONValue]


def load_output(name: str) -> list[Item]:
    """The ``output`` array of a recorded Responses API reply."""
    response = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return cast(list[Item], response["output"])


@dataclass(frozen=True, slots=True)
class ResearchConfig:
    depth: int = 1


@dataclass(frozen=True, slots=True)
class ResearchReport:
    summary: str


def research_tool() -> HostedTool[ResearchConfig]:
    return HostedTool(
        kind="deep_research", name="research", description="Research.", config=ResearchConfig()
    )


class ResearchCodec:
    """A user-supplied codec, to show registries are extensible."""

    @property
    def kind(self) -> str:
        return "deep_research"

    def serialize(self, tool: HostedTool[ResearchConfig]) -> dict[str, JSONValue]:
        return {"type": "deep_research", "depth": tool.config.depth}

    def parse_output(
        self, response_items: Sequence[Mapping[str, JSONValue]], tool: HostedTool[ResearchConfig]
    ) -> ResearchReport | None:
        for item in response_items:
            if item.get("type") == "research_call":
                raise HostedOutputParseError(
                    kind=self.kind, path="$.output", expected="a report", got="a call"
                )
        return None


def test_codecs_satisfy_the_codec_protocol() -> None:
    """The built-in and a user codec type-check as HostedToolCodec with their own types."""
    web: HostedToolCodec[WebSearchConfig, WebSearchResult] = OpenAIWebSearchCodec()
    code: HostedToolCodec[CodeInterpreterConfig, CodeInterpreterResult] = (
        OpenAICodeInterpreterCodec()
    )
    research: HostedToolCodec[ResearchConfig, ResearchReport] = ResearchCodec()
    assert (web.kind, code.kind, research.kind) == (
        "web_search",
        "code_interpreter",
        "deep_research",
    )


class TestDefaultCodecs:
    def test_default_registry_maps_each_kind_to_its_codec(self) -> None:
        """Both built-in kinds are registered under their own names."""
        codecs = default_openai_codecs()
        assert sorted(codecs) == ["code_interpreter", "web_search"]
        assert isinstance(codecs["web_search"], OpenAIWebSearchCodec)
        assert isinstance(codecs["code_interpreter"], OpenAICodeInterpreterCodec)

    def test_each_call_returns_a_fresh_registry(self) -> None:
        """Extending one registry leaves the next one untouched."""
        extended = default_openai_codecs()
        extended["deep_research"] = ResearchCodec()
        assert "deep_research" not in default_openai_codecs()


class TestIncludes:
    @pytest.mark.parametrize(
        ("tools", "expected"),
        [
            ((), ()),
            ((web_search_tool(),), ("web_search_call.action.sources",)),
            ((code_interpreter_tool(),), ("code_interpreter_call.outputs",)),
            (
                (code_interpreter_tool(), research_tool(), web_search_tool()),
                ("code_interpreter_call.outputs", "web_search_call.action.sources"),
            ),
            (
                (web_search_tool(), web_search_tool(name="other_search")),
                ("web_search_call.action.sources",),
            ),
        ],
    )
    def test_includes_follow_the_tools(
        self, tools: tuple[HostedTool[HostedToolConfig], ...], expected: tuple[str, ...]
    ) -> None:
        """Each known kind adds its include once, in tool order; unknown kinds add nothing."""
        assert openai_includes(tools) == expected


class TestSerializeHostedTools:
    def test_specs_come_back_in_tool_order(self) -> None:
        """Every tool is serialized by its kind's codec, preserving order."""
        tools = (code_interpreter_tool(), web_search_tool())
        specs = serialize_hosted_tools(
            tools, default_openai_codecs(), adapter_name="openai", prompt_name="research"
        )
        assert specs == (
            {"type": "code_interpreter", "container": {"type": "auto"}},
            {"type": "web_search"},
        )

    def test_user_codec_extends_the_registry(self) -> None:
        """A codec added to the registry serializes its own kind."""
        codecs = default_openai_codecs() | {"deep_research": ResearchCodec()}
        specs = serialize_hosted_tools(
            (research_tool(),), codecs, adapter_name="openai", prompt_name="research"
        )
        assert specs == ({"type": "deep_research", "depth": 1},)

    def test_unknown_kind_names_kind_adapter_and_supported_kinds(self) -> None:
        """A kind without a codec fails before any request, listing what is supported."""
        with pytest.raises(PromptEvaluationError) as caught:
            serialize_hosted_tools(
                (web_search_tool(), research_tool()),
                default_openai_codecs(),
                adapter_name="openai",
                prompt_name="research",
            )
        assert caught.value.message == (
            "[render] prompt 'research': hosted tool 'research' has kind 'deep_research', which "
            "the openai adapter does not support (supported kinds: code_interpreter, web_search); "
            "register a codec for 'deep_research' in the adapter's hosted tool codecs"
        )
        assert (caught.value.phase, caught.value.prompt_name) == ("render", "research")

    def test_empty_registry_says_none_are_supported(self) -> None:
        """With no codecs at all the message says so."""
        with pytest.raises(PromptEvaluationError, match=r"\(supported kinds: none\)"):
            serialize_hosted_tools(
                (web_search_tool(),), {}, adapter_name="offline", prompt_name="p"
            )

    def test_codec_under_wrong_kind_is_rejected(self) -> None:
        """A codec registered under another kind's key is a configuration error."""
        with pytest.raises(PromptEvaluationError) as caught:
            serialize_hosted_tools(
                (web_search_tool(),),
                {"web_search": OpenAICodeInterpreterCodec()},
                adapter_name="openai",
                prompt_name="p",
            )
        assert caught.value.message == (
            "[render] prompt 'p': the openai adapter's codec registered for kind 'web_search' "
            "handles kind 'code_interpreter'; register each codec under its own kind"
        )

    def test_two_tools_of_one_kind_are_rejected(self) -> None:
        """Outputs are matched by kind, so one kind may appear once per prompt."""
        with pytest.raises(PromptEvaluationError) as caught:
            serialize_hosted_tools(
                (web_search_tool(), web_search_tool(name="cached_search")),
                default_openai_codecs(),
                adapter_name="openai",
                prompt_name="p",
            )
        assert caught.value.message == (
            "[render] prompt 'p': hosted tools 'web_search' and 'cached_search' both have kind "
            "'web_search'; the openai adapter cannot tell their calls apart, so offer each kind "
            "once per prompt"
        )

    def test_unsupported_option_becomes_render_error_keeping_cause(self) -> None:
        """A codec's refusal is reported as a render failure naming tool, kind and adapter."""
        tool = web_search_tool(WebSearchConfig(domain_filter=DomainFilter(blocked=("x.com",))))
        with pytest.raises(PromptEvaluationError) as caught:
            serialize_hosted_tools(
                (tool,), default_openai_codecs(), adapter_name="openai", prompt_name="p"
            )
        assert caught.value.message == (
            "[render] prompt 'p': hosted tool 'web_search' (kind 'web_search') cannot be sent "
            "with the openai adapter: OpenAI web search cannot block domains (its filters only "
            "take allowed_domains); remove DomainFilter.blocked or list the domains to allow"
        )
        assert caught.value.phase == "render"
        assert isinstance(caught.value.__cause__, ConfigValidationError)


class TestParseHostedOutputs:
    def test_outputs_are_keyed_by_tool_name(self) -> None:
        """Each used tool gets its parsed output under its own name."""
        tool = web_search_tool(name="lookup")
        outputs = parse_hosted_outputs(
            (tool, code_interpreter_tool()),
            default_openai_codecs(),
            load_output("web_search_with_citations"),
            prompt_name="p",
        )
        assert list(outputs) == ["lookup"]
        assert isinstance(outputs["lookup"], WebSearchResult)

    def test_unused_tools_have_no_entry(self) -> None:
        """A reply without hosted activity yields an empty mapping."""
        outputs = parse_hosted_outputs(
            (web_search_tool(), code_interpreter_tool()),
            default_openai_codecs(),
            load_output("no_hosted_call"),
            prompt_name="p",
        )
        assert dict(outputs) == {}

    def test_outputs_are_read_only(self) -> None:
        """The returned mapping cannot be altered by callers."""
        outputs = parse_hosted_outputs(
            (code_interpreter_tool(),),
            default_openai_codecs(),
            load_output("code_interpreter_with_logs"),
            prompt_name="p",
        )
        with pytest.raises(TypeError):
            outputs["x"] = outputs["code_interpreter"]  # type: ignore[index]  # proving immutability

    def test_malformed_item_becomes_parse_error_with_item_payload(self) -> None:
        """A hard parse failure names tool and path and carries the offending item."""
        items = load_output("web_search_failed")
        items[0]["status"] = None
        with pytest.raises(PromptEvaluationError) as caught:
            parse_hosted_outputs(
                (web_search_tool(),), default_openai_codecs(), items, prompt_name="p"
            )
        assert caught.value.message == (
            "[parse] prompt 'p': output of hosted tool 'web_search' (kind 'web_search') is "
            "malformed: expected a string, got null at $.output[0].status while parsing "
            "WebSearchResult"
        )
        assert caught.value.phase == "parse"
        assert caught.value.provider_payload is items[0]
        assert isinstance(caught.value.__cause__, HostedOutputParseError)

    def test_error_without_item_carries_whole_output(self) -> None:
        """When a codec cannot point at one item the whole output array is kept."""
        items: list[Item] = [{"type": "research_call"}]
        with pytest.raises(PromptEvaluationError) as caught:
            parse_hosted_outputs(
                (research_tool(),), {"deep_research": ResearchCodec()}, items, prompt_name="p"
            )
        assert caught.value.provider_payload == {"output": [{"type": "research_call"}]}

    def test_missing_codec_is_a_parse_error(self) -> None:
        """Parsing with a registry lacking the kind fails clearly."""
        with pytest.raises(PromptEvaluationError) as caught:
            parse_hosted_outputs((research_tool(),), default_openai_codecs(), [], prompt_name="p")
        assert caught.value.message == (
            "[parse] prompt 'p': no codec for hosted tool 'research' of kind 'deep_research', "
            "so its output cannot be read; use the codecs the request was serialized with"
        )


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "null"),
        (False, "boolean false"),
        (1.5, "number 1.5"),
        ("x" * 50, f"string '{'x' * 37}...'"),
        ({"a": 1}, "object"),
        ([1], "array"),
        ({1}, "set"),
    ],
)
def test_values_are_described_in_json_terms(value: object, text: str) -> None:
    """Parse errors name what was found using JSON vocabulary, shortening long strings."""
    assert describe(value) == text
