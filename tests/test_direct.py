"""Direct constructors build the same frozen records as ``__init__``, or refuse the class."""

from __future__ import annotations

import dataclasses
import linecache
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from weakincentives._direct import direct_constructor, generated_init, slot_setter
from weakincentives.serde import parse


@dataclass(frozen=True, slots=True, kw_only=True)
class Record:
    name: str
    count: int = 3
    tags: list[str] = field(default_factory=list)


def test_builds_what_init_builds_with_defaults_and_factories() -> None:
    make = direct_constructor(Record)
    assert make(name="a") == Record(name="a")
    assert make(name="b", count=7, tags=["x"]) == Record(name="b", count=7, tags=["x"])
    first, second = make(name="c"), make(name="c")
    assert first.tags is not second.tags  # the factory runs per object


def test_the_result_stays_frozen() -> None:
    built = direct_constructor(Record)(name="a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.name = "b"  # type: ignore[misc]  # the refused assignment is the point


def test_missing_and_unknown_keywords_fail_like_a_call() -> None:
    make = direct_constructor(Record)
    with pytest.raises(TypeError, match="name"):
        make()
    with pytest.raises(TypeError, match="colour"):
        make(name="a", colour="red")


def test_a_class_without_fields_builds() -> None:
    @dataclass(frozen=True, slots=True)
    class Empty:
        pass

    assert direct_constructor(Empty)() == Empty()


@dataclass(frozen=True, slots=True)
class WithPostInit:
    value: int

    def __post_init__(self) -> None:
        if self.value < 0:
            raise ValueError("negative")


@dataclass(frozen=True, slots=True)
class HandWritten:
    value: int

    def __init__(self, value: int) -> None:
        object.__setattr__(self, "value", value * 2)


@dataclass(frozen=True)
class Unslotted:
    value: int


@dataclass(frozen=True, slots=True)
class Derived:
    value: int
    hidden: int = field(init=False, default=0)


class Plain:
    pass


@pytest.mark.parametrize(
    ("cls", "reason"),
    [
        (Plain, "not a dataclass"),
        (WithPostInit, "__post_init__"),
        (HandWritten, "hand-written"),
        (Unslotted, "without a slot"),
        (Derived, "init=False"),
    ],
)
def test_classes_whose_init_does_more_are_refused(cls: type[object], reason: str) -> None:
    with pytest.raises(TypeError, match=reason):
        direct_constructor(cls)


def test_a_custom_new_is_refused() -> None:
    @dataclass(frozen=True, slots=True)
    class Interned:
        value: int

        def __new__(cls, *args: object, **kwargs: object) -> Interned:
            return super().__new__(cls)

    with pytest.raises(TypeError, match="__new__"):
        direct_constructor(Interned)


@pytest.fixture
def run_time_source() -> Iterator[None]:
    """Text registered for ``<string>``, as ``python -c`` leaves it in linecache."""
    text = "print('hello')\nx = 1\ny = 2\nz = 3\n"
    saved = linecache.cache.get("<string>")
    linecache.cache["<string>"] = (len(text), None, text.splitlines(True), "<string>")
    yield
    if saved is None:
        linecache.cache.pop("<string>", None)
    else:
        linecache.cache["<string>"] = saved


@pytest.mark.usefixtures("run_time_source")
def test_generated_init_is_recognised_even_when_run_time_source_is_cached() -> None:
    @dataclass(frozen=True, slots=True)
    class Made:
        value: int

    assert generated_init(Made)
    assert not generated_init(HandWritten)


def test_slot_setter_finds_slots_only() -> None:
    assert slot_setter(Record, "name") is not None
    assert slot_setter(Unslotted, "value") is None


def test_parse_builds_slotted_records_through_their_slots() -> None:
    parsed = parse(Record, {"name": "a", "tags": ["t"]})
    assert parsed == Record(name="a", tags=["t"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsed.count = 1  # type: ignore[misc]  # the refused assignment is the point
    assert parse(HandWritten, {"value": 2}).value == 4  # a hand-written __init__ still runs


def test_a_class_without_its_own_init_has_no_generated_one() -> None:
    assert not generated_init(Plain)
