"""Properties that hold for every value and type serde supports."""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from tests.serde.models import RICH_TYPES
from tests.strategies import dataclass_types, json_values, values_of
from weakincentives.errors import ParseError
from weakincentives.serde import dump, parse, parse_json, schema


def _parse_error(call: Callable[[], object]) -> ParseError | None:
    """Run ``call``; return the ParseError it raised, if any (any other error escapes)."""
    try:
        call()
    except ParseError as error:
        return error
    return None


@functools.cache
def _validator(cls: type, strict: bool) -> Draft202012Validator:
    document = schema(cls, strict=strict)
    Draft202012Validator.check_schema(document)
    return Draft202012Validator(document)


def _valid(document: object, cls: type, strict: bool) -> None:
    _validator(cls, strict).validate(document)


@pytest.mark.parametrize("cls", RICH_TYPES, ids=lambda cls: cls.__name__)
@given(data=st.data())
def test_parse_of_dump_is_the_value(cls: type, data: st.DataObject) -> None:
    """Dumping a value and parsing it back gives an equal value, also through JSON text."""
    value = data.draw(values_of(cls))
    dumped = dump(value)
    assert parse(cls, dumped) == value
    assert parse_json(cls, json.dumps(dumped)) == value


@pytest.mark.parametrize("cls", RICH_TYPES, ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("strict", [True, False])
@given(data=st.data())
def test_dump_validates_against_the_schema(cls: type, strict: bool, data: st.DataObject) -> None:
    """Every dumped value is valid under both the strict and the relaxed schema."""
    value = data.draw(values_of(cls))
    _valid(dump(value), cls, strict)


@given(data=st.data())
def test_generated_dataclasses_round_trip_and_validate(data: st.DataObject) -> None:
    """Dataclasses built from random field types round-trip and match their schemas."""
    cls = data.draw(dataclass_types())
    value = data.draw(values_of(cls))
    dumped = dump(value)
    assert parse_json(cls, json.dumps(dumped)) == value
    _valid(dumped, cls, True)
    _valid(dumped, cls, False)


@pytest.mark.parametrize("cls", RICH_TYPES, ids=lambda cls: cls.__name__)
@given(data=st.data())
def test_parse_of_any_json_raises_only_parse_error(cls: type, data: st.DataObject) -> None:
    """Arbitrary JSON, including objects with the right keys, never escapes as another error."""
    keys = [field.name for field in dataclasses.fields(cls)]
    shaped = st.fixed_dictionaries({}, optional=dict.fromkeys(keys, json_values()))
    document = data.draw(json_values() | shaped)
    error = _parse_error(lambda: parse(cls, document))
    assert error is None or error.path.startswith("$")


@given(text=st.text(max_size=30) | st.binary(max_size=30))
def test_parse_json_of_any_text_raises_only_parse_error(text: str | bytes) -> None:
    """Arbitrary text or bytes never escape parse_json as anything but ParseError."""
    error = _parse_error(lambda: parse_json(RICH_TYPES[0], text))
    assert error is None or error.path.startswith("$")
