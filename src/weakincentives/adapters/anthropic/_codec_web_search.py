"""Anthropic codec for the ``web_search`` hosted tool.

Wire format from the ``anthropic`` SDK's ``web_search_tool_20250305_param.py`` and the
web search tool guide: ``{"type": "web_search_20250305", "name": "web_search"}`` with
optional ``allowed_domains`` or ``blocked_domains`` (not both: the API refuses the
pair), ``user_location`` (``type: approximate`` with ``city``, ``region``,
``country``, ``timezone``) and ``max_uses``. There is no search context size and no
cache-only mode, so those options are refused.

A search shows up as a ``server_tool_use`` block named ``web_search`` (``input.query``)
answered by a ``web_search_tool_result`` block whose ``content`` is a list of
``web_search_result`` (``url``, ``title``, ``encrypted_content``, ``page_age``) or an
error object (``type: web_search_tool_result_error``, ``error_code``). Text blocks
carry ``web_search_result_location`` citations (``url``, ``title``, ``cited_text``,
``encrypted_index``); a citation covers the whole text block it is attached to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, Literal

from weakincentives.adapters._user_location import approximate_location
from weakincentives.adapters.anthropic._blocks import Block, message_blocks
from weakincentives.adapters.openai._codec_reader import ItemReader
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

__all__ = ["AnthropicWebSearchCodec", "WebSearchToolType"]

type WebSearchToolType = Literal["web_search_20250305", "web_search_20260209"]
"""Tool versions with the options this codec sends; both take the same options."""

_TURN_SEPARATOR = "\n\n"


class AnthropicWebSearchCodec:
    """Serializes ``WebSearchConfig`` to Anthropic's web search tool and parses its results."""

    def __init__(self, *, tool_type: WebSearchToolType = "web_search_20250305") -> None:
        self._tool_type: str = tool_type

    kind: Final = WEB_SEARCH_KIND
    """Always ``"web_search"``: the hosted tool kind this codec serves."""

    def serialize(self, tool: HostedTool[WebSearchConfig]) -> dict[str, JSONValue]:
        """Build the ``{"type": "web_search_...", "name": "web_search", ...}`` spec."""
        config = tool.config
        _refuse_unsupported(config)
        spec: dict[str, JSONValue] = {"type": self._tool_type, "name": "web_search"}
        domains = config.domain_filter
        if domains is not None and domains.allowed:
            spec["allowed_domains"] = list(domains.allowed)
        if domains is not None and domains.blocked:
            spec["blocked_domains"] = list(domains.blocked)
        if config.geo_hint is not None:
            spec["user_location"] = approximate_location(config.geo_hint)
        if config.max_uses is not None:
            spec["max_uses"] = config.max_uses
        return spec

    def parse_output(
        self,
        response_items: Sequence[Mapping[str, JSONValue]],
        tool: HostedTool[WebSearchConfig],
    ) -> WebSearchResult | None:
        """Collect searches, their results and cited passages; None if no search ran."""
        queries: dict[str, tuple[str, ...]] = {}
        outcomes: dict[str, str] = {}
        sources: dict[str, None] = {}
        texts: list[str] = []
        citations: list[Citation] = []
        offset = 0
        last_turn: int | None = None
        for block in message_blocks(
            response_items, kind=WEB_SEARCH_KIND, output_type=WebSearchResult
        ):
            reader = block.reader
            if block.kind == "server_tool_use" and reader.item.get("name") == "web_search":
                queries[reader.string(reader.item, "id", reader.path)] = _queries(reader)
            elif block.kind == "web_search_tool_result":
                call_id, outcome = _read_result(reader, sources)
                outcomes[call_id] = outcome
            elif block.kind == "text":
                if texts and block.turn != last_turn:
                    texts.append(_TURN_SEPARATOR)
                    offset += len(_TURN_SEPARATOR)
                last_turn = block.turn
                text = reader.string(reader.item, "text", reader.path)
                span = (offset, offset + len(text))
                for citation in _read_citations(block, span):
                    citations.append(citation)
                    sources.setdefault(citation.url)
                texts.append(text)
                offset += len(text)
        if not queries:
            return None
        calls = tuple(
            WebSearchCall(
                call_id=call_id,
                status=outcomes.get(call_id, "incomplete"),
                action="search",
                queries=searched,
            )
            for call_id, searched in queries.items()
        )
        return WebSearchResult(
            text="".join(texts),
            citations=tuple(citations),
            source_urls=tuple(sources),
            calls=calls,
        )


def _refuse_unsupported(config: WebSearchConfig) -> None:
    problems: list[ConfigProblem] = []
    domains = config.domain_filter
    if domains is not None and domains.allowed and domains.blocked:
        problems.append(
            ConfigProblem(
                "domain_filter",
                domains,
                "Anthropic web search takes allowed_domains or blocked_domains, not both in "
                "one request; keep one list in the DomainFilter",
            )
        )
    if config.search_context_size is not None:
        problems.append(
            ConfigProblem(
                "search_context_size",
                config.search_context_size,
                "Anthropic web search has no search context size; leave "
                "WebSearchConfig.search_context_size as None",
            )
        )
    if not config.allow_live_access:
        problems.append(
            ConfigProblem(
                "allow_live_access",
                config.allow_live_access,
                "Anthropic web search always searches live; it cannot be limited to a "
                "cache, so leave WebSearchConfig.allow_live_access as True",
            )
        )
    raise_config_problems(WebSearchConfig, problems)


def _queries(reader: ItemReader) -> tuple[str, ...]:
    tool_input = reader.optional_object(reader.item, "input", reader.path)
    if tool_input is None:
        return ()
    query = reader.optional_string(tool_input, "query", f"{reader.path}.input")
    return (query,) if query else ()


def _read_result(reader: ItemReader, sources: dict[str, None]) -> tuple[str, str]:
    """The call id a result answers and its outcome: ``completed`` or the error code."""
    block, path = reader.item, reader.path
    call_id = reader.string(block, "tool_use_id", path)
    content = block.get("content")
    if isinstance(content, dict):
        if content.get("type") != "web_search_tool_result_error":
            raise reader.fail(f"{path}.content", "a list of results or an error object", content)
        return call_id, reader.string(content, "error_code", f"{path}.content")
    for result_path, raw in reader.array(block, "content", path):
        result = reader.object(raw, result_path)
        sources.setdefault(reader.string(result, "url", result_path))
    return call_id, "completed"


def _read_citations(block: Block, span: tuple[int, int]) -> list[Citation]:
    reader = block.reader
    found: list[Citation] = []
    for path, raw in reader.array(reader.item, "citations", reader.path):
        citation = reader.object(raw, path)
        if citation.get("type") != "web_search_result_location":
            continue
        found.append(
            Citation(
                url=reader.string(citation, "url", path),
                title=reader.optional_string(citation, "title", path) or "",
                span=span,
            )
        )
    return found
