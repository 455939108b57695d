"""Web search: provider-neutral configuration, parsed output and the tool factory."""

from __future__ import annotations

import functools
import zoneinfo
from dataclasses import dataclass
from typing import Final, Literal, get_args

from weakincentives.prompt import HostedTool
from weakincentives.tools._country_codes import COMMON_MISTAKES, ISO_3166_ALPHA2
from weakincentives.tools._status import overall_status
from weakincentives.tools._validation import (
    ConfigProblem,
    domain_tuple_problems,
    positive_int_problem,
    raise_config_problems,
)

__all__ = [
    "WEB_SEARCH_KIND",
    "Citation",
    "DomainFilter",
    "GeoHint",
    "SearchContextSize",
    "WebSearchCall",
    "WebSearchConfig",
    "WebSearchResult",
    "WebSearchStatus",
    "web_search_tool",
]

WEB_SEARCH_KIND: Final = "web_search"
"""The hosted tool kind adapters map to their web search capability."""

type SearchContextSize = Literal["low", "medium", "high"]
"""How much of the context window the provider may fill with search results."""

type WebSearchStatus = Literal["completed", "partial", "failed"]
"""Outcome of all searches in a response: every one, some, or none completed."""

_CONTEXT_SIZES: tuple[str, ...] = get_args(SearchContextSize.__value__)


@dataclass(frozen=True, slots=True, kw_only=True)
class DomainFilter:
    """Restrict which sites a search may draw on.

    Domains are bare lowercase host names (``"cdc.gov"``, not
    ``"https://www.cdc.gov/"``); subdomains of a listed domain are included.
    A domain may not be both allowed and blocked.
    """

    allowed: tuple[str, ...] = ()
    """Search only these domains (and their subdomains); empty means no restriction."""
    blocked: tuple[str, ...] = ()
    """Never use results from these domains."""

    def __post_init__(self) -> None:
        problems = [
            *domain_tuple_problems("DomainFilter", "allowed", self.allowed),
            *domain_tuple_problems("DomainFilter", "blocked", self.blocked),
        ]
        if isinstance(self.allowed, tuple) and isinstance(self.blocked, tuple):
            blocked = {domain for domain in self.blocked if isinstance(domain, str)}
            both = [d for d in dict.fromkeys(self.allowed) if isinstance(d, str) and d in blocked]
            if both:
                listed = ", ".join(repr(domain) for domain in both)
                problems.append(
                    ConfigProblem(
                        "blocked",
                        tuple(both),
                        f"DomainFilter lists {listed} as both allowed and blocked; "
                        "keep each domain in one list",
                    )
                )
        raise_config_problems(DomainFilter, problems)


@dataclass(frozen=True, slots=True, kw_only=True)
class GeoHint:
    """Approximate user location, so results can be localised.

    Every field is optional; an all-``None`` hint still tells a provider not to
    assume its own default location.
    """

    country_code: str | None = None
    """ISO 3166-1 alpha-2 code in upper case, such as ``"GB"``."""
    city: str | None = None
    """Free-text city name, such as ``"London"``."""
    region: str | None = None
    """Free-text region or state, such as ``"England"``."""
    timezone: str | None = None
    """IANA time zone name, such as ``"Europe/London"``."""

    def __post_init__(self) -> None:
        problems = [
            ConfigProblem(field_name, getattr(self, field_name), message)
            for field_name, message in (
                ("country_code", _country_problem(self.country_code)),
                ("city", _free_text_problem("GeoHint.city", self.city)),
                ("region", _free_text_problem("GeoHint.region", self.region)),
                ("timezone", _timezone_problem(self.timezone)),
            )
            if message is not None
        ]
        raise_config_problems(GeoHint, problems)


@dataclass(frozen=True, slots=True, kw_only=True)
class WebSearchConfig:
    """Options for a web search hosted tool.

    Every option is provider-neutral; an adapter whose provider cannot honour
    one that is set refuses the request rather than dropping it.
    """

    domain_filter: DomainFilter | None = None
    """Which sites to search; ``None`` searches the whole web."""
    geo_hint: GeoHint | None = None
    """Where the user is, for localised results; ``None`` leaves it to the provider."""
    allow_live_access: bool = True
    """``False`` restricts the search to the provider's cache (no live fetches)."""
    search_context_size: SearchContextSize | None = None
    """How much context the results may use; ``None`` keeps the provider default."""
    max_uses: int | None = None
    """Upper bound on searches per response; ``None`` leaves it to the provider."""

    def __post_init__(self) -> None:
        problems: list[ConfigProblem] = []
        typed_fields: tuple[tuple[str, object, type[object], str], ...] = (
            ("domain_filter", self.domain_filter, DomainFilter, "a DomainFilter or None"),
            ("geo_hint", self.geo_hint, GeoHint, "a GeoHint or None"),
            ("allow_live_access", self.allow_live_access, bool, "a bool"),
        )
        for field_name, value, expected, wanted in typed_fields:
            if (value is None and expected is not bool) or isinstance(value, expected):
                continue
            problems.append(
                ConfigProblem(
                    field_name,
                    value,
                    f"WebSearchConfig.{field_name} must be {wanted}, got {type(value).__name__}",
                )
            )
        size = self.search_context_size
        if size is not None and size not in _CONTEXT_SIZES:
            problems.append(
                ConfigProblem(
                    "search_context_size",
                    size,
                    f"WebSearchConfig.search_context_size {size!r} must be one of "
                    f"{', '.join(repr(option) for option in _CONTEXT_SIZES)}, or None",
                )
            )
        uses_problem = positive_int_problem("WebSearchConfig.max_uses", self.max_uses)
        if uses_problem is not None:
            problems.append(ConfigProblem("max_uses", self.max_uses, uses_problem))
        raise_config_problems(WebSearchConfig, problems)


