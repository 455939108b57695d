"""The OpenAI web search codec: wire fields, result parsing and malformed replies."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import cast

import pytest

from weakincentives.adapters._hosted import HostedOutputParseError
from weakincentives.adapters.openai._codecs import OpenAIWebSearchCodec
from weakincentives.errors import ConfigValidationError
from weakincentives.serde import JSONValue
from weakincentives.tools import (
    Citation,
    DomainFilter,
    GeoHint,
    WebSearchCall,
    WebSearchConfig,
    WebSearchResult,
    web_search_tool,
)

FIXTURES = Path(__file__).parent.parent.parent / "fixtures" / "hosted_tools"
CDC = "https://www.cdc.gov/flu/vaccines/index.html?utm_source=openai"
WHO = (
    "https://www.who.int/news/item/28-02-2025-recommended-composition-of-influenza-virus-"
    "vaccines?utm_source=openai"
)
SEASON = "https://www.cdc.gov/flu/season/2025-2026.html"

type Item = dict[str, JSONValue]


def load_output(name: str) -> list[Item]:
    """The ``output`` array of a recorded Responses API reply."""
    response = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return cast(list[Item], response["output"])


def obj(value: JSONValue) -> dict[str, JSONValue]:
    """Narrow a fixture value known to be an object."""
    assert isinstance(value, dict)
    return value


def arr(value: JSONValue) -> list[JSONValue]:
    """Narrow a fixture value known to be an array."""
    assert isinstance(value, list)
    return value


def serialize(config: WebSearchConfig) -> dict[str, JSONValue]:
    return OpenAIWebSearchCodec().serialize(web_search_tool(config))


def parse(items: list[Item]) -> WebSearchResult | None:
    return OpenAIWebSearchCodec().parse_output(items, web_search_tool())


class TestSerialize:
    def test_kind_is_web_search(self) -> None:
        """The codec registers under the provider-neutral kind."""
        assert OpenAIWebSearchCodec().kind == "web_search"

    def test_default_config_is_bare_tool(self) -> None:
        """Without options only the tool type is sent."""
        assert serialize(WebSearchConfig()) == {"type": "web_search"}

    def test_allowed_domains_become_filters(self) -> None:
        """Allowed domains map to filters.allowed_domains, in order."""
        config = WebSearchConfig(domain_filter=DomainFilter(allowed=("who.int", "cdc.gov")))
        assert serialize(config) == {
            "type": "web_search",
            "filters": {"allowed_domains": ["who.int", "cdc.gov"]},
        }

    def test_empty_domain_filter_sends_no_filters(self) -> None:
        """A filter with nothing in it adds nothing to the spec."""
        assert serialize(WebSearchConfig(domain_filter=DomainFilter())) == {"type": "web_search"}

    def test_full_geo_hint_becomes_approximate_location(self) -> None:
        """Every GeoHint field maps to its user_location counterpart."""
        hint = GeoHint(country_code="GB", city="London", region="England", timezone="Europe/London")
        assert serialize(WebSearchConfig(geo_hint=hint)) == {
            "type": "web_search",
            "user_location": {
                "type": "approximate",
                "country": "GB",
                "city": "London",
                "region": "England",
                "timezone": "Europe/London",
            },
        }

    def test_partial_geo_hint_sends_only_set_fields(self) -> None:
        """Unset location fields are omitted rather than sent as null."""
        spec = serialize(WebSearchConfig(geo_hint=GeoHint(country_code="US")))
        assert spec["user_location"] == {"type": "approximate", "country": "US"}

    def test_empty_geo_hint_sends_bare_approximate_location(self) -> None:
        """An empty hint still opts out of the provider's default location."""
        spec = serialize(WebSearchConfig(geo_hint=GeoHint()))
        assert spec["user_location"] == {"type": "approximate"}

    @pytest.mark.parametrize("size", ["low", "medium", "high"])
    def test_search_context_size_is_sent(self, size: str) -> None:
        """The context size is passed through unchanged."""
        spec = serialize(WebSearchConfig(search_context_size=size))  # type: ignore[arg-type]  # str from parametrize
        assert spec == {"type": "web_search", "search_context_size": size}

    def test_cache_only_search_disables_external_access(self) -> None:
        """allow_live_access=False maps to external_web_access: false."""
        spec = serialize(WebSearchConfig(allow_live_access=False))
        assert spec == {"type": "web_search", "external_web_access": False}

    def test_blocked_domains_are_refused(self) -> None:
        """OpenAI has no blocked-domain filter, so blocking is an error, not a no-op."""
        config = WebSearchConfig(domain_filter=DomainFilter(blocked=("example.com",)))
        with pytest.raises(ConfigValidationError) as caught:
            serialize(config)
        assert caught.value.message == (
            "OpenAI web search cannot block domains (its filters only take allowed_domains); "
            "remove DomainFilter.blocked or list the domains to allow"
        )
        assert (caught.value.config_type, caught.value.field_name, caught.value.value) == (
            WebSearchConfig,
            "domain_filter",
            ("example.com",),
        )

    def test_max_uses_is_refused(self) -> None:
        """OpenAI has no per-tool search cap, so max_uses is an error, not a no-op."""
        with pytest.raises(ConfigValidationError) as caught:
            serialize(WebSearchConfig(max_uses=2))
        assert caught.value.message == (
            "OpenAI web search has no per-tool limit on searches; leave WebSearchConfig.max_uses "
            "as None (the request-wide max_tool_calls caps all built-in tool calls together)"
        )
        assert (caught.value.field_name, caught.value.value) == ("max_uses", 2)

    def test_every_unsupported_option_is_reported(self) -> None:
        """Blocked domains and max_uses together produce one error naming both."""
        config = WebSearchConfig(domain_filter=DomainFilter(blocked=("example.com",)), max_uses=1)
        with pytest.raises(ConfigValidationError, match=r"^2 problems in WebSearchConfig:\n"):
            serialize(config)


