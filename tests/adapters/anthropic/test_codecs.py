"""Anthropic's hosted tool codecs: every option on the wire, and results as documented.

Payloads follow Anthropic's web search and code execution tool guides: ``server_tool_use``
blocks answered by ``web_search_tool_result`` / ``code_execution_tool_result`` /
``bash_code_execution_tool_result`` blocks, and text blocks carrying
``web_search_result_location`` citations.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.adapters.anthropic.bodies import (
    cited,
    message,
    search_error,
    search_result,
    search_results,
    server_tool_use,
    text,
)
from weakincentives.adapters import (
    HostedOutputParseError,
)
from weakincentives.adapters._hosted import parse_hosted_outputs, serialize_hosted_tools
from weakincentives.adapters.anthropic import default_anthropic_codecs
from weakincentives.adapters.anthropic._blocks import container_id
from weakincentives.adapters.anthropic._codec_code_execution import AnthropicCodeExecutionCodec
from weakincentives.adapters.anthropic._codec_web_search import AnthropicWebSearchCodec
from weakincentives.errors import PromptEvaluationError
from weakincentives.prompt import HostedTool
from weakincentives.serde import JSONValue
from weakincentives.tools import (
    Citation,
    CodeExecution,
    CodeInterpreterConfig,
    CodeInterpreterResult,
    ContainerFile,
    DomainFilter,
    GeoHint,
    WebSearchCall,
    WebSearchConfig,
    WebSearchResult,
    code_interpreter_tool,
    web_search_tool,
)

SHANNON = "https://en.wikipedia.org/wiki/Claude_Shannon"
BRITANNICA = "https://www.britannica.com/biography/Claude-Shannon"
BOTH = ("python", "bash")


def wire(tool: HostedTool[Any]) -> dict[str, JSONValue]:
    (spec,) = serialize_hosted_tools(
        (tool,), default_anthropic_codecs(), adapter_name="anthropic", prompt_name="p"
    )
    return spec


def refusal(tool: HostedTool[Any]) -> str:
    with pytest.raises(PromptEvaluationError) as caught:
        wire(tool)
    assert caught.value.phase == "render"
    return caught.value.reason


class TestWebSearchOptions:
    def test_the_default_tool(self) -> None:
        """No options: just the versioned type and the fixed name."""
        assert wire(web_search_tool()) == {"type": "web_search_20250305", "name": "web_search"}

    @pytest.mark.parametrize(
        ("config", "expected"),
        [
            (
                WebSearchConfig(domain_filter=DomainFilter(allowed=("cdc.gov", "who.int"))),
                {"allowed_domains": ["cdc.gov", "who.int"]},
            ),
            (
                WebSearchConfig(domain_filter=DomainFilter(blocked=("untrusted.example",))),
                {"blocked_domains": ["untrusted.example"]},
            ),
            (
                WebSearchConfig(
                    geo_hint=GeoHint(
                        country_code="US",
                        city="San Francisco",
                        region="California",
                        timezone="America/Los_Angeles",
                    )
                ),
                {
                    "user_location": {
                        "type": "approximate",
                        "city": "San Francisco",
                        "region": "California",
                        "country": "US",
                        "timezone": "America/Los_Angeles",
                    }
                },
            ),
            (
                WebSearchConfig(geo_hint=GeoHint(country_code="GB")),
                {"user_location": {"type": "approximate", "country": "GB"}},
            ),
            (WebSearchConfig(max_uses=5), {"max_uses": 5}),
        ],
        ids=["allowed", "blocked", "location", "country-only", "max-uses"],
    )
    def test_each_option_has_its_wire_field(
        self, config: WebSearchConfig, expected: dict[str, JSONValue]
    ) -> None:
        """Every supported option is sent under the name Anthropic documents."""
        assert wire(web_search_tool(config)) == {
            "type": "web_search_20250305",
            "name": "web_search",
            **expected,
        }

    def test_a_newer_tool_version_can_be_chosen(self) -> None:
        """The codec's tool_type is the wire type; options are sent the same way."""
        codec = AnthropicWebSearchCodec(tool_type="web_search_20260209")
        assert codec.serialize(web_search_tool(WebSearchConfig(max_uses=2))) == {
            "type": "web_search_20260209",
            "name": "web_search",
            "max_uses": 2,
        }

    @pytest.mark.parametrize(
        ("config", "complaint"),
        [
            (
                WebSearchConfig(domain_filter=DomainFilter(allowed=("a.com",), blocked=("b.com",))),
                "takes allowed_domains or blocked_domains, not both",
            ),
            (WebSearchConfig(search_context_size="high"), "has no search context size"),
            (WebSearchConfig(allow_live_access=False), "always searches live"),
        ],
        ids=["allowed-and-blocked", "context-size", "cache-only"],
    )
    def test_options_anthropic_cannot_honour_are_refused_before_sending(
        self, config: WebSearchConfig, complaint: str
    ) -> None:
        """Refused at render time, naming the tool, the kind and the adapter."""
        reason = refusal(web_search_tool(config))
        assert reason.startswith(
            "hosted tool 'web_search' (kind 'web_search') cannot be sent with the anthropic adapter"
        )
        assert complaint in reason


