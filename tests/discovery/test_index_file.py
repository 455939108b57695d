"""Saving and loading an index: round trips exactly; bad files are CatalogErrors, never answers."""

from __future__ import annotations

import functools
import hashlib
import json
import math
import struct
import sys
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from weakincentives.discovery import (
    BM25Ranker,
    CatalogTool,
    DiscoveryError,
    ToolCatalog,
    ToolDiscovery,
    load_catalog_index,
    save_index,
)
from weakincentives.discovery._index_file import INDEX_FORMAT_VERSION, CatalogIndex, load_index
from weakincentives.discovery._ranking import BM25Index
from weakincentives.errors import CatalogError
from weakincentives.prompt import Tool, ToolContext, ToolResult
from weakincentives.serde import JSONValue, dump

from .conftest import NODES, TOOLS

QUERIES = ("upload object bucket", "rename a symbol", "reset password email", "What is it?")


@dataclass(frozen=True, slots=True)
class Ping:
    host: str


@pytest.fixture
def saved(catalog: ToolCatalog, tmp_path: Path) -> Path:
    path = tmp_path / "catalog.index"
    save_index(BM25Ranker().index(catalog), path)
    return path


def test_a_loaded_index_equals_the_built_one(catalog: ToolCatalog, saved: Path) -> None:
    """Every field survives the round trip, and searches give identical answers."""
    built = BM25Ranker().index(catalog)
    loaded = load_index(saved, catalog)
    assert loaded == built
    for query in QUERIES:
        assert loaded.score_tools(query) == built.score_tools(query)
        assert loaded.score_nodes(query) == built.score_nodes(query)
    secret = b"0123456789abcdef0123456789abcdef"
    first = ToolDiscovery(catalog, index=loaded, cursor_secret=secret)
    second = ToolDiscovery(catalog, cursor_secret=secret)
    assert first.search_tool_by_category("bucket", limit=3) == second.search_tool_by_category(
        "bucket", limit=3
    )


def test_an_index_for_another_catalogue_is_refused(catalog: ToolCatalog, saved: Path) -> None:
    """A catalogue that changed since the index was saved gets a clear error."""
    changed = ToolCatalog(
        tools=[*catalog.tools, CatalogTool(tool_id="new", name="new", paths=(("X",),))]
    )
    with pytest.raises(CatalogError, match="built for another catalogue"):
        load_index(saved, changed)


@pytest.mark.parametrize("cut", [0, 7, 20, 100, -1, -33])
def test_a_truncated_file_is_refused(catalog: ToolCatalog, saved: Path, cut: int) -> None:
    """Any truncation, down to an empty file, is a CatalogError."""
    data = saved.read_bytes()
    saved.write_bytes(data[:cut])
    with pytest.raises(CatalogError, match="truncated"):
        load_index(saved, catalog)


@pytest.mark.parametrize("where", [30, 200, -40, -1])
def test_a_flipped_byte_is_refused(catalog: ToolCatalog, saved: Path, where: int) -> None:
    """A corrupted byte anywhere (header, arrays, checksum) fails the checksum."""
    data = bytearray(saved.read_bytes())
    data[where] ^= 0x40
    saved.write_bytes(bytes(data))
    with pytest.raises(CatalogError, match="corrupted"):
        load_index(saved, catalog)


def test_another_format_version_is_refused(catalog: ToolCatalog, saved: Path) -> None:
    """A file from another format version names both versions."""
    data = bytearray(saved.read_bytes())
    struct.pack_into("<I", data, 8, INDEX_FORMAT_VERSION + 1)
    saved.write_bytes(bytes(data))
    with pytest.raises(CatalogError, match=f"format {INDEX_FORMAT_VERSION + 1}"):
        load_index(saved, catalog)


def test_a_well_signed_but_malformed_header_is_refused(catalog: ToolCatalog, saved: Path) -> None:
    """A checksum over a header that is not ours (another writer) is still refused."""
    data = saved.read_bytes()[:-32]
    body = data[:20] + data[20:].replace(b'"tools":', b'"tooXs":', 1)
    assert body != data
    saved.write_bytes(body + hashlib.sha256(body).digest())
    with pytest.raises(CatalogError, match="malformed header"):
        load_index(saved, catalog)


