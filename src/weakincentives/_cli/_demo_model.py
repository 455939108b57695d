"""The offline stand-in for a model in the demo: a responder that reads the request.

It behaves like a careful model would: it makes one mistake (a metrics window of 0)
and recovers from the tool's error, opens the summarized runbook, searches the web
and answers with a structured report. Decisions depend only on what the request
shows, so the run is deterministic.
"""

from __future__ import annotations

from weakincentives.adapters import (
    AssistantMessage,
    ScriptedCall,
    ScriptedTurn,
    ToolOutputMessage,
    TurnRequest,
)
from weakincentives.prompt import SectionVisibility
from weakincentives.serde import JSONValue

__all__ = ["demo_responder", "native_demo_responder"]

_STATUS_URL = "https://status.payments.example.com/incidents/2026-11-22-latency"
_STATUS_TEXT = "The payments provider reports no ongoing incident; its API latency is normal."


def demo_responder(request: TurnRequest) -> ScriptedTurn:
    """Play the model for one turn of the demo."""
    runbook_open = request.rendered.visibility.get(("runbook",)) is SectionVisibility.FULL
    if not runbook_open:
        return _investigate(_turns_since(request, opened=False))
    return _conclude(_turns_since(request, opened=True))


def native_demo_responder(request: TurnRequest) -> ScriptedTurn:
    """Play a model whose provider loads the catalogue natively: no expansion step.

    The search loads the rollback tool's definition, so the next turn calls it by name.
    """
    runbook_open = request.rendered.visibility.get(("runbook",)) is SectionVisibility.FULL
    if not runbook_open:
        return _investigate(_turns_since(request, opened=False))
    turns = _turns_since(request, opened=True)
    if turns == 1:
        return ScriptedTurn(
            text="The search loaded rollback_release; calling it.",
            calls=(_call("rollback_release", service="checkout-api", to_version="v411"),),
        )
    return _conclude(0 if turns == 0 else 3)


def _turns_since(request: TurnRequest, *, opened: bool) -> int:
    """Model turns so far, counted from the runbook's opening once it is open.

    A retry after ``open_sections`` continues the conversation, so the history also
    holds the turns that led to opening the runbook.
    """
    history = request.history
    start = 0
    if opened:
        start = max(
            (
                index + 1
                for index, item in enumerate(history)
                if isinstance(item, ToolOutputMessage) and item.name == "open_sections"
            ),
            default=0,
        )
    return sum(isinstance(item, AssistantMessage) for item in history[start:])


def _investigate(turns: int) -> ScriptedTurn:
    if turns == 0:
        return ScriptedTurn(
            text="Checking latency and recent deploys.",
            calls=(
                _metrics("latency_p99_ms", window_minutes=0),
                _call("recent_deploys", service="checkout-api"),
            ),
        )
    if turns == 1:
        return ScriptedTurn(
            text="The window must be at least one minute; retrying with 60.",
            calls=(
                _metrics("latency_p99_ms", window_minutes=60),
                _metrics("cpu_percent", window_minutes=60),
            ),
        )
    return ScriptedTurn(
        text="Latency jumped right after v412 with flat CPU; the runbook should say what to do.",
        calls=(
            _call(
                "open_sections",
                section_keys=["runbook"],
                reason="Need the latency procedure and severity levels",
            ),
        ),
    )


def _conclude(turns: int) -> ScriptedTurn:
    if turns == 0:
        return ScriptedTurn(
            raw_items=_web_search_items(),
            calls=(
                _metrics("error_rate", window_minutes=60),
                _call("search_tool_by_category", query="roll back a release to an earlier version"),
            ),
        )
    if turns == 1:
        return ScriptedTurn(
            text="The runbook says roll back; rollback_release looks right.",
            calls=(_call("expand_tool", tool_id="rollback_release"),),
        )
    if turns == 2:
        return ScriptedTurn(
            calls=(
                _call(
                    "call_tool",
                    tool_id="rollback_release",
                    arguments={"service": "checkout-api", "to_version": "v411"},
                ),
            ),
        )
    return ScriptedTurn(
        output={
            "severity": "sev2",
            "suspected_cause": (
                "Deploy v412 at 14:00 UTC: p99 latency rose from 180 ms to 2350 ms at "
                "14:02 with flat CPU, and the payments provider reports no incident."
            ),
            "actions": [
                "Rollback of checkout-api to v411 is in progress",
                "Watch p99 until it stays under 300 ms for 15 minutes",
                "Open a ticket for the v412 owners with the latency graph",
            ],
            "sources": [_STATUS_URL],
        }
    )


def _call(name: str, **arguments: JSONValue) -> ScriptedCall:
    return ScriptedCall(name=name, arguments=arguments)


def _metrics(metric: str, *, window_minutes: int) -> ScriptedCall:
    """A ``query_metrics`` call for the demo's service."""
    return _call(
        "query_metrics", service="checkout-api", metric=metric, window_minutes=window_minutes
    )


def _web_search_items() -> tuple[dict[str, JSONValue], ...]:
    """A web search and its cited message, in the Responses API's item shapes."""
    return (
        {
            "id": "ws_demo_1",
            "type": "web_search_call",
            "status": "completed",
            "action": {
                "type": "search",
                "query": "payments provider status checkout latency",
                "sources": [{"type": "url", "url": _STATUS_URL}],
            },
        },
        {
            "id": "msg_demo_1",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [
                {
                    "type": "output_text",
                    "text": _STATUS_TEXT,
                    "annotations": [
                        {
                            "type": "url_citation",
                            "url": _STATUS_URL,
                            "title": "Payments status: all systems operational",
                            "start_index": 0,
                            "end_index": len(_STATUS_TEXT),
                        }
                    ],
                }
            ],
        },
    )