class TestParseFixtures:
    def test_search_with_citations_is_parsed_completely(self) -> None:
        """Calls, queries, citations with spans and every consulted URL are extracted."""
        items = load_output("web_search_with_citations")
        parts = arr(items[2]["content"])
        first, second = obj(parts[0])["text"], obj(parts[1])["text"]
        assert isinstance(first, str)
        assert isinstance(second, str)
        shift = len(first)
        assert shift == 383
        cdc_title = "Getting a Flu Vaccine | Influenza (Flu) | CDC"
        assert parse(items) == WebSearchResult(
            text=first + second,
            citations=(
                Citation(url=CDC, title=cdc_title, span=(102, 176)),
                Citation(
                    url=WHO,
                    title="Recommended composition of influenza virus vaccines",
                    span=(259, 382),
                ),
                Citation(url=CDC, title=cdc_title, span=(shift + 62, shift + 136)),
            ),
            source_urls=(CDC, SEASON, WHO),
            calls=(
                WebSearchCall(
                    call_id="ws_68f2a9c1d2e48190b1f0e2a3c4d5e6f7",
                    status="completed",
                    action="search",
                    queries=(
                        "CDC flu vaccine recommendation 2025-2026 season",
                        "WHO influenza vaccine composition 2025",
                    ),
                ),
                WebSearchCall(
                    call_id="ws_68f2a9c3a0b08190c2d3e4f5a6b7c8d9",
                    status="completed",
                    action="open_page",
                ),
            ),
        )

    def test_citation_spans_point_at_cited_passages(self) -> None:
        """Each span, shifted across text parts, slices out the markdown link it annotates."""
        result = parse(load_output("web_search_with_citations"))
        assert result is not None
        cited = [result.text[c.span[0] : c.span[1]] for c in result.citations if c.span]
        assert cited == [f"([cdc.gov]({CDC}))", f"([who.int]({WHO}))", f"([cdc.gov]({CDC}))"]

    def test_failed_search_is_reported_as_failed(self) -> None:
        """A failed call is kept with its status, and the result says the search failed."""
        result = parse(load_output("web_search_failed"))
        assert result is not None
        assert result.status == "failed"
        assert result.calls == (
            WebSearchCall(
                call_id="ws_68f2b01b55d08190aa11bb22cc33dd44",
                status="failed",
                action="search",
                queries=("site:cdc.gov measles cases this week",),
            ),
        )
        assert (result.citations, result.source_urls) == ((), ())
        assert result.text.startswith("I couldn't complete a web search just now")

    def test_successful_search_has_completed_status(self) -> None:
        """When every call completed the summary status is completed."""
        result = parse(load_output("web_search_with_citations"))
        assert result is not None
        assert result.status == "completed"

    @pytest.mark.parametrize("fixture", ["no_hosted_call", "code_interpreter_with_logs"])
    def test_response_without_search_yields_none(self, fixture: str) -> None:
        """No web_search_call item means the tool was not used."""
        assert parse(load_output(fixture)) is None


