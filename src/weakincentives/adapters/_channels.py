"""Where an evaluation's events go: the bus, the session, and the two kept in step."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from weakincentives.adapters._durable import DurableBus
from weakincentives.errors import SessionError
from weakincentives.prompt import EventPublisher, SessionProtocol
from weakincentives.runtime import HandlerFailure, InProcessEventBus, PublishResult, Session

__all__ = ["Channels", "publish", "resolve_channels"]

logger = logging.getLogger("weakincentives.adapters")


@dataclass(frozen=True, slots=True)
class _Tee:
    """Publishes on a bus and applies to a bus-less session, so the session records it all.

    Handlers receive this as ``context.event_bus``: what they publish reaches the
    caller's subscribers and the session alike.
    """

    bus: EventPublisher
    session: SessionProtocol

    def publish(self, event: object, /) -> object:
        """Publish on the bus, then apply to the session; a reducer's failure is reported.

        The session is one more subscriber: a reducer that raises leaves it as it was and
        is reported in the ``PublishResult`` (as a bus reports a failing subscriber), so
        it never aborts the evaluation nor loses the model's answer.
        """
        result = self.bus.publish(event)
        try:
            self.session.apply(event)
        except Exception as error:
            logger.error(
                "session %s failed to record %s",
                self.session.session_id,
                type(event).__name__,
                exc_info=error,
            )
            failure = HandlerFailure(handler=self.session.apply, error=error)
            if isinstance(result, PublishResult):
                return PublishResult(
                    event=event,
                    handlers_invoked=result.handlers_invoked + 1,
                    errors=(*result.errors, failure),
                )
            return PublishResult(event=event, handlers_invoked=1, errors=(failure,))
        return result


@dataclass(frozen=True, slots=True)
class Channels:
    bus: EventPublisher
    """Where the evaluation publishes (the session records everything published here)."""
    session: SessionProtocol


def resolve_channels(bus: EventPublisher | None, session: SessionProtocol | None) -> Channels:
    """Pick the bus and session so that the session records everything published.

    - neither given: a new in-process bus and a new session on it;
    - a bus only: that bus, and a new session kept in step with it (never subscribed, so
      nothing is left on the caller's bus afterwards);
    - a session with a bus of its own: that bus (a different ``bus=`` is an error);
    - a session without a bus: the given bus (or none), with the session kept in step.
    """
    if session is None:
        if bus is None:
            fresh = InProcessEventBus()
            return Channels(fresh, Session(bus=fresh))
        detached = Session()
        return Channels(_Tee(bus, detached), detached)
    attached = session.bus
    base = _unwrapped(bus)
    if attached is None:
        if bus is not None and isinstance(base, _Tee) and base.session is session:
            # A nested evaluation given its handler's context.event_bus and context.session:
            # that bus already records into this session, so it must not record twice.
            return Channels(bus, session)
        return Channels(_Tee(bus if bus is not None else InProcessEventBus(), session), session)
    if bus is not None and base is not attached:
        raise SessionError(
            "the session listens to a different bus than the one passed to evaluate, so it "
            "would miss the evaluation's events; pass the session's own bus, or only session="
        )
    return Channels(attached if bus is None else bus, session)


def _unwrapped(bus: EventPublisher | None) -> EventPublisher | None:
    """The bus under a durable evaluation's bus (``context.event_bus`` of its handlers).

    A nested evaluation given that bus and its session publishes through it, so its
    events are recorded with the call that ran it, and reach the session once.
    """
    return bus.inner if isinstance(bus, DurableBus) else bus


def publish(bus: EventPublisher, event: object) -> None:
    """Publish ``event``; subscriber failures are logged and never reach the loop."""
    result = bus.publish(event)
    if isinstance(result, PublishResult):
        for failure in result.errors:
            logger.warning(
                "subscriber %r failed on %s: %r",
                failure.handler,
                type(event).__name__,
                failure.error,
            )