def test_a_missing_or_foreign_file_is_refused(catalog: ToolCatalog, tmp_path: Path) -> None:
    """No file, or a file of another kind, is a CatalogError naming the path."""
    with pytest.raises(CatalogError, match="cannot read"):
        load_index(tmp_path / "absent.index", catalog)
    other = tmp_path / "notes.txt"
    other.write_text("hello, this is not an index at all" * 4)
    with pytest.raises(CatalogError, match="not a weakincentives index"):
        load_index(other, catalog)


def test_arrays_written_on_the_other_byte_order_are_swapped(
    catalog: ToolCatalog, tmp_path: Path
) -> None:
    """A file as a machine of the other byte order writes it loads here, catalogue and all."""
    path = tmp_path / "native.index"
    save_index(BM25Ranker().index(catalog), path, catalog=catalog)
    other = "big" if sys.byteorder == "little" else "little"
    header, blob = _split(path.read_bytes())
    for typecode, start, length in _references(header):
        if typecode != "B":
            values = array(typecode)
            values.frombytes(blob[start : start + values.itemsize * length])
            values.byteswap()
            blob[start : start + values.itemsize * length] = values.tobytes()
    header["byteorder"] = other
    _join(path, header, bytes(blob))
    loaded = load_catalog_index(path)
    assert loaded.index == BM25Ranker().index(catalog)
    assert list(loaded.catalog) == list(catalog)


def _split(data: bytes) -> tuple[dict[str, Any], bytearray]:
    """A file's header and its array data (the checksum dropped)."""
    size = struct.unpack_from("<Q", data, 12)[0]
    return json.loads(data[20 : 20 + size]), bytearray(data[20 + size : -32])


def _join(path: Path, header: Mapping[str, object], blob: bytes) -> None:
    """Write ``header`` and ``blob`` back as a well-signed file (as another writer could)."""
    head = json.dumps(header).encode()
    body = struct.pack("<8sIQ", b"WINKBM25", INDEX_FORMAT_VERSION, len(head)) + head + blob
    path.write_bytes(body + hashlib.sha256(body).digest())


def _references(value: object) -> list[tuple[str, int, int]]:
    """Every array reference ``[offset, typecode, length]`` in a header."""
    if isinstance(value, dict):
        return [found for item in value.values() for found in _references(item)]
    if isinstance(value, list):
        if len(value) == 3 and isinstance(value[0], int) and isinstance(value[1], str):
            return [(value[1], value[0], value[2])]
        return [found for item in value for found in _references(item)]
    return []


# --- a catalogue saved beside its index -----------------------------------------------------


@pytest.fixture
def bundled(catalog: ToolCatalog, tmp_path: Path) -> Path:
    path = tmp_path / "bundled.index"
    save_index(BM25Ranker().index(catalog), path, catalog=catalog)
    return path


def test_a_loaded_catalogue_equals_the_built_one(catalog: ToolCatalog, bundled: Path) -> None:
    """Tools, nodes and every lookup come back as they were, and so do the answers."""
    loaded = load_catalog_index(bundled)
    again = loaded.catalog
    assert isinstance(loaded, CatalogIndex)
    assert loaded.index == BM25Ranker().index(catalog)
    assert again.fingerprint == catalog.fingerprint
    assert list(again.tools) == list(catalog.tools)
    assert dict(again.nodes) == dict(catalog.nodes)
    assert len(again) == len(catalog)
    for path in [(), *catalog.nodes, ("Nowhere",)]:
        assert again.children(path) == catalog.children(path)
        assert again.tools_at(path) == catalog.tools_at(path)
        assert again.tools_under(path) == catalog.tools_under(path)
        assert again.subtree_size(path) == catalog.subtree_size(path)
        assert again.has_path(path) == catalog.has_path(path)
        assert again.node(path) == catalog.node(path)
    for tag in ("dev", "DEV", "refactor", "storage", "absent"):
        assert again.tools_tagged(tag) == catalog.tools_tagged(tag)
    for tool in catalog:
        assert again.tool(tool.tool_id) == tool
        assert again.position(tool.tool_id) == catalog.position(tool.tool_id)
    assert again.tool("absent") is None
    assert BM25Ranker().index(again) == loaded.index, "a loaded catalogue indexes as the original"