def _call(**action: JSONValue) -> Item:
    return {"id": "ws_1", "type": "web_search_call", "status": "completed", "action": action}


def _message(*parts: JSONValue) -> Item:
    return {"id": "msg_1", "type": "message", "role": "assistant", "content": list(parts)}


def _text(text: str, *annotations: JSONValue) -> JSONValue:
    return {"type": "output_text", "text": text, "annotations": list(annotations)}


def _url(url: str, start: int, end: int, title: JSONValue = "T") -> JSONValue:
    return {
        "type": "url_citation",
        "url": url,
        "title": title,
        "start_index": start,
        "end_index": end,
    }


class TestParseShapes:
    def test_call_without_action_is_kept(self) -> None:
        """A call reported without its action still counts, with no queries."""
        result = parse([{"id": "ws_1", "type": "web_search_call", "status": "in_progress"}])
        assert result == WebSearchResult(
            text="", calls=(WebSearchCall(call_id="ws_1", status="in_progress"),)
        )
        assert result.status == "failed"

    def test_several_messages_are_joined_with_spans_shifted(self) -> None:
        """Text from separate messages is separated by a blank line and spans follow it."""
        items = [
            _call(type="search", query="q"),
            _message(_text("Alpha.")),
            _message(_text("Beta (b).", _url("https://b.example", 5, 8))),
        ]
        result = parse(items)
        assert result is not None
        assert result.text == "Alpha.\n\nBeta (b)."
        assert result.citations == (Citation(url="https://b.example", title="T", span=(13, 16)),)
        assert result.text[13:16] == "(b)"

    def test_urls_are_deduplicated_in_order_of_first_appearance(self) -> None:
        """Sources, opened pages and cited URLs appear once, where first seen."""
        items = [
            _call(type="search", sources=[{"type": "url", "url": "https://a.example"}]),
            _message(_text("x", _url("https://c.example", 0, 1), _url("https://a.example", 0, 1))),
            _call(type="open_page", url="https://b.example"),
            _call(type="find_in_page", url="https://c.example", pattern="flu"),
        ]
        result = parse(items)
        assert result is not None
        assert result.source_urls == ("https://a.example", "https://c.example", "https://b.example")

    def test_missing_title_becomes_empty(self) -> None:
        """A citation without a title keeps its URL and span."""
        result = parse(
            [_call(type="search"), _message(_text("ab", _url("https://a.example", 0, 2, None)))]
        )
        assert result is not None
        assert result.citations == (Citation(url="https://a.example", title="", span=(0, 2)),)

    def test_other_annotations_parts_and_items_are_ignored(self) -> None:
        """File citations, refusals, URL-less sources, reasoning and untyped items are skipped."""
        items: list[Item] = [
            {"id": "rs_1", "type": "reasoning", "summary": []},
            {"note": "no type"},
            _call(type="search", query="", sources=[{"type": "api", "name": "oai-weather"}]),
            _message(
                {"type": "refusal", "refusal": "no"},
                _text("ok", {"type": "file_citation", "file_id": "f", "filename": "a", "index": 0}),
            ),
            {"id": "msg_2", "type": "message", "role": "assistant", "content": None},
        ]
        assert parse(items) == WebSearchResult(
            text="ok", calls=(WebSearchCall(call_id="ws_1", status="completed", action="search"),)
        )


