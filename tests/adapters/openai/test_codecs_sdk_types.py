"""Cross-check the codecs against the installed openai SDK's own request and response types.

Each serialized spec must validate as the SDK's ``ToolParam`` without losing a
key (pydantic drops unknown TypedDict keys, so the round trip must be exact),
and every key must be declared, recursively, by the matching TypedDict. The
fixtures must validate as a ``Response``, and the includes as ``ResponseIncludable``.
"""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Annotated, Literal, NotRequired, Required, Union, get_args, get_origin

import pytest
from typing_extensions import (
    get_type_hints,
    is_typeddict,
)

from weakincentives.adapters.openai._codecs import default_openai_codecs, openai_includes
from weakincentives.prompt._hosted import HostedTool, HostedToolConfig
from weakincentives.serde import JSONValue
from weakincentives.tools import (
    CodeInterpreterConfig,
    DomainFilter,
    GeoHint,
    WebSearchConfig,
    code_interpreter_tool,
    web_search_tool,
)

pytest.importorskip("openai")
pydantic = pytest.importorskip("pydantic")

# The SDK's types can only be imported once importorskip has confirmed the extra is installed.
from openai.types.responses import Response, ResponseIncludable, ToolParam  # noqa: E402
from openai.types.responses.tool_param import CodeInterpreter  # noqa: E402
from openai.types.responses.web_search_tool_param import WebSearchToolParam  # noqa: E402

FIXTURES = Path(__file__).parent.parent.parent / "fixtures" / "hosted_tools"

WEB_SEARCH_CONFIGS = [
    WebSearchConfig(),
    WebSearchConfig(
        domain_filter=DomainFilter(allowed=("cdc.gov", "who.int")),
        geo_hint=GeoHint(
            country_code="GB", city="London", region="England", timezone="Europe/London"
        ),
        allow_live_access=False,
        search_context_size="high",
    ),
    WebSearchConfig(geo_hint=GeoHint()),
    WebSearchConfig(geo_hint=GeoHint(country_code="US"), search_context_size="low"),
]
CODE_INTERPRETER_CONFIGS = [
    CodeInterpreterConfig(),
    CodeInterpreterConfig(container_id="cntr_abc123"),
    CodeInterpreterConfig(file_ids=("file-1",), memory_limit_gb=64, network_domains=("pypi.org",)),
    CodeInterpreterConfig(network_domains=()),
]
TOOLS: list[tuple[HostedTool[HostedToolConfig], type[object]]] = [
    *((web_search_tool(config), WebSearchToolParam) for config in WEB_SEARCH_CONFIGS),
    *((code_interpreter_tool(config), CodeInterpreter) for config in CODE_INTERPRETER_CONFIGS),
]


def undeclared(value: object, annotation: object, path: str) -> list[str]:
    """Paths in ``value`` that ``annotation`` (an SDK request type) does not declare or admit."""
    origin = get_origin(annotation)
    if origin in (Required, NotRequired, Annotated):
        return undeclared(value, get_args(annotation)[0], path)
    if origin in (Union, types.UnionType):
        attempts = [undeclared(value, option, path) for option in get_args(annotation)]
        return min(attempts, key=len)
    if is_typeddict(annotation):
        if not isinstance(value, dict):
            return [f"{path}: expected an object"]
        hints = get_type_hints(annotation, include_extras=True)
        problems = [f"{path}.{key}: not declared" for key in value if key not in hints]
        for key, item in value.items():
            if key in hints:
                problems.extend(undeclared(item, hints[key], f"{path}.{key}"))
        return problems
    if origin is Literal:
        return [] if value in get_args(annotation) else [f"{path}: {value!r} not allowed"]
    if origin is not None:  # List, Iterable, SequenceNotStr and friends
        if not isinstance(value, list):
            return [f"{path}: expected an array"]
        (element,) = get_args(annotation)
        return [p for i, v in enumerate(value) for p in undeclared(v, element, f"{path}[{i}]")]
    if annotation is type(None):
        return [] if value is None else [f"{path}: expected null"]
    assert isinstance(annotation, type)
    return [] if isinstance(value, annotation) else [f"{path}: expected {annotation.__name__}"]


def serialize(tool: HostedTool[HostedToolConfig]) -> dict[str, JSONValue]:
    return default_openai_codecs()[tool.kind].serialize(tool)


@pytest.mark.parametrize(("tool", "param_type"), TOOLS)
def test_spec_round_trips_through_sdk_tool_param(
    tool: HostedTool[HostedToolConfig], param_type: type[object]
) -> None:
    """The SDK's ToolParam accepts the spec and keeps every key we send."""
    spec = serialize(tool)
    assert pydantic.TypeAdapter(ToolParam).validate_python(spec) == spec


@pytest.mark.parametrize(("tool", "param_type"), TOOLS)
def test_spec_keys_are_all_declared_by_sdk_typeddict(
    tool: HostedTool[HostedToolConfig], param_type: type[object]
) -> None:
    """Every key, at every depth, is one the SDK's request TypedDict declares."""
    assert undeclared(serialize(tool), param_type, "$") == []


def test_undeclared_key_checker_catches_extra_keys() -> None:
    """The checker itself reports an unknown nested key and a bad literal."""
    spec = {
        "type": "web_search",
        "filters": {"blocked_domains": ["x.com"]},
        "search_context_size": "huge",
    }
    assert undeclared(spec, WebSearchToolParam, "$") == [
        "$.filters.blocked_domains: not declared",
        "$.search_context_size: 'huge' not allowed",
    ]


def test_includes_are_values_the_sdk_accepts() -> None:
    """The include entries are members of the SDK's ResponseIncludable literal."""
    includes = openai_includes((web_search_tool(), code_interpreter_tool()))
    assert set(includes) <= set(get_args(ResponseIncludable))
    assert len(includes) == 2


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_fixture_is_a_valid_sdk_response(path: Path) -> None:
    """Each recorded reply parses as the SDK's Response, and dumping it keeps our fields."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    dumped = Response.model_validate(raw).model_dump(mode="json")
    assert dumped["id"] == raw["id"]
    assert [item["type"] for item in dumped["output"]] == [item["type"] for item in raw["output"]]


@pytest.mark.parametrize("name", ["web_search_with_citations", "code_interpreter_with_logs"])
def test_codecs_parse_sdk_dumps_like_raw_json(name: str) -> None:
    """Parsing the SDK's model_dump of a reply equals parsing the raw JSON."""
    raw = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    dumped = Response.model_validate(raw).model_dump(mode="json")["output"]
    codecs = default_openai_codecs()
    for tool in (web_search_tool(), code_interpreter_tool()):
        codec = codecs[tool.kind]
        assert codec.parse_output(dumped, tool) == codec.parse_output(raw["output"], tool)
