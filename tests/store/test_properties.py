"""Property: any JSON document comes back from every backend exactly as it went in."""

from __future__ import annotations

import itertools
import json

from hypothesis import given, settings

from tests.store.conftest import Backend
from tests.strategies import stored_documents
from weakincentives.serde import JSONValue
from weakincentives.store import NewEvent, SyncStore


def same(stored: JSONValue, original: JSONValue) -> bool:
    """Equal, and written the same way: -0.0 keeps its sign, 1 stays an int, keys their order."""
    return stored == original and json.dumps(stored) == json.dumps(original)


def test_documents_round_trip_through_every_kind_of_row(backend: Backend) -> None:
    """Events, checkpoints, steps and approval arguments all return documents unchanged."""
    keys = itertools.count()
    with backend.sync() as store:

        @settings(max_examples=60)
        @given(document=stored_documents())
        def round_trip(document: JSONValue) -> None:
            key = f"k{next(keys)}"
            store.append(key, [NewEvent(type_name="tests:Doc", document=document)])
            assert same(store.read(key)[0].document, document)
            store.save_checkpoint(key, round=1, status="running", document=document)
            loaded = store.load_checkpoint(key)
            assert loaded is not None
            assert same(loaded.document, document)
            store.record_step(key, "step", document)
            assert same(store.read_steps(key)[0].document, document)
            store.request_approval(key, call_id="c", tool_name="t", arguments=document)
            assert same(store.read_approvals(key)[0].arguments, document)

        round_trip()


AWKWARD: JSONValue = {
    "a\x00b": "\x00\x1f\u2028\U0001f600 é",
    "numbers": [-0.0, 1e300, 5e-324, 2**64, -(10**40), 0.1],
    "nested": [[[{"": None}]], True, False],
}


def test_awkward_json_comes_back_exactly(store: SyncStore) -> None:
    """NUL and control characters, emoji, -0.0, 1e300, subnormals and wide ints survive."""
    store.append("s", [NewEvent(type_name="tests:Doc", document=AWKWARD)])
    assert same(store.read("s")[0].document, AWKWARD)