def shannon_answer() -> list[dict[str, JSONValue]]:
    """The web search guide's example turn: a search, its results, and cited text."""
    return [
        message(
            text("I'll search for when Claude Shannon was born."),
            server_tool_use(
                "srvtoolu_01WYG3zi", "web_search", {"query": "claude shannon birth date"}
            ),
            search_results(
                "srvtoolu_01WYG3zi",
                search_result(SHANNON, "Claude Shannon - Wikipedia"),
                search_result(BRITANNICA, "Claude Shannon | Britannica", page_age=None),
            ),
            text("Based on the search results, "),
            text(
                "Claude Shannon was born on April 30, 1916, in Petoskey, Michigan",
                cited(
                    SHANNON, "Claude Shannon - Wikipedia", "Claude Elwood Shannon (April 30, 1916"
                ),
            ),
        )
    ]


class TestWebSearchResults:
    def test_searches_results_and_citations_are_parsed(self) -> None:
        """Citations cover their whole text block; sources list results, then citations."""
        result = AnthropicWebSearchCodec().parse_output(shannon_answer(), web_search_tool())
        intro = "I'll search for when Claude Shannon was born."
        cited_text = "Claude Shannon was born on April 30, 1916, in Petoskey, Michigan"
        start = len(intro) + len("Based on the search results, ")
        assert result == WebSearchResult(
            text=intro + "Based on the search results, " + cited_text,
            citations=(
                Citation(
                    url=SHANNON,
                    title="Claude Shannon - Wikipedia",
                    span=(start, start + len(cited_text)),
                ),
            ),
            source_urls=(SHANNON, BRITANNICA),
            calls=(
                WebSearchCall(
                    call_id="srvtoolu_01WYG3zi",
                    status="completed",
                    action="search",
                    queries=("claude shannon birth date",),
                ),
            ),
        )
        assert result.status == "completed"

    def test_an_error_result_gives_the_call_its_error_code(self) -> None:
        """max_uses_exceeded and friends are the call's status; the result is then failed."""
        items = [
            message(
                server_tool_use("srvtoolu_1", "web_search", {"query": "a"}),
                search_results("srvtoolu_1", search_result(SHANNON, "S")),
                server_tool_use("srvtoolu_2", "web_search", {"query": "b"}),
                search_error("srvtoolu_2", "max_uses_exceeded"),
                server_tool_use("srvtoolu_3", "web_search", {}),
                text("Partly found."),
            )
        ]
        result = AnthropicWebSearchCodec().parse_output(items, web_search_tool())
        assert result is not None
        assert [(call.status, call.queries) for call in result.calls] == [
            ("completed", ("a",)),
            ("max_uses_exceeded", ("b",)),
            ("incomplete", ()),
        ]
        assert result.status == "partial"

    def test_text_of_separate_turns_is_separated_and_spans_follow(self) -> None:
        """Two model turns' text is joined with a blank line; spans point into the join."""
        items = [
            message(
                server_tool_use("srvtoolu_1", "web_search", {"query": "q"}),
                search_results("srvtoolu_1"),
                text("First."),
            ),
            message(text("Second.", cited(SHANNON, "", "x"))),
        ]
        result = AnthropicWebSearchCodec().parse_output(items, web_search_tool())
        assert result is not None
        assert result.text == "First.\n\nSecond."
        assert result.citations == (Citation(url=SHANNON, title="", span=(8, 15)),)

    def test_no_search_means_no_result(self) -> None:
        """A turn without a web_search call gives None, even with other server tools."""
        items = [message(server_tool_use("s", "code_execution", {"code": "1"}), text("Hi"))]
        assert AnthropicWebSearchCodec().parse_output(items, web_search_tool()) is None

    @pytest.mark.parametrize(
        ("block", "path", "expected"),
        [
            (server_tool_use(3, "web_search", {}), "$.content[0].id", "a string"),  # type: ignore[arg-type]  # a malformed id is the point
            (
                {"type": "web_search_tool_result", "tool_use_id": "s", "content": "oops"},
                "$.content[0].content",
                "an array or null",
            ),
            (
                {"type": "web_search_tool_result", "tool_use_id": "s", "content": {"type": "x"}},
                "$.content[0].content",
                "a list of results or an error object",
            ),
            (
                {"type": "web_search_tool_result", "tool_use_id": "s", "content": [{"title": "t"}]},
                "$.content[0].content[0].url",
                "a string",
            ),
            (
                text("x", {"type": "web_search_result_location", "title": "t"}),
                "$.content[0].citations[0].url",
                "a string",
            ),
        ],
        ids=["call-id", "results-not-list", "unknown-content", "result-url", "citation-url"],
    )
    def test_malformed_blocks_name_their_path(
        self, block: dict[str, JSONValue], path: str, expected: str
    ) -> None:
        """A shape the codec cannot read is a parse error at an exact path."""
        items = [message(block, server_tool_use("ok", "web_search", {"query": "q"}))]
        tools = (web_search_tool(),)
        with pytest.raises(PromptEvaluationError) as caught:
            parse_hosted_outputs(tools, default_anthropic_codecs(), items, prompt_name="p")
        assert caught.value.phase == "parse"
        cause = caught.value.__cause__
        assert cause is not None
        assert getattr(cause, "path", None) == path
        assert getattr(cause, "expected", None) == expected


