"""``detached``: a copy for the record that shares no mutable container with the original."""

from __future__ import annotations

import dataclasses
from collections import OrderedDict, defaultdict
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Any, NamedTuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.strategies import dataclass_types, json_values, stored_values, values_of
from weakincentives.serde import JSONValue, detached
from weakincentives.serde import _detach as detach_module


def _mutable_ids(value: object, found: set[int] | None = None) -> set[int]:
    """Identities of every container in ``value`` that can change after the fact."""
    found = set() if found is None else found
    if isinstance(value, dict | MappingProxyType):
        found.add(id(value))
        for key, item in value.items():
            _mutable_ids(key, found)
            _mutable_ids(item, found)
    elif isinstance(value, list | set | tuple | frozenset):
        if isinstance(value, list | set):
            found.add(id(value))
        for item in value:
            _mutable_ids(item, found)
    elif isinstance(value, bytearray):
        found.add(id(value))
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        if not type(value).__dataclass_params__.frozen:  # type: ignore[attr-defined]
            found.add(id(value))
        for item in dataclasses.fields(value):
            _mutable_ids(getattr(value, item.name), found)
    return found


@given(stored_values())
def test_a_detached_value_is_equal_and_shares_nothing_mutable(value: object) -> None:
    copied = detached(value)
    assert copied == value
    assert type(copied) is type(value)
    assert _mutable_ids(copied).isdisjoint(_mutable_ids(value))


@given(json_values())
def test_detached_json_is_equal_and_shares_nothing_mutable(value: JSONValue) -> None:
    copied = detached(value)
    assert copied == value
    assert _mutable_ids(copied).isdisjoint(_mutable_ids(value))


@given(st.data())
def test_detached_dataclasses_of_any_shape_share_nothing_mutable(data: st.DataObject) -> None:
    cls = data.draw(dataclass_types())
    value = data.draw(values_of(cls))
    copied = detached(value)
    assert copied == value
    assert type(copied) is cls
    assert _mutable_ids(copied).isdisjoint(_mutable_ids(value))


@dataclass(frozen=True, slots=True, kw_only=True)
class _Line:
    sku: str
    quantity: int


class _Speed(Enum):
    SLOW = "slow"


@dataclass(frozen=True, slots=True, kw_only=True)
class _Order:
    lines: tuple[_Line, ...]
    tags: frozenset[str] = frozenset()
    speed: _Speed = _Speed.SLOW
    note: str | None = None
    child: _Order | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class _Report:
    steps: list[str]
    title: str = ""


@dataclass(slots=True, kw_only=True)
class _Draft:
    title: str


@dataclass(frozen=True, kw_only=True)
class _Derived:
    steps: tuple[str, ...]
    count: int = field(init=False, default=0)


def test_a_settled_value_is_returned_as_it_is() -> None:
    """A frozen dataclass typed only with immutable types costs no copy."""
    order = _Order(lines=(_Line(sku="a", quantity=1),), tags=frozenset({"x"}))
    assert detached(order) is order
    assert detach_module._SETTLED[_Order] is True


@pytest.mark.parametrize(
    "value", ["text", 3, 2.5, None, b"x", (1, "a"), frozenset({1}), _Speed.SLOW]
)
def test_immutable_values_are_returned_as_they_are(value: object) -> None:
    assert detached(value) is value


def test_a_list_field_of_a_frozen_dataclass_is_copied() -> None:
    report = _Report(steps=["plan"], title="t")
    copied = detached(report)
    report.steps.append("rewritten")
    assert copied == _Report(steps=["plan"], title="t")
    assert detach_module._SETTLED[_Report] is False


def test_a_frozen_dataclass_with_nothing_mutable_in_it_is_kept() -> None:
    """An open field holding immutable values needs no copy, checked value by value."""
    report = _Wrapper(payload=("a", 1))
    assert detached(report) is report


@dataclass(frozen=True, slots=True, kw_only=True)
class _Wrapper:
    payload: Any


def test_a_dataclass_that_is_not_frozen_is_always_copied() -> None:
    draft = _Draft(title="a")
    copied = detached(draft)
    draft.title = "b"
    assert copied == _Draft(title="a")


def test_fields_outside_init_are_kept_and_the_class_is_not_settled() -> None:
    derived = _Derived(steps=("a",))
    object.__setattr__(derived, "count", 7)
    assert detached(derived) is derived  # nothing mutable in it
    assert detach_module._SETTLED[_Derived] is False


class _Pair(NamedTuple):
    left: object
    right: object


def test_named_tuples_and_container_subclasses_keep_their_class() -> None:
    pair = _Pair(left=["a"], right="b")
    counts: defaultdict[str, list[int]] = defaultdict(list, {"a": [1]})
    ordered = OrderedDict(a=[1])
    value = (pair, counts, ordered, _Pair(left="x", right="y"))
    copied = detached(value)
    pair.left.append("changed")  # type: ignore[attr-defined]
    counts["a"].append(2)
    ordered["a"].append(2)
    assert copied == (_Pair(left=["a"], right="b"), {"a": [1]}, OrderedDict(a=[1]), value[3])
    assert copied[3] is value[3]
    assert isinstance(copied[1], defaultdict)
    assert copied[1].default_factory is list
    assert type(copied[2]) is OrderedDict


def test_set_subclasses_and_bytearrays_are_copied() -> None:
    class _Tags(set[str]):
        pass

    tags = _Tags({"a"})
    raw = bytearray(b"ab")
    copied = detached([tags, raw])
    tags.add("b")
    raw.append(0)
    assert copied == [{"a"}, bytearray(b"ab")]
    assert type(copied[0]) is _Tags


def test_other_objects_are_kept_as_they_are() -> None:
    class _Opaque:
        pass

    opaque = _Opaque()
    assert detached([opaque])[0] is opaque


def test_a_value_that_contains_itself_raises_recursion_error() -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(RecursionError):
        detached(loop)
