"""What a tool handler returns, and how it reads to the model."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from weakincentives._bounded import clip, exception_text
from weakincentives._direct import slot_setter
from weakincentives.errors import SerdeError, ToolResultError
from weakincentives.serde import dump

__all__ = ["ToolRenderableResult", "ToolResult"]


def _compact_encoder(*, ensure_ascii: bool) -> Callable[[object], str]:
    """Compact JSON text of dumped data; ``allow_nan=False`` refuses NaN and infinity.

    ``JSONEncoder.encode`` builds a new C encoder on every call; this builds CPython's
    once and reuses it (its circular-reference check is off: dumped data is acyclic,
    and a cycle in raw JSON still ends in RecursionError, which render reports).
    Elsewhere it falls back to ``JSONEncoder.encode``.
    """
    options = json.JSONEncoder(
        ensure_ascii=ensure_ascii, separators=(",", ":"), allow_nan=False, check_circular=False
    )
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - CPython always has the C encoder
        return options.encode
    strings = (
        json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring
    )
    chunks = make(None, options.default, strings, None, ":", ",", False, False, False)

    def encode(data: object) -> str:
        return "".join(chunks(data, 0))

    return encode


_ENCODE = _compact_encoder(ensure_ascii=False)
# Writes lone surrogates (from data decoded elsewhere) as \\udXXX escapes UTF-8 can carry.
_ENCODE_ASCII = _compact_encoder(ensure_ascii=True)


@runtime_checkable
class ToolRenderableResult(Protocol):
    """A result payload that chooses its own text for the model."""

    def render(self) -> str:
        """Return the provider-safe text the model reads for this payload."""
        ...


def _sendable(text: str) -> str:
    """``text``, with lone surrogates escaped so that UTF-8 can encode it."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult[PayloadT]:
    """The outcome of one tool call, for the model and for the orchestrator.

    Failures are values, not exceptions: ``success=False`` with ``value=None`` (or an
    explicit error payload) and a ``message`` telling the model what went wrong.
    Construction checks the field types (``ToolResultError`` otherwise), so that
    ``model_content()`` always has text to send.
    """

    message: str
    """Short text forwarded to the model."""
    value: PayloadT | None = None
    """The typed payload; ``None`` for failures unless the tool reports a structured error."""
    success: bool = True
    """Whether the handler completed normally; reducers rely on this, not on ``value``."""
    exclude_value_from_context: bool = False
    """Keep ``value`` out of the provider-facing message while still returning it here."""

    def __init__(
        self,
        *,
        message: str,
        value: PayloadT | None = None,
        success: bool = True,
        exclude_value_from_context: bool = False,
    ) -> None:
        # Every tool call builds one, so the checked fields go straight into their slots
        # (the frozen __setattr__ costs more than the rest of construction).
        if not _well_typed(message, success, exclude_value_from_context):
            _refuse(message, success, exclude_value_from_context)
        _SET_MESSAGE(self, message)
        _SET_VALUE(self, value)
        _SET_SUCCESS(self, success)
        _SET_EXCLUDE(self, exclude_value_from_context)

    def render(self) -> str:
        """Text of the payload: its own ``render()``, else compact JSON, ``""`` when absent.

        Raises ``ToolResultError`` (never anything else) when the payload has no text:
        its ``render()`` raised or returned a non-str, or its data cannot be written as
        JSON (an unsupported type, NaN or infinity, an integer past Python's digit
        limit, nesting past the recursion limit). The text is always UTF-8 encodable.
        """
        value = self.value
        if value is None:
            return ""
        # Looking the method up on the type is much cheaper than a runtime protocol check.
        own_render = getattr(type(value), "render", None)
        if callable(own_render):
            return _sendable(_own_text(value, own_render))
        try:
            data = dump(value, exclude_none=True)
            text = _ENCODE(data)
        except (SerdeError, ValueError, RecursionError) as error:
            raise ToolResultError(
                f"the {type(value).__name__} value of this ToolResult cannot be written as "
                f"JSON: {exception_text(error)}"
            ) from error
        if text.isascii():
            return text
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return _ENCODE_ASCII(data)
        return text

    def model_content(self, rendered: str | None = None) -> str:
        """The tool message the model reads: ``message``, then the rendered payload if shared.

        Pass ``rendered`` when ``render()`` already ran, to avoid rendering twice.
        """
        message = _sendable(self.message)
        if self.exclude_value_from_context:
            return message
        if rendered is None:
            rendered = self.render()
        if not rendered:
            return message
        if not message:
            return rendered
        return f"{message}\n\n{rendered}"


def _setter(name: str) -> Callable[[object, object], None]:
    setter = slot_setter(ToolResult, name)
    assert setter is not None, name  # ToolResult is slotted
    return setter


_SET_MESSAGE = _setter("message")
_SET_VALUE = _setter("value")
_SET_SUCCESS = _setter("success")
_SET_EXCLUDE = _setter("exclude_value_from_context")


def _well_typed(message: object, success: object, exclude: object) -> bool:
    return isinstance(message, str) and success.__class__ is bool and exclude.__class__ is bool


def _own_text(value: object, own_render: Callable[[object], object]) -> str:
    name = type(value).__name__
    try:
        text = own_render(value)
    except Exception as error:
        raise ToolResultError(f"{name}.render() raised {exception_text(error)}") from error
    if not isinstance(text, str):
        raise ToolResultError(f"{name}.render() must return str, got {type(text).__name__}")
    return text


def _refuse(message: object, success: object, exclude: object) -> None:
    problems = [
        f"{field} must be a {kind}, got {type(value).__name__} {clip(_safe_repr(value))}"
        for field, kind, value, ok in (
            ("message", "str", message, isinstance(message, str)),
            ("success", "bool", success, success.__class__ is bool),
            ("exclude_value_from_context", "bool", exclude, exclude.__class__ is bool),
        )
        if not ok
    ]
    raise ToolResultError(f"ToolResult {'; '.join(problems)}")


def _safe_repr(value: object) -> str:
    try:
        return repr(value)
    except Exception:  # a foreign __repr__ must not break the report
        return "(no repr)"
