"""Shared fixtures for the whole suite."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import settings

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
