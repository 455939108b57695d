"""Human approval: a tool that needs a person's decision pauses a durable evaluation.

The evaluation returns a pending response (``pending_approvals``), someone decides with
``store.decide_approval`` (in any process, any time later), and ``adapter.resume``
carries it on: approved calls run, denied ones reach the model as failed results.
Offline, and on every SDK adapter (sync and async clients) over a loopback server.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.conftest import OpenAILoopback
from tests.adapters.wires import WIRES, Call, ClientKind, Turn, Wire, WireName, wire
from weakincentives.adapters import (
    Adapter,
    OfflineAdapter,
    OfflineModel,
    PromptResponse,
    ScriptedCall,
    ScriptedTurn,
    ToolOutputMessage,
    TurnRequest,
)
from weakincentives.errors import ConfigValidationError, PromptValidationError, ResumeError
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult, tool
from weakincentives.runtime import InProcessEventBus, Session, ToolCall, ToolInvoked
from weakincentives.store import SQLiteStore, SyncStore

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """Params of the file tools."""

    path: str


def file_tools(ran: list[str]) -> tuple[Tool[Target, str], Tool[Target, str]]:
    """``delete`` (always needs approval) and ``look`` (never)."""

    def delete(params: Target, *, context: ToolContext) -> ToolResult[str]:
        ran.append(f"delete {params.path}")
        return ToolResult(message=f"deleted {params.path}", value=params.path)

    def look(params: Target, *, context: ToolContext) -> ToolResult[str]:
        ran.append(f"look {params.path}")
        return ToolResult(message=f"saw {params.path}", value=params.path)

    return (
        Tool[Target, str](
            name="delete", description="Delete a file.", handler=delete, requires_approval=True
        ),
        Tool[Target, str](name="look", description="Look at a file.", handler=look),
    )


def files_prompt(*tools: Tool[Any, Any]) -> Prompt[Any]:
    section = MarkdownSection(title="Task", key="task", template="Tidy up.", tools=tools)
    return Prompt(ns="tests/approvals", key="files", sections=[section])


def answer_with_outputs(request: TurnRequest) -> ScriptedTurn:
    """Round 1 asks to delete /a, look at /b and delete /c; then it reads the outputs back."""
    if request.round == 1:
        return ScriptedTurn(
            calls=(
                ScriptedCall(name="delete", arguments={"path": "/a"}, call_id="d1"),
                ScriptedCall(name="look", arguments={"path": "/b"}, call_id="l1"),
                ScriptedCall(name="delete", arguments={"path": "/c"}, call_id="d2"),
            )
        )
    outputs = [item for item in request.history if isinstance(item, ToolOutputMessage)]
    return ScriptedTurn(text=" | ".join(f"{o.call_id}:{o.success}" for o in outputs))


_OPEN: list[Adapter[Any]] = []


@pytest.fixture(autouse=True)
def _close_adapters() -> Iterator[None]:
    """Every adapter a test made is closed after it, so no worker thread outlives it."""
    yield
    while _OPEN:
        _OPEN.pop().close()


def offline(responder: Any) -> Adapter[OfflineModel]:
    made = OfflineAdapter(responder=responder)
    _OPEN.append(made)
    return made


@pytest.fixture
def store(tmp_path: Path) -> SyncStore:
    return SyncStore(SQLiteStore(tmp_path / "approvals.db"))


class TestTheFlag:
    def test_requires_approval_takes_a_bool_or_a_policy(self) -> None:
        """Anything else is refused when the tool is built, naming the tool."""
        with pytest.raises(PromptValidationError, match="requires_approval must be True") as caught:
            Tool[Target, str](
                name="odd",
                description="Odd.",
                handler=lambda params, *, context: ToolResult(message="x"),
                requires_approval="yes",  # type: ignore[arg-type]
            )
        assert caught.value.tool_name == "odd"

    def test_a_policy_decides_per_call_and_a_failing_one_asks(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """The policy sees the params; one that raises counts as needing approval (logged)."""

        def under_etc(params: Target) -> bool:
            if params.path == "boom":
                raise RuntimeError("cannot tell")
            return params.path.startswith("/etc/")

        @tool(name="edit", description="Edit a file.", requires_approval=under_etc)
        def edit(params: Target, *, context: ToolContext) -> ToolResult[str]:
            return ToolResult(message="edited")

        always = Tool[Target, str](
            name="always",
            description="Always asks.",
            handler=lambda params, *, context: ToolResult(message="x"),
            requires_approval=True,
        )
        assert always.approval_needed(Target(path="notes/x.txt")) is True
        assert edit.approval_needed(Target(path="/etc/hosts")) is True
        assert edit.approval_needed(Target(path="notes/x.txt")) is False
        with caplog.at_level(logging.WARNING, logger="weakincentives.prompt"):
            assert edit.approval_needed(Target(path="boom")) is True
        assert "approval policy of tool 'edit' raised" in caplog.text
        plain = Tool.wrap(edit.handler, name="plain", description="Plain.")  # type: ignore[arg-type]
        assert plain.requires_approval is False

    def test_without_a_store_it_is_refused_before_any_request(self) -> None:
        """Nowhere to wait for the decision: a ConfigValidationError, and nothing is sent."""
        ran: list[str] = []
        model = OfflineModel(responder=answer_with_outputs)
        with (
            Adapter(model) as refusing,
            pytest.raises(ConfigValidationError, match="pass store=") as caught,
        ):
            refusing.evaluate(files_prompt(*file_tools(ran)))
        assert caught.value.field_name == "store"
        assert "'delete'" in str(caught.value)
        assert model.requests == ()


class TestOffline:
    def test_the_evaluation_pauses_with_the_pending_calls(self, store: SyncStore) -> None:
        """The other calls run; the response lists the waiting ones and the store keeps them."""
        ran: list[str] = []
        adapter = offline(answer_with_outputs)
        with store:
            response = adapter.evaluate(
                files_prompt(*file_tools(ran)), store=store, evaluation_id="e1"
            )
            assert response.pending_approvals == (
                ToolCall(
                    call_id="d1",
                    name="delete",
                    arguments='{"path": "/a"}',
                    parent_message_id="offline_1",
                ),
                ToolCall(
                    call_id="d2",
                    name="delete",
                    arguments='{"path": "/c"}',
                    parent_message_id="offline_1",
                ),
            )
            assert response.output is None
            assert response.text == ""
            assert [e.call.call_id for e in response.tool_executions] == ["l1"]
            assert ran == ["look /b"]
            checkpoint = store.load_checkpoint("e1")
            assert checkpoint is not None
            assert (checkpoint.status, checkpoint.round) == ("paused", 1)
            waiting = store.pending_approvals("e1")
            assert [(a.call_id, a.tool_name, a.arguments) for a in waiting] == [
                ("d1", "delete", {"path": "/a"}),
                ("d2", "delete", {"path": "/c"}),
            ]

    def test_resuming_before_a_decision_stays_paused_and_runs_nothing_again(
        self, store: SyncStore
    ) -> None:
        """A resume with calls still undecided returns the same pending calls."""
        ran: list[str] = []
        adapter = offline(answer_with_outputs)
        prompt = files_prompt(*file_tools(ran))
        with store:
            adapter.evaluate(prompt, store=store, evaluation_id="e1")
            store.decide_approval("e1", "d1", decision="approved")
            again = adapter.resume("e1", prompt, store=store)
            assert [call.call_id for call in again.pending_approvals] == ["d2"]
            assert ran == ["look /b", "delete /a"]
            assert adapter.provider.requests[-1].round == 1  # only the first request was sent
            assert len(adapter.provider.requests) == 1

    def test_approved_calls_run_and_denied_ones_fail_with_the_persons_message(
        self, store: SyncStore
    ) -> None:
        """After the decisions the round completes and the model reads both outcomes."""
        ran: list[str] = []
        bus = InProcessEventBus()
        invoked: list[ToolInvoked] = []
        bus.subscribe(ToolInvoked, invoked.append)
        adapter = offline(answer_with_outputs)
        prompt = files_prompt(*file_tools(ran))
        with store:
            adapter.evaluate(prompt, store=store, evaluation_id="e1")
            store.decide_approval("e1", "d1", decision="approved")
            store.decide_approval("e1", "d2", decision="denied", message="keep /c")
            response = adapter.resume("e1", prompt, store=store, bus=bus)
            assert response.pending_approvals == ()
            assert response.text == "d1:True | l1:True | d2:False"
            assert ran == ["look /b", "delete /a"]
            denied = response.tool_executions[2]
            assert denied.result.message == (
                "Not run: a person denied this call of tool 'delete'. They said: keep /c"
            )
            assert denied.result.success is False
            assert [event.call_id for event in invoked] == ["d1", "d2"]  # l1 was published before
            checkpoint = store.load_checkpoint("e1")
            assert checkpoint is not None
            assert checkpoint.status == "done"

    def test_a_policy_pauses_only_the_calls_it_picks(self, store: SyncStore) -> None:
        """A call the policy lets through runs at once; the one it picks waits."""
        ran: list[str] = []

        def edit(params: Target, *, context: ToolContext) -> ToolResult[str]:
            ran.append(params.path)
            return ToolResult(message=f"edited {params.path}")

        guarded = Tool[Target, str](
            name="edit",
            description="Edit.",
            handler=edit,
            requires_approval=lambda params: params.path.startswith("/etc/"),
        )

        def respond(request: TurnRequest) -> ScriptedTurn:
            if request.round == 1:
                return ScriptedTurn(
                    calls=(
                        ScriptedCall(name="edit", arguments={"path": "/etc/hosts"}, call_id="x"),
                        ScriptedCall(name="edit", arguments={"path": "notes/t.txt"}, call_id="y"),
                        ScriptedCall(name="edit", arguments='{"path": 3}', call_id="z"),
                    )
                )
            return ScriptedTurn(text="ok")

        with store:
            response = offline(respond).evaluate(files_prompt(guarded), store=store)
        assert [call.call_id for call in response.pending_approvals] == ["x"]
        assert ran == ["notes/t.txt"]  # the call with bad arguments needed no approval: it failed
        assert response.tool_executions[1].result.success is False


def _recorded_outputs(wired: Wire, loopback: OpenAILoopback) -> list[tuple[str, bool | None]]:
    return [(o.call_id, o.is_error) for o in wired.outputs(loopback.bodies[-1])]


@pytest.fixture(params=WIRES)
def wired(request: pytest.FixtureRequest) -> Wire:
    name: WireName = request.param
    return wire(name)


@pytest.mark.parametrize("entry", ["sync", "async"])
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_every_sdk_adapter_pauses_and_resumes_without_resending(
    openai_loopback: OpenAILoopback, wired: Wire, kind: ClientKind, entry: str, tmp_path: Path
) -> None:
    """Over each wire, client and entry point: pause, decide, resume; no request twice."""
    pytest.importorskip("openai")
    pytest.importorskip("anthropic")
    ran: list[str] = []
    prompt = files_prompt(*file_tools(ran))
    openai_loopback.reply(
        wired.reply(
            Turn(
                calls=(
                    Call("d1", "delete", {"path": "/a"}),
                    Call("l1", "look", {"path": "/b"}),
                    Call("d2", "delete", {"path": "/c"}),
                )
            )
        ),
        wired.reply(Turn(text="Tidied.")),
    )
    adapter = wired.adapter(openai_loopback, kind)
    _OPEN.append(adapter)

    async def scenario() -> tuple[PromptResponse[Any], PromptResponse[Any]]:
        async with SQLiteStore(tmp_path / "wire.db") as store:
            paused = await adapter.evaluate_async(prompt, store=store, evaluation_id="w1")
            await store.decide_approval("w1", "d1", decision="approved")
            await store.decide_approval("w1", "d2", decision="denied", message="no")
            done = await adapter.resume_async("w1", prompt, store=store)
        return paused, done

    if entry == "async":
        paused, done = asyncio.run(scenario())
    else:
        with SyncStore(SQLiteStore(tmp_path / "wire.db")) as store:
            paused = adapter.evaluate(prompt, store=store, evaluation_id="w1")
            store.decide_approval("w1", "d1", decision="approved")
            store.decide_approval("w1", "d2", decision="denied", message="no")
            done = adapter.resume("w1", prompt, store=store)
    assert [call.call_id for call in paused.pending_approvals] == ["d1", "d2"]
    assert done.text == "Tidied."
    assert ran == ["look /b", "delete /a"]
    assert len(openai_loopback.requests) == 2
    outputs = wired.outputs(openai_loopback.bodies[1])
    assert [o.call_id for o in outputs] == ["d1", "l1", "d2"]
    assert (
        outputs[2].content == "Not run: a person denied this call of tool 'delete'. They said: no"
    )
    flags = [None, None, None] if wired.name != "anthropic" else [False, False, True]
    assert [o.is_error for o in outputs] == flags


_DECIDER = """
import sys
from datetime import UTC, datetime, timedelta
from weakincentives.store import SQLiteStore, SyncStore

