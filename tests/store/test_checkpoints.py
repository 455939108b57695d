"""Checkpoints and steps on every backend: forward-only checkpoints, insert-once steps."""

from __future__ import annotations

import asyncio

import pytest

from tests.conftest import FakeClock
from tests.store.conftest import Backend
from weakincentives.errors import CheckpointConflictError, DocumentError, StoreUsageError
from weakincentives.store import Checkpoint, NewEvent, Step, SyncStore
from weakincentives.store._records import EvaluationSummary


def test_a_saved_checkpoint_loads_back_equal(store: SyncStore, clock: FakeClock) -> None:
    """Load returns the round, status, session, document, format and save time."""
    saved_at = clock.now
    saved = store.save_checkpoint(
        "eval-1", round=3, status="running", document={"messages": ["hi"]}, session_id="s1"
    )
    expected = Checkpoint(
        evaluation_id="eval-1",
        round=3,
        status="running",
        session_id="s1",
        document={"messages": ["hi"]},
        format_version=1,
        saved_at=saved_at,
    )
    assert saved == expected
    assert store.load_checkpoint("eval-1") == expected


def test_a_later_round_replaces_the_checkpoint(store: SyncStore) -> None:
    """Only the latest round is kept."""
    store.save_checkpoint("e", round=1, status="running", document="one")
    store.save_checkpoint("e", round=2, status="done", document="two")
    loaded = store.load_checkpoint("e")
    assert loaded is not None
    assert (loaded.round, loaded.status, loaded.document, loaded.session_id) == (
        2,
        "done",
        "two",
        None,
    )


def test_saving_the_same_round_again_replaces_it(store: SyncStore) -> None:
    """A status change within a round (running to paused) is a save of the same round."""
    store.save_checkpoint("e", round=4, status="running", document="before")
    store.save_checkpoint("e", round=4, status="paused", document="waiting")
    loaded = store.load_checkpoint("e")
    assert loaded is not None
    assert (loaded.round, loaded.status, loaded.document) == (4, "paused", "waiting")


def test_a_stale_writer_cannot_move_a_checkpoint_backwards(store: SyncStore) -> None:
    """Saving an older round is a conflict naming both rounds; the stored one stands."""
    store.save_checkpoint("e", round=5, status="running", document="newest")
    with pytest.raises(
        CheckpointConflictError,
        match=r"evaluation 'e': cannot save round 4, the store already holds round 5",
    ) as raised:
        store.save_checkpoint("e", round=4, status="running", document="stale")
    assert (raised.value.evaluation_id, raised.value.round, raised.value.stored_round) == (
        "e",
        4,
        5,
    )
    loaded = store.load_checkpoint("e")
    assert loaded is not None
    assert (loaded.round, loaded.document) == (5, "newest")


def test_an_evaluation_without_a_checkpoint_loads_none(store: SyncStore) -> None:
    """Loading an unknown evaluation is None, not an error."""
    assert store.load_checkpoint("never-saved") is None


def test_list_evaluations_filters_by_status_and_orders_by_id(
    store: SyncStore, clock: FakeClock
) -> None:
    """Summaries carry everything but the document; ``status`` picks one kind."""
    times = {}
    for evaluation_id, status in [("c", "paused"), ("a", "running"), ("b", "paused")]:
        times[evaluation_id] = clock.now
        store.save_checkpoint(evaluation_id, round=1, status=status, document=None)  # type: ignore[arg-type]
    assert [summary.evaluation_id for summary in store.list_evaluations()] == ["a", "b", "c"]
    assert store.list_evaluations(status="paused") == (
        EvaluationSummary(
            evaluation_id="b", round=1, status="paused", session_id=None, saved_at=times["b"]
        ),
        EvaluationSummary(
            evaluation_id="c", round=1, status="paused", session_id=None, saved_at=times["c"]
        ),
    )
    assert store.list_evaluations(status="done") == ()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"round": -1}, "round must be an int from 0 to 2\\*\\*63 - 1, got -1"),
        ({"round": 2**63}, "round must be an int from 0"),
        ({"round": True}, "round must be an int from 0"),
        ({"status": "finished"}, "status must be one of running, paused, done, failed"),
        ({"session_id": ""}, "session_id must be a non-empty str"),
    ],
)
def test_bad_checkpoint_arguments_are_refused(
    store: SyncStore, arguments: dict[str, object], message: str
) -> None:
    """Rounds are 64-bit counts and statuses one of four words, checked before writing."""
    values: dict[str, object] = {"round": 1, "status": "running", "document": {}} | arguments
    with pytest.raises(StoreUsageError, match=message):
        store.save_checkpoint("e", **values)  # type: ignore[arg-type]
    assert store.load_checkpoint("e") is None