class TestCodeExecutionOptions:
    def test_python_and_bash_is_the_current_tool(self) -> None:
        """code_execution_20250825 runs Bash and Python; the spec has no options."""
        tool = code_interpreter_tool(CodeInterpreterConfig(allowed_languages=BOTH))
        assert wire(tool) == {"type": "code_execution_20250825", "name": "code_execution"}

    def test_python_only_needs_the_legacy_tool(self) -> None:
        """The default (Python only) is refused with the two ways out named."""
        reason = refusal(code_interpreter_tool())
        assert "code_execution_20250825 tool runs bash and python" in reason
        assert "allowed_languages=('python', 'bash')" in reason
        assert "tool_type='code_execution_20250522'" in reason
        legacy = AnthropicCodeExecutionCodec(tool_type="code_execution_20250522")
        assert legacy.serialize(code_interpreter_tool()) == {
            "type": "code_execution_20250522",
            "name": "code_execution",
        }

    @pytest.mark.parametrize(
        ("config", "complaint"),
        [
            (
                CodeInterpreterConfig(allowed_languages=("python", "bash", "r")),
                "cannot be limited or extended",
            ),
            (
                CodeInterpreterConfig(allowed_languages=BOTH, timeout_seconds=30),
                "has no time limit",
            ),
            (CodeInterpreterConfig(allowed_languages=BOTH, memory_limit_gb=4), "fixed memory size"),
            (
                CodeInterpreterConfig(allowed_languages=BOTH, network_domains=("pypi.org",)),
                "no internet access",
            ),
        ],
        ids=["languages", "timeout", "memory", "network"],
    )
    def test_options_anthropic_cannot_honour_are_refused(
        self, config: CodeInterpreterConfig, complaint: str
    ) -> None:
        """Refused before sending, naming what to change."""
        assert complaint in refusal(code_interpreter_tool(config))

    @pytest.mark.parametrize(
        "config",
        [
            CodeInterpreterConfig(allowed_languages=BOTH, network_domains=()),
            CodeInterpreterConfig(allowed_languages=BOTH, file_ids=("file_1",)),
            CodeInterpreterConfig(allowed_languages=BOTH, container_id="container_1"),
        ],
        ids=["no-network", "files", "container"],
    )
    def test_options_it_honours_elsewhere_leave_the_spec_alone(
        self, config: CodeInterpreterConfig
    ) -> None:
        """No network is the sandbox's own rule; files and containers go in the request."""
        assert wire(code_interpreter_tool(config)) == {
            "type": "code_execution_20250825",
            "name": "code_execution",
        }


def python_run() -> dict[str, JSONValue]:
    """The code execution guide's Python example (code_execution_20250522 blocks)."""
    return message(
        server_tool_use(
            "srvtoolu_01A2B3C4",
            "code_execution",
            {"code": "import numpy as np\nprint(np.mean([1, 2, 3]))"},
        ),
        {
            "type": "code_execution_tool_result",
            "tool_use_id": "srvtoolu_01A2B3C4",
            "content": {
                "type": "code_execution_result",
                "stdout": "2.0\n",
                "stderr": "",
                "return_code": 0,
                "content": [],
            },
        },
        text("The mean is 2.0."),
    )


def bash_run() -> dict[str, JSONValue]:
    """The guide's Bash and file example (code_execution_20250825 blocks) with an output file."""
    return message(
        server_tool_use("srvtoolu_bash", "bash_code_execution", {"command": "python plot.py"}),
        {
            "type": "bash_code_execution_tool_result",
            "tool_use_id": "srvtoolu_bash",
            "content": {
                "type": "bash_code_execution_result",
                "stdout": "saved chart.png\n",
                "stderr": "warning: font cache\n",
                "return_code": 0,
                "content": [{"type": "bash_code_execution_output", "file_id": "file_chart"}],
            },
        },
        server_tool_use(
            "srvtoolu_edit",
            "text_editor_code_execution",
            {"command": "create", "path": "notes.txt", "file_text": "x"},
        ),
        {
            "type": "text_editor_code_execution_tool_result",
            "tool_use_id": "srvtoolu_edit",
            "content": {
                "type": "text_editor_code_execution_create_result",
                "is_file_update": False,
            },
        },
        text("Saved the chart."),
        container={"id": "container_011", "expires_at": "2026-01-01T00:00:00Z"},
    )


