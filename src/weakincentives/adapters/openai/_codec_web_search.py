"""OpenAI Responses API codec for the ``web_search`` hosted tool.

Wire format checked against the ``openai`` SDK's ``WebSearchToolParam``: the
tool accepts ``filters.allowed_domains``, ``user_location`` (approximate),
``search_context_size`` and ``external_web_access``. It has no blocked-domain
list and no per-tool cap on searches, so those options are refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from weakincentives.adapters._user_location import approximate_location
from weakincentives.adapters.openai._codec_reader import (
    ItemReader,
    message_text_parts,
    output_items,
)
from weakincentives.prompt import HostedTool
from weakincentives.serde import JSONValue
from weakincentives.tools import (
    WEB_SEARCH_KIND,
    Citation,
    ConfigProblem,
    WebSearchCall,
    WebSearchConfig,
    WebSearchResult,
    raise_config_problems,
)

__all__ = ["WEB_SEARCH_SOURCES_INCLUDE", "OpenAIWebSearchCodec"]

WEB_SEARCH_SOURCES_INCLUDE = "web_search_call.action.sources"
"""The ``include`` entry that makes the API report every source a search consulted."""

_MESSAGE_SEPARATOR = "\n\n"


class OpenAIWebSearchCodec:
    """Serializes ``WebSearchConfig`` to OpenAI's ``web_search`` tool and parses its results."""

    kind: Final = WEB_SEARCH_KIND
    """Always ``"web_search"``: the hosted tool kind this codec serves."""

    def serialize(self, tool: HostedTool[WebSearchConfig]) -> dict[str, JSONValue]:
        """Build the ``{"type": "web_search", ...}`` spec, refusing options OpenAI lacks."""
        config = tool.config
        _refuse_unsupported(config)
        spec: dict[str, JSONValue] = {"type": "web_search"}
        if config.domain_filter is not None and config.domain_filter.allowed:
            allowed: list[JSONValue] = list(config.domain_filter.allowed)
            spec["filters"] = {"allowed_domains": allowed}
        if config.geo_hint is not None:
            spec["user_location"] = approximate_location(config.geo_hint)
        if config.search_context_size is not None:
            spec["search_context_size"] = config.search_context_size
        if not config.allow_live_access:
            spec["external_web_access"] = False
        return spec

    def parse_output(
        self,
        response_items: Sequence[Mapping[str, JSONValue]],
        tool: HostedTool[WebSearchConfig],
    ) -> WebSearchResult | None:
        """Collect searches, cited passages and consulted URLs; None if no search ran."""
        calls: list[WebSearchCall] = []
        sources: dict[str, None] = {}
        texts: list[str] = []
        citations: list[Citation] = []
        offset = 0
        for item_type, reader in output_items(
            response_items, kind=WEB_SEARCH_KIND, output_type=WebSearchResult
        ):
            if item_type == "web_search_call":
                calls.append(_read_call(reader, sources))
            elif item_type == "message":
                first_part = True
                for part in message_text_parts(reader):
                    if texts and first_part:
                        texts.append(_MESSAGE_SEPARATOR)
                        offset += len(_MESSAGE_SEPARATOR)
                    first_part = False
                    for path, annotation in part.annotations:
                        if annotation.get("type") == "url_citation":
                            citation = _read_citation(reader, annotation, path, offset)
                            citations.append(citation)
                            sources.setdefault(citation.url)
                    texts.append(part.text)
                    offset += len(part.text)
        if not calls:
            return None
        return WebSearchResult(
            text="".join(texts),
            citations=tuple(citations),
            source_urls=tuple(sources),
            calls=tuple(calls),
        )


def _refuse_unsupported(config: WebSearchConfig) -> None:
    problems: list[ConfigProblem] = []
    if config.domain_filter is not None and config.domain_filter.blocked:
        problems.append(
            ConfigProblem(
                "domain_filter",
                config.domain_filter.blocked,
                "OpenAI web search cannot block domains (its filters only take "
                "allowed_domains); remove DomainFilter.blocked or list the domains to allow",
            )
        )
    if config.max_uses is not None:
        problems.append(
            ConfigProblem(
                "max_uses",
                config.max_uses,
                "OpenAI web search has no per-tool limit on searches; leave "
                "WebSearchConfig.max_uses as None (the request-wide max_tool_calls caps all "
                "built-in tool calls together)",
            )
        )
    raise_config_problems(WebSearchConfig, problems)


def _read_call(reader: ItemReader, sources: dict[str, None]) -> WebSearchCall:
    item, path = reader.item, reader.path
    call_id = reader.string(item, "id", path)
    status = reader.string(item, "status", path)
    action = reader.optional_object(item, "action", path)
    if action is None:
        return WebSearchCall(call_id=call_id, status=status)
    action_path = f"{path}.action"
    queries: dict[str, None] = {}
    query = reader.optional_string(action, "query", action_path)
    if query:
        queries.setdefault(query)
    for query_path, value in reader.array(action, "queries", action_path):
        if not isinstance(value, str):
            raise reader.fail(query_path, "a string", value)
        queries.setdefault(value)
    page_url = reader.optional_string(action, "url", action_path)
    if page_url:
        sources.setdefault(page_url)
    for source_path, raw in reader.array(action, "sources", action_path):
        source = reader.object(raw, source_path)
        url = reader.optional_string(source, "url", source_path)
        if url:
            sources.setdefault(url)
    return WebSearchCall(
        call_id=call_id,
        status=status,
        action=reader.optional_string(action, "type", action_path),
        queries=tuple(queries),
    )


def _read_citation(
    reader: ItemReader, annotation: Mapping[str, JSONValue], path: str, offset: int
) -> Citation:
    url = reader.string(annotation, "url", path)
    title = reader.optional_string(annotation, "title", path) or ""
    start = reader.index(annotation, "start_index", path)
    end = reader.index(annotation, "end_index", path)
    if end < start:
        raise reader.fail(f"{path}.end_index", f"an index at least start_index ({start})", end)
    return Citation(url=url, title=title, span=(offset + start, offset + end))
