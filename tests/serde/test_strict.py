"""is_strict_compatible: which strict schemas OpenAI strict mode would take."""

from __future__ import annotations

from dataclasses import field, make_dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Literal
from uuid import UUID

import pytest

from tests.serde.models import Address, Customer, Drawing, OpenSectionsParams, Tree
from weakincentives.serde import _strict, is_strict_compatible
from weakincentives.serde._strict import strict_problem


def _one(hint: object, **metadata: object) -> type:
    return make_dataclass("Params", [("v", hint, field(metadata=metadata))])


def _nested(depth: int) -> type:
    cls = _one(int)
    for _ in range(depth - 1):
        cls = _one(cls)
    return cls


@pytest.mark.parametrize(
    "cls",
    [
        OpenSectionsParams,
        _one(int | None, ge=0, le=9, multiple_of=3),
        _one(float, gt=0, lt=1),
        _one(str, pattern="^[a-z]+$", description="lower", title="Name"),
        _one(list[int], min_length=1, max_length=3),
        _one(Literal["a", "b"]),
        _one(datetime | None),
        _one(date),
        _one(UUID),
        _one(Decimal),
        _one(tuple[str, ...]),
        _one(frozenset[int]),
        make_dataclass("Params", [("v", int, field(default=3))]),
        make_dataclass("Empty", []),
        _nested(10),
    ],
)
def test_strict_compatible_schemas(cls: type) -> None:
    """Schemas within OpenAI's strict subset are reported as compatible."""
    assert strict_problem(cls) is None
    assert is_strict_compatible(cls) is True


@pytest.mark.parametrize(
    ("cls", "problem"),
    [
        (list[int], "the root is not an object"),
        (_one(dict[str, int]), "$.v allows additional properties"),
        (_one(Any), "$.v accepts any value (no type)"),
        (_one(str, min_length=1), "$.v uses minLength"),
        (_one(tuple[int, str]), "$.v uses prefixItems"),
        (_one(int, examples=[1]), "$.v uses examples"),
        (Address, "$.street uses maxLength, minLength"),
        (Customer, "$.name uses minLength"),
        (Drawing, "$.origin uses prefixItems"),
        (Tree, "$.extra accepts any value (no type)"),
        (_nested(11), "$.v.v.v.v.v.v.v.v.v.v nests objects deeper than 10 levels"),
        (_one(Literal[tuple(range(1001))]), "1001 enum values exceed the limit of 1000"),
        (
            make_dataclass("Wide", [(f"f{i}", int) for i in range(5001)]),
            "5001 properties exceed the limit of 5000",
        ),
    ],
)
def test_incompatible_schemas_name_the_reason(cls: Any, problem: str) -> None:
    """Each rule that strict mode enforces makes a schema incompatible, with a reason."""
    assert strict_problem(cls) == problem
    assert is_strict_compatible(cls) is False


def test_format_outside_the_strict_list_is_reported() -> None:
    """Only the formats OpenAI lists are accepted."""
    assert _strict._check(
        {"type": "string", "format": "uri"}, "$", 1, {"properties": 0, "enum": 0}
    ) == ("$ uses format 'uri'")
    assert _strict._check(True, "$", 1, {"properties": 0, "enum": 0}) == "$ is not a schema object"


def test_recursive_schemas_can_be_strict() -> None:
    """References ($ref, $defs) are part of the strict subset."""
    node = make_dataclass("Node", [("label", str), ("next", "Node | None")])
    node.__annotations__["next"] = node | None
    holder = make_dataclass("Holder", [("first", node)])
    assert strict_problem(holder) is None


def test_answers_are_cached_per_type() -> None:
    """Asking twice gives the same answer without recomputing the schema."""
    cls = _one(int)
    assert is_strict_compatible(cls) is True
    assert is_strict_compatible(cls) is True


def test_objects_must_require_every_property() -> None:
    """An object with an optional property is outside the strict subset."""
    loose: dict[str, object] = {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "required": [],
        "additionalProperties": False,
    }
    counts = {"properties": 0, "enum": 0}
    assert _strict._check(loose, "$", 1, counts) == "$ does not require every property"
