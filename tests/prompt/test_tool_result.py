"""ToolResult refuses wrongly typed fields, and its text for the model is total."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given

from tests.strategies import hostile_json_values, json_values
from weakincentives.errors import ToolResultError, WinkError
from weakincentives.prompt import ToolResult


def _build(**fields: Any) -> ToolResult[Any]:
    return ToolResult(**fields)


class TestConstruction:
    @pytest.mark.parametrize(
        ("fields", "message"),
        [
            ({"message": 5}, "ToolResult message must be a str, got int 5"),
            ({"message": None}, "ToolResult message must be a str, got NoneType None"),
            ({"message": b"ok"}, "ToolResult message must be a str, got bytes b'ok'"),
            (
                {"message": "ok", "success": 1},
                "ToolResult success must be a bool, got int 1",
            ),
            (
                {"message": ["x" * 100], "exclude_value_from_context": "no"},
                "ToolResult message must be a str, got list ['" + "x" * 35 + "...; "
                "exclude_value_from_context must be a bool, got str 'no'",
            ),
        ],
    )
    def test_wrongly_typed_fields_are_refused(self, fields: dict[str, Any], message: str) -> None:
        """Every wrong field is named with its type and a short view of the value."""
        with pytest.raises(ToolResultError) as info:
            _build(**fields)
        assert info.value.message == message

    def test_the_error_is_a_wink_error_and_a_type_error(self) -> None:
        """Callers may catch it as the library's error or as Python's TypeError."""
        with pytest.raises(ToolResultError) as info:
            _build(message=5)
        assert isinstance(info.value, WinkError)
        assert isinstance(info.value, TypeError)

    def test_str_subclasses_are_text(self) -> None:
        """A str subclass is a str; it is kept as given."""

        class Note(str):
            pass

        assert ToolResult(message=Note("hi")).model_content() == "hi"


class _Raises:
    def render(self) -> str:
        raise RuntimeError("renderer down")


@dataclass(frozen=True)
class Measured:
    value: float


class TestRender:
    @pytest.mark.parametrize(
        ("value", "message"),
        [
            (
                _Raises(),
                "_Raises.render() raised RuntimeError: renderer down",
            ),
            (
                Measured(float("nan")),
                "the Measured value of this ToolResult cannot be written as JSON: "
                "ValueError: Out of range float values are not JSON compliant: nan",
            ),
            (
                {"n": 7 * 10**5000},
                "the dict value of this ToolResult cannot be written as JSON: ValueError: "
                "Exceeds the limit (4300 digits) for integer string conversion; "
                "use sys.set_int_max_str_digits() to increase the limit",
            ),
            (
                object(),
                "the object value of this ToolResult cannot be written as JSON: SchemaError: "
                "cannot dump a value of type object at $",
            ),
        ],
        ids=["raising render", "nan", "huge int", "unsupported"],
    )
    def test_a_value_without_text_is_a_tool_result_error(self, value: object, message: str) -> None:
        """render() raises ToolResultError, never a bare ValueError or the payload's error."""
        with pytest.raises(ToolResultError) as info:
            ToolResult(message="m", value=value).render()
        assert info.value.message == message

    def test_deep_values_are_a_tool_result_error(self) -> None:
        """Nesting past the recursion limit is refused, not a RecursionError."""
        deep: list[object] = []
        for _ in range(100_000):
            deep = [deep]
        with pytest.raises(ToolResultError, match="RecursionError"):
            ToolResult(message="m", value=deep).render()

    def test_lone_surrogates_are_written_as_escapes(self) -> None:
        """Data decoded elsewhere may hold lone surrogates: the JSON escapes them."""
        result = ToolResult(message="m\ud800", value={"q": "é\udc00"})
        text = result.render()
        assert text == '{"q":"\\u00e9\\udc00"}'
        assert json.loads(text) == {"q": "é\udc00"}
        assert result.model_content(text) == 'm\\ud800\n\n{"q":"\\u00e9\\udc00"}'

    def test_non_ascii_text_is_kept_as_is(self) -> None:
        """Ordinary non-ASCII text stays readable (no escapes)."""
        assert ToolResult(message="ok", value={"q": "é"}).model_content() == 'ok\n\n{"q":"é"}'


@given(value=json_values() | hostile_json_values())
def test_render_and_model_content_are_total(value: object) -> None:
    """For any JSON-shaped value: UTF-8 encodable text, or a ToolResultError; nothing else."""
    result = ToolResult(message="m", value=value)
    try:
        content = result.model_content()
    except ToolResultError:
        return
    content.encode("utf-8")
    assert content.startswith("m")
