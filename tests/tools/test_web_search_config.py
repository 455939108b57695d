"""Validation of the web search configuration dataclasses."""

from __future__ import annotations

import pytest

from weakincentives.errors import ConfigValidationError
from weakincentives.tools import (
    Citation,
    DomainFilter,
    GeoHint,
    WebSearchCall,
    WebSearchConfig,
    WebSearchResult,
    _web_search,
)


@pytest.mark.parametrize(
    ("domain", "message"),
    [
        ("https://cdc.gov", "must be a bare host name without a scheme; use 'cdc.gov'"),
        ("cdc.gov/vaccines", "must be a bare host name without a path; use 'cdc.gov'"),
        ("cdc.gov?q=1", "must be a bare host name without a path; use 'cdc.gov'"),
        ("cdc.gov:443", "must be a bare host name without a port; use 'cdc.gov'"),
        ("user@cdc.gov", "must be a bare host name without user info; use 'cdc.gov'"),
        (" cdc.gov", "must not contain whitespace; use 'cdc.gov'"),
        ("cdc gov", "must not contain whitespace"),
        ("CDC.gov", "must be lowercase; use 'cdc.gov'"),
        (
            "*.cdc.gov",
            "must not use a wildcard: subdomains of a listed domain are already included; "
            "use 'cdc.gov'",
        ),
        (
            "b\u00fccher.de",
            "must be ASCII: write an internationalised name in its IDNA (xn--) form; "
            "use 'xn--bcher-kva.de'",
        ),
        (
            "\u00fc..de",
            "must be ASCII: write an internationalised name in its IDNA (xn--) form",
        ),
        ("cdc.gov.", "must not end with '.'; use 'cdc.gov'"),
        ("cdc..gov", "has an empty label (two dots in a row, or a leading dot)"),
        (".cdc.gov", "has an empty label (two dots in a row, or a leading dot)"),
        ("cdc_gov.org", "may only contain lowercase letters, digits, '-' and '.'"),
        ("a" * 64 + ".com", "has a label longer than 63 characters"),
        ("-cdc.gov", "has a label that starts or ends with '-'"),
        ("cdc-.gov", "has a label that starts or ends with '-'"),
        (".".join(["abcdefghi"] * 26), "is longer than 253 characters"),
        ("localhost", "needs a top-level domain, like 'example.com'"),
        ("", "must not be empty"),
        ("https://", "must be a bare host name without a scheme"),
    ],
)
def test_bad_domain_is_rejected_with_hint(domain: str, message: str) -> None:
    """Each domain rule names the entry and, when it can, the spelling to use."""
    with pytest.raises(ConfigValidationError) as caught:
        DomainFilter(allowed=(domain,))
    assert caught.value.message == f"DomainFilter.allowed[0] {domain!r} {message}"
    assert (caught.value.config_type, caught.value.field_name, caught.value.value) == (
        DomainFilter,
        "allowed",
        domain,
    )


@pytest.mark.parametrize(
    "domain", ["cdc.gov", "pubmed.ncbi.nlm.nih.gov", "xn--bcher-kva.de", "a-b.co", "1.2.3.4"]
)
def test_bare_domains_are_accepted(domain: str) -> None:
    """Plain lowercase host names pass unchanged."""
    assert DomainFilter(allowed=(domain,), blocked=()).allowed == (domain,)


def test_non_string_domain_is_rejected() -> None:
    """A domain entry must be a string."""
    with pytest.raises(
        ConfigValidationError, match=r"^DomainFilter\.blocked\[0\] 3 must be a string, got int$"
    ):
        DomainFilter(blocked=(3,))  # type: ignore[arg-type]  # deliberately ill-typed


def test_domain_string_instead_of_tuple_is_rejected() -> None:
    """A bare string is not silently iterated character by character."""
    with pytest.raises(ConfigValidationError) as caught:
        DomainFilter(allowed="cdc.gov")  # type: ignore[arg-type]  # the classic mistake
    assert caught.value.message == (
        "DomainFilter.allowed must be a tuple of domain names, got str; write ('cdc.gov',)"
    )


def test_domain_list_instead_of_tuple_is_rejected() -> None:
    """Lists are refused so the configuration stays hashable and immutable."""
    with pytest.raises(
        ConfigValidationError,
        match=r"^DomainFilter\.blocked must be a tuple of domain names, got list$",
    ):
        DomainFilter(blocked=["cdc.gov"])  # type: ignore[arg-type]  # deliberately ill-typed