def test_a_service_over_a_loaded_catalogue_answers_as_the_original(
    catalog: ToolCatalog, bundled: Path
) -> None:
    """Search, listing and expansion read the same from the file as from the records."""
    loaded = load_catalog_index(bundled)
    secret = b"0123456789abcdef0123456789abcdef"
    restored = ToolDiscovery(loaded.catalog, index=loaded.index, cursor_secret=secret)
    original = ToolDiscovery(catalog, cursor_secret=secret)
    best = {
        "upload object bucket": "storage.put_object",
        "rename a symbol": "refactor.rename_symbol",
        "reset password email": "auth.reset_password",
        "What is it?": "refactor.inline_variable",  # the stop-word fallback: "it"
    }
    for query in QUERIES:
        found = restored.search_tool_by_category(query, limit=3)
        assert found.results[0].tool_id == best[query]
        assert found == original.search_tool_by_category(query, limit=3)
    for path in [(), *catalog.nodes]:
        assert restored.list(path=path) == original.list(path=path)
    for tool in catalog:
        assert restored.expand_tool(tool.tool_id) == original.expand_tool(tool.tool_id)


def test_load_index_skips_a_bundled_catalogue(catalog: ToolCatalog, bundled: Path) -> None:
    """A file with a catalogue still serves a caller who built the catalogue itself."""
    assert load_index(bundled, catalog) == BM25Ranker().index(catalog)


def test_a_file_without_its_catalogue_says_how_to_get_one(saved: Path) -> None:
    """load_catalog_index on an index-only file names both ways out."""
    with pytest.raises(CatalogError, match=r"without its catalogue.*save_index\(\.\.\., catalog="):
        load_catalog_index(saved)


def test_saving_with_another_catalogue_is_refused(catalog: ToolCatalog, tmp_path: Path) -> None:
    """The catalogue written beside an index must be the one it was built for."""
    other = ToolCatalog(tools=[CatalogTool(tool_id="x", name="x", paths=(("X",),))])
    with pytest.raises(CatalogError, match="built for another catalogue"):
        save_index(BM25Ranker().index(catalog), tmp_path / "x.index", catalog=other)
    assert not (tmp_path / "x.index").exists()


