"""Structured output: the schema sent for an answer, and parsing the answer back."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, make_dataclass

import pytest
from jsonschema import Draft202012Validator

from tests.serde.helpers import at
from weakincentives.adapters._structured import output_schema, parse_structured_output
from weakincentives.errors import PromptEvaluationError
from weakincentives.prompt._output import StructuredOutput
from weakincentives.serde import JSONObject, dump, schema


@dataclass(frozen=True)
class Node:
    """A tree node."""

    name: str
    children: list[Node] = field(default_factory=list)


@dataclass(frozen=True)
class Document:
    """Not recursive itself, but its field is."""

    title: str
    root: Node


@dataclass(frozen=True)
class Parent:
    name: str
    kids: list[Child] = field(default_factory=list)


@dataclass(frozen=True)
class Child:
    name: str
    parent: Parent | None = None


@dataclass(frozen=True)
class Flat:
    label: str


def _list_schema(cls: type[object]) -> JSONObject:
    return output_schema(StructuredOutput(dataclass_type=cls, container="array")).schema


def _validator(document: JSONObject) -> Draft202012Validator:
    Draft202012Validator.check_schema(document)
    return Draft202012Validator(document)


TREE = Node("a", [Node("b", [Node("c")]), Node("d")])
CASES = [
    (Node, TREE, {"name": "a", "children": [{"name": 5, "children": []}]}),
    (
        Document,
        Document("t", TREE),
        {"title": "t", "root": {"name": "a", "children": [{"name": "b", "children": [7]}]}},
    ),
    (
        Parent,
        Parent("p", [Child("c", Parent("q", [Child("d")]))]),
        {"name": "p", "kids": [{"name": "c", "parent": {"name": "q", "kids": [{"name": 1}]}}]},
    ),
]


class TestListOfRecursiveTypes:
    @pytest.mark.parametrize(("cls", "value", "wrong"), CASES, ids=["self", "field", "mutual"])
    def test_a_correct_answer_validates_and_a_wrong_one_does_not(
        self, cls: type[object], value: object, wrong: JSONObject
    ) -> None:
        """References resolve inside the wrapper: to the item type, at every depth."""
        validator = _validator(_list_schema(cls))
        validator.validate({"items": [dump(value), dump(value)]})
        assert not validator.is_valid({"items": [dump(value), wrong]})

    @pytest.mark.parametrize(("cls", "value", "wrong"), CASES, ids=["self", "field", "mutual"])
    def test_definitions_sit_at_the_root_and_nothing_points_at_the_wrapper(
        self, cls: type[object], value: object, wrong: JSONObject
    ) -> None:
        """$defs only at the top, and no '#' reference (it would now mean the wrapper)."""
        document = _list_schema(cls)
        text = json.dumps(document)
        assert '"$ref": "#"' not in text
        assert text.count('"$defs"') == 1
        assert "$defs" in document

    def test_a_recursive_item_becomes_a_definition(self) -> None:
        """The exact wrapper for a self-recursive item."""
        node = {
            "type": "object",
            "description": "A tree node.",
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            },
            "required": ["name", "children"],
            "additionalProperties": False,
        }
        assert _list_schema(Node) == {
            "type": "object",
            "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            "required": ["items"],
            "additionalProperties": False,
            "$defs": {"Node": node},
        }

    def test_a_definition_name_taken_by_the_item_is_numbered(self) -> None:
        """An item named like one of its own definitions gets the next free name."""
        inner = make_dataclass("Node", [("next", "Node | None")])
        inner.__annotations__["next"] = inner | None
        outer = make_dataclass("Node", [("peer", inner), ("self_", "Node | None")])
        outer.__annotations__["self_"] = outer | None
        document = _list_schema(outer)
        definitions = document["$defs"]
        assert isinstance(definitions, dict)
        assert sorted(definitions) == ["Node", "Node_2"]
        assert at(document, "properties", "items", "items") == {"$ref": "#/$defs/Node_2"}
        validator = _validator(document)
        validator.validate({"items": [{"peer": {"next": None}, "self_": None}]})
        assert not validator.is_valid({"items": [{"peer": {"next": None}, "self_": {"x": 1}}]})

    def test_flat_items_are_inlined_without_definitions(self) -> None:
        """A non-recursive item is written inline, as before."""
        assert _list_schema(Flat) == {
            "type": "object",
            "properties": {"items": {"type": "array", "items": schema(Flat)}},
            "required": ["items"],
            "additionalProperties": False,
        }

    def test_object_answers_are_sent_as_the_schema_itself(self) -> None:
        """Prompt[Node] keeps the root-recursive schema, where '#' is right."""
        sent = output_schema(StructuredOutput(dataclass_type=Node, container="object"))
        assert sent.schema == schema(Node)
        assert sent.wrapped is False
        _validator(sent.schema).validate(dump(TREE))


class TestParsingTheAnswer:
    def test_a_wrapped_answer_parses(self) -> None:
        """The items of the wrapper come back as dataclasses."""
        structured = StructuredOutput(dataclass_type=Node, container="array")
        text = json.dumps({"items": [dump(TREE)]})
        assert parse_structured_output(structured, text, prompt_name="p") == [TREE]

    @pytest.mark.parametrize(
        ("text", "fragment"),
        [
            ("[" * 10_000 + "]" * 10_000, "JSON nested more than 128 levels deep"),
            ('{"items": [NaN]}', "NaN is not a JSON number"),
            ('{"items": [' + "9" * 5000 + "]}", "an integer of 5,000 digits"),
        ],
        ids=["deep", "nan", "huge int"],
    )
    def test_hostile_answers_are_parse_errors(self, text: str, fragment: str) -> None:
        """The model's final text is decoded with serde.loads: phase parse, never a crash."""
        structured = StructuredOutput(dataclass_type=Node, container="array")
        with pytest.raises(PromptEvaluationError) as info:
            parse_structured_output(structured, text, prompt_name="p")
        assert info.value.phase == "parse"
        assert fragment in info.value.message


