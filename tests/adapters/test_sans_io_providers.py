"""Pure pieces of the new providers: Anthropic's schema subset and the SDK call's arguments."""

from __future__ import annotations

from typing import Any

from weakincentives.adapters._sdk_senders import named_parameters
from weakincentives.adapters.anthropic._schema import anthropic_schema
from weakincentives.serde import JSONObject


class TestAnthropicSchema:
    def test_nested_schemas_are_rewritten_everywhere(self) -> None:
        """$defs, anyOf, items and properties are walked; only unsupported keywords move."""
        schema: JSONObject = {
            "type": "object",
            "properties": {
                "when": {"type": "string", "format": "date"},
                "site": {"type": "string", "format": "idn-hostname"},
                "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}, "minItems": 1},
                "scores": {"type": "array", "items": {"type": "number"}, "minItems": 2},
                "note": {"anyOf": [{"type": "string", "pattern": "^a"}, {"type": "null"}]},
            },
            "required": ["when", "site", "tags", "scores", "note"],
            "additionalProperties": False,
            "$defs": {"Tag": {"type": "string", "description": "A tag", "maxLength": 9}},
        }
        assert anthropic_schema(schema) == {
            "type": "object",
            "properties": {
                "when": {"type": "string", "format": "date"},
                "site": {"type": "string", "description": 'Constraints: format="idn-hostname"'},
                "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}, "minItems": 1},
                "scores": {
                    "type": "array",
                    "items": {"type": "number"},
                    "description": "Constraints: minItems=2",
                },
                "note": {
                    "anyOf": [
                        {"type": "string", "description": 'Constraints: pattern="^a"'},
                        {"type": "null"},
                    ]
                },
            },
            "required": ["when", "site", "tags", "scores", "note"],
            "additionalProperties": False,
            "$defs": {
                "Tag": {"type": "string", "description": "A tag\n\nConstraints: maxLength=9"}
            },
        }


class TestSdkArguments:
    def test_a_create_that_takes_any_keyword_names_none(self) -> None:
        """With **kwargs every option is passed as a keyword; none go to extra_body."""

        def create(*, model: str, **rest: Any) -> None:
            del model, rest

        def named(*, model: str, messages: list[Any]) -> None:
            del model, messages

        assert named_parameters(create) is None
        assert named_parameters(named) == frozenset({"model", "messages"})

    def test_a_callable_without_a_signature_names_none(self) -> None:
        """Builtins without introspectable signatures fall back to passing everything."""
        assert named_parameters(max) is None