def test_tools_with_handles_cannot_be_written(tmp_path: Path) -> None:
    """Executor payloads do not fit in a file; the error says what to do instead."""

    async def ping(params: Ping, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult(message=f"pinged {params.host}")

    tool = Tool(name="ping", description="Ping a host.", handler=ping)
    catalog = ToolCatalog.from_tools([(("Net",), tool)])
    with pytest.raises(CatalogError, match="'ping' carries a handle") as caught:
        save_index(BM25Ranker().index(catalog), tmp_path / "x.index", catalog=catalog)
    assert caught.value.tool_id == "ping"
    save_index(BM25Ranker().index(catalog), tmp_path / "x.index")
    assert load_index(tmp_path / "x.index", catalog) == BM25Ranker().index(catalog)


def test_schemas_in_read_only_mappings_are_written(tmp_path: Path) -> None:
    """A schema held in MappingProxyType (or any mapping) is saved as plain JSON."""
    # Read-only mappings are not JSONValue to the type checker, though catalogues hold them.
    schema = cast(
        "Mapping[str, JSONValue]",
        MappingProxyType(
            {"type": "object", "properties": MappingProxyType({"n": {"type": "integer"}})}
        ),
    )
    tool = CatalogTool(tool_id="t", name="t", paths=(("A",),), args_schema=schema)
    catalog = ToolCatalog(tools=[tool])
    path = tmp_path / "x.index"
    save_index(BM25Ranker().index(catalog), path, catalog=catalog)
    assert load_catalog_index(path).catalog.tools[0].args_schema == {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
    }


def test_a_schema_that_is_not_json_never_reaches_a_file() -> None:
    """A value JSON cannot hold is refused when the catalogue is built, named with its path."""
    # A set is not JSON: the cast stands for a caller without a type checker.
    odd = cast("Mapping[str, JSONValue]", {"type": "object", "properties": {}, "default": {1, 2}})
    tool = CatalogTool(tool_id="t", name="t", paths=(("A",),), args_schema=odd)
    with pytest.raises(CatalogError, match=r"tool 't': args_schema\.default: set .* not a JSON"):
        ToolCatalog(tools=[tool])


@pytest.mark.parametrize("where", [30, 300, -100, -1])
def test_a_corrupted_bundle_is_refused(bundled: Path, where: int) -> None:
    """The checksum covers the catalogue too."""
    data = bytearray(bundled.read_bytes())
    data[where] ^= 0x01
    bundled.write_bytes(bytes(data))
    with pytest.raises(CatalogError, match="corrupted"):
        load_catalog_index(bundled)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda h: h["catalogue"].pop("names"), "KeyError"),
        (lambda h: h["catalogue"]["paths"]["values"].__setitem__(2, 10**9), "past the data"),
        (lambda h: h["catalogue"]["schemas"].__setitem__(1, "q"), "typecode 'q'"),
        (lambda h: h["catalogue"]["names"]["offsets"].__setitem__(1, "d"), "typecode 'd'"),
        (lambda h: h.__setitem__("byteorder", "middle"), "byte order"),
        (lambda h: h["tools"].__setitem__("size", -1), "not a count"),
        (lambda h: h.__setitem__("catalogue", 7), "TypeError"),
        (lambda h: h["catalogue"].__setitem__("names", h["catalogue"]["node_names"]), "entries"),
        (lambda h: h["catalogue"].__setitem__("subtree", h["tool_lend"]), "typecode 'd'"),
        (lambda h: h["catalogue"].__setitem__("subtree", h["shared"]), "sizes for"),
        (
            lambda h: h["catalogue"]["paths"].__setitem__("values", h["members"]["values"]),
            "outside",
        ),
        (lambda h: h["tools"].__setitem__("ceiling", h["lend"]), "lengths disagree"),
        (lambda h: h["tools"].__setitem__("peak", h["lend"]), "outside the arrays"),
        (lambda h: h.__setitem__("lend", h["tool_lend"]), "values where"),
        (lambda h: h.__setitem__("shared", h["tool_ids"]["offsets"]), "shared"),
    ],
)
def test_a_well_signed_file_that_is_not_ours_is_refused(
    bundled: Path, change: Callable[[dict[str, Any]], object], message: str
) -> None:
    """Every reference and shape is checked, so another writer's file is never misread."""
    header, blob = _split(bundled.read_bytes())
    assert header["shared"][2] > 0, "the fixture has a tool in two categories"
    change(header)
    _join(bundled, header, bytes(blob))
    with pytest.raises(CatalogError, match=f"malformed header.*{message}"):
        load_catalog_index(bundled)


def _swap_groups(header: dict[str, Any], blob: bytearray, name: str, rows: list[int]) -> None:
    """Rewrite the offsets of group column ``name`` in place."""
    typecode, start, length = _references(header[name]["offsets"])[0]
    values = array(typecode, rows)
    assert len(values) == length
    blob[start : start + values.itemsize * length] = values.tobytes()


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (lambda n, end: [0] * (n - 1) + [end], "ending at"),
        (lambda n, end: [0, end, *([0] * (n - 3)), end], "backwards"),
    ],
)
def test_group_offsets_that_do_not_add_up_are_refused(
    bundled: Path, rows: Callable[[int, int], list[int]], message: str
) -> None:
    """Offsets that do not end where the values do, or go backwards, are refused."""
    header, blob = _split(bundled.read_bytes())
    typecode, start, length = _references(header["members"]["offsets"])[0]
    current = array(typecode)
    current.frombytes(blob[start : start + current.itemsize * length])
    end = current[-1] + (1 if message == "ending at" else 0)
    _swap_groups(header, blob, "members", rows(length, end))
    _join(bundled, header, bytes(blob))
    with pytest.raises(CatalogError, match=message):
        load_catalog_index(bundled)


