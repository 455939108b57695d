"""What crosses between client, workflow and activities: JSON documents, typed by serde.

Temporal moves JSON; an evaluation's values are dataclasses. Each value that crosses is
written with serde's typed values (``dump_typed``), so user types (params, results,
outputs) come back as the same classes on the other side (``parse_typed``), in any
process that can import them. Nothing is pickled and no function crosses: a tool or a
prompt is named (prompt ``ns``/``key``, tool name) and found again in the worker's
registry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, cast
from uuid import UUID

from weakincentives._bounded import clip
from weakincentives.adapters import (
    ConversationItem,
    Decision,
    Disclosure,
    OutputSchema,
    TurnRequest,
)
from weakincentives.errors import ConfigValidationError, SchemaError, SerdeError
from weakincentives.prompt import Prompt, SectionPath, SectionVisibility, VisibilityOverrides
from weakincentives.serde import JSONValue, dump_typed, parse_typed

__all__ = [
    "INPUT_FORMAT",
    "Document",
    "Start",
    "check_after",
    "read_decision",
    "read_request",
    "read_start",
    "request_document",
    "send_activity_name",
    "start_document",
    "tool_activity_name",
]

Document = dict[str, Any]
"""A JSON object as Temporal's converter hands it over (values are JSON)."""

type _Overrides = Mapping[SectionPath, SectionVisibility]

INPUT_FORMAT = 1
"""The layout of the workflow's input document."""


def send_activity_name(ns: str, key: str) -> str:
    """The provider exchange of prompt ``ns``/``key``: ``<ns>/<key>#send``.

    ``#`` cannot appear in a tool name, so no tool's activity can take this name.
    """
    return f"{ns}/{key}#send"


def tool_activity_name(ns: str, key: str, tool_name: str) -> str:
    """A call of tool ``tool_name`` of prompt ``ns``/``key``: ``<ns>/<key>/<tool>``."""
    return f"{ns}/{key}/{tool_name}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Start:
    """The workflow's input, read: which prompt, with what, in which session."""

    ns: str
    key: str
    params: tuple[object, ...]
    params_document: JSONValue
    """``params`` as sent, passed on to the activities that rebuild the prompt."""
    session_id: UUID
    deadline: datetime | None
    overrides: VisibilityOverrides
    disclosure: Disclosure | None
    extras: dict[str, object]
    extras_document: JSONValue


def start_document(
    prompt: Prompt[Any],
    *,
    session_id: UUID,
    deadline: datetime | None,
    overrides: VisibilityOverrides | None,
    disclosure: Disclosure | None,
    extras: Mapping[str, object] | None,
) -> Document:
    """The workflow input for evaluating ``prompt`` (bound to its params)."""
    return {
        "format": INPUT_FORMAT,
        "prompt": {"ns": prompt.ns, "key": prompt.key, "name": prompt.name},
        "params": dump_typed(prompt.params, tuple[object, ...]),
        "session_id": str(session_id),
        "deadline": None if deadline is None else deadline.isoformat(),
        "overrides": dump_typed(dict(overrides or {}), _Overrides),
        "disclosure": None if disclosure is None else dump_typed(disclosure, Disclosure),
        "extras": _extras_document(extras or {}),
    }


def _extras_document(extras: Mapping[str, object]) -> JSONValue:
    for name, value in extras.items():
        try:
            dump_typed(value)
        except SchemaError as exc:
            raise ConfigValidationError(
                f"extra {name!r} cannot be sent to the workflow ({exc.message}); give values "
                "that are not data (clients, connections) to EvaluationWorker(extras=...)",
                field_name="extras",
                value=value,
            ) from exc
    return dump_typed(dict(extras), dict[str, object])


def read_start(document: object) -> Start:
    """The workflow input ``start_document`` wrote.

    An input another client wrote wrong (not an object, a field missing or unreadable,
    a deadline without a timezone) is a ``ConfigValidationError`` naming the field.
    """
    if not isinstance(document, dict):
        raise ConfigValidationError(
            f"the workflow input must be a JSON object, got a JSON {type(document).__name__}",
            field_name="document",
        )
    if document.get("format") != INPUT_FORMAT:
        raise ConfigValidationError(
            f"the workflow input is in format {document.get('format')!r}; this library reads "
            f"format {INPUT_FORMAT}"
        )
    ns, key = _read(document, "prompt", _prompt_names)
    declared: Any = _Overrides  # a type alias: parse_typed reads it as the type it names
    overrides: VisibilityOverrides = _read(document, "overrides", partial(parse_typed, declared))
    return Start(
        ns=ns,
        key=key,
        params=_read(document, "params", partial(parse_typed, tuple[object, ...])),
        params_document=document["params"],
        session_id=_read(document, "session_id", UUID),
        deadline=_read(document, "deadline", _deadline),
        overrides=overrides,
        disclosure=_read(document, "disclosure", _disclosure),
        extras=_read(document, "extras", partial(parse_typed, dict[str, object])),
        extras_document=document["extras"],
    )


