"""ToolCatalog construction, validation, indexes and loaders."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import hostile_json_texts
from weakincentives.discovery import CatalogNode, CatalogTool, ToolCatalog
from weakincentives.errors import CatalogError


def _tool(tool_id: str, *paths: tuple[str, ...], name: str = "tool") -> CatalogTool:
    return CatalogTool(tool_id=tool_id, name=name, paths=paths)


def _built(make: Callable[[], ToolCatalog]) -> ToolCatalog | CatalogError:
    """The catalogue ``make`` builds, or the CatalogError it raises."""
    try:
        return make()
    except CatalogError as error:
        return error


def _deep_schema(depth: int) -> dict[str, object]:
    """An object schema whose property ``x`` nests ``depth`` levels deep."""
    schema: dict[str, object] = {"type": "object"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


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

    @pytest.mark.parametrize(
        "change",
        [
            {"name": "renamed"},
            {"summary": "Does something else."},
            {"tags": ("other",)},
            {"args_schema": {"type": "object", "properties": {"renamed_arg": {}}}},
            {"args_schema": {"type": "object", "properties": {}, "description": "x"}},
        ],
        ids=["name", "summary", "tags", "argument names", "schema"],
    )
    def test_fingerprint_covers_the_text_the_ranker_reads(
        self, catalog: ToolCatalog, change: dict[str, Any]
    ) -> None:
        """An index saved before a tool's text or schema changed does not match any more."""
        first, *rest = catalog.tools
        changed = ToolCatalog(
            nodes=catalog.nodes.values(), tools=[dataclasses.replace(first, **change), *rest]
        )
        assert changed.fingerprint != catalog.fingerprint

    def test_fingerprint_covers_the_categories_text(self, catalog: ToolCatalog) -> None:
        path, node = next(iter(catalog.nodes.items()))
        nodes = {**catalog.nodes, path: dataclasses.replace(node, summary="Something else.")}
        changed = ToolCatalog(nodes=nodes.values(), tools=catalog.tools)
        assert changed.fingerprint != catalog.fingerprint

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
            "node ['A'] is declared twice",
            "node ['B'] has an empty name",
            "node [] has an empty path; give at least one category",
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