def test_a_header_that_is_not_an_object_is_refused(saved: Path) -> None:
    """JSON that is not an object where the header belongs is refused like any other shape."""
    _, blob = _split(saved.read_bytes())
    head = b"[1, 2]"
    body = struct.pack("<8sIQ", b"WINKBM25", INDEX_FORMAT_VERSION, len(head)) + head + blob
    saved.write_bytes(body + hashlib.sha256(body).digest())
    with pytest.raises(CatalogError, match=r"malformed header.*not a JSON object"):
        load_index(saved, ToolCatalog(tools=[]))


def test_a_loaded_catalogue_saves_again(
    catalog: ToolCatalog, bundled: Path, tmp_path: Path
) -> None:
    """Loading and saving again writes a file that loads to the same catalogue and index."""
    first = load_catalog_index(bundled)
    again = tmp_path / "again.index"
    save_index(first.index, again, catalog=first.catalog)
    second = load_catalog_index(again)
    assert second.index == first.index
    assert list(second.catalog) == list(catalog)
    assert dict(second.catalog.nodes) == dict(catalog.nodes)


# --- forged files (issue 26, U8) ------------------------------------------------------------
# A checksum shows the bytes are the ones written, not who wrote them: every count, offset,
# length and position is checked against what it indexes when the file is loaded.


def _array_at(header: dict[str, Any], blob: bytearray, reference: list[Any]) -> array[Any]:
    offset, typecode, length = reference
    values = array(typecode)
    values.frombytes(bytes(blob[offset : offset + values.itemsize * length]))
    return values


def _put(blob: bytearray, reference: list[Any], values: array[Any]) -> None:
    offset = reference[0]
    blob[offset : offset + values.itemsize * len(values)] = values.tobytes()


def _forge_value(
    bundled: Path, locate: Callable[[dict[str, Any]], list[Any]], k: int, value: float
) -> None:
    """Rewrite element ``k`` of the array ``locate`` picks, with a checksum that holds."""
    header, blob = _split(bundled.read_bytes())
    reference = locate(header)
    values = _array_at(header, blob, reference)
    values[k] = type(values[k])(value)
    _put(blob, reference, values)
    _join(bundled, header, bytes(blob))


@pytest.mark.parametrize(
    ("locate", "k", "value", "message"),
    [
        (lambda h: h["tools"]["ids"], 0, 2**31, r"tools\.ids: a value lies outside \[0, 13\)"),
        (lambda h: h["nodes"]["ids"], 3, 10**9, r"nodes\.ids: a value lies outside \[0, 11\)"),
        (lambda h: h["stops"]["ids"], 0, 13, r"stops\.ids: a value lies outside \[0, 13\)"),
        (lambda h: h["tools"]["impacts"], 2, math.nan, r"tools\.impacts: a value is not a finite"),
        (lambda h: h["nodes"]["ceiling"], 0, math.inf, r"nodes\.ceiling: a value is not a finite"),
        (lambda h: h["tools"]["peak"], 1, -math.inf, r"tools\.peak: a value is not a finite"),
        (lambda h: h["lend"], 0, math.nan, r"lend: a value is not a finite number"),
        (lambda h: h["tool_lend"], 4, math.inf, r"tool_lend: a value is not a finite number"),
        (lambda h: h["tool_lend"], 0, -1.0, "tool_lend: a category weight is negative"),
        (lambda h: h["lend"], 2, -0.5, "lend: a category weight is negative"),
        (lambda h: h["tools"]["spans"], 0, 5, "a term's postings end before they start"),
        (lambda h: h["members"]["values"], 0, -1, r"members: a value lies outside \[0, 13\)"),
        (lambda h: h["exact"]["values"], 0, 99, r"exact: a value lies outside \[0, 13\)"),
        (lambda h: h["catalogue"]["subtree"], 0, 10**6, r"subtree: a value lies outside \[0, 14\)"),
        (lambda h: h["catalogue"]["children"]["values"], 0, 4, "children: node 4 is listed under"),
        (lambda h: h["catalogue"]["paths"]["offsets"], 1, 0, "paths: a slice is empty"),
        (lambda h: h["node_bounds"], 1, 0, "node_bounds: a slice is empty"),
    ],
)
def test_a_forged_array_is_refused_at_load(
    bundled: Path,
    locate: Callable[[dict[str, Any]], list[Any]],
    k: int,
    value: float,
    message: str,
) -> None:
    """Positions outside the catalogue, non-finite scores and broken shapes never reach a search."""
    _forge_value(bundled, locate, k, value)
    with pytest.raises(CatalogError, match=f"malformed header .*{message}") as info:
        load_catalog_index(bundled)
    assert len(info.value.message) < 500