def test_list_evaluations_refuses_an_unknown_status(store: SyncStore) -> None:
    """A misspelt status is an error, not an empty list."""
    with pytest.raises(StoreUsageError, match="status must be one of"):
        store.list_evaluations(status="Paused")  # type: ignore[arg-type]


def test_an_unstorable_checkpoint_document_names_the_evaluation(store: SyncStore) -> None:
    """The error says which checkpoint could not be stored."""
    with pytest.raises(DocumentError, match="the checkpoint of evaluation 'e' is not storable"):
        store.save_checkpoint("e", round=1, status="running", document={"x": float("inf")})


def test_a_step_is_recorded_once_and_the_first_writer_wins(
    store: SyncStore, clock: FakeClock
) -> None:
    """Recording an existing key returns the stored step, unchanged."""
    recorded_at = clock.now
    first = store.record_step("e", "round:1/call:a", {"result": "first"})
    again = store.record_step("e", "round:1/call:a", {"result": "second"})
    expected = Step(
        evaluation_id="e",
        key="round:1/call:a",
        document={"result": "first"},
        format_version=1,
        recorded_at=recorded_at,
    )
    assert first == expected
    assert again == expected
    assert store.read_steps("e") == (expected,)


def test_steps_read_back_in_the_order_they_were_recorded(store: SyncStore) -> None:
    """Order is recording order, not key order; other evaluations' steps stay apart."""
    for key in ["round:2/request", "round:1/call:z", "round:10/call:a"]:
        store.record_step("e", key, key)
    store.record_step("other", "round:1/call:z", "elsewhere")
    assert [step.key for step in store.read_steps("e")] == [
        "round:2/request",
        "round:1/call:z",
        "round:10/call:a",
    ]
    assert store.read_steps("nobody") == ()


def test_racing_writers_of_one_step_all_get_the_same_result(backend: Backend) -> None:
    """Ten tasks recording one key with different results all come back with one of them."""

    async def scenario() -> list[Step]:
        async with backend.store() as store:
            return list(
                await asyncio.gather(
                    *(store.record_step("e", "round:1/call:x", n) for n in range(10))
                )
            )

    steps = asyncio.run(scenario())
    assert len({step.document for step in steps}) == 1
    assert len({step.recorded_at for step in steps}) == 1


def test_delete_evaluation_removes_checkpoint_steps_and_approvals(store: SyncStore) -> None:
    """Everything keyed by the evaluation goes; its session log and other evaluations stay."""
    store.append("s1", [NewEvent(type_name="tests:E", document=1)])
    for evaluation_id in ("gone", "kept"):
        store.save_checkpoint(evaluation_id, round=1, status="done", document={}, session_id="s1")
        store.record_step(evaluation_id, "k", 1)
        store.request_approval(evaluation_id, call_id="c", tool_name="t", arguments={})
    assert store.delete_evaluation("gone") is True
    assert store.delete_evaluation("gone") is False
    assert store.load_checkpoint("gone") is None
    assert store.read_steps("gone") == ()
    assert store.read_approvals("gone") == ()
    assert store.load_checkpoint("kept") is not None
    assert len(store.read_steps("kept")) == 1
    assert len(store.read_approvals("kept")) == 1
    assert len(store.read("s1")) == 1