def test_repeated_domain_is_rejected() -> None:
    """Listing a domain twice is a mistake worth reporting."""
    with pytest.raises(ConfigValidationError) as caught:
        DomainFilter(allowed=("cdc.gov", "who.int", "cdc.gov"))
    assert caught.value.message == "DomainFilter.allowed[2] 'cdc.gov' is listed twice"


def test_domain_both_allowed_and_blocked_is_rejected() -> None:
    """A domain may appear in only one of the two lists."""
    with pytest.raises(ConfigValidationError) as caught:
        DomainFilter(allowed=("cdc.gov", "who.int", "nih.gov"), blocked=("nih.gov", "cdc.gov"))
    assert caught.value.message == (
        "DomainFilter lists 'cdc.gov', 'nih.gov' as both allowed and blocked; "
        "keep each domain in one list"
    )
    assert (caught.value.field_name, caught.value.value) == ("blocked", ("cdc.gov", "nih.gov"))


def test_all_domain_problems_are_reported_together() -> None:
    """Every bad entry in both lists appears in a single error."""
    with pytest.raises(ConfigValidationError) as caught:
        DomainFilter(allowed=("CDC.gov",), blocked=("https://who.int",))
    assert caught.value.message == (
        "2 problems in DomainFilter:\n"
        "- DomainFilter.allowed[0] 'CDC.gov' must be lowercase; use 'cdc.gov'\n"
        "- DomainFilter.blocked[0] 'https://who.int' must be a bare host name without a "
        "scheme; use 'who.int'"
    )
    assert (caught.value.field_name, caught.value.value) == ("allowed", "CDC.gov")


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("gb", "GeoHint.country_code 'gb' must be an upper-case ISO 3166-1 alpha-2 code; use 'GB'"),
        ("UK", "GeoHint.country_code 'UK' is not an assigned ISO 3166-1 alpha-2 code; use 'GB'"),
        ("EL", "GeoHint.country_code 'EL' is not an assigned ISO 3166-1 alpha-2 code; use 'GR'"),
        (
            "XX",
            "GeoHint.country_code 'XX' is not an officially assigned ISO 3166-1 alpha-2 code "
            "(such as 'US', 'GB')",
        ),
        (
            "GBR",
            "GeoHint.country_code 'GBR' is not an officially assigned ISO 3166-1 alpha-2 code "
            "(such as 'US', 'GB')",
        ),
        (44, "GeoHint.country_code must be a string, got int"),
    ],
)
def test_bad_country_code_is_rejected(code: object, message: str) -> None:
    """Country codes must be officially assigned upper-case alpha-2 codes."""
    with pytest.raises(ConfigValidationError) as caught:
        GeoHint(country_code=code)  # type: ignore[arg-type]  # includes ill-typed inputs
    assert caught.value.message == message
    assert (caught.value.config_type, caught.value.field_name, caught.value.value) == (
        GeoHint,
        "country_code",
        code,
    )


@pytest.mark.parametrize("code", ["US", "GB", "DE", "JP", "SS", "AX", "ZW"])
def test_assigned_country_codes_are_accepted(code: str) -> None:
    """Officially assigned codes, including recent ones, pass."""
    assert GeoHint(country_code=code).country_code == code


@pytest.mark.parametrize(
    ("timezone", "message"),
    [
        (
            "europe/london",
            "GeoHint.timezone 'europe/london' is not an IANA time zone name; use 'Europe/London'",
        ),
        (
            "Mars/Olympus_Mons",
            "GeoHint.timezone 'Mars/Olympus_Mons' is not an IANA time zone name "
            "(such as 'Europe/London')",
        ),
        (0, "GeoHint.timezone must be a string, got int"),
    ],
)
def test_bad_timezone_is_rejected(timezone: object, message: str) -> None:
    """Time zones are checked against the standard library's IANA zone data."""
    with pytest.raises(ConfigValidationError) as caught:
        GeoHint(timezone=timezone)  # type: ignore[arg-type]  # includes ill-typed inputs
    assert caught.value.message == message
    assert caught.value.field_name == "timezone"


@pytest.mark.parametrize("timezone", ["Europe/London", "America/Los_Angeles", "UTC"])
def test_iana_timezones_are_accepted(timezone: str) -> None:
    """Names in the zone database pass."""
    assert GeoHint(timezone=timezone).timezone == timezone


def test_timezone_without_zone_data_explains_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    """When Python has no zone data the error says so instead of blaming the name."""
    monkeypatch.setattr(_web_search, "_timezones", frozenset)
    with pytest.raises(ConfigValidationError) as caught:
        GeoHint(timezone="Europe/London")
    assert caught.value.message == (
        "GeoHint.timezone 'Europe/London' cannot be checked: this Python has no IANA time "
        "zone data; install the 'tzdata' package"
    )


