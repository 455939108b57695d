"""A provider that records another provider's exchanges to a file, and replays them.

``Recorded(provider, path, mode=...)`` wraps any provider value. Building requests and
reading turns stay the inner provider's (they are pure); only ``send`` changes:

- ``"replay"`` (the default) answers every request from the cassette and never calls
  the inner provider, so a test of an agent on a real model runs offline and gives the
  same result every time. A request the cassette does not hold raises
  ``ReplayMissError`` with a diff against the closest recorded request.
- ``"record"`` sends every request through the inner provider and writes a new cassette
  of this run's exchanges, replacing the file.
- ``"rerecord"`` answers what the cassette holds, sends only the requests it does not
  hold (a changed prompt or tool) through the inner provider, and from that first new
  exchange on rewrites the cassette as this run's exchanges.

Exchanges are keyed by the fingerprint of the request; a request made twice in a run
replays its recorded replies in the order they were recorded. A streamed reply replays
its text in the pieces it streamed in, so ``TextDelta`` events are the same too.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast, get_args

from weakincentives._bounded import clip
from weakincentives.adapters._cassette import Exchange, read_cassette, write_cassette
from weakincentives.adapters._fingerprint import fingerprint, request_json
from weakincentives.adapters._hosted import HostedToolCodec
from weakincentives.adapters._provider import Attempt, Provider, TextSink
from weakincentives.adapters._replay_miss import closest_exchange, first_difference, request_diff
from weakincentives.adapters._turns import ModelTurn, TurnRequest
from weakincentives.errors import CassetteError, ConfigValidationError, ReplayMissError
from weakincentives.serde import JSONValue

__all__ = ["RecordMode", "Recorded"]

type RecordMode = Literal["replay", "record", "rerecord"]
"""How a :class:`Recorded` provider uses its cassette; see the module docstring."""

_MODES: tuple[str, ...] = get_args(RecordMode.__value__)
_PROVIDER_PARTS = ("build_request", "send", "read_turn", "close")


class _Tape:
    """A recorded provider's cassette and its place in it; shared by its evaluations."""

    __slots__ = ("file_lock", "lock", "path", "played", "position", "recorded", "run", "unplayed")

    def __init__(self) -> None:
        self.path = Path()
        self.recorded: tuple[Exchange, ...] = ()
        self.unplayed: dict[str, deque[Exchange]] = {}
        self.played = 0
        self.run: list[Exchange] = []
        """This run's exchanges, in the order they were answered."""
        self.position = 0
        self.lock = threading.Lock()
        self.file_lock = threading.Lock()

    def load(self, exchanges: tuple[Exchange, ...]) -> None:
        self.recorded = exchanges
        for exchange in exchanges:
            self.unplayed.setdefault(exchange.fingerprint, deque()).append(exchange)

    def take(self, key: str) -> Exchange | None:
        """The next unplayed exchange recorded for ``key``, counted as answered."""
        with self.lock:
            waiting = self.unplayed.get(key)
            if not waiting:
                return None
            exchange = waiting.popleft()
            self.played += 1
            self.run.append(exchange)
            self.position += 1
            return exchange

    def add(self, exchange: Exchange) -> None:
        with self.lock:
            self.run.append(exchange)
            self.position += 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Recorded[RequestT, ReplyT]:
    """``provider``'s exchanges recorded to the cassette at ``path``, or replayed from it.

    ``Adapter(Recorded(OpenAIResponses(model=...), "tests/cassettes/triage.json"))``
    replays; pass ``mode="record"`` once, with network access, to write the cassette.
    The inner provider is built as usual; in replay mode it is never sent anything, so
    an SDK provider needs no real key (``api_key="unused"``) and no reachable server.
    The cassette is read when the provider is created: a missing file (in replay mode)
    or a damaged one raises ``CassetteError`` then.
    """

    provider: Provider[RequestT, ReplyT] = field(kw_only=False)
    """The provider whose exchanges are recorded (and that replays build and read for)."""
    path: str | os.PathLike[str] = field(kw_only=False)
    """The cassette file (see ``specs/PERSISTENCE.md`` for its format)."""
    mode: RecordMode = "replay"
    _tape: _Tape = field(init=False, repr=False, compare=False, default_factory=_Tape)

    def __post_init__(self) -> None:
        if self.mode not in _MODES:
            raise ConfigValidationError(
                f"Recorded mode must be one of {', '.join(map(repr, _MODES))}, got {self.mode!r}",
                config_type=Recorded,
                field_name="mode",
                value=self.mode,
            )
        missing = [
            part for part in _PROVIDER_PARTS if not callable(getattr(self.provider, part, None))
        ]
        if missing:
            raise ConfigValidationError(
                "Recorded wraps a provider (OpenAIResponses, AnthropicMessages, OfflineModel, "
                f"...), got a {type(self.provider).__name__}, which has no {', '.join(missing)}",
                config_type=Recorded,
                field_name="provider",
                value=self.provider,
            )
        tape = self._tape
        tape.path = Path(self.path)
        if self.mode == "record" or (self.mode == "rerecord" and not tape.path.exists()):
            return
        provider, exchanges = read_cassette(tape.path)
        if provider is not None and provider != self.provider.name:
            raise CassetteError(
                cassette=str(tape.path),
                reason=f"it was recorded with the {clip(provider)!r} provider, not "
                f"{self.provider.name!r}",
            )
        tape.load(exchanges)

    @property
    def name(self) -> str:
        """The inner provider's name, so events read the same recorded or replayed."""
        return self.provider.name

    @property
    def model(self) -> str | None:
        """The inner provider's model."""
        return self.provider.model

    @property
    def retry_limit(self) -> int:
        """The inner provider's: a replayed exchange never fails, a live one may."""
        return self.provider.retry_limit

    @property
    def hosted_tool_codecs(self) -> Mapping[str, HostedToolCodec[Any, Any]]:
        """The inner provider's codecs."""
        return self.provider.hosted_tool_codecs

    @property
    def remaining_exchanges(self) -> int:
        """Recorded exchanges not replayed yet; 0 once a replayed run used them all."""
        tape = self._tape
        return len(tape.recorded) - tape.played

    def build_request(self, turn: TurnRequest) -> RequestT:
        """The inner provider's request."""
        return self.provider.build_request(turn)

    async def send(self, request: RequestT, attempt: Attempt, on_text: TextSink) -> ReplyT:
        """Answer from the cassette, or (recording) from the inner provider, and record it."""
        built = request_json(request)
        key = fingerprint(built)
        tape = self._tape
        if self.mode != "record":
            exchange = tape.take(key)
            if exchange is not None:
                for delta in exchange.deltas:
                    on_text(delta)
                if self.mode == "rerecord" and len(tape.run) > tape.played:
                    await self._save()
                return cast("ReplyT", exchange.replayed_value())
            if self.mode == "replay":
                raise self._miss(built, key, attempt)
        deltas: list[str] = []

        def sink(text: str) -> None:
            deltas.append(text)
            on_text(text)

        reply = await self.provider.send(request, attempt, sink)
        tape.add(Exchange.of(round=attempt.round, request=built, deltas=deltas, reply=reply))
        await self._save()
        return reply

    def read_turn(self, reply: ReplyT, request: RequestT, turn: TurnRequest) -> ModelTurn:
        """The inner provider's reading of the reply."""
        return self.provider.read_turn(reply, request, turn)

    def close(self) -> None:
        """Close the inner provider (the cassette is already on disk)."""
        self.provider.close()

    async def _save(self) -> None:
        """Write this run's exchanges, on a worker thread (the write ends with an fsync)."""
        await asyncio.to_thread(self._write)

    def _write(self) -> None:
        tape = self._tape
        # Each write takes the latest run under the file lock, so the last write to
        # finish holds every exchange, whatever order concurrent writes ran in.
        with tape.file_lock:
            with tape.lock:
                run = tuple(tape.run)
            write_cassette(tape.path, self.provider.name, run)

    def _miss(self, built: JSONValue, key: str, attempt: Attempt) -> ReplayMissError:
        tape = self._tape
        recorded = tape.recorded
        replayed = sum(exchange.fingerprint == key for exchange in recorded)
        # A request recorded and replayed already is sent once too often: no comparison.
        index = (
            None
            if replayed
            else closest_exchange(recorded, built, round=attempt.round, position=tape.position)
        )
        closest = None if index is None else recorded[index]
        difference = None if closest is None else first_difference(closest.request, built)
        return ReplayMissError(
            prompt_name=attempt.prompt_name,
            fingerprint=key,
            round=attempt.round,
            cassette=str(tape.path),
            closest=index,
            closest_round=None if closest is None else closest.round,
            difference=None if difference is None else clip(difference, 200),
            diff=""
            if closest is None
            else request_diff(
                closest.request,
                built,
                recorded_label=f"recorded exchange {index} (round {closest.round})",
            ),
            replayed=replayed,
        )
