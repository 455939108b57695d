"""ToolCatalog construction, validation, indexes and loaders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from weakincentives.discovery import CatalogNode, CatalogTool, ToolCatalog
from weakincentives.errors import CatalogError


def _tool(tool_id: str, *paths: tuple[str, ...], name: str = "tool") -> CatalogTool:
    return CatalogTool(tool_id=tool_id, name=name, paths=paths)


class TestConstruction:
    def test_intermediate_nodes_are_created_for_every_path_prefix(self) -> None:
        """A tool at a deep path implies a node for each prefix, named after its last segment."""
        catalog = ToolCatalog(tools=[_tool("a", ("X", "Y", "Z"))])
        assert sorted(catalog.nodes) == [("X",), ("X", "Y"), ("X", "Y", "Z")]
        assert catalog.nodes[("X", "Y")] == CatalogNode(name="Y", path=("X", "Y"))

    def test_explicit_nodes_keep_their_summary_and_tags(self, catalog: ToolCatalog) -> None:
        """Declared nodes are kept as given rather than replaced by implied ones."""
        node = catalog.node(("Storage", "Buckets"))
        assert node is not None
        assert node.summary == "Create and manage object storage buckets"
        assert node.tags == ("storage", "objects")

    def test_children_are_sorted_by_name(self, catalog: ToolCatalog) -> None:
        """Child nodes come back in case-insensitive name order."""
        assert [node.name for node in catalog.children(())] == [
            "Coding",
            "Rendering",
            "Security",
            "Storage",
            "System",
            "User",
        ]

    def test_tools_at_lists_direct_tools_in_name_order(self, catalog: ToolCatalog) -> None:
        """Only tools placed directly at the path are returned, ordered by name."""
        names = [catalog.tools[i].name for i in catalog.tools_at(("Coding", "Refactoring"))]
        assert names == ["extract_function", "inline_variable", "rename_symbol"]
        assert catalog.tools_at(("Coding",)) == ()

    def test_dag_tool_is_counted_under_each_category(self, catalog: ToolCatalog) -> None:
        """A tool with two paths sits under both, and counts once at shared ancestors."""
        rotate = catalog.position("identity.rotate_credentials")
        assert rotate in catalog.tools_at(("Security",))
        assert rotate in catalog.tools_at(("System", "Identity"))
        assert catalog.subtree_size(("Security",)) == 1
        assert catalog.subtree_size(()) == 13
        tool = catalog.tool("identity.rotate_credentials")
        assert tool is not None
        assert tool.path == ("System", "Identity")
        assert tool.path_within(("Security",)) == ("Security",)
        assert tool.path_within(("Coding",)) is None

    def test_subtree_counts_each_tool_once(self) -> None:
        """Two paths of one tool under the same ancestor count it once there."""
        catalog = ToolCatalog(tools=[_tool("a", ("X", "A"), ("X", "B"))])
        assert catalog.subtree_size(("X",)) == 1
        assert catalog.subtree_size(("X", "A")) == 1

    def test_tags_are_indexed_case_insensitively(self, catalog: ToolCatalog) -> None:
        """tools_tagged finds tools by tag regardless of case."""
        tagged = {catalog.tools[i].tool_id for i in catalog.tools_tagged("OAUTH")}
        assert tagged == {"auth.oauth_login"}
        assert catalog.tools_tagged("missing") == frozenset()

    def test_lookup_helpers(self, catalog: ToolCatalog) -> None:
        """tool, node, has_path, len and iteration agree with the input."""
        assert catalog.tool("nope") is None
        assert catalog.node(()) is None
        assert catalog.has_path(())
        assert catalog.has_path(("Coding", "Quality"))
        assert not catalog.has_path(("Coding", "Nope"))
        assert len(catalog) == 13
        assert next(iter(catalog)).tool_id == "refactor.rename_symbol"

    def test_fingerprint_changes_with_the_catalogue(self, catalog: ToolCatalog) -> None:
        """Equal catalogues share a fingerprint; a different tool set changes it."""
        again = ToolCatalog(nodes=catalog.nodes.values(), tools=catalog.tools)
        smaller = ToolCatalog(tools=catalog.tools[1:])
        assert again.fingerprint == catalog.fingerprint
        assert smaller.fingerprint != catalog.fingerprint

    def test_tool_values_are_hashable_and_ignore_the_handle(self) -> None:
        """Tools with different handles compare equal and hash without their schemas."""
        first = CatalogTool(tool_id="a", name="a", paths=(("X",),), handle=object())
        second = CatalogTool(tool_id="a", name="a", paths=(("X",),), handle=object())
        assert first == second
        assert hash(first) == hash(second)


class TestValidation:
    def test_every_problem_is_reported_at_once(self) -> None:
        """Duplicate ids, empty names, bad paths and bad schemas are collected into one error."""
        tools = [
            _tool("dup", ("A",)),
            _tool("dup", ("A",)),
            _tool("noname", ("A",), name=" "),
            _tool("nopath"),
            _tool("emptypath", ()),
            _tool("blank", ("A", "")),
            CatalogTool(tool_id="arr", name="x", paths=(("A",),), args_schema={"type": "array"}),
            CatalogTool(
                tool_id="badtype",
                name="x",
                paths=(("A",),),
                args_schema={"type": "object", "properties": {"n": {"type": "int"}}},
            ),
            CatalogTool(
                tool_id="badresult", name="x", paths=(("A",),), result_schema={"pattern": "("}
            ),
            _tool(" ", ("A",)),
        ]
        nodes = [
            CatalogNode(name="A", path=("A",)),
            CatalogNode(name="A", path=("A",)),
            CatalogNode(name="", path=("B",)),
            CatalogNode(name="C", path=()),
        ]
        with pytest.raises(CatalogError, match=r"^12 problem\(s\) in the tool catalogue") as info:
            ToolCatalog(tools=tools, nodes=nodes)
        message = info.value.message
        for expected in (
            "tool_id 'dup' is used by more than one tool",
            "tool 'noname' has an empty name",
            "tool 'nopath' has no category path",
            "tool 'emptypath' has an empty path",
            "tool 'blank' has path ['A', ''] with an empty segment",
            "tool 'arr': args_schema must be a JSON Schema object",
            "tool 'badtype': args_schema.properties.n.type has unknown type 'int'",
            "tool 'badresult': result_schema.pattern '(' is not a valid regular expression",
            "tool 'tool' has an empty tool_id",
            "node path ['A'] is declared twice",
            "node ['B'] has an empty name",
            "node 'C' has an empty path segment",
        ):
            assert expected in message
        assert info.value.tool_id == "dup"
        assert info.value.path is None

    def test_error_points_at_the_first_problem_path(self) -> None:
        """When the first problem is a node, the error carries its path."""
        with pytest.raises(CatalogError, match="declared twice") as info:
            ToolCatalog(
                tools=[_tool("a", ("A",))],
                nodes=[CatalogNode(name="A", path=("A",)), CatalogNode(name="A", path=("A",))],
            )
        assert info.value.path == ("A",)
        assert info.value.tool_id is None


class TestLoaders:
    def test_from_records_reads_the_jsonl_layout(self) -> None:
        """Records with path, tags, summary and schemas become tools; defaults fill the rest."""
        catalog = ToolCatalog.from_records(
            [
                {
                    "tool_id": "a/b/c",
                    "name": "Search",
                    "path": ["A", "B"],
                    "summary": "Finds things",
                    "tags": ["GET"],
                    "args_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
                    "result_schema": {"type": "array"},
                },
                {"tool_id": "x", "name": "X", "paths": [["P"], ["Q", "R"]]},
            ]
        )
        first, second = catalog.tools
        assert first.paths == (("A", "B"),)
        assert first.tags == ("GET",)
        assert first.result_schema == {"type": "array"}
        assert second.paths == (("P",), ("Q", "R"))
        assert second.args_schema == {"type": "object", "properties": {}}
        assert second.summary == ""

    def test_malformed_records_are_reported_together(self) -> None:
        """Each bad record is named by position and id in one error."""
        records: list[dict[str, object]] = [
            {"tool_id": 1, "name": "x", "path": ["A"]},
            {"tool_id": "b", "name": "x", "path": "A"},
            {"tool_id": "c", "name": "x", "path": ["A"], "summary": 3},
            {"tool_id": "d", "name": "x", "path": ["A"], "tags": "GET"},
            {"tool_id": "e", "name": "x", "path": ["A"], "args_schema": []},
        ]
        with pytest.raises(CatalogError, match=r"^5 malformed catalogue record\(s\)") as info:
            ToolCatalog.from_records(records)
        assert "record 0 (1): tool_id and name must be strings" in info.value.message
        assert "record 1 ('b'): path must be a list of strings" in info.value.message
        assert "record 2 ('c'): summary must be a string" in info.value.message
        assert "record 3 ('d'): tags must be a list of strings" in info.value.message
        assert "record 4 ('e'): args_schema and result_schema must be JSON objects" in (
            info.value.message
        )
        assert info.value.tool_id == "b"

    def test_from_jsonl_skips_blank_lines(self, tmp_path: Path) -> None:
        """A JSON-lines file with blank lines loads every record."""
        file = tmp_path / "catalog.jsonl"
        lines = [json.dumps({"tool_id": f"t{i}", "name": f"T{i}", "path": ["A"]}) for i in (1, 2)]
        file.write_text(lines[0] + "\n\n" + lines[1] + "\n", encoding="utf-8")
        assert [tool.tool_id for tool in ToolCatalog.from_jsonl(file)] == ["t1", "t2"]

    @pytest.mark.parametrize(
        ("content", "expected"),
        [("{not json\n", r":1: not valid JSON"), ("[1, 2]\n", r":1: expected a JSON object")],
    )
    def test_from_jsonl_rejects_bad_lines(
        self, tmp_path: Path, content: str, expected: str
    ) -> None:
        """Invalid JSON or a non-object line names the file and line."""
        file = tmp_path / "bad.jsonl"
        file.write_text(content, encoding="utf-8")
        with pytest.raises(CatalogError, match=expected):
            ToolCatalog.from_jsonl(file)