class TestBounds:
    """Sizes a catalogue may hold are bounded, and text must be portable (``_limits``)."""

    def test_a_path_100000_segments_deep_is_refused_before_any_node_is_built(self) -> None:
        """A deep path is one problem, not a node per prefix (which was cubic, then MemoryError)."""
        deep = tuple(str(k) for k in range(100_000))
        with pytest.raises(CatalogError) as info:
            ToolCatalog(tools=[_tool("deep", deep)], nodes=[CatalogNode(name="n", path=deep)])
        assert info.value.message == (
            "2 problem(s) in the tool catalogue:\n"
            "- tool 'deep' has a path of 100,000 segments (at most 32)\n"
            "- node ['0', '1', '2', '3', '4' and 99,995 more] has a path of 100,000 segments "
            "(at most 32)"
        )
        assert info.value.tool_id == "deep"
        assert info.value.path == deep

    def test_a_path_of_32_segments_is_accepted(self) -> None:
        """The bound is inclusive: 32 segments make 32 nodes."""
        path = tuple(f"s{k}" for k in range(32))
        assert len(ToolCatalog(tools=[_tool("t", path)]).nodes) == 32

    @pytest.mark.parametrize(
        ("tool", "problem"),
        [
            (
                _tool("i" * 513, ("A",)),
                f"tool '{'i' * 37}...': tool_id has 513 characters (at most 512)",
            ),
            (_tool("t", ("A",), name="n" * 600), "tool 't': name has 600 characters (at most 512)"),
            (
                _tool("t", ("A", "s" * 513)),
                f"tool 't' has path ['A', '{'s' * 37}...'], whose segment 1 has 513 characters",
            ),
            (
                CatalogTool(tool_id="t", name="t", paths=(("A",),), tags=("x" * 513,)),
                f"tool 't': tag '{'x' * 37}...' has 513 characters",
            ),
            (
                _tool("t\ud800", ("A",)),
                r"tool 't\ud800': tool_id has a lone surrogate at "
                "character 1 (UTF-8 cannot encode it)",
            ),
            (
                CatalogTool(tool_id="t", name="t", paths=(("A",),), summary="ok \udfff"),
                "tool 't': summary has a lone surrogate at character 3",
            ),
            (_tool("t", ("\ud83d",)), "whose segment 0 has a lone surrogate at character 0"),
        ],
    )
    def test_long_or_unencodable_text_is_refused(self, tool: CatalogTool, problem: str) -> None:
        """Ids, names, segments and tags over 512 characters, and lone surrogates, are named."""
        with pytest.raises(CatalogError) as info:
            ToolCatalog(tools=[tool])
        assert problem in info.value.message
        assert info.value.message.startswith("1 problem(s) in the tool catalogue:\n- ")

    @pytest.mark.parametrize(
        ("schema", "problem"),
        [
            (
                {"type": "object", "properties": {"n": {"type": "number", "maximum": math.nan}}},
                "args_schema.properties.n.maximum: nan is not a JSON number",
            ),
            (
                {"type": "object", "properties": {"n": {"minimum": -math.inf}}},
                "args_schema.properties.n.minimum: -inf is not a JSON number",
            ),
            (
                {"type": "object", "enum": [{1: "x"}]},
                "args_schema.enum[0]: key integer 1 is not a string",
            ),
            (
                {"type": "object", "description": "caf\udce9"},
                "args_schema.description: a lone surrogate U+DCE9 at character 3 "
                "(UTF-8 cannot encode it)",
            ),
            (
                _deep_schema(3_000),
                "args_schema.properties.x"
                + ".properties.x" * 63
                + ": nested more than 128 levels deep",
            ),
        ],
    )
    def test_a_schema_that_is_not_portable_json_is_refused(
        self, schema: dict[str, object], problem: str
    ) -> None:
        """NaN (which refuses every number), surrogates, odd keys and deep nesting are named."""
        tool = CatalogTool(tool_id="t", name="t", paths=(("A",),), args_schema=cast(Any, schema))
        with pytest.raises(CatalogError) as info:
            ToolCatalog(tools=[tool])
        assert info.value.message == f"1 problem(s) in the tool catalogue:\n- tool 't': {problem}"

    def test_a_thousand_problems_make_a_bounded_message(self) -> None:
        """The first 20 problems are listed and the rest counted."""
        tools = [_tool("same", ("A",)) for _ in range(1_001)]
        with pytest.raises(CatalogError) as info:
            ToolCatalog(tools=tools)
        lines = info.value.message.splitlines()
        assert lines[0] == "1,000 problem(s) in the tool catalogue:"
        assert lines[1:21] == ["- tool_id 'same' is used by more than one tool"] * 20
        assert lines[21:] == ["- and 980 more"]

    @settings(max_examples=200, deadline=None)
    @given(
        texts=st.lists(st.text(max_size=8) | st.text(max_size=600), min_size=4, max_size=4),
        depth=st.integers(min_value=0, max_value=40),
    )
    def test_a_catalogue_holds_only_text_utf8_can_carry(self, texts: list[str], depth: int) -> None:
        """Any text and depth: the catalogue is refused, or all its text encodes and is bounded."""
        tool_id, name, segment, tag = texts
        tool = CatalogTool(
            tool_id=tool_id, name=name, paths=((segment,) * depth,), summary=tag, tags=(tag,)
        )
        catalog = _built(lambda: ToolCatalog(tools=[tool]))
        if isinstance(catalog, CatalogError):
            catalog.message.encode("utf-8")
            assert len(catalog.message) < 2_000
            return
        for node in catalog.nodes.values():
            assert len(node.path) <= 32
            "".join(node.path).encode("utf-8")
        built = catalog.tools[0]
        (built.tool_id + built.name + built.summary + "".join(built.tags)).encode("utf-8")
        assert max(len(built.tool_id), len(built.name), len(segment), len(tag)) <= 512


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

    def test_records_that_are_not_mappings_are_reported_with_the_others(self) -> None:
        """A list, a string or None where a record belongs was an AttributeError."""
        records = cast("list[Mapping[str, object]]", [[1], "tool", None, {"tool_id": 2}])
        with pytest.raises(CatalogError, match=r"^4 malformed catalogue record\(s\)") as info:
            ToolCatalog.from_records(records)
        message = info.value.message
        assert "record 0 (list): a record must be a JSON object (a mapping)" in message
        assert "record 1 (str): a record must be a JSON object (a mapping)" in message
        assert "record 2 (None): a record must be a JSON object (a mapping)" in message
        assert "record 3 (2): tool_id and name must be strings" in message
        assert info.value.tool_id is None

    def test_from_jsonl_skips_blank_lines(self, tmp_path: Path) -> None:
        """A JSON-lines file with blank lines loads every record."""
        file = tmp_path / "catalog.jsonl"
        lines = [json.dumps({"tool_id": f"t{i}", "name": f"T{i}", "path": ["A"]}) for i in (1, 2)]
        file.write_text(lines[0] + "\n\n" + lines[1] + "\n", encoding="utf-8")
        assert [tool.tool_id for tool in ToolCatalog.from_jsonl(file)] == ["t1", "t2"]

    @pytest.mark.parametrize(
        ("line", "expected"),
        [
            (b"{not json", r"invalid JSON \(Expecting property name .* column 2\)"),
            (b"[1, 2]", r"expected a JSON object \(one tool record\) per line"),
            (b'{"tool_id": "a\xff"}', r"undecodable bytes \(invalid start byte at byte 14\)"),
            (
                b'{"x": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
                "JSON nested more than 128 levels deep",
            ),
            (
                b'{"tool_id": "n", "name": "n", "path": ["A"], "args_schema": {"type": "object", '
                b'"properties": {"n": {"type": "number", "maximum": NaN}}}}',
                r"invalid JSON \(NaN is not a JSON number at column 130\)",
            ),
            (b'{"x": -Infinity}', r"invalid JSON \(-Infinity is not a JSON number at column 7\)"),
            (b'{"x": 1e999}', r"number 1e999 \(too large for a double at column 7\)"),
            (
                b'{"tool_id": "\\ud800"}',
                r"a lone surrogate escape \\ud800 \(UTF-8 cannot encode it; column 14\)",
            ),
        ],
    )
    def test_from_jsonl_names_the_line_of_a_bad_record(
        self, tmp_path: Path, line: bytes, expected: str
    ) -> None:
        """Bytes that are not a portable JSON object give a CatalogError naming file and line."""
        good = json.dumps({"tool_id": "ok", "name": "ok", "path": ["A"]}).encode()
        file = tmp_path / "bad.jsonl"
        file.write_bytes(good + b"\n\n" + line + b"\n" + good + b"\n")
        with pytest.raises(CatalogError, match=f"^{re.escape(str(file))}:3: {expected}"):
            ToolCatalog.from_jsonl(file)

    @pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32-be"])
    @pytest.mark.parametrize("layout", ["lines", "array"])
    def test_a_utf16_or_utf32_file_is_refused_as_not_utf8(
        self, tmp_path: Path, encoding: str, layout: str
    ) -> None:
        """Such files were read whole or cut into garbage lines, by layout and byte order."""
        records = [{"tool_id": f"t{k}", "name": "n", "path": ["A"]} for k in range(3)]
        text = (
            "\n".join(json.dumps(record) for record in records)
            if layout == "lines"
            else json.dumps(records, indent=1)
        )
        file = tmp_path / "tools.jsonl"
        file.write_bytes(text.encode(encoding))
        with pytest.raises(CatalogError, match=r"tools\.jsonl:1: a NUL byte at byte \d+; a "):
            ToolCatalog.from_jsonl(file)

    def test_a_nul_byte_names_its_line(self, tmp_path: Path) -> None:
        """A NUL byte deeper in a UTF-8 file names the line it is on."""
        file = tmp_path / "tools.jsonl"
        line = json.dumps({"tool_id": "a", "name": "n", "path": ["A"]})
        file.write_bytes(f"{line}\n{line}\n".encode() + b'{"tool_id": "\x00"}\n')
        with pytest.raises(CatalogError, match=r"tools\.jsonl:3: a NUL byte at byte 103; "):
            ToolCatalog.from_jsonl(file)

    def test_record_problems_name_their_line(self, tmp_path: Path) -> None:
        """A problem found while building (a duplicate id, a path too deep) names the line."""
        records = [
            {"tool_id": "a", "name": "a", "path": ["A"]},
            {"tool_id": "a", "name": "b", "path": ["B"]},
            {"tool_id": "deep", "name": "d", "path": [str(k) for k in range(100_000)]},
        ]
        file = tmp_path / "catalog.jsonl"
        file.write_text("\n".join(json.dumps(record) for record in records))
        with pytest.raises(CatalogError) as info:
            ToolCatalog.from_jsonl(file)
        assert info.value.message == (
            "2 problem(s) in the tool catalogue:\n"
            f"- {file}:2: tool_id 'a' is used by more than one tool\n"
            f"- {file}:3: tool 'deep' has a path of 100,000 segments (at most 32)"
        )
        assert info.value.tool_id == "a"

    def test_a_json_array_file_is_read_like_json_lines(self, tmp_path: Path) -> None:
        """One JSON array of records gives the same catalogue; problems name the item."""
        records = [
            {"tool_id": "a", "name": "a", "path": ["A"]},
            {"tool_id": "b", "name": "b", "path": ["B"], "summary": "bee"},
        ]
        lines, array = tmp_path / "c.jsonl", tmp_path / "c.json"
        lines.write_text("\n".join(json.dumps(record) for record in records))
        array.write_text(json.dumps(records, indent=2))
        assert list(ToolCatalog.from_jsonl(array)) == list(ToolCatalog.from_jsonl(lines))
        array.write_text(json.dumps([*records, 7]))
        with pytest.raises(CatalogError, match=r"c\.json item 3: expected a JSON object"):
            ToolCatalog.from_jsonl(array)

    def test_an_unreadable_file_is_a_catalog_error(self, tmp_path: Path) -> None:
        """A missing file names itself and the reason."""
        with pytest.raises(CatalogError, match=r"cannot read the catalogue file .*absent"):
            ToolCatalog.from_jsonl(tmp_path / "absent.jsonl")

    @settings(max_examples=150, deadline=None)
    @given(text=hostile_json_texts())
    def test_any_schema_text_gives_a_portable_catalogue_or_a_catalog_error(
        self, tmp_path_factory: pytest.TempPathFactory, text: str
    ) -> None:
        """Whatever a record's schema text holds, the catalogue is portable JSON or refused."""
        file = tmp_path_factory.mktemp("hostile") / "catalog.jsonl"
        line = '{"tool_id": "t", "name": "t", "path": ["A"], "args_schema": {"type": "object", '
        file.write_bytes(f'{line}"default": {text}}}}}\n'.encode("utf-8", "surrogatepass"))
        catalog = _built(lambda: ToolCatalog.from_jsonl(file))
        if isinstance(catalog, CatalogError):
            assert catalog.message.startswith(f"{file}:1: ")
            return
        schema = catalog.tools[0].args_schema
        json.dumps(schema, allow_nan=False).encode("utf-8")  # raises if it is not portable
