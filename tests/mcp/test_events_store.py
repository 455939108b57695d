"""The served HTTP app's event store: recent events, replayed after the one a client saw."""

from __future__ import annotations

import asyncio

import mcp.types as types
from mcp.server.streamable_http import EventMessage

from weakincentives.mcp._events_store import RecentEvents


def _note(number: int) -> types.JSONRPCMessage:
    return types.JSONRPCNotification(
        jsonrpc="2.0", method="notifications/progress", params={"n": number}
    )


def _replayed(store: RecentEvents, last: str) -> tuple[str | None, list[tuple[str | None, int]]]:
    sent: list[EventMessage] = []

    async def send(event: EventMessage) -> None:
        sent.append(event)

    async def run() -> str | None:
        return await store.replay_events_after(last, send)

    stream = asyncio.run(run())
    return stream, [(event.event_id, event.message.params["n"]) for event in sent]  # type: ignore[union-attr,index]


def _store(store: RecentEvents, stream: str, message: types.JSONRPCMessage | None) -> str:
    return asyncio.run(store.store_event(stream, message))


def test_a_stream_resumes_after_the_last_event_its_client_saw() -> None:
    """Only that stream's later events come back, priming events left out."""
    store = RecentEvents()
    priming = _store(store, "a", None)
    assert _store(store, "a", _note(1)) == "2"
    _store(store, "b", _note(9))
    _store(store, "a", _note(2))
    assert _replayed(store, priming) == ("a", [("2", 1), ("4", 2)])
    assert _replayed(store, "2") == ("a", [("4", 2)])


def test_only_the_most_recent_events_are_kept() -> None:
    """Past the limit the oldest go; an id that is gone cannot be resumed from."""
    store = RecentEvents(limit=2)
    for number in range(3):
        _store(store, "a", _note(number))
    assert _replayed(store, "1") == (None, [])
    assert _replayed(store, "2") == ("a", [("3", 2)])
