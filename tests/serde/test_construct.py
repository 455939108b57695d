"""Parsed objects are the objects ``__init__`` builds, whichever way the parser builds them."""

from __future__ import annotations

import dataclasses
import pickle
import weakref
from dataclasses import dataclass, field
from typing import Any

import pytest

from weakincentives.serde import parse, parse_json

DELETED: list[str] = []


@dataclass(frozen=True, slots=True)
class FrozenSlots:
    name: str
    count: int = 0


@dataclass(frozen=True)
class FrozenDict:
    name: str
    count: int = 0


@dataclass(slots=True)
class MutableSlots:
    name: str
    count: int = 0


@dataclass
class MutableDict:
    name: str
    count: int = 0


@dataclass(frozen=True, slots=True)
class Base:
    name: str


@dataclass(frozen=True, slots=True)
class Derived(Base):
    count: int = 0


@dataclass(frozen=True, slots=True, weakref_slot=True)
class Referable:
    name: str
    count: int = 0


@dataclass(frozen=True, slots=True)
class Finalized:
    name: str
    count: int = 0

    def __del__(self) -> None:
        DELETED.append(self.name)


class Upper:
    """A field descriptor: ``__init__`` stores through it, upper-casing the value."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_{name}"

    def __get__(self, instance: object, owner: type | None = None) -> str:
        return "" if instance is None else str(getattr(instance, self.slot))

    def __set__(self, instance: object, value: str) -> None:
        object.__setattr__(instance, self.slot, value.upper())


@dataclass(frozen=True)
class Shout:
    word: str = Upper()  # type: ignore[assignment]  # a descriptor-typed field
    count: int = 0


KINDS = (FrozenSlots, FrozenDict, MutableSlots, MutableDict, Derived, Referable)


@pytest.mark.parametrize("cls", KINDS, ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("data", [{"name": "a", "count": 2}, {"name": "b"}], ids=["all", "default"])
@pytest.mark.parametrize("how", ["parse", "parse_json"])
def test_parsed_objects_equal_what_init_builds(cls: Any, data: dict[str, Any], how: str) -> None:
    """Same class, same fields, same equality and hash as ``cls(**data)``."""
    built = parse(cls, data) if how == "parse" else parse_json(cls, str(data).replace("'", '"'))
    expected = cls(**data)
    assert type(built) is cls
    assert built == expected
    assert dataclasses.astuple(built) == dataclasses.astuple(expected)
    if cls.__hash__ is not None:
        assert hash(built) == hash(expected)


@pytest.mark.parametrize("cls", [FrozenSlots, FrozenDict, Derived, Referable])
def test_frozen_objects_stay_frozen(cls: Any) -> None:
    """Built without ``__init__``, a frozen object still refuses assignment."""
    built = parse(cls, {"name": "a", "count": 1})
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'name'"):
        built.name = "b"


def test_an_object_with_a_dict_keeps_its_fields_there() -> None:
    """A frozen class without slots holds its fields in its own ``__dict__``."""
    built = parse(FrozenDict, {"name": "a"})
    assert vars(built) == {"name": "a", "count": 0}
    assert vars(parse(FrozenDict, {"name": "b"})) is not vars(built)


def test_a_weakref_slot_still_works() -> None:
    """The layout keeps ``__weakref__``: the object can be weakly referenced."""
    built = parse(Referable, {"name": "a"})
    assert weakref.ref(built)() is built


def test_objects_pickle_and_compare_equal() -> None:
    """Pickling reads the fields back the usual way."""
    built = parse(FrozenSlots, {"name": "a", "count": 3})
    assert pickle.loads(pickle.dumps(built)) == FrozenSlots(name="a", count=3)


def test_a_class_with_a_finalizer_is_never_finalized_half_built() -> None:
    """No object of a class with ``__del__`` exists before its fields are set."""
    DELETED.clear()
    built = parse(Finalized, {"name": "a"})
    assert DELETED == []
    del built
    assert DELETED == ["a"]


def test_a_descriptor_field_is_stored_through_its_descriptor() -> None:
    """Where ``__init__`` would call a field's ``__set__``, so does the parser."""
    built = parse(Shout, {"word": "hi", "count": 1})
    assert (built.word, built.count) == ("HI", 1)
    assert built == Shout(word="hi", count=1)


def test_a_field_default_factory_runs_per_object() -> None:
    """Defaults made by a factory are fresh for each parsed object."""

    @dataclass(frozen=True, slots=True)
    class Tagged:
        tags: list[str] = field(default_factory=list)

    first, second = parse(Tagged, {}), parse(Tagged, {})
    assert first.tags == second.tags == []
    assert first.tags is not second.tags


def test_a_class_whose_slots_attribute_misleads_is_still_built_right() -> None:
    """The layout swap is checked once; a class it does not fit is built through setters."""

    @dataclass(frozen=True, slots=True)
    class Relabelled:
        name: str
        count: int = 0

    Relabelled.__slots__ = ("name", "count", "extra")  # type: ignore[assignment]  # the lie is the point
    built = parse(Relabelled, {"name": "a", "count": 2})
    assert (type(built), built) == (Relabelled, Relabelled(name="a", count=2))


def test_fields_split_between_slots_and_a_dict_are_each_stored_in_their_place() -> None:
    """Hand-written slots with a ``__dict__`` slot: one field in a slot, one in the dict."""

    @dataclass(frozen=True)
    class Split:
        __slots__ = ("__dict__", "kept")
        kept: int
        loose: str

    built = parse(Split, {"kept": 1, "loose": "x"})
    assert (built.kept, vars(built)) == (1, {"loose": "x"})
    assert built == Split(kept=1, loose="x")
