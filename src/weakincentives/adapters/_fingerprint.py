"""What a recorded provider keys its exchanges by: a request as JSON, and a hash of it.

A request is recorded as plain JSON: an SDK provider's request body as it is; the
offline model's :class:`TurnRequest` as what the model reads from it (prompt, tools,
history, output schema, round), leaving out the evaluation id and the deadline, which
change from run to run without changing what the model is asked; any other request
type as serde's typed JSON. The fingerprint is ``sha256:`` and the hex digest of the
canonical text of that JSON (keys sorted, no spaces, ASCII), so two requests with the
same content have the same fingerprint in any process, whatever their key order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import cast

from weakincentives.adapters._turns import TurnRequest
from weakincentives.errors import ConfigValidationError, SchemaError
from weakincentives.prompt import dotted
from weakincentives.serde import JSONValue, dump, dump_typed

__all__ = ["canonical", "fingerprint", "plain_json", "request_json"]

FINGERPRINT_PREFIX = "sha256:"


def canonical(value: JSONValue) -> str:
    """The one text of ``value`` its fingerprint is taken of: sorted keys, no spaces, ASCII."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def fingerprint(value: JSONValue) -> str:
    """``sha256:<hex>`` of the canonical text of ``value``."""
    digest = hashlib.sha256(canonical(value).encode("ascii")).hexdigest()
    return FINGERPRINT_PREFIX + digest


def request_json(request: object) -> JSONValue:
    """``request`` as the plain JSON a cassette records and fingerprints.

    Raises ``ConfigValidationError`` for a request that has no JSON form (a custom
    provider's request holding a function, say): such a provider cannot be recorded.
    """
    if isinstance(request, TurnRequest):
        return _turn_request_json(request)
    if isinstance(request, Mapping):
        return plain_json(cast(Mapping[str, object], request), "the request")
    try:
        return dump_typed(request)
    except SchemaError as exc:
        raise ConfigValidationError(
            f"a request of type {type(request).__qualname__} cannot be recorded: {exc.message}",
            value=request,
        ) from exc


def plain_json(value: object, owner: str, path: str = "$") -> JSONValue:
    """``value`` (mappings, sequences, scalars) as plain JSON: dicts, lists, scalars.

    Raises ``ConfigValidationError`` naming ``owner`` and the path of a value JSON
    cannot hold (a float that is not finite, a set, a key that is not a string).
    """
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        if value - value == 0.0:  # false for infinities and NaN
            return value
        raise _not_json(owner, path, repr(value))
    if isinstance(value, Mapping):
        members: dict[str, JSONValue] = {}
        for key, item in cast(Mapping[object, object], value).items():
            if not isinstance(key, str):
                raise _not_json(owner, path, f"the key {key!r}")
            members[key] = plain_json(item, owner, f"{path}.{key}")
        return members
    if isinstance(value, list | tuple):
        items = cast(list[object] | tuple[object, ...], value)
        return [plain_json(item, owner, f"{path}[{index}]") for index, item in enumerate(items)]
    raise _not_json(owner, path, f"a {type(value).__qualname__}")


def _not_json(owner: str, path: str, what: str) -> ConfigValidationError:
    return ConfigValidationError(
        f"{owner} holds {what} at {path}, which JSON cannot hold; it cannot be recorded"
    )


def _turn_request_json(request: TurnRequest) -> JSONValue:
    """What the offline model is asked, without the evaluation id and the deadline."""
    rendered = request.rendered
    schema = request.output_schema
    view = {
        "prompt_name": request.prompt_name,
        "round": request.round,
        "max_output_tokens": request.max_output_tokens,
        "tools": [
            {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.spec.parameters_schema,
            }
            for tool in rendered.tools
        ],
        "hosted_tools": request.hosted_tools,
        "output_schema": None if schema is None else dump(schema),
        "visibility": {
            dotted(path): visibility.value for path, visibility in rendered.visibility.items()
        },
        "history": [
            {"item": type(item).__name__, **cast(dict[str, JSONValue], dump(item))}
            for item in request.history
        ],
    }
    return plain_json(view, "the request")
