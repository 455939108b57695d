"""What an evaluation recorded stays as recorded, whatever the caller or a handler changes later.

The output handed to the caller, the params a handler received and the value it
returned are the caller's and the handler's to change; the ``PromptExecuted`` and
``ToolInvoked`` events in the session (and snapshots taken before the change) are not.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from weakincentives.adapters import OfflineAdapter, ScriptedCall, ScriptedTurn
from weakincentives.prompt import MarkdownSection, PromptTemplate, Tool, ToolContext, ToolResult
from weakincentives.runtime import InProcessEventBus, PromptExecuted, Session, ToolInvoked


@dataclass(frozen=True, slots=True, kw_only=True)
class Report:
    title: str
    steps: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class Batch:
    items: list[str]
    labels: dict[str, list[int]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Tally:
    counts: list[int]


class _Keeper:
    """A handler that keeps what it received and returned, and changes its params as it runs."""

    def __init__(self) -> None:
        self.params: list[Batch] = []
        self.values: list[Tally] = []

    def __call__(self, params: Batch, *, context: ToolContext) -> ToolResult[Tally]:
        self.params.append(params)
        params.items.append("during the call")
        value = Tally(counts=[len(params.items)])
        self.values.append(value)
        return ToolResult(message="counted", value=value)


def _template(keeper: _Keeper) -> PromptTemplate[Report]:
    tool = Tool[Batch, Tally](name="count", description="Count the items.", handler=keeper)
    return PromptTemplate[Report](
        ns="tests",
        key="records",
        sections=[MarkdownSection(title="Task", template="Count.", tools=[tool])],
    )


def _evaluate(steps: list[str]) -> tuple[Session, _Keeper, Report]:
    keeper = _Keeper()
    bus = InProcessEventBus()
    session = Session(bus=bus)
    adapter = OfflineAdapter(
        [
            ScriptedTurn(
                calls=(
                    ScriptedCall(
                        name="count", arguments={"items": ["a", "b"], "labels": {"x": [1]}}
                    ),
                )
            ),
            ScriptedTurn(output=Report(title="done", steps=list(steps))),
        ]
    )
    response = adapter.evaluate(_template(keeper), bus=bus, session=session)
    assert response.output is not None
    return session, keeper, response.output


def test_changing_the_returned_output_changes_no_record() -> None:
    session, _, output = _evaluate(["plan", "act"])
    before = session.snapshot()
    output.steps.append("rewritten")
    output.steps[0] = "changed"
    expected = Report(title="done", steps=["plan", "act"])
    (executed,) = session.select(PromptExecuted)
    assert executed.output == expected
    (earlier,) = before.select(PromptExecuted)
    assert earlier.output == expected
    assert session.snapshot() == before


def test_a_handler_changing_its_params_changes_no_record() -> None:
    """Recorded params are the params as parsed, before the handler ran and after it returned."""
    session, keeper, _ = _evaluate(["plan"])
    before = session.snapshot()
    (kept,) = keeper.params
    assert kept.items == ["a", "b", "during the call"]
    kept.items.clear()
    kept.labels["x"].append(2)
    (invoked,) = session.select(ToolInvoked)
    assert invoked.params == Batch(items=["a", "b"], labels={"x": [1]})
    assert invoked.arguments == {"items": ["a", "b"], "labels": {"x": [1]}}
    assert session.snapshot() == before


def test_a_handler_changing_its_returned_value_changes_no_record() -> None:
    session, keeper, _ = _evaluate(["plan"])
    before = session.snapshot()
    (value,) = keeper.values
    value.counts.append(99)
    (invoked,) = session.select(ToolInvoked)
    assert invoked.result.value == Tally(counts=[3])
    assert invoked.rendered_output == '{"counts":[3]}'
    assert session.snapshot() == before


@given(st.lists(st.text(max_size=5), max_size=5), st.lists(st.text(max_size=5), max_size=3))
def test_no_change_to_the_output_reaches_the_record(steps: list[str], added: list[str]) -> None:
    session, _, output = _evaluate(steps)
    output.steps.extend(added)
    output.steps.reverse()
    assert session.select(PromptExecuted)[0].output == Report(title="done", steps=steps)
