"""The flat columns and lazy tables a loaded catalogue reads from."""

from __future__ import annotations

from array import array

import pytest

from weakincentives.discovery._catalog import CatalogNode, CatalogTool
from weakincentives.discovery._columns import ExactNames, Groups, Strings, check_offsets
from weakincentives.discovery._restored import NodeTable, PathGroups, ToolTable
from weakincentives.errors import CatalogError


def test_strings_index_slice_and_iterate_like_a_list() -> None:
    """Entries (including empty and non-ASCII ones) come back exactly, as a list would give them."""
    values = ["alpha", "", "é-ü", "delta"]
    packed = Strings.of(values)
    assert list(packed) == values
    assert len(packed) == 4
    assert packed[2] == "é-ü"
    assert packed[-1] == "delta"
    assert packed[1:3] == ["", "é-ü"]
    with pytest.raises(IndexError):
        packed[4]


def test_groups_pack_and_check_their_values() -> None:
    """Groups round-trip, and a value beyond the bound is refused by check()."""
    groups = Groups.of([[1, 2], [], [0]])
    assert [groups[row] for row in range(len(groups))] == [(1, 2), (), (0,)]
    groups.check(3, 3, "g")
    with pytest.raises(ValueError, match=r"g: a value lies outside \[0, 2\)"):
        groups.check(3, 2, "g")
    with pytest.raises(ValueError, match="g: 3 slices"):
        groups.check(4, 3, "g")


def test_offsets_must_cover_the_data_in_order() -> None:
    """Offsets that start late, end short or go backwards are refused."""
    check_offsets(array("q", [0, 2, 2, 5]), 3, 5, "o")
    for bad in ([1, 2, 5], [0, 2, 4], [0, 3, 2, 5]):
        with pytest.raises(ValueError, match="o: "):
            check_offsets(array("q", bad), len(bad) - 1, 5, "o")


def test_exact_names_look_up_by_terms() -> None:
    """Keys are term tuples; each gives its tools' ids; a missing key is a KeyError."""
    ids = ["a", "b", "c"]
    keys, tools = ExactNames.packed(
        {("send", "mail"): ("b",), ("list",): ("a", "c")},
        {tool_id: k for k, tool_id in enumerate(ids)},
    )
    exact = ExactNames(keys, tools, ids)
    assert exact[("send", "mail")] == ("b",)
    assert exact.get(("list",)) == ("a", "c")
    assert exact.get(("send",)) is None
    assert exact.get(("zzz",)) is None
    assert sorted(exact) == [("list",), ("send", "mail")]
    assert len(exact) == 2
    assert exact == {("send", "mail"): ("b",), ("list",): ("a", "c")}


def _table(schemas: list[bytes]) -> ToolTable:
    text = b"".join(schemas)
    offsets = array("q", [0])
    for schema in schemas:
        offsets.append(offsets[-1] + len(schema))
    count = len(schemas) // 2
    return ToolTable(
        ids=[f"t{k}" for k in range(count)],
        names=[f"tool {k}" for k in range(count)],
        summaries=["" for _ in range(count)],
        paths=Groups.of([[0]] * count),
        node_paths=[("A",)],
        tags=Groups.of([[0]] * count),
        tag_names=["x"],
        schemas=text,
        schema_offsets=offsets,
    )


def test_a_tool_table_builds_each_tool_once() -> None:
    """Tools are built on first use and kept; indexes and slices behave as a tuple's."""
    table = _table([b'{"type":"object"}', b"", b'{"type":"object"}', b'{"type":"string"}'])
    first = table[0]
    assert first == CatalogTool(
        tool_id="t0", name="tool 0", paths=(("A",),), tags=("x",), args_schema={"type": "object"}
    )
    assert table[0] is first
    assert table[-1].result_schema == {"type": "string"}
    assert table[0:1] == (first,)
    assert [tool.tool_id for tool in table] == ["t0", "t1"]
    with pytest.raises(IndexError):
        table[2]


def test_a_saved_schema_that_is_not_an_object_is_a_catalogue_error() -> None:
    """Another writer's schema text that parses to a non-object names the tool."""
    table = _table([b"[1, 2]", b""])
    with pytest.raises(CatalogError, match="schema of tool 't0' is not a JSON object"):
        table[0]


def test_node_table_and_path_groups_are_read_only_mappings() -> None:
    """Lookups, membership, iteration and length match the dictionaries they replace."""
    paths = [("A",), ("A", "B")]
    rows = {path: row for row, path in enumerate(paths)}
    nodes = NodeTable(
        paths=paths,
        rows=rows,
        names=["A", "Bee"],
        summaries=["", "bees"],
        tags=Groups.of([[], [0]]),
        tag_names=["hive"],
    )
    assert nodes[("A", "B")] == CatalogNode(
        name="Bee", path=("A", "B"), summary="bees", tags=("hive",)
    )
    assert ("A",) in nodes
    assert ("C",) not in nodes
    assert list(nodes) == paths
    assert len(nodes) == 2
    children = PathGroups({(): 0, ("A",): 1, ("A", "B"): 2}, Groups.of([[0], [1], []]), nodes.at)
    assert children[()] == (nodes[("A",)],)
    assert children[("A",)] == (nodes[("A", "B")],)
    assert children.get(("C",), ()) == ()
    assert ("A",) in children
    assert ("C",) not in children
    assert list(children) == [(), ("A",), ("A", "B")]
    assert len(children) == 3
