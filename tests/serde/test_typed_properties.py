"""Properties of typed values: whatever is generated loads back identical."""

from __future__ import annotations

import dataclasses
import itertools
import json

from hypothesis import given
from hypothesis import strategies as st

from tests.serde.typed_models import Box, Record, assert_identical
from tests.strategies import field_types, typed_values, values_of
from weakincentives.serde import (
    DocumentKind,
    dump_document,
    dump_typed,
    load_document,
    parse_typed,
    register_type,
)

_ANY = DocumentKind(name="tests.properties.any", value_type=object)
_names = itertools.count()


def _wrapped(inner: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    """Dataclasses around generated values: a generic one and one with open fields."""
    return st.builds(Box, item=inner, note=st.text(max_size=3)) | st.builds(
        Record, name=st.text(max_size=3), payload=inner, extra=inner
    )


VALUES = typed_values(_wrapped)


def _round_trip(value: object, declared: object) -> object:
    text = json.dumps(dump_typed(value, declared), allow_nan=False)
    return parse_typed(declared, json.loads(text))  # type: ignore[arg-type]


@given(VALUES)
def test_open_values_load_back_identical(value: object) -> None:
    """Any generated value, declared open, comes back equal and of the same classes."""
    assert_identical(_round_trip(value, object), value)
    assert_identical(load_document(_ANY, dump_document(_ANY, value)), value)


@st.composite
def _open_dataclass(draw: st.DrawFn, inner: type | None = None) -> type:
    """A registered dataclass mixing closed fields with open ones (``object``)."""
    hints = draw(st.lists(field_types() | st.just(object), max_size=4))
    if inner is not None:
        hints.append(object)
    fields = [(f"f{index}", hint) for index, hint in enumerate(hints)]
    cls = dataclasses.make_dataclass(f"Open{next(_names)}", fields, frozen=draw(st.booleans()))
    return register_type(f"tests.properties.{cls.__name__}", cls)


def _instances(cls: type, inner: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    arguments = {
        field.name: inner if field.type is object else values_of(field.type)
        for field in dataclasses.fields(cls)
    }
    return st.builds(cls, **arguments)


@given(data=st.data())
def test_generated_dataclasses_load_back_identical(data: st.DataObject) -> None:
    """A generated dataclass whose open fields hold another generated one, and more.

    Declared as itself or as ``object``, as data or as a document, it loads back identical.
    """
    inner_cls = data.draw(_open_dataclass())
    outer_cls = data.draw(_open_dataclass(inner=inner_cls))
    held = _instances(inner_cls, VALUES) | VALUES
    value = data.draw(_instances(outer_cls, held))
    for declared in (outer_cls, object):
        assert_identical(_round_trip(value, declared), value)
    kind: DocumentKind[object] = DocumentKind(name="tests.properties.outer", value_type=outer_cls)
    assert_identical(load_document(kind, dump_document(kind, value)), value)
