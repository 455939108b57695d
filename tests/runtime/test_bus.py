"""Behaviour of the in-process event bus."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

import pytest

from tests.runtime._concurrency import run_threads
from weakincentives.errors import WinkError
from weakincentives.runtime import (
    EventBus,
    EventDeliveryError,
    HandlerFailure,
    InProcessEventBus,
    PublishResult,
)
from weakincentives.runtime._bus import Subscription


@dataclass(frozen=True, slots=True)
class Base:
    value: int


@dataclass(frozen=True, slots=True)
class Child(Base):
    pass


@dataclass(frozen=True, slots=True)
class Other:
    value: int


@pytest.fixture
def bus() -> InProcessEventBus:
    return InProcessEventBus()


class Recorder:
    """Collects (label, event) pairs from several handlers in call order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def handler(self, label: str) -> _Handler:
        return _Handler(self, label)


@dataclass
class _Handler:
    recorder: Recorder
    label: str

    def __call__(self, event: object) -> None:
        self.recorder.calls.append((self.label, event))


def test_in_process_bus_satisfies_the_protocol() -> None:
    """InProcessEventBus can be used wherever an EventBus is expected."""
    bus: EventBus = InProcessEventBus()
    assert bus.publish(Base(1)) == PublishResult(event=Base(1), handlers_invoked=0, errors=())


def test_handlers_run_in_subscription_order(bus: InProcessEventBus) -> None:
    """Every handler for an event runs once, in the order it subscribed."""
    recorder = Recorder()
    for label in ("first", "second", "third"):
        bus.subscribe(Base, recorder.handler(label))
    result = bus.publish(Base(1))
    assert recorder.calls == [("first", Base(1)), ("second", Base(1)), ("third", Base(1))]
    assert result == PublishResult(event=Base(1), handlers_invoked=3, errors=())
    assert result.ok is True


def test_subscription_to_a_base_class_sees_subclass_events(bus: InProcessEventBus) -> None:
    """Matching walks the event's MRO, so a base-class subscriber sees subclass events."""
    recorder = Recorder()
    bus.subscribe(Base, recorder.handler("base"))
    bus.subscribe(Child, recorder.handler("child"))
    bus.publish(Child(1))
    bus.publish(Base(2))
    assert recorder.calls == [("base", Child(1)), ("child", Child(1)), ("base", Base(2))]


def test_subscription_to_object_sees_every_event(bus: InProcessEventBus) -> None:
    """Subscribing to object receives events of unrelated types, even plain strings."""
    recorder = Recorder()
    bus.subscribe(object, recorder.handler("all"))
    bus.publish(Base(1))
    bus.publish(Other(2))
    bus.publish("text")
    assert recorder.calls == [("all", Base(1)), ("all", Other(2)), ("all", "text")]


def test_mixed_type_subscriptions_keep_global_subscription_order(bus: InProcessEventBus) -> None:
    """Order follows subscription time, not how specific the subscribed type is."""
    recorder = Recorder()
    bus.subscribe(Child, recorder.handler("child"))
    bus.subscribe(object, recorder.handler("object"))
    bus.subscribe(Base, recorder.handler("base"))
    bus.publish(Child(1))
    assert [label for label, _ in recorder.calls] == ["child", "object", "base"]


def test_unrelated_subscriptions_are_not_called(bus: InProcessEventBus) -> None:
    """A handler for one type never sees events of an unrelated or base type."""
    recorder = Recorder()
    bus.subscribe(Other, recorder.handler("other"))
    bus.subscribe(Child, recorder.handler("child"))
    result = bus.publish(Base(1))
    assert recorder.calls == []
    assert result.handlers_invoked == 0


def test_failing_handler_does_not_stop_the_others(
    bus: InProcessEventBus, caplog: pytest.LogCaptureFixture
) -> None:
    """A raising subscriber is logged and reported while later subscribers still run."""
    recorder = Recorder()
    error = ValueError("boom")

    def explode(event: Base) -> None:
        raise error

    bus.subscribe(Base, recorder.handler("before"))
    bus.subscribe(Base, explode)
    bus.subscribe(Base, recorder.handler("after"))
    with caplog.at_level(logging.ERROR, logger="weakincentives.runtime"):
        result = bus.publish(Base(1))
    assert recorder.calls == [("before", Base(1)), ("after", Base(1))]
    assert result.handlers_invoked == 3
    assert result.errors == (HandlerFailure(handler=explode, error=error),)
    assert result.ok is False
    assert [(r.name, r.levelno, r.exc_info is not None) for r in caplog.records] == [
        ("weakincentives.runtime", logging.ERROR, True)
    ]
    assert "explode" in caplog.records[0].getMessage()
    assert "Base" in caplog.records[0].getMessage()


