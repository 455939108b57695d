"""The event bus: a small publish/subscribe seam and its in-process implementation.

Publishers (adapters, the tool runtime, tools themselves) announce what happened;
subscribers (sessions, loggers, tests) react. The bus never lets one subscriber's
failure reach the publisher or the other subscribers: failures are logged and
returned in a :class:`PublishResult`, and the publisher decides what to do.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, cast

from weakincentives._direct import direct_constructor
from weakincentives.errors import WinkError

__all__ = [
    "EventBus",
    "EventDeliveryError",
    "HandlerFailure",
    "InProcessEventBus",
    "PublishResult",
    "Subscription",
]

logger = logging.getLogger("weakincentives.runtime")


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Subscription:
    """A handle to one registered handler; pass it to ``unsubscribe`` to remove it.

    Handles compare by identity, so subscribing the same handler twice yields two
    independent handles, and a handle from one bus never removes anything from another.
    """

    event_type: type[object]
    """Events of this type, or of any subclass of it, reach the handler."""
    handler: Callable[..., None]
    """The callable invoked with each matching event."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HandlerFailure:
    """One subscriber raised while handling an event."""

    handler: Callable[..., None]
    """The handler that raised."""
    error: Exception
    """What it raised."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PublishResult:
    """What happened to one published event."""

    event: object
    """The event that was published."""
    handlers_invoked: int
    """How many handlers were called, including those that raised."""
    errors: tuple[HandlerFailure, ...] = ()
    """The handlers that raised, in the order they ran."""

    @property
    def ok(self) -> bool:
        """True when no handler raised."""
        return not self.errors

    def raise_if_errors(self) -> None:
        """Raise :class:`EventDeliveryError` when any handler raised; otherwise do nothing.

        The first handler's exception becomes the ``__cause__`` so its traceback
        is kept; all of them are listed on the error.
        """
        if self.errors:
            raise EventDeliveryError(
                event=self.event,
                handlers_invoked=self.handlers_invoked,
                failures=self.errors,
            ) from self.errors[0].error


class EventDeliveryError(WinkError):
    """One or more subscribers raised while handling a published event."""

    event: object
    handlers_invoked: int
    failures: tuple[HandlerFailure, ...]

    def __init__(
        self,
        *,
        event: object,
        handlers_invoked: int,
        failures: tuple[HandlerFailure, ...],
    ) -> None:
        details = "; ".join(
            f"{_handler_name(failure.handler)} raised {failure.error!r}" for failure in failures
        )
        super().__init__(
            f"{len(failures)} of {handlers_invoked} handlers failed on "
            f"{type(event).__qualname__}: {details}"
        )
        self.event = event
        self.handlers_invoked = handlers_invoked
        self.failures = failures


class EventBus(Protocol):
    """Where events are published and observed.

    This is the seam between code that reports what happened and code that
    records or reacts to it. Implementations must deliver an event to every
    handler subscribed to its type or to one of its base classes, in the order
    the handlers subscribed, and must not let a raising handler stop the others.
    """

    def subscribe[E](self, event_type: type[E], handler: Callable[[E], None]) -> Subscription:
        """Call ``handler`` with every published instance of ``event_type`` (or a subclass)."""
        ...

    def unsubscribe(self, subscription: Subscription) -> bool:
        """Stop delivering to a subscription; False when it was not subscribed."""
        ...

    def publish(self, event: object) -> PublishResult:
        """Deliver ``event`` to its handlers and report what happened."""
        ...


class InProcessEventBus:
    """A thread-safe :class:`EventBus` that calls handlers synchronously in the publisher's thread.

    The lock guards only the subscriber list. ``publish`` takes a snapshot of the
    matching handlers and calls them without holding the lock, so a handler may
    publish, subscribe or unsubscribe without deadlocking. A handler subscribed
    during a publish first sees the next event; one unsubscribed during a publish
    still receives the event in flight.
    """

    __slots__ = ("_by_type", "_lock", "_subscriptions")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscriptions: tuple[Subscription, ...] = ()
        # Matching handlers per concrete event type, computed on first publish of
        # that type and dropped whenever the subscriptions change.
        self._by_type: dict[type[object], tuple[Subscription, ...]] = {}

    def subscribe[E](self, event_type: type[E], handler: Callable[[E], None]) -> Subscription:
        """Call ``handler`` with every published instance of ``event_type`` (or a subclass).

        Matching walks the event's ``__mro__``: subscribing to ``object`` sees every
        event. Virtual subclasses (``ABC.register``) and structural protocols do not
        match, because they are not in the MRO.
        """
        subscription = Subscription(
            event_type=cast(type[object], event_type),
            handler=handler,
        )
        with self._lock:
            self._subscriptions = (*self._subscriptions, subscription)
            self._by_type.clear()
        return subscription

    def unsubscribe(self, subscription: Subscription) -> bool:
        """Remove a subscription; returns False if it was already removed or never added."""
        with self._lock:
            remaining = tuple(item for item in self._subscriptions if item is not subscription)
            if len(remaining) == len(self._subscriptions):
                return False
            self._subscriptions = remaining
            self._by_type.clear()
        return True

    def publish(self, event: object) -> PublishResult:
        """Call every matching handler in subscription order, collecting their failures.

        Only ``Exception`` subclasses are caught; ``KeyboardInterrupt`` and
        ``SystemExit`` propagate. Each failure is logged on the
        ``weakincentives.runtime`` logger.
        """
        handlers = self._handlers_for(type(event))
        failures: list[HandlerFailure] | None = None
        for subscription in handlers:
            try:
                subscription.handler(event)
            except Exception as error:
                logger.error(
                    "event handler %s failed on %s",
                    _handler_name(subscription.handler),
                    type(event).__qualname__,
                    exc_info=error,
                )
                failures = failures or []
                failures.append(HandlerFailure(handler=subscription.handler, error=error))
        return _make_result(
            event=event,
            handlers_invoked=len(handlers),
            errors=() if failures is None else tuple(failures),
        )

    def _handlers_for(self, event_type: type[object]) -> tuple[Subscription, ...]:
        with self._lock:
            cached = self._by_type.get(event_type)
            if cached is None:
                lineage = frozenset(event_type.__mro__)
                cached = tuple(item for item in self._subscriptions if item.event_type in lineage)
                self._by_type[event_type] = cached
            return cached


# Every event builds one: skip the frozen __init__ (the fields are the bus's own values).
_make_result = direct_constructor(PublishResult)


def _handler_name(handler: Callable[..., None]) -> str:
    module = getattr(handler, "__module__", None)
    name = getattr(handler, "__qualname__", None)
    if isinstance(name, str):
        return f"{module}.{name}" if isinstance(module, str) else name
    return repr(handler)
