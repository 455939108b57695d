"""Sessions that run for days: each slice keeps at most its retention limit."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from weakincentives.errors import ConfigValidationError
from weakincentives.runtime import InProcessEventBus, Retention, Session, TextDelta
from weakincentives.runtime._retention import DEFAULT_SLICE_LIMIT


@dataclass(frozen=True)
class Tick:
    n: int


@dataclass(frozen=True)
class Burst:
    n: int


@dataclass(frozen=True)
class Total:
    value: int


def delta(index: int) -> TextDelta:
    return TextDelta(evaluation_id="e", prompt_name="p", round=1, index=index, text="x")


class TestRetention:
    def test_a_full_slice_drops_its_oldest_values(self) -> None:
        """With a cap of 3, the newest three values stay, in order."""
        session = Session(retention=Retention(default=3))
        for n in range(5):
            session.apply(Tick(n))
        assert session.select(Tick) == (Tick(2), Tick(3), Tick(4))

    def test_the_default_keeps_ten_thousand_values_and_no_deltas(self) -> None:
        """Out of the box a slice keeps 10,000 values and text deltas are not recorded."""
        bus = InProcessEventBus()
        session = Session(bus=bus)
        for n in range(DEFAULT_SLICE_LIMIT + 5):
            bus.publish(Tick(n))
        bus.publish(delta(0))
        ticks = session.select(Tick)
        assert DEFAULT_SLICE_LIMIT == 10_000
        assert (len(ticks), ticks[0], ticks[-1]) == (10_000, Tick(5), Tick(10_004))
        assert session.select(TextDelta) == ()

    def test_per_type_limits_override_the_default(self) -> None:
        """A per-type cap applies to that slice only; None keeps everything."""
        session = Session(retention=Retention(default=1, per_type={TextDelta: None}))
        for n in range(3):
            session.apply(Tick(n))
            session.apply(delta(n))
        assert session.select(Tick) == (Tick(2),)
        assert [d.index for d in session.select(TextDelta)] == [0, 1, 2]

    def test_reduced_slices_are_capped_too(self) -> None:
        """A reducer's result is cut to the newest values the retention allows."""
        session = Session(retention=Retention(default=2))
        session.register_reducer(
            Tick, lambda values, event: (*values, Total(value=event.n)), slice_type=Total
        )
        for n in range(4):
            session.apply(Tick(n))
        assert session.select(Total) == (Total(value=2), Total(value=3))

    def test_rollback_respects_the_cap(self) -> None:
        """A restored snapshot keeps growing within the cap."""
        session = Session(retention=Retention(default=2))
        session.apply(Tick(0))
        snapshot = session.snapshot()
        session.apply(Tick(1))
        session.rollback(snapshot)
        session.apply(Tick(2))
        session.apply(Tick(3))
        assert session.select(Tick) == (Tick(2), Tick(3))

    def test_slices_past_64_values_keep_the_cap_and_the_order(self) -> None:
        """A slice held as a list while small keeps its cap once it grows past 64 values."""
        session = Session(retention=Retention(default=100))
        for n in range(150):
            session.apply(Tick(n))
        assert session.select(Tick) == tuple(Tick(n) for n in range(50, 150))
        snapshot = session.snapshot()
        session.apply(Tick(150))
        session.rollback(snapshot)
        session.apply(Tick(151))
        assert session.select(Tick) == (*(Tick(n) for n in range(51, 150)), Tick(151))

    def test_a_large_reduced_slice_keeps_the_cap_as_it_grows(self) -> None:
        """A reducer's result of 70 values keeps the newest 100 as values are appended."""
        session = Session(retention=Retention(default=100))
        session.register_reducer(
            Burst,
            lambda values, event: tuple(Total(value=n) for n in range(event.n)),
            slice_type=Total,
        )
        session.apply(Burst(70))
        assert session.select(Total) == tuple(Total(value=n) for n in range(70))
        for n in range(70, 140):
            session.apply(Total(value=n))
        assert session.select(Total) == tuple(Total(value=n) for n in range(40, 140))

    def test_unbounded_keeps_everything(self) -> None:
        """Retention.unbounded() records every value, deltas included."""
        session = Session(retention=Retention.unbounded())
        session.apply(delta(0))
        assert session.retention.limit_for(TextDelta) is None
        assert len(session.select(TextDelta)) == 1

    @pytest.mark.parametrize(
        ("retention", "named"),
        [
            (lambda: Retention(default=-1), "default=-1"),
            (lambda: Retention(per_type={Tick: 2.5}), "Tick=2.5"),  # type: ignore[dict-item]  # a float is the point
            (lambda: Retention(default=True), "default=True"),
        ],
        ids=["negative", "float", "bool"],
    )
    def test_bad_limits_are_refused(self, retention: object, named: str) -> None:
        """Limits must be None or integers >= 0; the error names the offending entry."""
        with pytest.raises(ConfigValidationError, match=named):
            retention()  # type: ignore[operator]  # each case is a factory