def test_raise_if_errors_lists_every_failure(bus: InProcessEventBus) -> None:
    """raise_if_errors raises one WinkError naming each failing handler, chained to the first."""
    first = ValueError("first problem")
    second = KeyError("second problem")

    def fail_value(event: Base) -> None:
        raise first

    def fail_key(event: Base) -> None:
        raise second

    bus.subscribe(Base, fail_value)
    bus.subscribe(Base, lambda event: None)
    bus.subscribe(Base, fail_key)
    result = bus.publish(Base(7))
    with pytest.raises(EventDeliveryError, match=r"2 of 3 handlers failed on Base: ") as info:
        result.raise_if_errors()
    assert isinstance(info.value, WinkError)
    assert info.value.event == Base(7)
    assert info.value.handlers_invoked == 3
    assert tuple(failure.error for failure in info.value.failures) == (first, second)
    assert info.value.__cause__ is first
    assert "fail_value raised ValueError('first problem')" in info.value.message
    assert "fail_key raised KeyError('second problem')" in info.value.message


def test_raise_if_errors_is_silent_when_all_handlers_succeed(bus: InProcessEventBus) -> None:
    """A clean publish result raises nothing."""
    bus.subscribe(Base, lambda event: None)
    bus.publish(Base(1)).raise_if_errors()


def test_failure_message_falls_back_to_repr_for_unnamed_handlers(bus: InProcessEventBus) -> None:
    """Handlers without a __qualname__ (callable instances) are named by their repr."""

    class Exploder:
        def __call__(self, event: Base) -> None:
            raise RuntimeError("nope")

        def __repr__(self) -> str:
            return "<exploder>"

    bus.subscribe(Base, Exploder())
    with pytest.raises(EventDeliveryError, match=r"<exploder> raised RuntimeError\('nope'\)"):
        bus.publish(Base(1)).raise_if_errors()


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, SystemExit])
def test_interrupts_are_not_swallowed(
    bus: InProcessEventBus, interrupt: type[BaseException]
) -> None:
    """KeyboardInterrupt and SystemExit escape publish and stop delivery."""
    recorder = Recorder()

    def stop(event: Base) -> None:
        raise interrupt

    bus.subscribe(Base, stop)
    bus.subscribe(Base, recorder.handler("after"))
    with pytest.raises(interrupt):
        bus.publish(Base(1))
    assert recorder.calls == []


def test_unsubscribe_stops_delivery_and_second_unsubscribe_returns_false(
    bus: InProcessEventBus,
) -> None:
    """Unsubscribing removes the handler once; the second attempt reports False."""
    recorder = Recorder()
    subscription = bus.subscribe(Base, recorder.handler("gone"))
    bus.publish(Base(1))
    assert bus.unsubscribe(subscription) is True
    assert bus.unsubscribe(subscription) is False
    bus.publish(Base(2))
    assert recorder.calls == [("gone", Base(1))]


def test_same_handler_subscribed_twice_gets_independent_subscriptions(
    bus: InProcessEventBus,
) -> None:
    """Each subscribe returns its own handle; removing one leaves the other active."""
    recorder = Recorder()
    handler = recorder.handler("twice")
    first = bus.subscribe(Base, handler)
    second = bus.subscribe(Base, handler)
    assert first != second
    assert first.handler is second.handler
    bus.unsubscribe(first)
    assert bus.publish(Base(1)).handlers_invoked == 1
    assert bus.unsubscribe(second) is True


def test_subscription_from_another_bus_is_not_removed(bus: InProcessEventBus) -> None:
    """A handle only unsubscribes from the bus that issued it."""
    other_bus = InProcessEventBus()
    handler = Recorder().handler("x")
    bus.subscribe(Base, handler)
    foreign = other_bus.subscribe(Base, handler)
    assert bus.unsubscribe(foreign) is False
    assert bus.publish(Base(1)).handlers_invoked == 1


