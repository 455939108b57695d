"""Recent SSE events of a served HTTP connection, so a client can resume a dropped stream.

With an event store the SDK's streamable-HTTP server starts each response stream
with a priming event (an id and a ``retry`` interval) and numbers every event; a
client whose stream broke reconnects with ``Last-Event-ID`` and gets what it
missed. This store keeps the last ``MAX_EVENTS`` events of all streams in memory:
bounded, and enough to bridge a reconnection, which comes within seconds.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict

from mcp import types
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore

__all__ = ["MAX_EVENTS", "RecentEvents"]

MAX_EVENTS = 1_000
"""Events kept across every stream of one served HTTP app; the oldest go first."""


class RecentEvents(EventStore):
    """The last ``MAX_EVENTS`` events, replayable after any of them."""

    def __init__(self, limit: int = MAX_EVENTS) -> None:
        self._limit = limit
        self._numbers = itertools.count(1)
        self._events: OrderedDict[str, tuple[str, types.JSONRPCMessage | None]] = OrderedDict()

    async def store_event(self, stream_id: str, message: types.JSONRPCMessage | None) -> str:
        """Keep ``message`` (``None`` for a priming event) under a new id."""
        event_id = str(next(self._numbers))
        self._events[event_id] = (stream_id, message)
        while len(self._events) > self._limit:
            self._events.popitem(last=False)
        return event_id

    async def replay_events_after(
        self, last_event_id: str, send_callback: EventCallback
    ) -> str | None:
        """Send the stream's events after ``last_event_id``; None when that id is gone."""
        found = self._events.get(last_event_id)
        if found is None:
            return None
        stream_id = found[0]
        after = False
        for event_id, (stream, message) in list(self._events.items()):
            if event_id == last_event_id:
                after = True
            elif after and stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id
