"""Session snapshots stored as documents: saved in one process, restored equal in another."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.serde.typed_models import assert_identical
from tests.strategies import recorded_events
from weakincentives.adapters import OfflineAdapter, ScriptedCall, ScriptedTurn
from weakincentives.errors import ParseError, SchemaError, UnknownTypeError
from weakincentives.prompt import MarkdownSection, Prompt, ToolContext, ToolResult, tool
from weakincentives.runtime import (
    InProcessEventBus,
    PromptExecuted,
    PromptRendered,
    Retention,
    Session,
    SessionSnapshot,
    ToolInvoked,
)

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True, kw_only=True)
class LookupParams:
    """What the model asks the lookup tool for."""

    sku: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Stock:
    """What the lookup tool answers."""

    sku: str
    on_hand: int
    bins: tuple[str, ...]


@tool(name="lookup", description="Look up stock for a SKU.")
def lookup(params: LookupParams, *, context: ToolContext) -> ToolResult[Stock]:
    """Answer from a fixed table and remember the last SKU in the session."""
    context.session.storage.set("last_sku", params.sku)
    return ToolResult(message="in stock", value=Stock(sku=params.sku, on_hand=3, bins=("A1",)))


def _evaluated_session() -> Session:
    """A session that recorded one real evaluation with a tool call."""
    prompt = Prompt(
        ns="tests/snapshots",
        key="stock",
        sections=[
            MarkdownSection(title="Task", key="task", template="Check stock.", tools=[lookup])
        ],
    )
    model = OfflineAdapter(
        [
            ScriptedTurn(calls=(ScriptedCall(name="lookup", arguments={"sku": "T-1"}),)),
            ScriptedTurn(text="3 in stock"),
        ]
    )
    bus = InProcessEventBus()
    session = Session(bus=bus, retention=Retention.unbounded())
    model.evaluate(prompt, bus=bus, session=session)
    session.storage.set("visited", frozenset({"T-1", "T-2"}))
    return session


class TestSnapshotDocuments:
    """to_json and from_json."""

    def test_an_evaluated_session_round_trips(self) -> None:
        """Every slice, every storage entry and the session id come back equal."""
        snapshot = _evaluated_session().snapshot()
        loaded = SessionSnapshot.from_json(snapshot.to_json())
        assert loaded == snapshot
        assert_identical(loaded.storage, snapshot.storage)
        invoked = loaded.select(ToolInvoked)
        assert len(invoked) == 1
        assert invoked[0].params == LookupParams(sku="T-1")
        assert invoked[0].result.value == Stock(sku="T-1", on_hand=3, bins=("A1",))
        assert [type(event) for event in loaded.slices] == [
            type(event) for event in snapshot.slices
        ]

    def test_the_document_names_its_kind_and_version(self) -> None:
        """The envelope, and slices written as [type name, values] pairs."""
        document = json.loads(_evaluated_session().snapshot().to_json())
        assert (document["kind"], document["version"]) == ("weakincentives.session_snapshot", 1)
        slice_types = [name for name, _ in document["body"]["slices"]]
        assert "weakincentives.runtime:ToolInvoked" in slice_types
        assert document["body"]["storage"] == {
            "last_sku": "T-1",
            "visited": {"$type": "frozenset", "value": ["T-1", "T-2"]},
        }

    def test_a_new_session_restores_a_loaded_snapshot(self) -> None:
        """A session created with the snapshot's id takes the state back with rollback."""
        snapshot = _evaluated_session().snapshot()
        loaded = SessionSnapshot.from_json(snapshot.to_json().encode())
        restored = Session(session_id=loaded.session_id, retention=Retention.unbounded())
        restored.rollback(loaded)
        assert restored.snapshot() == snapshot
        assert restored.storage.get("visited", frozenset) == frozenset({"T-1", "T-2"})
        executed = restored.latest(PromptExecuted)
        assert executed is not None
        assert executed.text == "3 in stock"

    def test_another_process_loads_it(self, tmp_path: Path) -> None:
        """A separate Python process reads the snapshot and writes the same document."""
        snapshot = _evaluated_session().snapshot()
        saved = tmp_path / "snapshot.json"
        saved.write_text(snapshot.to_json(), encoding="utf-8")
        script = (
            "import sys\n"
            "from weakincentives.runtime import SessionSnapshot, ToolInvoked\n"
            "snapshot = SessionSnapshot.from_json(open(sys.argv[1], 'rb').read())\n"
            "call = snapshot.select(ToolInvoked)[0]\n"
            "print(type(call.params).__qualname__, call.result.value.on_hand)\n"
            "sys.stdout.write(snapshot.to_json())\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script, str(saved)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
            timeout=60,
        )
        summary, _, text = done.stdout.partition("\n")
        assert summary == "LookupParams 3"
        assert SessionSnapshot.from_json(text) == snapshot
        assert text == snapshot.to_json()

    def test_a_value_that_cannot_be_stored_names_its_slice(self) -> None:
        """A recorded event of a class defined in a function is refused with its path."""

        @dataclass(frozen=True)
        class Local:
            n: int

        session = Session()
        session.apply(Local(n=1))
        with pytest.raises(
            SchemaError,
            match=r"cannot dump the class .*Local at \$\.body\.slices\[0\]\[0\]: Local is defined",
        ):
            session.snapshot().to_json()

    def test_a_function_in_storage_is_refused(self) -> None:
        """Storage entries are values: a function there is named by its key."""
        session = Session()
        session.storage.set("callback", print)
        with pytest.raises(
            SchemaError,
            match=r"of type builtin_function_or_method at \$\.body\.storage\.callback$",
        ):
            session.snapshot().to_json()

    def test_an_event_class_that_is_gone(self) -> None:
        """Loading a slice of a class that no longer exists names it and where it was."""
        text = _evaluated_session().snapshot().to_json()
        renamed = text.replace(
            "tests.runtime.test_snapshot_documents:Stock",
            "tests.runtime.test_snapshot_documents:Gone",
        )
        with pytest.raises(UnknownTypeError) as caught:
            SessionSnapshot.from_json(renamed)
        assert caught.value.type_name == "tests.runtime.test_snapshot_documents:Gone"
        assert caught.value.path.startswith("$.body.slices[")
        assert caught.value.path.endswith(".result.value")

    def test_not_a_snapshot(self) -> None:
        """Text that is not a document at all."""
        with pytest.raises(ParseError, match=r"expected a JSON document, got invalid JSON"):
            SessionSnapshot.from_json("{")


@given(
    st.lists(recorded_events(), max_size=6),
    st.dictionaries(
        st.from_regex(r"[a-z][a-z0-9_]{0,5}", fullmatch=True), recorded_events(), max_size=2
    ),
)
def test_any_recorded_state_round_trips(events: list[object], stored: dict[str, object]) -> None:
    """Whatever a session recorded (any events, any storage) loads back equal."""
    session = Session(retention=Retention.unbounded())
    for event in events:
        session.apply(event)
    for key, value in stored.items():
        session.storage.set(key, value)
    snapshot = session.snapshot()
    loaded = SessionSnapshot.from_json(snapshot.to_json())
    assert_identical(loaded, snapshot)


def test_rendered_events_keep_their_section_paths() -> None:
    """PromptRendered's visibility comes back keyed by tuples (what rollback and readers use)."""
    snapshot = _evaluated_session().snapshot()
    rendered = SessionSnapshot.from_json(snapshot.to_json()).select(PromptRendered)[0]
    assert list(rendered.visibility) == [("task",)]