def test_subscription_records_its_type_and_handler(bus: InProcessEventBus) -> None:
    """The returned handle exposes what was subscribed."""
    handler = Recorder().handler("x")
    subscription = bus.subscribe(Child, handler)
    assert isinstance(subscription, Subscription)
    assert (subscription.event_type, subscription.handler) == (Child, handler)


def test_handler_unsubscribed_during_publish_still_gets_the_event_in_flight(
    bus: InProcessEventBus,
) -> None:
    """Publish delivers to the subscribers present when it started, then the change applies."""
    recorder = Recorder()
    later: list[Subscription] = []

    def remove_later(event: Base) -> None:
        recorder.calls.append(("remover", event))
        bus.unsubscribe(later[0])

    bus.subscribe(Base, remove_later)
    later.append(bus.subscribe(Base, recorder.handler("later")))
    first = bus.publish(Base(1))
    second = bus.publish(Base(2))
    assert recorder.calls == [("remover", Base(1)), ("later", Base(1)), ("remover", Base(2))]
    assert (first.handlers_invoked, second.handlers_invoked) == (2, 1)


def test_handler_may_unsubscribe_itself(bus: InProcessEventBus) -> None:
    """A one-shot handler removes itself during publish without deadlocking."""
    seen: list[Base] = []
    handles: list[Subscription] = []

    def once(event: Base) -> None:
        seen.append(event)
        assert bus.unsubscribe(handles[0]) is True

    handles.append(bus.subscribe(Base, once))
    bus.publish(Base(1))
    bus.publish(Base(2))
    assert seen == [Base(1)]


def test_handler_subscribed_during_publish_sees_only_later_events(
    bus: InProcessEventBus,
) -> None:
    """A subscription added by a handler first receives the next published event."""
    recorder = Recorder()
    added: list[Subscription] = []

    def add_once(event: Base) -> None:
        if not added:
            added.append(bus.subscribe(Base, recorder.handler("added")))

    bus.subscribe(Base, add_once)
    bus.publish(Base(1))
    bus.publish(Base(2))
    assert recorder.calls == [("added", Base(2))]


def test_handler_may_publish_nested_events(bus: InProcessEventBus) -> None:
    """A handler publishing another event during delivery does not deadlock."""
    recorder = Recorder()

    def forward(event: Base) -> None:
        bus.publish(Other(event.value * 10))

    bus.subscribe(Base, forward)
    bus.subscribe(Other, recorder.handler("other"))
    bus.publish(Base(4))
    assert recorder.calls == [("other", Other(40))]


def test_concurrent_publishers_deliver_every_event_exactly_once(
    bus: InProcessEventBus,
) -> None:
    """Events published from many threads each reach every subscriber once."""
    threads_count, per_thread = 8, 200
    lock = threading.Lock()
    counts = {"a": 0, "b": 0}

    def count(label: str) -> _Counter:
        return _Counter(counts, label, lock)

    bus.subscribe(Base, count("a"))
    bus.subscribe(object, count("b"))
    barrier = threading.Barrier(threads_count)

    def publish_many(offset: int) -> None:
        barrier.wait()
        for index in range(per_thread):
            bus.publish(Base(offset * per_thread + index))

    run_threads(publish_many, threads_count)
    assert counts == {"a": threads_count * per_thread, "b": threads_count * per_thread}


def test_concurrent_subscribe_and_unsubscribe_during_publishing(
    bus: InProcessEventBus,
) -> None:
    """Churning subscriptions on some threads never disturbs a stable subscriber elsewhere."""
    lock = threading.Lock()
    counts = {"stable": 0, "churn": 0}
    bus.subscribe(Base, _Counter(counts, "stable", lock))
    workers, rounds = 6, 150
    barrier = threading.Barrier(workers)

    def work(index: int) -> None:
        barrier.wait()
        for value in range(rounds):
            if index % 2:
                handle = bus.subscribe(Base, _Counter(counts, "churn", lock))
                assert bus.unsubscribe(handle) is True
            else:
                bus.publish(Base(value))

    run_threads(work, workers)
    assert counts["stable"] == (workers // 2) * rounds
    assert bus.publish(Base(0)).handlers_invoked == 1


@dataclass
class _Counter:
    counts: dict[str, int]
    label: str
    lock: threading.Lock

    def __call__(self, event: object) -> None:
        with self.lock:
            self.counts[self.label] += 1
