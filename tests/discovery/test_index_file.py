"""Saving and loading an index: round trips exactly; bad files are CatalogErrors, never answers."""

from __future__ import annotations

import dataclasses
import hashlib
import struct
import sys
from array import array
from pathlib import Path

import pytest

from weakincentives.discovery import (
    BM25Ranker,
    CatalogTool,
    ToolCatalog,
    ToolDiscovery,
    load_index,
    save_index,
)
from weakincentives.discovery._index_file import INDEX_FORMAT_VERSION
from weakincentives.errors import CatalogError

QUERIES = ("upload object bucket", "rename a symbol", "reset password email", "What is it?")


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
    catalog: ToolCatalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file saved on a big-endian machine loads on a little-endian one (and back)."""
    built = BM25Ranker().index(catalog)
    swapped = dataclasses.replace(
        built,
        tools=dataclasses.replace(built.tools, ids=_swapped(built.tools.ids)),
    )
    other = "big" if sys.byteorder == "little" else "little"
    monkeypatch.setattr(sys, "byteorder", other)
    path = tmp_path / "foreign.index"
    save_index(swapped, path)
    monkeypatch.undo()
    loaded = load_index(path, catalog)
    assert loaded.tools.ids == built.tools.ids


def _swapped[T: (int, float)](values: array[T]) -> array[T]:
    copy = array(values.typecode, values)
    copy.byteswap()
    return copy
