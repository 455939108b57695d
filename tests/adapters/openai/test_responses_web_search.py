"""Web search as a hosted tool, end to end through the OpenAI adapter over real HTTP.

The seed's usage examples run here as written (the basic one with a params
dataclass for its ``$question``), against the loopback server. Each checks the
exact ``tools`` and ``include`` entries the provider received and the parsed
``hosted_outputs``; options the provider cannot honour and unknown kinds fail
before any request is sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import pytest

from tests.adapters.conftest import (
    OpenAILoopback,
    load_output,
    load_response,
    ok,
    response_body,
)
from tests.adapters.openai.test_responses import FINAL_TEXT, WEATHER
from weakincentives.errors import ConfigValidationError, PromptEvaluationError
from weakincentives.prompt import EmptyParams, HostedTool, MarkdownSection, Prompt
from weakincentives.runtime import InProcessEventBus, PromptRendered, Session
from weakincentives.serde import JSONValue
from weakincentives.tools import (
    Citation,
    DomainFilter,
    GeoHint,
    WebSearchCall,
    WebSearchConfig,
    WebSearchResult,
    WebSearchSection,
    web_search_tool,
)

pytest.importorskip("openai")

SOURCES_INCLUDE = ["web_search_call.action.sources"]
CDC = "https://www.cdc.gov/flu/vaccines/index.html"
WHO = "https://www.who.int/news-room/fact-sheets/detail/influenza-(seasonal)"
PUBMED = "https://pubmed.ncbi.nlm.nih.gov/38012345/"
MET_OFFICE = "https://www.metoffice.gov.uk/weather/forecast/gcpvj0v07"
PYTHON_DOCS = "https://docs.python.org/3/whatsnew/3.13.html"


@dataclass(frozen=True, slots=True)
class QuestionParams:
    question: str


@dataclass(frozen=True, slots=True)
class TopicParams:
    topic: str


@dataclass(frozen=True, slots=True)
class Answer:
    answer: str


def task(template: str) -> MarkdownSection[EmptyParams]:
    return MarkdownSection(title="Task", key="task", template=template)


def message_text(fixture: str) -> str:
    """The answer text of a web search fixture (its second output item)."""
    message = load_output(fixture)[1]
    assert isinstance(message, dict)
    content = message["content"]
    assert isinstance(content, list)
    part = content[0]
    assert isinstance(part, dict)
    text = part["text"]
    assert isinstance(text, str)
    return text


class TestWebSearchSection:
    def test_renders_instructions_and_contributes_the_tool(self) -> None:
        """The section asks the model to search and cite, and offers ``web_search_tool(config)``."""
        config = WebSearchConfig(search_context_size="low")
        section = WebSearchSection(config)
        rendered = Prompt(ns="research", key="lookup", sections=[section]).render()
        assert rendered.text.startswith("## 1 Web Search\nYou can search the web.")
        assert "Cite the pages you rely on" in rendered.text
        assert section.hosted_tools() == (web_search_tool(config),)
        assert rendered.hosted_tools == (web_search_tool(config),)
        assert (section.key, section.title, section.params_type) == (
            "web_search",
            "Web Search",
            EmptyParams,
        )
        assert (section.config, section.tool) == (config, web_search_tool(config))

    def test_defaults_to_the_default_config(self) -> None:
        """Without arguments the tool searches the whole web with provider defaults."""
        assert WebSearchSection().hosted_tools() == (web_search_tool(WebSearchConfig()),)

    def test_key_can_be_chosen(self) -> None:
        """``key=`` renames the section so two prompts' paths can differ."""
        assert WebSearchSection(key="search").key == "search"

    def test_rejects_a_config_of_another_tool(self) -> None:
        """Passing something other than a WebSearchConfig fails at construction."""
        with pytest.raises(
            ConfigValidationError, match="must be a WebSearchConfig, got dict"
        ) as caught:
            WebSearchSection(cast("WebSearchConfig", {"allowed": ["cdc.gov"]}))
        assert (caught.value.config_type, caught.value.field_name) == (WebSearchSection, "config")


