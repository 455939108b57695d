"""OpenTelemetry spans through ``opentelemetry-api``, when it is installed and configured.

The library is instrumented, never configured: it asks the global tracer provider for
the tracer ``weakincentives`` and leaves exporters and sampling to the application
(``docs/tracing.md``). Two cheap checks keep the cost at zero otherwise: without the
``otel`` extra the API is not importable and every function here returns at once;
with it but with no SDK provider installed (the API's proxy or no-op provider), no
span is started either. Nothing in the library depends on a span existing: a ``None``
span is accepted everywhere.

Attribute names follow the OpenTelemetry semantic conventions for GenAI and MCP
(``specs/TRACING.md`` names the version checked against).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal

try:
    from opentelemetry import context as _context
    from opentelemetry import propagate as _propagate
    from opentelemetry import trace as _trace
except ImportError:  # the otel extra is not installed: tracing is off, at no cost
    _AVAILABLE = False
else:
    _AVAILABLE = True

if TYPE_CHECKING:
    from opentelemetry.trace import Span

__all__ = [
    "TRACER_NAME",
    "Kind",
    "active",
    "add_event",
    "available",
    "current",
    "end_span",
    "enter",
    "extract",
    "fail_span",
    "inject",
    "leave",
    "set_attributes",
    "start_span",
]

TRACER_NAME = "weakincentives"

type Kind = Literal["internal", "client", "server"]
type AttributeValue = str | bool | int | float | tuple[str, ...]


def available() -> bool:
    """Whether ``opentelemetry-api`` is importable (the ``otel`` extra is installed)."""
    return _AVAILABLE


def active() -> bool:
    """Whether spans are recorded: the API is installed and an SDK provider is set."""
    if not _AVAILABLE:
        return False
    provider = _trace.get_tracer_provider()
    return not isinstance(provider, _trace.ProxyTracerProvider | _trace.NoOpTracerProvider)


def start_span(
    name: str,
    *,
    kind: Kind = "internal",
    attributes: Mapping[str, AttributeValue | None] | None = None,
    parent: object = None,
) -> Span | None:
    """Start a span (a child of the current one, or of ``parent``'s context); None when off.

    The span is not made current: :func:`current` does that around the work it
    covers. ``None`` attribute values are left out.
    """
    if not active():
        return None
    kinds = {
        "internal": _trace.SpanKind.INTERNAL,
        "client": _trace.SpanKind.CLIENT,
        "server": _trace.SpanKind.SERVER,
    }
    context: Any = parent
    span: Span = _trace.get_tracer(TRACER_NAME).start_span(
        name,
        context=context,
        kind=kinds[kind],
        attributes=_present(attributes),
    )
    return span


@contextlib.contextmanager
def current(span: Span | None) -> Iterator[None]:
    """Make ``span`` the current span inside the block (children and propagation see it)."""
    if span is None:
        yield
        return
    token = _context.attach(_trace.set_span_in_context(span))
    try:
        yield
    finally:
        _context.detach(token)


def enter(span: Span | None) -> object:
    """Make ``span`` current until :func:`leave` (for code a ``with`` block does not fit)."""
    if span is None:
        return None
    return _context.attach(_trace.set_span_in_context(span))


def leave(token: object) -> None:
    """Undo :func:`enter`; a ``None`` token (no span) does nothing."""
    if token is not None:
        _context.detach(token)  # type: ignore[arg-type]  # the opaque Token enter() returned


def set_attributes(span: Span | None, attributes: Mapping[str, AttributeValue | None]) -> None:
    """Add ``attributes`` (``None`` values left out) to ``span``."""
    if span is not None:
        span.set_attributes(_present(attributes))


def add_event(
    span: Span | None, name: str, attributes: Mapping[str, AttributeValue | None]
) -> None:
    """Add a span event (a retry, for example) to ``span``."""
    if span is not None:
        span.add_event(name, _present(attributes))


def fail_span(span: Span | None, error_type: str, description: str) -> None:
    """Mark ``span`` failed: ``error.type`` and an ``ERROR`` status with ``description``."""
    if span is None:
        return
    span.set_attribute("error.type", error_type)
    span.set_status(_trace.Status(_trace.StatusCode.ERROR, description))


def end_span(span: Span | None) -> None:
    """End ``span``."""
    if span is not None:
        span.end()


def inject() -> dict[str, str]:
    """The current trace context as W3C headers (``traceparent``, ``tracestate``)."""
    carrier: dict[str, str] = {}
    if active():
        _propagate.inject(carrier)
    return carrier


def extract(carrier: Mapping[str, object]) -> object:
    """The context named by W3C headers in ``carrier`` (None when there are none, or off)."""
    if not active():
        return None
    headers = {key: value for key, value in carrier.items() if isinstance(value, str)}
    if "traceparent" not in headers:
        return None
    return _propagate.extract(headers)


def _present(
    attributes: Mapping[str, AttributeValue | None] | None,
) -> dict[str, AttributeValue]:
    if not attributes:
        return {}
    return {key: value for key, value in attributes.items() if value is not None}