def test_huge_forged_ceilings_give_confidences_json_can_write(bundled: Path) -> None:
    """Finite ceilings whose sum overflows made every relevance NaN, which no tool result holds."""
    header, blob = _split(bundled.read_bytes())
    reference = header["tools"]["ceiling"]
    values = _array_at(header, blob, reference)
    _put(blob, reference, array(values.typecode, [1e308] * len(values)))
    _join(bundled, header, bytes(blob))
    loaded = load_catalog_index(bundled)
    service = ToolDiscovery(loaded.catalog, index=loaded.index)
    found = service.search_tool_by_category("upload object bucket")
    assert found.results
    for pointer in found.results:
        assert pointer.confidence is not None
        assert 0.0 <= pointer.confidence <= 1.0
    json.dumps(dump(found), allow_nan=False)


def test_a_forged_collection_size_is_refused_before_it_is_allocated(bundled: Path) -> None:
    """A size of ten billion was once allocated as counters at search; now it is refused."""
    header, blob = _split(bundled.read_bytes())
    header["tools"]["size"] = 10**10
    _join(bundled, header, bytes(blob))
    with pytest.raises(CatalogError, match="tools: size 10000000000 where the catalogue has 13"):
        load_catalog_index(bundled)


_REF = b'{"text": [0, "B", 0], "offsets": [0, "q", 1]}'


@pytest.mark.parametrize(
    ("field", "message"),
    [
        (b'"sibling_limit": ' + b"[" * 5_000 + b"]" * 5_000, "JSON nested more than 128 levels"),
        (b'"sibling_limit": NaN', "NaN is not a JSON number"),
        (b'"sibling_limit": "\\ud800"', "lone surrogate"),
        (b'"tool_ids": {"text": [0, "B", 1.5], "offsets": [0, "q", 1]}', "bad offset or length"),
        (b'"tool_ids": {"text": [true, "B", 0], "offsets": [0, "q", 1]}', "bad offset or length"),
        (b'"tool_ids": {"text": [0, ["B"], 0], "offsets": [0, "q", 1]}', "typecode \\['B'\\]"),
        (b'"tool_ids": {"text": {"a": 1}, "offsets": [0, "q", 1]}', "not \\[offset, typecode"),
        (b'"tool_ids": {"text": [0, "B", 0], "offsets": [0, "q", 9999]}', "runs past the data"),
    ],
)
def test_a_forged_header_is_refused(saved: Path, field: bytes, message: str) -> None:
    """The header is untrusted JSON, and every array reference has its exact shape."""
    empty = ToolCatalog(tools=[])
    _, blob = _split(saved.read_bytes())
    head = b'{"catalog": "%s", "byteorder": "%s", "tool_ids": %s, %s}' % (
        empty.fingerprint.encode(),
        sys.byteorder.encode(),
        _REF,
        field,
    )
    body = struct.pack("<8sIQ", b"WINKBM25", INDEX_FORMAT_VERSION, len(head)) + head + blob
    saved.write_bytes(body + hashlib.sha256(body).digest())
    with pytest.raises(CatalogError, match=f"malformed header .*{message}") as info:
        load_index(saved, empty)
    assert len(info.value.message) < 500


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda i: replace(i, tool_ids=(i.tool_ids[1], *i.tool_ids[1:])), "appears twice"),
        (lambda i: replace(i, node_paths=(i.node_paths[1], *i.node_paths[1:])), "appears twice"),
        (
            lambda i: replace(i, node_paths=(("x",) * 33, *i.node_paths[1:])),
            "a path is deeper or a segment longer than a catalogue's",
        ),
        (
            lambda i: replace(i, node_paths=(("x" * 513,), *i.node_paths[1:])),
            "a path is deeper or a segment longer than a catalogue's",
        ),
    ],
)
def test_names_no_catalogue_could_hold_are_refused(
    catalog: ToolCatalog, tmp_path: Path, change: Callable[[BM25Index], BM25Index], message: str
) -> None:
    """Duplicate ids or paths, and paths deeper or longer than the catalogue limits, are refused."""
    path = tmp_path / "forged.index"
    save_index(change(BM25Ranker().index(catalog)), path)
    with pytest.raises(CatalogError, match=message):
        load_index(path, catalog)