def _mutated(mutate: str) -> list[Item]:
    items = copy.deepcopy(load_output("web_search_with_citations"))
    call, message = items[0], items[2]
    part = obj(arr(message["content"])[0])
    annotation = obj(arr(part["annotations"])[0])
    action = obj(call["action"])
    match mutate:
        case "annotations_not_list":
            part["annotations"] = "none"
        case "start_index_string":
            annotation["start_index"] = "102"
        case "start_index_bool":
            annotation["start_index"] = True
        case "start_index_negative":
            annotation["start_index"] = -1
        case "end_before_start":
            annotation["end_index"] = 50
        case "url_missing":
            del annotation["url"]
        case "title_number":
            annotation["title"] = 7
        case "annotation_not_object":
            arr(part["annotations"])[1] = "cite"
        case "content_not_list":
            message["content"] = {"type": "output_text"}
        case "part_not_object":
            message["content"] = ["text"]
        case "text_missing":
            del part["text"]
        case "call_id_missing":
            del call["id"]
        case "status_number":
            call["status"] = 200
        case "action_not_object":
            call["action"] = "search"
        case "sources_not_list":
            action["sources"] = "https://a.example"
        case "source_not_object":
            action["sources"] = ["https://a.example"]
        case "source_url_number":
            action["sources"] = [{"type": "url", "url": 1}]
        case "query_not_string":
            action["queries"] = ["ok", 3]
    return items


@pytest.mark.parametrize(
    ("mutate", "path", "expected", "got"),
    [
        (
            "annotations_not_list",
            "$.output[2].content[0].annotations",
            "an array or null",
            "string 'none'",
        ),
        (
            "start_index_string",
            "$.output[2].content[0].annotations[0].start_index",
            "a non-negative integer",
            "string '102'",
        ),
        (
            "start_index_bool",
            "$.output[2].content[0].annotations[0].start_index",
            "a non-negative integer",
            "boolean true",
        ),
        (
            "start_index_negative",
            "$.output[2].content[0].annotations[0].start_index",
            "a non-negative integer",
            "number -1",
        ),
        (
            "end_before_start",
            "$.output[2].content[0].annotations[0].end_index",
            "an index at least start_index (102)",
            "number 50",
        ),
        (
            "url_missing",
            "$.output[2].content[0].annotations[0].url",
            "a string",
            "nothing (the key is missing)",
        ),
        (
            "title_number",
            "$.output[2].content[0].annotations[0].title",
            "a string or null",
            "number 7",
        ),
        (
            "annotation_not_object",
            "$.output[2].content[0].annotations[1]",
            "an object",
            "string 'cite'",
        ),
        ("content_not_list", "$.output[2].content", "an array or null", "object"),
        ("part_not_object", "$.output[2].content[0]", "an object", "string 'text'"),
        ("text_missing", "$.output[2].content[0].text", "a string", "nothing (the key is missing)"),
        ("call_id_missing", "$.output[0].id", "a string", "nothing (the key is missing)"),
        ("status_number", "$.output[0].status", "a string", "number 200"),
        ("action_not_object", "$.output[0].action", "an object", "string 'search'"),
        (
            "sources_not_list",
            "$.output[0].action.sources",
            "an array or null",
            "string 'https://a.example'",
        ),
        (
            "source_not_object",
            "$.output[0].action.sources[0]",
            "an object",
            "string 'https://a.example'",
        ),
        ("source_url_number", "$.output[0].action.sources[0].url", "a string or null", "number 1"),
        ("query_not_string", "$.output[0].action.queries[1]", "a string", "number 3"),
    ],
)
def test_malformed_reply_raises_parse_error_with_path(
    mutate: str, path: str, expected: str, got: str
) -> None:
    """A wrong shape stops parsing with the JSON path, expectation and offending item."""
    items = _mutated(mutate)
    with pytest.raises(HostedOutputParseError) as caught:
        parse(items)
    error = caught.value
    assert (
        error.message == f"expected {expected}, got {got} at {path} while parsing WebSearchResult"
    )
    assert (error.path, error.kind, error.dataclass_type) == (path, "web_search", WebSearchResult)
    assert error.item is items[int(path[len("$.output[")])]