class TestCodeExecutionResults:
    def test_a_python_run_is_parsed(self) -> None:
        """Code, stdout and exit code of the run; no container reported."""
        result = AnthropicCodeExecutionCodec().parse_output([python_run()], code_interpreter_tool())
        assert result == CodeInterpreterResult(
            code="import numpy as np\nprint(np.mean([1, 2, 3]))",
            stdout="2.0\n",
            stderr="",
            exit_code=0,
            executions=(
                CodeExecution(
                    call_id="srvtoolu_01A2B3C4",
                    status="completed",
                    code="import numpy as np\nprint(np.mean([1, 2, 3]))",
                    logs="2.0\n",
                ),
            ),
        )

    def test_a_bash_run_with_an_output_file_is_parsed_and_file_edits_are_not_runs(
        self,
    ) -> None:
        """stderr is kept apart; files are listed by id in the message's container."""
        result = AnthropicCodeExecutionCodec().parse_output([bash_run()], code_interpreter_tool())
        assert result is not None
        assert [run.call_id for run in result.executions] == ["srvtoolu_bash"]
        (run,) = result.executions
        assert (run.code, run.logs, run.container_id) == (
            "python plot.py",
            "saved chart.png\nwarning: font cache\n",
            "container_011",
        )
        assert (result.stdout, result.stderr) == ("saved chart.png\n", "warning: font cache\n")
        assert result.files == (
            ContainerFile(file_id="file_chart", filename="", container_id="container_011"),
        )

    def test_errors_encrypted_output_and_missing_results(self) -> None:
        """An error code is the status; encrypted stdout is empty; no result is incomplete."""
        items = [
            message(
                server_tool_use("s1", "code_execution", {"code": "loop()"}),
                {
                    "type": "code_execution_tool_result",
                    "tool_use_id": "s1",
                    "content": {
                        "type": "code_execution_tool_result_error",
                        "error_code": "execution_time_exceeded",
                    },
                },
                server_tool_use("s2", "code_execution", {"code": "search()"}),
                {
                    "type": "code_execution_tool_result",
                    "tool_use_id": "s2",
                    "content": {
                        "type": "encrypted_code_execution_result",
                        "encrypted_stdout": "EuQ...",
                        "stderr": "",
                        "return_code": 1,
                        "content": [],
                    },
                },
                server_tool_use("s3", "bash_code_execution", {"command": "ls"}),
            )
        ]
        result = AnthropicCodeExecutionCodec().parse_output(items, code_interpreter_tool())
        assert result is not None
        assert [(run.status, run.logs) for run in result.executions] == [
            ("execution_time_exceeded", ""),
            ("completed", ""),
            ("incomplete", ""),
        ]
        assert result.exit_code == 1
        assert result.status == "partial"

    def test_no_run_means_no_result(self) -> None:
        """Web search alone is not code execution."""
        assert (
            AnthropicCodeExecutionCodec().parse_output(shannon_answer(), code_interpreter_tool())
            is None
        )

    @pytest.mark.parametrize(
        ("content", "path", "expected"),
        [
            (
                {"type": "code_execution_result", "stdout": "", "stderr": ""},
                "$.content[1].content.return_code",
                "an integer",
            ),
            (
                {"type": "surprise"},
                "$.content[1].content.type",
                "code_execution_result or code_execution_tool_result_error or "
                "encrypted_code_execution_result",
            ),
            ("text", "$.content[1].content", "an object"),
        ],
        ids=["no-return-code", "unknown-type", "not-an-object"],
    )
    def test_malformed_results_name_their_path(
        self, content: JSONValue, path: str, expected: str
    ) -> None:
        """A result the codec cannot read is an error at an exact path."""
        items = [
            message(
                server_tool_use("s1", "code_execution", {"code": "1"}),
                {"type": "code_execution_tool_result", "tool_use_id": "s1", "content": content},
            )
        ]
        with pytest.raises(HostedOutputParseError) as caught:
            AnthropicCodeExecutionCodec().parse_output(items, code_interpreter_tool())
        assert (caught.value.path, caught.value.expected) == (path, expected)


def test_container_ids_are_read_only_from_container_objects() -> None:
    """A message without a container, or with a malformed one, has none."""
    assert container_id(message()) is None
    assert container_id(message(container={"id": 3})) is None
    assert container_id(message(container={"id": "c"})) == "c"
