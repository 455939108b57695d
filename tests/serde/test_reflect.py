"""Reflection: which types serde accepts, how annotations resolve, and how classes are built."""

from __future__ import annotations

from collections import deque
from dataclasses import KW_ONLY, InitVar, dataclass, field, make_dataclass
from enum import Enum
from typing import Annotated, Any, Literal, NewType, TypeVar

import pytest

from weakincentives.errors import ParseError, SchemaError
from weakincentives.serde import dump, parse, schema

Score = NewType("Score", int)
Bounded = TypeVar("Bounded", bound=int)
type Pair = tuple[int, int]


class Opaque:
    pass


@dataclass
class UsesAliases:
    score: Score
    pair: Pair


@dataclass
class Unbound[T]:
    value: T


@dataclass
class BoundedBox[B: int]:
    value: B


@dataclass
class WithTypeVar:
    value: Bounded  # type: ignore[valid-type]  # a module-level TypeVar read as its bound


@dataclass
class Missing:
    value: NotDefinedAnywhere  # type: ignore[name-defined]  # noqa: F821 - unresolvable on purpose


@dataclass
class WithInitVar:
    total: int
    scale: InitVar[int] = 1

    def __post_init__(self, scale: int) -> None:
        self.total *= scale


@dataclass
class Guarded:
    value: int
    seen: list[str] = field(default_factory=list, init=False)

    def __setattr__(self, name: str, value: object) -> None:
        if name == "value" and isinstance(value, int) and value < 0:
            raise ValueError("negative")
        object.__setattr__(self, name, value)


@dataclass(kw_only=True)
class KeywordOnly:
    a: int
    b: str = "x"


@dataclass
class Mixed:
    a: int
    _: KW_ONLY
    b: int = 2


class TestAccepted:
    def test_new_types_and_type_aliases_resolve(self) -> None:
        """NewType and `type X = ...` aliases resolve to their underlying types."""
        assert parse(UsesAliases, {"score": 3, "pair": [1, 2]}) == UsesAliases(Score(3), (1, 2))

    def test_type_variables_resolve_to_their_bound(self) -> None:
        """An unparametrised generic uses the bound, or Any when there is none."""
        assert parse(Unbound, {"value": {"x": 1}}) == Unbound({"x": 1})
        assert parse(BoundedBox, {"value": 2}) == BoundedBox(2)
        with pytest.raises(ParseError, match=r"expected an integer, got string"):
            parse(WithTypeVar, {"value": "x"})

    def test_locally_defined_recursive_classes_resolve(self) -> None:
        """A class defined in a function may refer to itself in string annotations."""

        @dataclass
        class Link:
            value: int
            next: Link | None = None

        assert parse(Link, {"value": 1, "next": {"value": 2}}) == Link(1, Link(2))

    def test_init_vars_go_through_init(self) -> None:
        """A class with InitVar and __post_init__ is built by calling it."""
        assert parse(WithInitVar, {"total": 2}).total == 2

    def test_custom_setattr_is_respected(self) -> None:
        """A mutable class with its own __setattr__ is built through __init__."""
        with pytest.raises(
            ParseError, match=r"expected a valid Guarded, got ValueError: negative at \$"
        ):
            parse(Guarded, {"value": -1})
        assert parse(Guarded, {"value": 1}) == Guarded(1)
        assert dump(Guarded(1)) == {"value": 1}

    def test_keyword_only_fields_are_passed_by_name(self) -> None:
        """kw_only fields work whether or not the class can be built directly."""
        assert parse(KeywordOnly, {"a": 1}) == KeywordOnly(a=1)
        assert parse(Mixed, {"a": 1, "b": 3}) == Mixed(1, b=3)


class TestRejected:
    @pytest.mark.parametrize(
        ("hint", "message"),
        [
            (Opaque, "unsupported type TestRejected.Opaque"),
            (bytes, "unsupported type bytes"),
            (dict[tuple[str, ...], str], "unsupported dict key type tuple[str, ...]"),
            (dict[float, str], "unsupported dict key type float"),
            (set[list[int]], "set items must be hashable; use tuple or frozenset items"),
            (frozenset[dict[str, int]], "set items must be hashable; dicts are not"),
            (Literal[b"x"], "unsupported Literal value b'x'"),
        ],
    )
    def test_unsupported_root_types(self, hint: Any, message: str) -> None:
        """Types serde cannot represent are SchemaErrors when first used."""
        with pytest.raises(SchemaError) as info:
            parse(hint, None)
        assert info.value.message.startswith(message.replace("TestRejected.", ""))
        assert info.value.dataclass_type is None

    def test_unhashable_set_items_name_the_class_to_freeze(self) -> None:
        """A set of mutable dataclasses says to make the class frozen."""

        @dataclass
        class Item:
            v: int

        with pytest.raises(SchemaError, match=r"set items must be hashable; make .*Item frozen"):
            schema(set[Item])

    def test_enum_values_must_be_json_scalars(self) -> None:
        """An enum whose values are not JSON scalars names the member."""

        class Pairs(Enum):
            A = (1, 2)

        with pytest.raises(SchemaError, match=r"member A has value \(1, 2\)"):
            schema(Pairs)

    def test_unresolvable_annotations_name_the_field(self) -> None:
        """A name an annotation uses but nobody defines is reported with class and field."""
        with pytest.raises(SchemaError) as info:
            parse(Missing, {})
        assert info.value.message.startswith(
            "Missing.value: cannot resolve annotation 'NotDefinedAnywhere'"
        )
        assert (info.value.dataclass_type, info.value.field_name) == (Missing, "value")


class TestResolution:
    def test_non_mapping_annotated_metadata_is_ignored(self) -> None:
        """Annotated extras that are not mappings belong to someone else."""
        hint: Any = Annotated[int, "a note for another tool"]
        assert parse(hint, 1) == 1
        assert schema(hint) == {"type": "integer"}

    def test_unsupported_generic_origins(self) -> None:
        """Generic containers serde does not know are rejected by name."""
        with pytest.raises(SchemaError, match=r"unsupported type collections\.deque\[int\]"):
            schema(deque[int])

    def test_resolution_errors_skip_fields_with_real_annotations(self) -> None:
        """When only some annotations are strings, the failing one is named."""
        cls = make_dataclass("Partly", [("ok", int), ("bad", "Nowhere")])
        with pytest.raises(SchemaError, match=r"^Partly\.bad: cannot resolve annotation 'Nowhere'"):
            schema(cls)

    def test_classes_without_docstrings_have_no_description(self) -> None:
        """A class whose docstring was removed gets no description."""
        cls = make_dataclass("Bare", [("a", int)])
        cls.__doc__ = None
        assert "description" not in schema(cls)