later = datetime(2026, 5, 1, 9, 0, tzinfo=UTC) + timedelta(hours=6)
with SyncStore(SQLiteStore(sys.argv[1], clock=lambda: later)) as store:
    for approval in store.pending_approvals():
        decision = "approved" if approval.arguments["path"] == "/a" else "denied"
        store.decide_approval(approval.evaluation_id, approval.call_id, decision=decision,
                              message=None if decision == "approved" else "not that one")
        print(approval.call_id, decision)
"""

_STARTER = """
import sys
from datetime import UTC, datetime
from tests.adapters.test_approvals import answer_with_outputs, file_tools, files_prompt
from weakincentives.adapters import OfflineAdapter
from weakincentives.store import SQLiteStore, SyncStore

ran = []
start = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
with SyncStore(SQLiteStore(sys.argv[1], clock=lambda: start)) as store:
    response = OfflineAdapter(responder=answer_with_outputs).evaluate(
        files_prompt(*file_tools(ran)), store=store, evaluation_id="later")
print(",".join(call.call_id for call in response.pending_approvals), ",".join(ran))
"""


def _python(source: str, *arguments: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", source, *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_person_decides_in_another_process_hours_later(tmp_path: Path) -> None:
    """Start (process 1, then gone), decide (process 2, six hours on), resume (this one)."""
    location = str(tmp_path / "later.db")
    assert _python(_STARTER, location) == "d1,d2 look /b\n"
    assert _python(_DECIDER, location) == "d1 approved\nd2 denied\n"
    ran: list[str] = []
    with SyncStore(SQLiteStore(location)) as store:
        decided = store.read_approvals("later")
        waited = [
            (a.decided_at - a.requested_at).total_seconds() if a.decided_at else None
            for a in decided
        ]
        assert waited == [21600.0, 21600.0]
        session = Session()
        with pytest.raises(ResumeError, match="records into session") as caught:
            offline(answer_with_outputs).resume(
                "later", files_prompt(*file_tools(ran)), store=store, session=session
            )
        assert caught.value.evaluation_id == "later"
        response = offline(answer_with_outputs).resume(
            "later", files_prompt(*file_tools(ran)), store=store
        )
    assert ran == ["delete /a"]  # look ran in process 1, and never again
    assert response.text == "d1:True | l1:True | d2:False"
