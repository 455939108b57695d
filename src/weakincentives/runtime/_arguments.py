"""Decoding a tool call's arguments: untrusted JSON text from the model.

Decoding never raises: text that is not acceptable JSON is kept as sent, with a short
statement of the problem for the model. Acceptable means standard JSON (no ``NaN`` or
``Infinity``), nested at most ``MAX_ARGUMENT_DEPTH`` deep and with integers Python
can hold.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from weakincentives.runtime._messages import describe_exception
from weakincentives.serde import JSONValue

__all__ = ["MAX_ARGUMENT_DEPTH", "DecodedArguments", "copy_json", "decode_arguments", "fresh_copy"]

MAX_ARGUMENT_DEPTH = 64
"""Deepest nesting of arrays and objects accepted in tool arguments."""


@dataclass(frozen=True, slots=True)
class DecodedArguments:
    value: JSONValue
    """The decoded JSON, or the text as sent when it could not be decoded."""
    problem: str | None = None
    """Why the text was not accepted, in words for the model."""


class _RejectedTokenError(ValueError):
    pass


def _reject_constant(token: str) -> object:
    raise _RejectedTokenError(f"{token} is not a JSON number")


# One decoder for every call: json.loads with options builds a new one each time.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def decode_arguments(arguments: str | Mapping[str, JSONValue]) -> DecodedArguments:
    """Decode ``arguments`` (JSON text or an already decoded mapping); never raises."""
    if not isinstance(arguments, str):
        value: JSONValue = dict(arguments)
    else:
        if not arguments.strip():
            return DecodedArguments({})
        try:
            value = _DECODER.decode(arguments)
        except json.JSONDecodeError as exc:
            return DecodedArguments(
                arguments,
                f"arguments are not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})",
            )
        except _RejectedTokenError as exc:
            return DecodedArguments(arguments, f"arguments are not valid JSON ({exc})")
        except RecursionError:
            return DecodedArguments(arguments, _too_deep())
        except ValueError as exc:  # an integer with more digits than Python converts
            return DecodedArguments(
                arguments,
                f"arguments hold a number that cannot be read ({describe_exception(exc)})",
            )
    if _may_nest_deeply(arguments) and _depth_exceeds(value, MAX_ARGUMENT_DEPTH):
        return DecodedArguments(arguments if isinstance(arguments, str) else {}, _too_deep())
    return DecodedArguments(value)


def _may_nest_deeply(arguments: str | Mapping[str, JSONValue]) -> bool:
    """False when the text has too few brackets to nest past the limit (the usual case)."""
    if not isinstance(arguments, str):
        return True
    return arguments.count("[") + arguments.count("{") > MAX_ARGUMENT_DEPTH


def fresh_copy(arguments: str | Mapping[str, JSONValue], decoded: JSONValue) -> JSONValue:
    """A copy of ``decoded`` that shares no dict or list with it.

    With text, the text is decoded again: the C decoder is faster than copying in Python.
    """
    if isinstance(arguments, str) and arguments.strip():
        copied: JSONValue = _DECODER.decode(arguments)
        return copied
    return copy_json(decoded)


def _too_deep() -> str:
    return f"arguments are nested more than {MAX_ARGUMENT_DEPTH} levels deep"


def _depth_exceeds(value: JSONValue, limit: int) -> bool:
    """Whether ``value`` nests deeper than ``limit``, without recursion."""
    stack: list[tuple[JSONValue, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def copy_json(value: JSONValue) -> JSONValue:
    """A copy of decoded JSON sharing no dict or list with ``value`` (depth already bounded)."""
    if isinstance(value, dict):
        return {key: copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    return value
