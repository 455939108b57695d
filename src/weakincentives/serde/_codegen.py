"""Generate the parse function of one dataclass from source, as dataclasses does for __init__.

Per field the generated code looks the wire name up, runs an inlined check
(``_checks.py``) and only calls the prebuilt converter when the check fails,
which then converts or raises the precise error. Data holding exactly the
declared members, what strict tool schemas make models send, takes a shortcut
that reads them all and checks them in one condition. The source is registered
with :mod:`linecache` (``weakincentives._codegen``) so tracebacks and debuggers
can show it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from itertools import count
from typing import cast

from weakincentives._bounded import exception_text, quote
from weakincentives._codegen import generated_function
from weakincentives.serde._checks import FieldWriter, optional_inner
from weakincentives.serde._construct import construction
from weakincentives.serde._convert import Converter, add_failed_index
from weakincentives.serde._failure import _ConversionError, describe, key_segment
from weakincentives.serde._nodes import (
    ArrayNode,
    FieldModel,
    Model,
    Node,
)

__all__ = ["generate_parser", "parser_body", "parser_namespace"]

_MISSING = object()
_UNSAFE = re.compile(r"\W")


def generate_parser(
    model: Model,
    convert: Callable[[Node], Converter],
    extra_forbidden: bool,
    *,
    located: bool = True,
) -> Converter:
    """Build the parse function of ``model``'s dataclass.

    A ``located`` parser adds each failure's path segment while the failure unwinds;
    one that is not only says that the data does not fit (``parse_json``'s one-pass
    route, which then asks a located parser where and why).
    """
    cls = model.cls
    namespace = parser_namespace(model)
    name = "parse_" + _UNSAFE.sub("_", cls.__name__)
    lines = [
        f"def {name}(data):",
        "    if data.__class__ is not dict:",
        f"        return _other(data, {name})",
        *(
            f"    {line}"
            for line in parser_body(model, convert, extra_forbidden, located, namespace)
        ),
    ]
    source = "\n".join(lines) + "\n"
    mode = ("forbid" if extra_forbidden else "ignore") + ("" if located else ", one pass")
    label = f"serde parse/{mode} {cls.__module__}.{cls.__qualname__}"
    # The source holds only field names and repr() literals.
    return cast(Converter, generated_function(source, name, namespace, label=label))


def parser_namespace(model: Model) -> dict[str, object]:
    """The constants every parse function of ``model`` refers to."""
    cls = model.cls
    return {
        "_M": _MISSING,
        "_CE": _ConversionError,
        "_cls": cls,
        "_new": object.__new__,
        "_set": object.__setattr__,
        "_segs": tuple(key_segment(field.wire) for field in model.fields),
        "_other": _not_an_object(cls),
        "_extra": _extra_field(model),
        "_built": _construction_failed(cls),
        "_count": count,
        "_indexed": add_failed_index,
    }


def parser_body(
    model: Model,
    convert: Callable[[Node], Converter],
    extra_forbidden: bool,
    located: bool,
    namespace: dict[str, object],
) -> list[str]:
    """Lines that turn the dict ``data`` into a ``model.cls`` value and return it.

    They raise ``_CE`` when the data does not fit; the field converters they call
    (``convert`` of each field's node) and other constants go into ``namespace``.
    """
    fields: list[str] = []
    checks: list[str] = []
    conversions: list[str] = []
    for index, field in enumerate(model.fields):
        namespace[f"_c{index}"] = convert(field.node)
        inner = optional_inner(field.node)
        if isinstance(inner, ArrayNode):
            namespace[f"_i{index}"] = convert(inner.item)
        writer = FieldWriter(namespace, index, located)
        fields += _field_lines(index, field, writer)
        check = writer.field_condition(field.node, f"f{index}")
        if check is not None:
            checks.append(check)
        else:
            conversions += [
                *([f"k = {index}"] if located else []),
                f"v = f{index}",
                *writer.lines(field.node, f"_c{index}"),
                f"f{index} = v",
            ]
    build = construction(model.cls, model, namespace)
    body = _every_field_present(model, checks, [*_located(conversions, located), *build])
    body += [f"n = {sum(1 for field in model.fields if field.required)}"]
    body += _located(fields, located)
    if extra_forbidden:
        body += ["if n != len(data):", "    _extra(data)"]
    return body + build


def _located(lines: list[str], located: bool) -> list[str]:
    """``lines`` that add the failing field's path segment to a failure, if ``located``."""
    if not (located and lines):
        return lines
    return [
        "try:",
        *(f"    {line}" for line in lines),
        "except _CE as e:",
        "    e.segments.append(_segs[k])",
        "    raise",
    ]


def _every_field_present(
    model: Model, checks: list[str], convert_and_build: list[str]
) -> list[str]:
    """A shortcut for data holding exactly the declared members, the usual case.

    Strict tool schemas require every property, so models send them all. All are
    read first (a missing one means an unknown one is there), the fields with an
    inline check are checked in one condition, and the others are converted in
    declaration order. Data that misses anything here (a missing member, an
    integer for a float field) takes the general path below, which repeats the
    work field by field and so fails exactly where and how it always did.
    """
    if not model.fields:
        return []
    reads = [f"f{index} = data[{field.wire!r}]" for index, field in enumerate(model.fields)]
    done = [f"if {' and '.join(checks)}:" if checks else "if True:"]
    done += [f"    {line}" for line in convert_and_build]
    return [
        f"if len(data) == {len(model.fields)}:",
        "    try:",
        *(f"        {line}" for line in reads),
        "    except KeyError:",
        "        pass",
        "    else:",
        *(f"        {line}" for line in done),
    ]


def _field_lines(index: int, field: FieldModel, writer: FieldWriter) -> list[str]:
    """Read field ``index`` into ``f{index}``, checked and converted (its default if absent)."""
    lines = writer.lines(field.node, f"_c{index}")
    head = [f"k = {index}"] if writer.located else []
    if field.required:
        return [
            *head,
            "try:",
            f"    v = data[{field.wire!r}]",
            "except KeyError:",
            "    raise _CE('a value (required field)', 'nothing') from None",
            *lines,
            f"f{index} = v",
        ]
    if field.factory is not None:
        writer.namespace[f"_f{index}"] = field.factory
        fallback = f"_f{index}()"
    else:
        writer.namespace[f"_d{index}"] = field.default
        fallback = f"_d{index}"
    return [
        *head,
        f"v = data.get({field.wire!r}, _M)",
        "if v is _M:",
        f"    f{index} = {fallback}",
        "else:",
        "    n += 1",
        *(f"    {line}" for line in lines),
        f"    f{index} = v",
    ]


def _not_an_object(cls: type[object]) -> Callable[[object, Converter], object]:
    expected = f"an object ({cls.__name__})"

    def other(data: object, again: Converter) -> object:
        if isinstance(data, cls):
            return data
        if isinstance(data, Mapping):
            return again(dict(data))
        raise _ConversionError(expected, describe(data))

    return other


def _extra_field(model: Model) -> Callable[[dict[object, object]], None]:
    known = {field.wire for field in model.fields}
    listing = ", ".join(field.wire for field in model.fields)
    expected = f"only the fields {listing}" if listing else "no fields"

    def extra(data: dict[object, object]) -> None:
        # Only called when the data has more members than known fields were found.
        key = next(key for key in data if key not in known)
        raise _ConversionError(
            f"{expected} (unknown fields are forbidden)",
            f"unknown field {quote(key) if isinstance(key, str) else describe(key)}",
            [key_segment(key)],
        )

    return extra


def _construction_failed(cls: type[object]) -> Callable[[Exception], _ConversionError]:
    def built(error: Exception) -> _ConversionError:
        return _ConversionError(f"a valid {cls.__name__}", exception_text(error))

    return built
