"""Decoding a tool call's arguments: untrusted JSON text from the model.

Decoding never raises: text that is not acceptable JSON (see
:func:`weakincentives.serde.loads`: nesting past ``MAX_JSON_DEPTH``, ``NaN``,
numbers Python cannot hold, lone surrogates) is kept as sent, with a short statement
of the problem for the model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from weakincentives.errors import ParseError
from weakincentives.serde import JSONValue, loads

__all__ = ["copy_json", "decode_arguments", "fresh_copy"]


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
