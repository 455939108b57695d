"""Seed 001 (hosted tools): the four usage examples, evaluated offline with fixture items.

The offline adapter replays Responses-API items (a web search and a cited message), so
the OpenAI codec parses them exactly as it would parse a live reply.

Run: python examples/seed_001_hosted_tools.py
"""

from __future__ import annotations

from dataclasses import dataclass

from weakincentives.adapters import OfflineAdapter, ScriptedTurn
from weakincentives.adapters.openai import default_openai_codecs
from weakincentives.prompt import MarkdownSection, Prompt
from weakincentives.runtime import InProcessEventBus, Session
from weakincentives.serde import JSONValue
from weakincentives.tools import (
    DomainFilter,
    GeoHint,
    WebSearchConfig,
    WebSearchResult,
    WebSearchSection,
    web_search_tool,
)


@dataclass(frozen=True)
class Answer:
    answer: str


@dataclass(frozen=True)
class QuestionParams:
    question: str


# --- Basic Web Search (completed: `$question` needs a params type) --------------------------
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
)

SOURCE = "https://www.cdc.gov/flu/vaccines/index.html"
TEXT = "The CDC recommends a yearly flu vaccine for everyone 6 months and older."
search_items: tuple[dict[str, JSONValue], ...] = (
    {
        "id": "ws_1",
        "type": "web_search_call",
        "status": "completed",
        "action": {
            "type": "search",
            "query": "CDC flu vaccine",
            "sources": [{"type": "url", "url": SOURCE}],
        },
    },
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [
            {
                "type": "output_text",
                "text": TEXT,
                "annotations": [
                    {
                        "type": "url_citation",
                        "url": SOURCE,
                        "title": "Flu vaccines | CDC",
                        "start_index": 0,
                        "end_index": len(TEXT),
                    }
                ],
            }
        ],
    },
)
adapter = OfflineAdapter(
    [
        ScriptedTurn(raw_items=search_items, output=Answer(answer=TEXT)),
    ],
    hosted_tool_codecs=default_openai_codecs(),  # the fixture items are Responses API items
)
bus = InProcessEventBus()
session = Session(bus=bus)
response = adapter.evaluate(
    prompt, QuestionParams(question="Who should get a flu vaccine?"), bus=bus, session=session
)

# Callers access parsed outputs by tool name:
web_result = response.hosted_outputs.get("web_search")
if web_result:
    assert isinstance(web_result, WebSearchResult)
    for citation in web_result.citations:
        print(f"- [{citation.title}]({citation.url})")
print("answer:", response.output)

OPENAI_CODECS = default_openai_codecs()  # by hosted tool kind

# --- Domain-Restricted Search ---------------------------------------------------------------
config = WebSearchConfig(
    domain_filter=DomainFilter(
        allowed=("pubmed.ncbi.nlm.nih.gov", "www.cdc.gov", "www.who.int"),
    ),
)

section = WebSearchSection(config=config)
print("domain-restricted wire spec:", OPENAI_CODECS["web_search"].serialize(section.tool))

# --- Geo-Localized Search -------------------------------------------------------------------
config = WebSearchConfig(
    geo_hint=GeoHint(
        country_code="GB",
        city="London",
        timezone="Europe/London",
    ),
)

section = WebSearchSection(config=config)
print("geo-localized wire spec:", OPENAI_CODECS["web_search"].serialize(section.tool))


# --- Inline Tool Construction (completed: `$topic` needs a params type) ---------------------
@dataclass(frozen=True)
class TopicParams:
    topic: str


tool = web_search_tool(
    WebSearchConfig(allow_live_access=False),
    name="cached_search",
)

research_section = MarkdownSection[TopicParams](
    title="Research",
    key="research",
    template="Find information about $topic",
    hosted_tools=(tool,),
)
print("inline tool wire spec:", OPENAI_CODECS["web_search"].serialize(tool))
rendered = Prompt(ns="research", key="inline", sections=[research_section]).render(
    TopicParams(topic="tides")
)
assert rendered.hosted_tools == (tool,)
