"""Shared fixtures for the whole suite."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import settings
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from weakincentives.runtime import InProcessEventBus, Session

# The store fixtures (a PostgreSQL server per test session, the two backends) serve the
# store tests and the durable evaluations' tests alike.
pytest_plugins = ("tests.store.backends", "tests.temporal.server")

# Hypothesis' per-example deadline is a wall-clock assertion: on a loaded machine (CI
# runners, several jobs on two cores) it fails tests that are correct. Tests never
# assert on timing, so the deadline is off for the whole suite.
settings.register_profile("weakincentives", deadline=None)
settings.load_profile("weakincentives")


@pytest.fixture(autouse=True)
def _clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the host's provider credentials and proxies out of every test."""
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "ANTHROPIC_")) or name.lower() in {
            "http_proxy",
            "https_proxy",
            "all_proxy",
        }:
            monkeypatch.delenv(name, raising=False)


class FakeClock:
    """A clock that advances by one millisecond on every reading."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        current = self.now
        self.now = current + timedelta(milliseconds=1)
        return current


@pytest.fixture
def clock() -> FakeClock:
    """A deterministic clock for events and invocation records."""
    return FakeClock()


@pytest.fixture
def bus() -> InProcessEventBus:
    """A fresh in-process event bus."""
    return InProcessEventBus()


@pytest.fixture
def session(bus: InProcessEventBus) -> Iterator[Session]:
    """A session recording everything published on ``bus``."""
    recorded = Session(bus=bus)
    yield recorded
    recorded.close()


@pytest.fixture
def ids() -> Iterator[str]:
    """Deterministic ids: id-1, id-2, ..."""
    return (f"id-{index}" for index in range(1, 1_000_000))


class RecordedSpans:
    """The spans the SDK's in-memory exporter received, finished ones only, oldest first."""

    def __init__(self, exporter: object) -> None:
        self._exporter = exporter

    def all(self) -> list[Any]:
        """Every finished span so far."""
        return list(self._exporter.get_finished_spans())  # type: ignore[attr-defined]

    def named(self, name: str) -> list[Any]:
        """The finished spans called ``name``."""
        return [span for span in self.all() if span.name == name]

    def one(self, name: str) -> Any:
        """The one finished span called ``name`` (fails when there are none or several)."""
        (found,) = self.named(name)
        return found


_EXPORTER = InMemorySpanExporter()
_PROVIDER = TracerProvider()
_PROVIDER.add_span_processor(SimpleSpanProcessor(_EXPORTER))


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> RecordedSpans:
    """An OpenTelemetry SDK tracer provider, global for this test, exporting to memory.

    The API's global provider can be set once per process, so the test swaps the
    module's global and the monkeypatch restores it afterwards: other tests keep the
    proxy provider, under which the library starts no span. One provider serves every
    test of the process, because libraries (the MCP SDK) keep the tracer they got first.
    """
    _EXPORTER.clear()
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", _PROVIDER)
    return RecordedSpans(_EXPORTER)