@pytest.mark.parametrize(
    "change",
    [
        lambda i: replace(i, tool_ids=("forged.tool", *i.tool_ids[1:])),
        lambda i: replace(i, tool_ids=(i.tool_ids[1], i.tool_ids[0], *i.tool_ids[2:])),
        lambda i: replace(i, node_paths=(("Forged",), *i.node_paths[1:])),
    ],
)
def test_an_index_of_other_tools_under_this_fingerprint_is_refused(
    catalog: ToolCatalog, tmp_path: Path, change: Callable[[BM25Index], BM25Index]
) -> None:
    """The fingerprint is the file's claim: ids or categories it does not hold are refused.

    Such a file once loaded, and a search then raised a KeyError looking up its ids.
    """
    path = tmp_path / "forged.index"
    save_index(change(BM25Ranker().index(catalog)), path)
    with pytest.raises(CatalogError, match="indexes other tools or categories than this"):
        load_index(path, catalog)


def test_a_forged_schema_is_a_catalog_error_when_its_tool_is_built(bundled: Path) -> None:
    """Schemas are decoded on first use (start-up does not read them): a bad one is named then."""
    header, blob = _split(bundled.read_bytes())
    reference = header["catalogue"]["schemas"]
    offset = reference[0]
    blob[offset : offset + 1] = b"["  # the first tool's args_schema now opens with "["
    _join(bundled, header, bytes(blob))
    loaded = load_catalog_index(bundled)
    first = loaded.index.tool_ids[0]
    with pytest.raises(CatalogError, match=f"saved schema of tool '{first}' is not a JSON object"):
        loaded.catalog.tool(first)


_INT_CODES = frozenset("bBiIqQ")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_forged_integer_loads_consistently_or_is_refused(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    """Change any integer of any array: the file is refused, or every operation answers."""
    path = tmp_path_factory.mktemp("forged") / "bundled.index"
    catalog = ToolCatalog(nodes=NODES, tools=TOOLS)
    save_index(BM25Ranker().index(catalog), path, catalog=catalog)
    header, blob = _split(path.read_bytes())
    references = [ref for ref in _references(header) if ref[0] in _INT_CODES and ref[2] > 0]
    typecode, offset, length = data.draw(st.sampled_from(references))
    k = data.draw(st.integers(min_value=0, max_value=length - 1))
    values = array(typecode)
    values.frombytes(bytes(blob[offset : offset + values.itemsize * length]))
    limit = 2 ** (values.itemsize * 8 - (1 if typecode.islower() else 0)) - 1
    low = 0 if typecode.isupper() else -limit - 1
    values[k] = data.draw(
        st.integers(min_value=low, max_value=limit)
        | st.sampled_from([v for v in (0, 1, 12, 13, 14, 2**31 - 1) if low <= v <= limit])
    )
    blob[offset : offset + values.itemsize * length] = values.tobytes()
    _join(path, header, bytes(blob))
    try:
        loaded = load_catalog_index(path)
    except CatalogError:
        return
    _workout(ToolDiscovery(loaded.catalog, index=loaded.index), loaded.index.tool_ids)


def _workout(service: ToolDiscovery, tool_ids: Sequence[str]) -> None:
    """Every operation on every query, category and tool: DiscoveryError or CatalogError only."""
    steps: list[Callable[[], object]] = [service.overview]
    for query in QUERIES:
        steps.append(functools.partial(service.search_tool_by_category, query, limit=50))
        steps.append(functools.partial(service.search_nodes, query, limit=50))
        steps.append(functools.partial(service.list, query=query, limit=50))
    steps.extend(
        functools.partial(service.list, path=node, limit=50) for node in service.catalog.nodes
    )
    steps.extend(functools.partial(service.expand_tool, tool_id) for tool_id in tool_ids)
    for step in steps:
        try:
            step()
        except (DiscoveryError, CatalogError):
            continue