@pytest.mark.parametrize(
    ("field_name", "value", "message"),
    [
        ("city", "", "GeoHint.city must not be blank; use None to leave it out"),
        ("region", "  ", "GeoHint.region must not be blank; use None to leave it out"),
        ("city", " London", "GeoHint.city ' London' has surrounding whitespace; use 'London'"),
        ("region", 5, "GeoHint.region must be a string, got int"),
    ],
)
def test_bad_free_text_location_is_rejected(field_name: str, value: object, message: str) -> None:
    """City and region are free text, but not blank and not padded."""
    with pytest.raises(ConfigValidationError) as caught:
        GeoHint(**{field_name: value})  # type: ignore[arg-type]  # includes ill-typed inputs
    assert caught.value.message == message
    assert (caught.value.field_name, caught.value.value) == (field_name, value)


def test_full_geo_hint_is_accepted() -> None:
    """A complete, well-formed hint keeps every field."""
    hint = GeoHint(country_code="GB", city="London", region="England", timezone="Europe/London")
    assert (hint.country_code, hint.city, hint.region, hint.timezone) == (
        "GB",
        "London",
        "England",
        "Europe/London",
    )


@pytest.mark.parametrize(
    ("kwargs", "field_name", "message"),
    [
        (
            {"search_context_size": "huge"},
            "search_context_size",
            "WebSearchConfig.search_context_size 'huge' must be one of 'low', 'medium', 'high', "
            "or None",
        ),
        ({"max_uses": 0}, "max_uses", "WebSearchConfig.max_uses must be at least 1, got 0"),
        ({"max_uses": True}, "max_uses", "WebSearchConfig.max_uses must be an int, got bool"),
        ({"max_uses": 2.0}, "max_uses", "WebSearchConfig.max_uses must be an int, got float"),
        (
            {"allow_live_access": "no"},
            "allow_live_access",
            "WebSearchConfig.allow_live_access must be a bool, got str",
        ),
        (
            {"allow_live_access": None},
            "allow_live_access",
            "WebSearchConfig.allow_live_access must be a bool, got NoneType",
        ),
        (
            {"domain_filter": ("cdc.gov",)},
            "domain_filter",
            "WebSearchConfig.domain_filter must be a DomainFilter or None, got tuple",
        ),
        (
            {"geo_hint": "GB"},
            "geo_hint",
            "WebSearchConfig.geo_hint must be a GeoHint or None, got str",
        ),
    ],
)
def test_bad_web_search_option_is_rejected(
    kwargs: dict[str, object], field_name: str, message: str
) -> None:
    """Each WebSearchConfig rule produces its own message."""
    with pytest.raises(ConfigValidationError) as caught:
        WebSearchConfig(**kwargs)  # type: ignore[arg-type]  # deliberately ill-typed inputs
    assert caught.value.message == message
    assert (caught.value.config_type, caught.value.field_name) == (WebSearchConfig, field_name)


def test_all_web_search_problems_are_reported_together() -> None:
    """Several bad options produce one error that lists them all."""
    with pytest.raises(ConfigValidationError) as caught:
        WebSearchConfig(search_context_size="huge", max_uses=0)  # type: ignore[arg-type]  # bad literal on purpose
    assert caught.value.message == (
        "2 problems in WebSearchConfig:\n"
        "- WebSearchConfig.search_context_size 'huge' must be one of 'low', 'medium', 'high', "
        "or None\n"
        "- WebSearchConfig.max_uses must be at least 1, got 0"
    )


def test_full_web_search_config_is_accepted() -> None:
    """Every option set to a valid value is kept as given."""
    config = WebSearchConfig(
        domain_filter=DomainFilter(allowed=("cdc.gov",)),
        geo_hint=GeoHint(country_code="US"),
        allow_live_access=False,
        search_context_size="high",
        max_uses=3,
    )
    assert (config.allow_live_access, config.search_context_size, config.max_uses) == (
        False,
        "high",
        3,
    )


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ((), "completed"),
        (("completed", "completed"), "completed"),
        (("completed", "failed"), "partial"),
        (("failed",), "failed"),
        (("incomplete", "failed"), "failed"),
    ],
)
def test_web_search_status_summarises_calls(statuses: tuple[str, ...], expected: str) -> None:
    """The result's status says whether all, some or none of the searches completed."""
    calls = tuple(WebSearchCall(call_id=f"ws_{i}", status=s) for i, s in enumerate(statuses))
    result = WebSearchResult(text="", citations=(Citation(url="u", title="t"),), calls=calls)
    assert result.status == expected