def _read[T](document: Document, name: str, read: Callable[[Any], T]) -> T:
    """``read`` applied to the input's field ``name``; its failure names the field."""
    if name not in document:
        raise ConfigValidationError(f"the workflow input has no {name!r}", field_name=name)
    try:
        return read(document[name])
    except (SerdeError, ValueError, TypeError) as exc:
        raise ConfigValidationError(
            f"the workflow input's {name!r} cannot be read: {clip(str(exc), 200)}",
            field_name=name,
        ) from exc


def _prompt_names(prompt: object) -> tuple[str, str]:
    if not isinstance(prompt, dict) or not all(
        isinstance(prompt.get(name), str) for name in ("ns", "key")
    ):
        raise TypeError("expected an object with the strings ns and key")
    return prompt["ns"], prompt["key"]


def _deadline(text: object) -> datetime | None:
    if text is None:
        return None
    deadline = datetime.fromisoformat(str(text))
    if deadline.tzinfo is None:
        raise ValueError(f"deadline {deadline.isoformat()} has no timezone")
    return deadline


def _disclosure(document: object) -> Disclosure | None:
    return None if document is None else parse_typed(Disclosure, document)


def check_after(after: object) -> int:
    """``after`` of the ``events`` query: a count of events, so an int of 0 or more."""
    if isinstance(after, bool) or not isinstance(after, int) or after < 0:
        raise ConfigValidationError(
            f"after must be a number of events (an int of 0 or more), got {clip(repr(after), 80)}",
            field_name="after",
            value=after,
        )
    return after


def read_decision(document: object) -> tuple[str, Decision]:
    """The call id and decision of a ``decide`` signal's payload.

    Raises ``ConfigValidationError`` naming the field when the payload is not an object
    with a non-empty string ``call_id``, a boolean ``approved`` and a string or null
    ``message`` (``"false"`` is not a denial, nor an approval).
    """

    def refused(field: str, wanted: str, value: object) -> ConfigValidationError:
        return ConfigValidationError(
            f"a decide signal needs {wanted}, got {clip(repr(value), 80)}",
            field_name=field,
            value=value,
        )

    if not isinstance(document, dict):
        raise refused("decision", "an object with call_id, approved and message", document)
    call_id = document.get("call_id")
    approved = document.get("approved")
    message = document.get("message")
    if not isinstance(call_id, str) or not call_id:
        raise refused("call_id", "call_id, a non-empty string", call_id)
    if not isinstance(approved, bool):
        raise refused("approved", f"approved, true or false (call {call_id!r})", approved)
    if message is not None and not isinstance(message, str):
        raise refused("message", f"message, a string or null (call {call_id!r})", message)
    return call_id, Decision(approved=approved, message=message)


def request_document(request: object) -> Document:
    """A provider request as the send activity's input.

    An SDK provider's request is its JSON body (written typed, so tuples stay tuples).
    The offline model's :class:`TurnRequest` holds the render, tools and all: it goes
    as the turn without the render, plus the visibility overrides the render applied,
    and the activity renders the registered prompt again (rendering is pure).
    """
    if not isinstance(request, TurnRequest):
        return {"kind": "typed", "body": dump_typed(request)}
    schema = request.output_schema
    return {
        "kind": "turn",
        "prompt_name": request.prompt_name,
        "history": dump_typed(request.history, tuple[ConversationItem, ...]),
        "hosted_tools": dump_typed(request.hosted_tools, tuple[object, ...]),
        "output_schema": None if schema is None else dump_typed(schema, OutputSchema),
        "round": request.round,
        "deadline": None if request.deadline is None else request.deadline.isoformat(),
        "evaluation_id": request.evaluation_id,
        "max_output_tokens": request.max_output_tokens,
        "overrides": dump_typed(dict(request.rendered.visibility_overrides), _Overrides),
    }


def read_request(document: Document, prompt: Prompt[Any]) -> object:
    """The request ``request_document`` wrote; ``prompt`` (bound) renders a turn's render."""
    if document["kind"] == "typed":
        return parse_typed(object, document["body"])
    declared: Any = _Overrides
    overrides: VisibilityOverrides = parse_typed(declared, document["overrides"])
    schema = document["output_schema"]
    deadline = document["deadline"]
    return TurnRequest(
        prompt_name=str(document["prompt_name"]),
        rendered=prompt.render(visibility_overrides=overrides),
        history=parse_typed(tuple[ConversationItem, ...], document["history"]),
        hosted_tools=cast(
            "tuple[Mapping[str, JSONValue], ...]",
            parse_typed(tuple[object, ...], document["hosted_tools"]),
        ),
        output_schema=None if schema is None else parse_typed(OutputSchema, schema),
        round=int(document["round"]),
        deadline=None if deadline is None else datetime.fromisoformat(str(deadline)),
        evaluation_id=str(document["evaluation_id"]),
        max_output_tokens=document["max_output_tokens"],
    )