class TestSeedExamples:
    def test_basic_web_search(
        self, openai_loopback: OpenAILoopback, bus: InProcessEventBus, session: Session
    ) -> None:
        """The seed's basic example: structured answer plus parsed citations and sources."""
        adapter = openai_loopback.adapter()
        openai_loopback.reply(ok(load_response("web_search_flu")))

        prompt = Prompt[Answer](
            ns="research",
            key="lookup",
            sections=[
                MarkdownSection[QuestionParams](
                    title="Task",
                    key="task",
                    template="Answer this question: $question",
                ),
                WebSearchSection(),
            ],
        ).bind(QuestionParams(question="Who should get a flu vaccine?"))

        response = adapter.evaluate(prompt, bus=bus, session=session)

        (body,) = openai_loopback.bodies
        assert body["tools"] == [{"type": "web_search"}]
        assert body["include"] == SOURCES_INCLUDE
        assert body["text"]["format"]["name"] == "Answer"
        assert body["input"][0]["content"].startswith(
            "## 1 Task\nAnswer this question: Who should get a flu vaccine?\n\n## 2 Web Search\n"
        )
        text = message_text("web_search_flu")
        assert response.output == Answer(
            answer="Everyone 6 months and older should get a flu vaccine every season "
            f"([cdc.gov]({CDC}))."
        )
        assert response.hosted_outputs == {
            "web_search": WebSearchResult(
                text=text,
                citations=(Citation(url=CDC, title="Getting a Flu Vaccine | CDC", span=(79, 133)),),
                source_urls=(CDC, WHO),
                calls=(
                    WebSearchCall(
                        call_id="ws_flu",
                        status="completed",
                        action="search",
                        queries=("who should get a flu vaccine",),
                    ),
                ),
            )
        }
        assert text[79:133] == f"[cdc.gov]({CDC})"
        (rendered,) = session.select(PromptRendered)
        assert rendered.hosted_tool_names == ("web_search",)

    def test_domain_restricted_search(self, openai_loopback: OpenAILoopback) -> None:
        """The seed's allowed-domains config becomes ``filters.allowed_domains``."""
        config = WebSearchConfig(
            domain_filter=DomainFilter(
                allowed=("pubmed.ncbi.nlm.nih.gov", "www.cdc.gov", "www.who.int"),
            ),
        )

        section = WebSearchSection(config=config)

        openai_loopback.reply(ok(load_response("web_search_domains")))
        prompt = Prompt(
            ns="research",
            key="vaccines",
            sections=[task("How well do flu vaccines work?"), section],
        )
        response = openai_loopback.adapter().evaluate(prompt)
        (body,) = openai_loopback.bodies
        assert body["tools"] == [
            {
                "type": "web_search",
                "filters": {
                    "allowed_domains": ["pubmed.ncbi.nlm.nih.gov", "www.cdc.gov", "www.who.int"]
                },
            }
        ]
        assert body["include"] == SOURCES_INCLUDE
        result = response.hosted_outputs["web_search"]
        assert isinstance(result, WebSearchResult)
        assert result.citations == (
            Citation(url=WHO, title="Influenza (seasonal)", span=(50, 130)),
            Citation(url=PUBMED, title="Influenza vaccine effectiveness, 2023", span=(176, 244)),
        )
        assert result.source_urls == (WHO, PUBMED, CDC)
        assert result.text == response.text == message_text("web_search_domains")

    def test_geo_localized_search(self, openai_loopback: OpenAILoopback) -> None:
        """The seed's GeoHint becomes an approximate ``user_location``."""
        config = WebSearchConfig(
            geo_hint=GeoHint(
                country_code="GB",
                city="London",
                timezone="Europe/London",
            ),
        )

        section = WebSearchSection(config=config)

        openai_loopback.reply(ok(load_response("web_search_london")))
        prompt = Prompt(
            ns="research", key="weekend", sections=[task("Will it rain this weekend?"), section]
        )
        response = openai_loopback.adapter().evaluate(prompt)
        (body,) = openai_loopback.bodies
        assert body["tools"] == [
            {
                "type": "web_search",
                "user_location": {
                    "type": "approximate",
                    "country": "GB",
                    "city": "London",
                    "timezone": "Europe/London",
                },
            }
        ]
        assert body["include"] == SOURCES_INCLUDE
        assert response.hosted_outputs["web_search"] == WebSearchResult(
            text=message_text("web_search_london"),
            citations=(
                Citation(url=MET_OFFICE, title="London forecast - Met Office", span=(59, 134)),
            ),
            source_urls=(MET_OFFICE,),
            calls=(
                WebSearchCall(
                    call_id="ws_london",
                    status="completed",
                    action="search",
                    queries=("London weather this weekend",),
                ),
            ),
        )

    def test_inline_tool_construction(self, openai_loopback: OpenAILoopback) -> None:
        """The seed's inline tool: cache-only search under its own name."""
        tool = web_search_tool(
            WebSearchConfig(allow_live_access=False),
            name="cached_search",
        )

        section = MarkdownSection[TopicParams](
            title="Research",
            key="research",
            template="Find information about $topic",
            hosted_tools=(tool,),
        )

        openai_loopback.reply(ok(load_response("web_search_cached")))
        prompt = Prompt(ns="research", key="topic", sections=[section])
        response = openai_loopback.adapter().evaluate(
            prompt, TopicParams(topic="free-threaded Python")
        )
        (body,) = openai_loopback.bodies
        assert body["tools"] == [{"type": "web_search", "external_web_access": False}]
        assert body["include"] == SOURCES_INCLUDE
        assert body["input"] == [
            {
                "role": "user",
                "content": "## 1 Research\nFind information about free-threaded Python",
            }
        ]
        assert list(response.hosted_outputs) == ["cached_search"]
        result = response.hosted_outputs["cached_search"]
        assert isinstance(result, WebSearchResult)
        assert result.citations == (
            Citation(url=PYTHON_DOCS, title="What's New In Python 3.13", span=(55, 118)),
        )
        assert result.source_urls == (PYTHON_DOCS,)
        assert result.calls == (
            WebSearchCall(
                call_id="ws_cached",
                status="completed",
                action="search",
                queries=("python 3.13 free-threaded build",),
            ),
        )


