"""Requests shaped wrongly by a model or a Python caller end as discovery errors, never crashes."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from weakincentives.discovery import (
    CallableExecutor,
    CallOutcome,
    CatalogTool,
    DiscoveryError,
    ToolCatalog,
    ToolDiscovery,
)
from weakincentives.serde import JSONValue, SchemaViolation

from .conftest import NODES, SECRET, TOOLS, ServiceFactory

type Operation = Callable[[ToolDiscovery], object]


@pytest.mark.parametrize(
    ("operation", "field"),
    [
        (lambda s: s.list(cursor=12345), "cursor"),
        (lambda s: s.list(query=5), "query"),
        (lambda s: s.list(tags=None), "tags"),
        (lambda s: s.list(path=None), "path"),
        (lambda s: s.list(path={"Coding": 1}), "path"),
        (lambda s: s.list(tags=[1, 2]), "tags"),
        (lambda s: s.search_tool_by_category("rename", category_path=None), "path"),
        (lambda s: s.search_tool_by_category("rename", cursor=b"abc"), "cursor"),
        (lambda s: s.search_tool_by_category(None), "query"),
        (lambda s: s.search_nodes(["refactor"]), "query"),
    ],
)
def test_a_wrongly_typed_argument_is_an_invalid_request(
    service: ToolDiscovery, operation: Operation, field: str
) -> None:
    """Each wrong shape names the field in an INVALID_REQUEST instead of raising TypeError."""
    with pytest.raises(DiscoveryError) as info:
        operation(service)
    assert info.value.code == "INVALID_REQUEST"
    assert field in info.value.message


def _signed(payload: bytes, secret: bytes = SECRET) -> str:
    body = base64.urlsafe_b64encode(payload).rstrip(b"=").decode()
    tag = hmac.new(secret, body.encode(), hashlib.sha256).digest()[:16]
    return f"{body}.{base64.urlsafe_b64encode(tag).rstrip(b'=').decode()}"


@pytest.mark.parametrize(
    "payload",
    [
        b"not json at all",
        b"\xff\xfe\xfd",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"v": 1, "o": ' + b"7" * 5000 + b', "f": "x"}',
        b'{"v": 1, "o": NaN, "f": "x"}',
        b"[1, 2, 3]",
        b'{"v": 1, "o": 1.5, "f": "x"}',
    ],
)
def test_a_signed_cursor_with_a_foreign_payload_is_an_invalid_cursor(
    service: ToolDiscovery, payload: bytes
) -> None:
    """A correctly signed cursor whose body is not ours is INVALID_CURSOR, not a decode error."""
    with pytest.raises(DiscoveryError) as info:
        service.search_tool_by_category("storage bucket", limit=1, cursor=_signed(payload))
    assert info.value.code == "INVALID_CURSOR"


def test_a_signed_cursor_for_another_request_is_still_refused(service: ToolDiscovery) -> None:
    """A well-formed payload with a foreign fingerprint names the mismatch."""
    cursor = _signed(json.dumps({"v": 1, "o": 1, "f": "elsewhere"}).encode())
    with pytest.raises(DiscoveryError, match="different request") as info:
        service.list(cursor=cursor)
    assert info.value.code == "INVALID_CURSOR"


# --- lone surrogates (issue 26, R5) ------------------------------------------------------


def test_a_query_with_a_lone_surrogate_pages_like_any_other(service: ToolDiscovery) -> None:
    """The request fingerprint digests a lone surrogate, so the cursor of page 1 opens page 2."""
    query = "storage bucket \ud800"
    first = service.search_tool_by_category(query, limit=1)
    assert first.next_cursor is not None
    second = service.search_tool_by_category(query, limit=1, cursor=first.next_cursor)
    whole = service.search_tool_by_category(query, limit=2)
    assert [hit.tool_id for hit in (*first.results, *second.results)] == [
        hit.tool_id for hit in whole.results
    ]
    listed = service.list(path=["Storage", "Buckets"], query="\udfff object", limit=1)
    assert listed.next_cursor is not None
    assert service.list(
        path=["Storage", "Buckets"], query="\udfff object", limit=1, cursor=listed.next_cursor
    ).tools


def test_a_cursor_with_a_lone_surrogate_is_an_invalid_cursor(service: ToolDiscovery) -> None:
    """A cursor that is not ASCII (which no service issues) is refused before it is hashed."""
    issued = service.search_tool_by_category("storage bucket", limit=1).next_cursor
    assert issued is not None
    payload, tag = issued.split(".")
    for cursor in (f"{payload}\ud800.{tag}", f"{payload}.{tag}\udfff", "é" + issued):
        with pytest.raises(DiscoveryError, match="cursor is malformed") as info:
            service.search_tool_by_category("storage bucket", limit=1, cursor=cursor)
        assert info.value.code == "INVALID_CURSOR"


# --- bounded requests (issue 26, U3 and U4) ------------------------------------------------


@pytest.mark.parametrize(
    ("operation", "message"),
    [
        (
            lambda s: s.search_tool_by_category("q" * 1_000_000),
            f"query must have at most 4,000 characters, got 1,000,000 starting '{'q' * 37}...'",
        ),
        (
            lambda s: s.search_nodes("bucket " * 2_000),
            "query must have at most 4,000 characters, got 13,999",
        ),
        (lambda s: s.list(query="x" * 4_001), "at most 4,000 characters, got 4,001"),
        (
            lambda s: s.list(path=["Coding"] * 33),
            "path must have at most 32 segments of at most 512 characters (no category is "
            "deeper or longer), got 33 segments of up to 6 characters",
        ),
        (
            lambda s: s.search_tool_by_category("x", category_path=["c" * 100_000]),
            "got 1 segments of up to 100,000 characters",
        ),
        (
            lambda s: s.list(tags=["t"] * 33),
            "tags must be at most 32 strings of at most 512 characters, got 33",
        ),
        (lambda s: s.list(tags=["t" * 513]), "got 1 of up to 513 characters"),
        (
            lambda s: s.search_tool_by_category(" ".join(f"Rename symbol {k}." for k in range(17))),
            "query asks for 17 things (sentences or clauses joined by 'also', 'then', ...); "
            "a search takes at most 16",
        ),
        (lambda s: s.list(limit="9" * 100_000), f"got '{'9' * 37}...'"),
        (lambda s: s.list(path=[["x"]] * 100_000), "got a list"),
    ],
)
def test_oversized_requests_are_invalid_requests_with_short_messages(
    service: ToolDiscovery, operation: Operation, message: str
) -> None:
    """Every size is capped with an INVALID_REQUEST naming the cap, quoting little."""
    with pytest.raises(DiscoveryError) as info:
        operation(service)
    assert info.value.code == "INVALID_REQUEST"
    assert message in info.value.message
    assert len(str(info.value)) < 300


def test_sixteen_requests_and_4000_characters_are_accepted(service: ToolDiscovery) -> None:
    """The caps are inclusive, and clauses that are not requests do not count."""
    sixteen = " ".join(f"Rename the symbol number {k}." for k in range(16))
    assert service.search_tool_by_category(sixteen, limit=1).results[0].tool_id == (
        "refactor.rename_symbol"
    )
    clauses = "Hi. " * 30 + "Rename the symbol."  # 31 clauses, only one a request
    assert service.search_tool_by_category(clauses, limit=1).results[0].tool_id == (
        "refactor.rename_symbol"
    )
    padded = "rename symbol" + " " * 3_986 + "x"
    assert len(padded) == 4_000
    assert service.search_tool_by_category(padded, limit=1).results[0].tool_id == (
        "refactor.rename_symbol"
    )


@pytest.mark.parametrize(
    ("operation", "echo"),
    [
        (
            lambda s: s.search_tool_by_category("zzqx " * 799),
            "'zzqx zzqx zzqx zzqx zzqx zzqx zzqx zz...'",
        ),
        (lambda s: s.search_nodes("zzqx " * 799), "'zzqx zzqx zzqx zzqx zzqx zzqx zzqx zz...'"),
        (lambda s: s.expand_tool("q" * 200_000), "200,000 characters; ids have at most 512"),
        (lambda s: s.call_tool("z" * 300, {}), f"'{'z' * 37}...'"),
        (
            lambda s: s.list(path=["Coding", "x" * 500, *(["y"] * 30)]),
            f"['Coding', '{'x' * 37}...', 'y', 'y', 'y' and 27 more]",
        ),
    ],
)
def test_errors_quote_what_was_sent_cut_short(
    service: ToolDiscovery, operation: Operation, echo: str
) -> None:
    """A failure caused by a long request quotes at most a bounded piece of it."""
    with pytest.raises(DiscoveryError) as info:
        operation(service)
    failure = info.value.to_failure()
    assert echo in failure.message
    text = " ".join([failure.message, failure.next_action, *(h.summary for h in failure.hints)])
    assert len(text) < 700


# --- arguments (issue 26, R6 and U3) ---------------------------------------------------------

_TREE_SCHEMA: dict[str, JSONValue] = {
    "type": "object",
    "properties": {"child": {"$ref": "#"}, "label": {"type": "string"}},
    "additionalProperties": False,
}


def _nested(depth: int) -> dict[str, JSONValue]:
    value: dict[str, JSONValue] = {}
    for _ in range(depth):
        value = {"child": value}
    return value


@pytest.fixture
def tree_service(make_service: ServiceFactory) -> ToolDiscovery:
    """A service whose one tool takes a self-referencing schema and echoes success."""
    catalog = ToolCatalog(
        tools=[CatalogTool(tool_id="tree", name="tree", paths=(("T",),), args_schema=_TREE_SCHEMA)]
    )
    executor = CallableExecutor(functions={"tree": lambda _: CallOutcome(success=True)})
    return make_service(catalog=catalog, executor=executor)


def test_arguments_3000_deep_are_invalid_arguments_not_a_recursion_error(
    tree_service: ToolDiscovery,
) -> None:
    """The validator stops at its nesting bound and says where, instead of recursing on."""
    with pytest.raises(DiscoveryError) as info:
        tree_service.call_tool("tree", _nested(3_000))
    assert info.value.code == "INVALID_ARGUMENTS"
    (violation,) = info.value.violations
    assert violation.path == "$" + ".child" * 193
    assert violation.message == "nested too deeply to check (more than 192 levels of checks)"
    assert len(info.value.message) < 1_500


def test_arguments_as_deep_as_json_allows_are_checked(tree_service: ToolDiscovery) -> None:
    """128 levels (what serde.loads accepts) validate and run."""
    assert tree_service.call_tool("tree", _nested(127)).success


def test_many_bad_arguments_make_a_bounded_error(tree_service: ToolDiscovery) -> None:
    """10,000 unexpected properties with long names: 20 violations kept, 5 shown, paths cut."""
    arguments: dict[str, JSONValue] = {f"{k:05d}" + "k" * 100_000: 1 for k in range(10_000)}
    with pytest.raises(DiscoveryError) as info:
        tree_service.call_tool("tree", arguments)
    assert len(info.value.violations) == 20
    assert info.value.violations[0] == SchemaViolation(
        path=f"$['00000{'k' * 32}...']",
        message="unexpected property (allowed properties: child, label)",
    )
    assert info.value.message.endswith("; and 9,995 more")
    assert len(info.value.message) < 1_000


# --- any text, any operation (issue 26, R5 and U3) ---------------------------------------

_TEXT = st.text(max_size=30) | st.sampled_from(["0\ud800", "\udfff", "a\ud83d", "storage \ud800"])


@settings(max_examples=300, deadline=None)
@given(
    operation=st.sampled_from(["search", "nodes", "list", "expand", "call", "page"]),
    text=_TEXT,
    path=st.lists(_TEXT, max_size=3),
)
def test_any_text_gets_an_answer_or_a_discovery_error_utf8_can_carry(
    operation: str, text: str, path: list[str]
) -> None:
    """Unicode of any kind, lone surrogates included, never escapes as a raw exception."""
    service = ToolDiscovery(ToolCatalog(nodes=NODES, tools=TOOLS), cursor_secret=SECRET)
    calls: dict[str, Callable[[], object]] = {
        "search": lambda: service.search_tool_by_category(text, category_path=path, limit=1),
        "nodes": lambda: service.search_nodes(text, limit=1),
        "list": lambda: service.list(path=path, tags=path, query=text, limit=1),
        "expand": lambda: service.expand_tool(text),
        "call": lambda: service.call_tool(text, {text: text}),
        "page": lambda: service.list(cursor=text),
    }
    try:
        calls[operation]()
    except DiscoveryError as error:
        failure = error.to_failure()
        shown = " ".join([str(error), failure.next_action, *(h.summary for h in failure.hints)])
        shown.encode("utf-8")
        assert len(shown) < 1_000, shown


def test_a_tool_id_whose_str_fails_is_not_found(service: ToolDiscovery) -> None:
    """An id nested 100,000 deep (str() raises RecursionError) is named by its type."""
    nested: list[object] = []
    for _ in range(100_000):
        nested = [nested]
    with pytest.raises(DiscoveryError) as info:
        service.expand_tool(cast(str, nested))
    assert info.value.message == "no tool with id '<list object; str() failed>' is available"
