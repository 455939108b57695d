"""Decoding and parsing a tool call's arguments: untrusted JSON text from the model.

The runtime first gives JSON text to ``serde.parse_json`` (its one pass); whatever
that refuses takes the two steps, :func:`decode_arguments` then ``parse``, which
decide the same way and word every failure for the model (``runtime/_steps.py``).

Decoding never raises: text that is not acceptable JSON (see
:func:`weakincentives.serde.loads`: nesting past ``MAX_JSON_DEPTH``, ``NaN``,
numbers Python cannot hold, lone surrogates) is kept as sent, with a short statement
of the problem for the model.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
import typing
from collections.abc import Mapping
from typing import Any

from weakincentives._bounded import clip
from weakincentives._exports import defining_module
from weakincentives.errors import ParseError, SerdeError
from weakincentives.serde import JSONValue, loads, parse

__all__ = ["copy_json", "decode_arguments", "field_problems", "fresh_copy"]


def decode_arguments(arguments: str | Mapping[str, JSONValue]) -> tuple[JSONValue, str | None]:
    """Decode ``arguments`` (JSON text or an already decoded mapping); never raises.

    Returns the decoded JSON and None, or, when the text is not acceptable, the text as
    sent and why not, in words for the model.
    """
    if not isinstance(arguments, str):
        # The caller keeps its mapping; the record shares none of its dicts and lists.
        return copy_json(dict(arguments)), None
    text = arguments
    if not text or text.isspace():
        return {}, None
    try:
        return loads(text), None
    except ParseError as exc:
        return text, exc.got


def fresh_copy(arguments: str | Mapping[str, JSONValue], decoded: JSONValue) -> JSONValue:
    """A copy of ``decoded`` that shares no dict or list with it.

    With text, the text (already checked by :func:`decode_arguments`) is decoded again:
    the C decoder is faster than copying in Python.
    """
    if isinstance(arguments, str) and arguments.strip():
        copied: JSONValue = json.loads(arguments)
        return copied
    return copy_json(decoded)


def copy_json(value: JSONValue) -> JSONValue:
    """A copy of decoded JSON sharing no dict or list with ``value`` (depth already bounded)."""
    if isinstance(value, dict):
        return {key: copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    return value


def field_problems(params_type: type[Any], arguments: JSONValue) -> list[str]:
    """Every field-level problem of ``arguments`` for the params dataclass, each with its path.

    Parsing stops at the first problem; a model fixing its call wants them all at
    once. Each member is checked against its field's type on its own (unknown members,
    missing required fields, values that do not fit), so the list names each wrong
    field once. Empty when ``arguments`` is not an object or the type is no dataclass
    (the first problem then says all there is to say).
    """
    if not isinstance(arguments, dict) or not dataclasses.is_dataclass(params_type):
        return []
    declared = _declared(params_type)
    if declared is None:
        return []
    problems: list[str] = []
    known = ", ".join(declared)
    for name in arguments:
        if name not in declared:
            problems.append(f"unknown field {clip(repr(name), 80)} (fields: {known}) at $.{name}")
    for name, (hint, required) in declared.items():
        if name not in arguments:
            if required:
                problems.append(f"expected a value (required field), got nothing at $.{name}")
            continue
        try:
            parse(hint, arguments[name])
        except ParseError as exc:
            problems.append(f"expected {exc.expected}, got {exc.got} at $.{name}{exc.path[1:]}")
        except SerdeError:
            continue
    return problems


@functools.cache
def _declared(params_type: type[Any]) -> dict[str, tuple[Any, bool]] | None:
    """Each field's type and whether it is required, computed once per params type.

    None when the annotations cannot be resolved here (the parse error then says all
    there is to say). A class published under its package's name resolves them in the
    module it was written in, as serde does.
    """
    module = sys.modules.get(defining_module(params_type))
    try:
        hints = typing.get_type_hints(params_type, globalns=vars(module) if module else None)
    except Exception:  # user annotations can fail in many ways; parsing reported it
        return None
    return {
        field.name: (
            hints[field.name],
            field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING,
        )
        for field in dataclasses.fields(params_type)
        if field.init
    }