class TestSearchInTheToolLoop:
    def test_search_and_function_call_share_the_loop(self, openai_loopback: OpenAILoopback) -> None:
        """A search item is replayed with the function call, and outputs are read across rounds."""
        openai_loopback.reply(
            ok(load_response("web_search_then_call")), ok(load_response("final_answer"))
        )
        prompt = Prompt(
            ns="travel",
            key="weekend",
            sections=[
                MarkdownSection(
                    title="Task", key="task", template="Plan a weekend.", tools=(WEATHER,)
                ),
                WebSearchSection(),
            ],
        )
        response = openai_loopback.adapter().evaluate(prompt)
        first, second = openai_loopback.bodies
        weather_spec, search_spec = first["tools"]
        assert (weather_spec["name"], search_spec) == ("get_weather", {"type": "web_search"})
        assert second["input"][1:] == [
            *load_output("web_search_then_call"),
            {
                "type": "function_call_output",
                "call_id": "call_weather_lisbon",
                "output": 'Forecast for Lisbon\n\n{"city":"Lisbon","sky":"sunny","celsius":24}',
            },
        ]
        assert second["tools"] == first["tools"]
        assert second["include"] == SOURCES_INCLUDE
        assert response.hosted_outputs == {
            "web_search": WebSearchResult(
                text=FINAL_TEXT,
                source_urls=("https://www.ipma.pt/en/otempo/prev.localidade.hora/",),
                calls=(
                    WebSearchCall(
                        call_id="ws_lisbon",
                        status="completed",
                        action="search",
                        queries=("Lisbon weather this weekend",),
                    ),
                ),
            )
        }

    def test_caller_includes_are_kept_with_the_search_include(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """An ``include`` from ``request_options`` is merged with the tool's, without repeats."""
        openai_loopback.reply(ok(load_response("final_answer")))
        adapter = openai_loopback.adapter(
            request_options={
                "store": False,
                "include": ["reasoning.encrypted_content", "web_search_call.action.sources"],
            }
        )
        prompt = Prompt(ns="research", key="lookup", sections=[task("Hi."), WebSearchSection()])
        adapter.evaluate(prompt)
        assert openai_loopback.bodies[0]["include"] == [
            "reasoning.encrypted_content",
            "web_search_call.action.sources",
        ]

    def test_unused_search_has_no_output(self, openai_loopback: OpenAILoopback) -> None:
        """When the model answers without searching, ``hosted_outputs`` stays empty."""
        openai_loopback.reply(ok(load_response("final_answer")))
        prompt = Prompt(ns="research", key="lookup", sections=[task("Hi."), WebSearchSection()])
        response = openai_loopback.adapter().evaluate(prompt)
        assert response.hosted_outputs == {}
        assert response.text == FINAL_TEXT

    def test_malformed_search_item_is_a_parse_error(self, openai_loopback: OpenAILoopback) -> None:
        """A web_search_call without an id cannot be read: phase parse, with the item attached."""
        broken: dict[str, JSONValue] = {"type": "web_search_call", "status": "completed"}
        openai_loopback.reply(ok(response_body(broken)))
        prompt = Prompt(ns="research", key="lookup", sections=[task("Hi."), WebSearchSection()])
        with pytest.raises(PromptEvaluationError, match=r"\$\.output\[0\]\.id") as caught:
            openai_loopback.adapter().evaluate(prompt)
        assert caught.value.phase == "parse"
        assert caught.value.provider_payload == broken


@dataclass(frozen=True, slots=True)
class ImageConfig:
    size: str = "1024x1024"


class TestRefusedBeforeSending:
    def test_unsupported_kind_names_kind_and_adapter(self, openai_loopback: OpenAILoopback) -> None:
        """A kind without a codec fails at render time and the server sees no request."""
        drawing = HostedTool(
            kind="image_generation",
            name="draw",
            description="Draw a picture.",
            config=ImageConfig(),
        )
        prompt = Prompt(
            ns="art",
            key="poster",
            sections=[
                MarkdownSection(title="Task", key="task", template="Draw.", hosted_tools=(drawing,))
            ],
        )
        with pytest.raises(PromptEvaluationError) as caught:
            openai_loopback.adapter().evaluate(prompt)
        error = caught.value
        assert error.phase == "render"
        assert error.message == (
            "[render] prompt 'poster': hosted tool 'draw' has kind 'image_generation', which "
            "the openai adapter does not support (supported kinds: code_interpreter, web_search); "
            "register a codec for 'image_generation' in the adapter's hosted tool codecs"
        )
        assert openai_loopback.requests == []

    @pytest.mark.parametrize(
        ("config", "fragment"),
        [
            (
                WebSearchConfig(domain_filter=DomainFilter(blocked=("example.com",))),
                "OpenAI web search cannot block domains",
            ),
            (WebSearchConfig(max_uses=3), "OpenAI web search has no per-tool limit on searches"),
        ],
        ids=["blocked-domains", "max-uses"],
    )
    def test_option_the_provider_cannot_honour_fails_before_sending(
        self, openai_loopback: OpenAILoopback, config: WebSearchConfig, fragment: str
    ) -> None:
        """Refused options fail while the request is built, naming tool and option; no request."""
        prompt = Prompt(
            ns="research", key="lookup", sections=[task("Hi."), WebSearchSection(config)]
        )
        with pytest.raises(PromptEvaluationError, match=fragment) as caught:
            openai_loopback.adapter().evaluate(prompt)
        assert caught.value.phase == "render"
        assert caught.value.message.startswith(
            "[render] prompt 'lookup': hosted tool 'web_search' (kind 'web_search') cannot be "
            "sent with the openai adapter: "
        )
        assert openai_loopback.requests == []

    def test_two_searches_in_one_prompt_are_refused(self, openai_loopback: OpenAILoopback) -> None:
        """Two tools of one kind could not be told apart in the reply, so nothing is sent."""
        prompt = Prompt(
            ns="research",
            key="lookup",
            sections=[
                WebSearchSection(),
                MarkdownSection(
                    title="Archive",
                    key="archive",
                    template="Use the cache for old facts.",
                    hosted_tools=(web_search_tool(name="archive_search"),),
                ),
            ],
        )
        with pytest.raises(PromptEvaluationError, match="both have kind 'web_search'"):
            openai_loopback.adapter().evaluate(prompt)
        assert openai_loopback.requests == []
