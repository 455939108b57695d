"""Generated functions keep their own source in linecache, so tracebacks can show it."""

from __future__ import annotations

import dataclasses
import gc
import inspect
import linecache
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from weakincentives._codegen import generated_function
from weakincentives._direct import direct_constructor
from weakincentives.serde import dump, parse


def _traceback_text(error: BaseException) -> str:
    return "".join(traceback.format_exception(error))


def _raiser(message: str) -> Callable[..., Any]:
    source = f"def explode():\n    value = 1\n    raise ValueError({message!r} * value)\n"
    return generated_function(source, "explode", {}, label="test explode")


def _raise_from(function: Callable[..., Any], message: str) -> ValueError:
    with pytest.raises(ValueError, match=message):
        function()
    try:
        function()
    except ValueError as error:
        return error
    raise AssertionError("the generated function did not raise")


class TestGeneratedFunction:
    def test_two_functions_with_the_same_name_keep_their_own_source(self) -> None:
        """A second function of the same name and label does not overwrite the first's text."""
        first, second = _raiser("first"), _raiser("second")
        first_text = _traceback_text(_raise_from(first, "first"))
        second_text = _traceback_text(_raise_from(second, "second"))
        assert "raise ValueError('first' * value)" in first_text
        assert "'second'" not in first_text
        assert "raise ValueError('second' * value)" in second_text
        assert first.__code__.co_filename != second.__code__.co_filename

    def test_source_is_what_inspect_reads(self) -> None:
        """inspect (and so debuggers) read the generated text back."""
        function = _raiser("x")
        assert inspect.getsource(function) == (
            "def explode():\n    value = 1\n    raise ValueError('x' * value)\n"
        )
        filename = function.__code__.co_filename
        assert filename.startswith("<weakincentives test explode #")
        assert filename.endswith(">")

    def test_linecache_checks_keep_the_entry(self) -> None:
        """checkcache() finds no file to compare against, and keeps the text."""
        function = _raiser("kept")
        filename = function.__code__.co_filename
        linecache.checkcache()
        assert linecache.getline(filename, 3) == "    raise ValueError('kept' * value)\n"

    def test_the_entry_goes_with_the_function(self) -> None:
        """Once the function is collected, its text leaves linecache too."""
        function = _raiser("gone")
        filename = function.__code__.co_filename
        assert filename in linecache.cache
        del function
        gc.collect()
        assert filename not in linecache.cache


class TestGeneratorsUseIt:
    def test_a_traceback_through_a_generated_parser_shows_its_line(self) -> None:
        """An error escaping __post_init__ shows the parse function's constructor call."""

        @dataclass(frozen=True)
        class Guarded:
            size: int

            def __post_init__(self) -> None:
                raise LookupError("no such size")

        with pytest.raises(LookupError, match="no such size") as caught:
            parse(Guarded, {"size": 3})
        text = _traceback_text(caught.value)
        assert "serde parse/forbid" in text
        assert "return _cls(f0)" in text

    def test_same_named_classes_keep_distinct_parser_source(self) -> None:
        """Two classes called Item, in two scopes, each keep their own parser text."""

        def item_class(field_name: str) -> type:
            return dataclasses.make_dataclass(
                "Item",
                [(field_name, int)],
                namespace={"__post_init__": _refuse},
                kw_only=True,
            )

        first, second = item_class("alpha"), item_class("beta")
        assert first.__qualname__ == second.__qualname__
        errors = []
        for cls, name in ((first, "alpha"), (second, "beta")):
            with pytest.raises(LookupError, match="refused") as caught:
                parse(cls, {name: 1})
            errors.append(caught.value)
        texts = [_traceback_text(error) for error in errors]  # after both were generated
        assert "return _cls(alpha=f0)" in texts[0]
        assert "beta" not in texts[0]
        assert "return _cls(beta=f0)" in texts[1]

    def test_a_traceback_through_a_generated_dumper_shows_its_line(self) -> None:
        """A field that cannot be read shows the dump function's read of it."""

        @dataclass(frozen=True)
        class Reading:
            value: int

        reading = Reading(value=1)
        object.__delattr__(reading, "value")
        with pytest.raises(AttributeError, match="value") as caught:
            dump(reading)
        text = _traceback_text(caught.value)
        assert "serde dump" in text
        assert "a0 = obj.value" in text

    def test_a_traceback_through_a_direct_constructor_shows_its_line(self) -> None:
        """A default factory that raises shows the direct constructor's factory call."""

        def broken() -> list[str]:
            raise RuntimeError("factory failed")

        @dataclass(frozen=True, slots=True, kw_only=True)
        class Record:
            tags: list[str] = field(default_factory=broken)

        make = direct_constructor(Record)
        with pytest.raises(RuntimeError, match="factory failed") as caught:
            make()
        text = _traceback_text(caught.value)
        assert "direct " in text
        assert "if tags is _M: tags = _f0()" in text


def _refuse(self: object) -> None:
    raise LookupError("refused")
