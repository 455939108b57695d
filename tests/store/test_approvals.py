"""Pending approvals on every backend: requested once, decided once, listed while pending."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.conftest import FakeClock
from weakincentives.errors import ApprovalConflictError, StoreUsageError, UnknownApprovalError
from weakincentives.store import Approval, SyncStore


def test_a_requested_approval_is_pending(store: SyncStore, clock: FakeClock) -> None:
    """The request keeps the call's id, tool, arguments and time, and waits for a decision."""
    requested_at = clock.now
    approval = store.request_approval(
        "e", call_id="call_1", tool_name="delete_file", arguments={"path": "notes/x.txt"}
    )
    expected = Approval(
        evaluation_id="e",
        call_id="call_1",
        tool_name="delete_file",
        arguments={"path": "notes/x.txt"},
        format_version=1,
        requested_at=requested_at,
        decision=None,
        message=None,
        decided_at=None,
    )
    assert approval == expected
    assert store.pending_approvals() == (expected,)
    assert store.read_approvals("e") == (expected,)


def test_requesting_the_same_call_again_returns_the_stored_request(store: SyncStore) -> None:
    """A resumed run asking again does not reset or duplicate the request."""
    first = store.request_approval("e", call_id="c", tool_name="t", arguments={"n": 1})
    again = store.request_approval("e", call_id="c", tool_name="t", arguments={"n": 2})
    assert again == first
    assert store.read_approvals("e") == (first,)


def test_a_decision_is_stored_and_ends_the_wait(store: SyncStore, clock: FakeClock) -> None:
    """A decided approval has its decision, message and time, and is no longer pending."""
    store.request_approval("e", call_id="c", tool_name="t", arguments=[])
    decided_at = clock.now
    decided = store.decide_approval("e", "c", decision="denied", message="not on prod")
    assert (decided.decision, decided.message, decided.decided_at) == (
        "denied",
        "not on prod",
        decided_at,
    )
    assert store.pending_approvals() == ()
    assert store.read_approvals("e") == (decided,)


def test_deciding_again_the_same_way_returns_the_first_decision(
    store: SyncStore, clock: FakeClock
) -> None:
    """A retried decision is a no-op: same decision, same message, first decision time."""
    store.request_approval("e", call_id="c", tool_name="t", arguments=[])
    first = store.decide_approval("e", "c", decision="approved")
    clock.now += timedelta(hours=1)
    assert store.decide_approval("e", "c", decision="approved") == first


def test_deciding_differently_is_a_conflict(store: SyncStore) -> None:
    """A decision is final: the other answer is refused, naming both."""
    store.request_approval("e", call_id="c", tool_name="t", arguments=[])
    store.decide_approval("e", "c", decision="approved")
    with pytest.raises(
        ApprovalConflictError,
        match=r"evaluation 'e': call 'c' was already approved, it cannot now be denied",
    ) as raised:
        store.decide_approval("e", "c", decision="denied")
    error = raised.value
    assert (error.evaluation_id, error.call_id, error.decision, error.stored_decision) == (
        "e",
        "c",
        "denied",
        "approved",
    )
    assert store.read_approvals("e")[0].decision == "approved"


def test_the_same_decision_with_another_message_is_a_conflict(store: SyncStore) -> None:
    """The message is part of the decision the model will see, so it is final too."""
    store.request_approval("e", call_id="c", tool_name="t", arguments=[])
    store.decide_approval("e", "c", decision="denied", message="no")
    with pytest.raises(ApprovalConflictError, match="was already denied with another message"):
        store.decide_approval("e", "c", decision="denied", message="never")


def test_deciding_a_call_never_requested_is_an_error(store: SyncStore) -> None:
    """An unknown call is an UnknownApprovalError, which is also a KeyError."""
    with pytest.raises(
        UnknownApprovalError, match="evaluation 'e' has no approval request for call 'ghost'"
    ) as raised:
        store.decide_approval("e", "ghost", decision="approved")
    assert isinstance(raised.value, KeyError)
    assert str(raised.value) == "evaluation 'e' has no approval request for call 'ghost'"
    assert (raised.value.evaluation_id, raised.value.call_id) == ("e", "ghost")


def test_pending_approvals_are_oldest_first_and_filter_by_evaluation(store: SyncStore) -> None:
    """Across evaluations by request time; for one evaluation only its own."""
    store.request_approval("e2", call_id="b", tool_name="t", arguments=[])
    store.request_approval("e1", call_id="z", tool_name="t", arguments=[])
    store.request_approval("e2", call_id="a", tool_name="t", arguments=[])
    store.decide_approval("e2", "b", decision="approved")
    assert [(a.evaluation_id, a.call_id) for a in store.pending_approvals()] == [
        ("e1", "z"),
        ("e2", "a"),
    ]
    assert [a.call_id for a in store.pending_approvals("e2")] == ["a"]
    assert [a.call_id for a in store.read_approvals("e2")] == ["b", "a"]


@pytest.mark.parametrize(
    ("decision", "message", "error"),
    [
        ("maybe", None, "decision must be approved or denied, got 'maybe'"),
        ("approved", 5, "message must be a str, got 5"),
        ("denied", "a\x00", "message 'a\\\\x00' holds a NUL"),
    ],
)
def test_a_bad_decision_is_refused(
    store: SyncStore, decision: object, message: object, error: str
) -> None:
    """Decisions are two words and messages plain text; nothing is written otherwise."""
    store.request_approval("e", call_id="c", tool_name="t", arguments=[])
    with pytest.raises(StoreUsageError, match=error):
        store.decide_approval("e", "c", decision=decision, message=message)  # type: ignore[arg-type]
    assert store.pending_approvals("e")[0].decision is None


def test_an_empty_message_is_kept_as_given(store: SyncStore) -> None:
    """An empty message is a message, distinct from none."""
    store.request_approval("e", call_id="c", tool_name="t", arguments=[])
    assert store.decide_approval("e", "c", decision="approved", message="").message == ""