@dataclass(frozen=True, slots=True, kw_only=True)
class Citation:
    """A passage of the answer attributed to a web page."""

    url: str
    """The cited page."""
    title: str
    """The page title as the provider reported it (may be empty)."""
    span: tuple[int, int] | None = None
    """``(start, end)`` character offsets of the cited passage in ``WebSearchResult.text``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WebSearchCall:
    """One search the provider ran (or tried to) while answering."""

    call_id: str
    """The provider's id for the call."""
    status: str
    """The provider's status word, such as ``"completed"`` or ``"failed"``."""
    action: str | None = None
    """What the call did (``"search"``, ``"open_page"``, ...), when reported."""
    queries: tuple[str, ...] = ()
    """The queries sent to the search engine, when reported."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WebSearchResult:
    """What a response reports about its web searches and the answer built from them."""

    text: str
    """The answer text the citations point into (all text parts, in order)."""
    citations: tuple[Citation, ...] = ()
    """Every cited passage, in order of appearance."""
    source_urls: tuple[str, ...] = ()
    """Every URL consulted or cited, once each, in order of first appearance."""
    calls: tuple[WebSearchCall, ...] = ()
    """Each search call, in order, with its status."""

    @property
    def status(self) -> WebSearchStatus:
        """``completed`` if every call completed, ``failed`` if none did, else ``partial``."""
        return overall_status([call.status for call in self.calls])


def web_search_tool(
    config: WebSearchConfig | None = None,
    *,
    name: str = WEB_SEARCH_KIND,
) -> HostedTool[WebSearchConfig]:
    """Create a web search hosted tool; ``config`` defaults to ``WebSearchConfig()``."""
    return HostedTool(
        kind=WEB_SEARCH_KIND,
        name=name,
        description="Search the web for current information and cite sources.",
        config=WebSearchConfig() if config is None else config,
    )


def _country_problem(code: object) -> str | None:
    if code is None:
        return None
    if not isinstance(code, str):
        return f"GeoHint.country_code must be a string, got {type(code).__name__}"
    if code in ISO_3166_ALPHA2:
        return None
    where = f"GeoHint.country_code {code!r}"
    upper = code.strip().upper()
    if upper in ISO_3166_ALPHA2:
        return f"{where} must be an upper-case ISO 3166-1 alpha-2 code; use {upper!r}"
    if upper in COMMON_MISTAKES:
        return f"{where} is not an assigned ISO 3166-1 alpha-2 code; use {COMMON_MISTAKES[upper]!r}"
    return f"{where} is not an officially assigned ISO 3166-1 alpha-2 code (such as 'US', 'GB')"


def _free_text_problem(where: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        return f"{where} must be a string, got {type(value).__name__}"
    if not value.strip():
        return f"{where} must not be blank; use None to leave it out"
    if value != value.strip():
        return f"{where} {value!r} has surrounding whitespace; use {value.strip()!r}"
    return None


def _timezone_problem(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        return f"GeoHint.timezone must be a string, got {type(value).__name__}"
    zones = _timezones()
    if value in zones:
        return None
    where = f"GeoHint.timezone {value!r}"
    if not zones:
        return (
            f"{where} cannot be checked: this Python has no IANA time zone data; "
            "install the 'tzdata' package"
        )
    match = _timezones_by_folded_name().get(value.strip().casefold())
    if match is not None:
        return f"{where} is not an IANA time zone name; use {match!r}"
    return f"{where} is not an IANA time zone name (such as 'Europe/London')"


@functools.cache
def _timezones() -> frozenset[str]:
    # Reading the zone database walks the file system, so it happens once.
    return frozenset(zoneinfo.available_timezones())


@functools.cache
def _timezones_by_folded_name() -> dict[str, str]:
    return {zone.casefold(): zone for zone in sorted(_timezones())}