class TestWrappedAnswers:
    FLAT = StructuredOutput(dataclass_type=Flat, container="object")

    ANSWER = '{"label": "x"}'

    @pytest.mark.parametrize(
        "wrap",
        [
            "{}",
            "```json\n{}\n```",
            "```\n{}```",
            "Here is the report:\n```json\n{}\n```\nLet me know.",
            "```json\n{}",
        ],
        ids=["bare", "fenced", "fence-no-language", "one-block-in-prose", "fence-never-closed"],
    )
    def test_the_ways_models_wrap_json_are_read(self, wrap: str) -> None:
        """A fence, one fenced block in prose, or a fence the reply never closed."""
        text = wrap.replace("{}", self.ANSWER)
        assert parse_structured_output(self.FLAT, text, prompt_name="p") == Flat(label="x")

    def test_a_cut_off_fence_says_so(self) -> None:
        """Not "line 1 column 1": the fence is named, and the reply called cut off."""
        text = '```json\n{"label": '
        with pytest.raises(PromptEvaluationError) as info:
            parse_structured_output(self.FLAT, text, prompt_name="p")
        assert info.value.reason == (
            "final answer is not valid JSON for Flat: expected valid JSON, got a code fence "
            "that is never closed (the reply looks cut off: invalid JSON (Expecting value at "
            "line 1 column 10)) at $"
        )

    def test_two_fenced_blocks_in_prose_are_not_guessed_between(self) -> None:
        """Which one is the answer is not clear: the usual JSON error."""
        block = f"```json\n{self.ANSWER}\n```"
        with pytest.raises(PromptEvaluationError, match="is not valid JSON for Flat"):
            parse_structured_output(self.FLAT, f"A:\n{block}\nB:\n{block}", prompt_name="p")

    @pytest.mark.parametrize(
        "text",
        ["```" + " " * 3000 + "x", "A```" + " " * 3000 + "x", "```json\n{}" + " " * 3000 + "x"],
        ids=["fence-then-spaces", "prose-then-fence", "fenced-answer-then-spaces"],
    )
    def test_a_long_run_of_spaces_is_read_in_linear_time(self, text: str) -> None:
        """A fence followed by spaces and no closing fence is a parse error, found at once.

        The fence pattern once had three runs that could each take the spaces (after the
        language, in the block, before the closing fence), so matching backtracked over
        every split: 3,000 spaces took about 17 s of CPU, 5,000 over a minute. The bound
        is generous so only a super-linear reading can miss it.
        """
        started = time.process_time()
        with pytest.raises(PromptEvaluationError) as info:
            parse_structured_output(self.FLAT, text, prompt_name="p")
        assert time.process_time() - started < 2.0
        assert info.value.phase == "parse"
