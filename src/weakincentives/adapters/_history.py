"""Carrying a conversation from one provider to another.

Every provider builds its request from the same neutral history (``_turns``). For each
model turn it either replays the turn's raw items, when they are in its own wire
format, or rebuilds the turn from the neutral fields. :func:`replays_raw_items` makes
that choice in one place, refusing turns whose raw items would be lost in translation;
:func:`check_conversation` refuses a continued conversation whose tool outputs answer
no call, before anything is sent. :func:`native_calls` carries a rebuilt turn to a
provider that loads a catalogue natively (see ``_native_search``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from weakincentives.adapters import _turns
from weakincentives.adapters._native_search import search_arguments
from weakincentives.errors import ConfigValidationError, HistoryTranslationError
from weakincentives.prompt import DeferredTools
from weakincentives.runtime import ToolCall
from weakincentives.serde import JSONValue

__all__ = [
    "NativeCall",
    "NativeTurns",
    "call_arguments",
    "call_input",
    "check_conversation",
    "loaded_before",
    "native_calls",
    "replays_raw_items",
    "spoken_text",
]

_ITEM_TYPES = (
    _turns.PromptMessage,
    _turns.AssistantMessage,
    _turns.ToolOutputMessage,
    _turns.FeedbackMessage,
)


def replays_raw_items(turn: _turns.ModelTurn, wire_format: str, *, prompt_name: str) -> bool:
    """True when ``turn``'s raw items are in ``wire_format`` and are replayed as they are.

    False means the provider rebuilds the turn from its text, tool calls and refusal.
    Raises ``HistoryTranslationError`` when the turn holds items of another format that
    have no neutral form, so that they would silently disappear from the conversation.
    """
    if turn.raw_format == wire_format:
        return True
    if turn.untranslatable:
        raise HistoryTranslationError(
            prompt_name=prompt_name,
            source_format=turn.raw_format or "unknown",
            target_format=wire_format,
            kinds=tuple(dict.fromkeys(turn.untranslatable)),
        )
    return False


def spoken_text(turn: _turns.ModelTurn) -> str:
    """What the model said in ``turn``, for rebuilding it: its text, else its refusal."""
    return turn.text or turn.refusal or ""


def call_arguments(arguments: str | Mapping[str, JSONValue]) -> str:
    """A call's arguments as JSON text, for wires that carry them encoded."""
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def call_input(arguments: str | Mapping[str, JSONValue]) -> dict[str, JSONValue]:
    """A call's arguments as a JSON object, for wires that carry them decoded.

    Arguments the model wrote that are not a JSON object (the loop answered them with a
    failed tool result) become ``{}``: the wire needs an object, and the tool result
    already tells the model what was wrong.
    """
    if not isinstance(arguments, str):
        return dict(arguments)
    try:
        value = json.loads(arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def check_conversation(items: Sequence[_turns.ConversationItem], *, prompt_name: str) -> None:
    """Refuse a conversation to continue that no provider could send as it is.

    Each item must be a conversation item, and each tool output must answer a call of
    the nearest model turn before it (providers reject a result for an unknown call).
    """
    calls: set[str] = set()
    for index, item in enumerate(items):
        if not isinstance(item, _ITEM_TYPES):
            raise ConfigValidationError(
                f"continue_from conversation[{index}] is a {type(item).__name__}, not a "
                f"conversation item (prompt {prompt_name!r})",
                field_name="continue_from",
                value=item,
            )
        if isinstance(item, _turns.AssistantMessage):
            calls = {call.call_id for call in item.turn.tool_calls}
        elif isinstance(item, _turns.ToolOutputMessage) and item.call_id not in calls:
            raise ConfigValidationError(
                f"continue_from conversation[{index}] is the output of call "
                f"{item.call_id!r}, which the model turn before it did not make "
                f"(prompt {prompt_name!r})",
                field_name="continue_from",
                value=item.call_id,
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class NativeCall:
    """One call of a rebuilt turn as a native provider sends it."""

    kind: Literal["search", "loaded", "function"]
    """A search, a call of a loaded catalogue tool, or an ordinary function call."""
    call_id: str
    name: str
    """The name called on the wire (a loaded tool's own name)."""
    arguments: str | Mapping[str, JSONValue]
    """An object for a search or a loaded tool; the call's own arguments otherwise."""
    group: str | None = None
    """The group (namespace) of a loaded tool."""


def loaded_before(history: Sequence[_turns.ConversationItem]) -> set[str]:
    """Catalogue ids some search output in ``history`` found."""
    return {
        tool_id
        for item in history
        if isinstance(item, _turns.ToolOutputMessage)
        for tool_id in item.loaded
    }


def native_calls(
    turn: _turns.ModelTurn,
    offer: DeferredTools,
    *,
    loaded: set[str],
    prompt_name: str,
    target_format: str,
) -> tuple[NativeCall, ...]:
    """The calls of a turn rebuilt from its neutral fields, for a provider loading natively.

    A search stays a search and a call of a catalogue tool loaded earlier becomes a
    direct call of it. The other discovery tools (list, category search, expansion)
    have no native form, and a catalogue tool never loaded cannot be called directly:
    both raise ``HistoryTranslationError`` naming them.
    """
    result: list[NativeCall] = []
    refused: list[str] = []
    for call in turn.tool_calls:
        if call.name == offer.search_tool:
            result.append(
                NativeCall(
                    kind="search",
                    call_id=call.call_id,
                    name=call.name,
                    arguments=search_arguments(call),
                )
            )
        elif call.name == offer.call_tool:
            native = _loaded_call(call, offer, loaded)
            if native is None:
                refused.append(f"{call.name} of a tool no search loaded")
            else:
                result.append(native)
        elif call.name in offer.replaces:
            refused.append(f"{call.name} call")
        else:
            result.append(
                NativeCall(
                    kind="function", call_id=call.call_id, name=call.name, arguments=call.arguments
                )
            )
    if refused:
        raise HistoryTranslationError(
            prompt_name=prompt_name,
            source_format=turn.raw_format or "unknown",
            target_format=f"{target_format} with native tool search",
            kinds=tuple(dict.fromkeys(refused)),
        )
    return tuple(result)


@dataclass(frozen=True, slots=True, kw_only=True)
class NativeTurns:
    """Earlier turns' calls, rebuilt for one request that loads ``offer`` natively.

    Built once per request (:meth:`of`), so the catalogue ids loaded so far are
    gathered once, not for every turn rebuilt.
    """

    offer: DeferredTools
    loaded: set[str]
    prompt_name: str
    target_format: str

    @classmethod
    def of(
        cls, request: _turns.TurnRequest, offer: DeferredTools | None, target_format: str
    ) -> NativeTurns | None:
        """The rebuilder for ``request``, or None when it offers no catalogue natively."""
        if offer is None:
            return None
        return cls(
            offer=offer,
            loaded=loaded_before(request.history),
            prompt_name=request.prompt_name,
            target_format=target_format,
        )

    def calls(self, turn: _turns.ModelTurn) -> tuple[NativeCall, ...]:
        """The calls of ``turn`` in native form (see :func:`native_calls`)."""
        return native_calls(
            turn,
            self.offer,
            loaded=self.loaded,
            prompt_name=self.prompt_name,
            target_format=self.target_format,
        )


def _loaded_call(call: ToolCall, offer: DeferredTools, loaded: set[str]) -> NativeCall | None:
    arguments = search_arguments(call)
    tool_id, inner = arguments.get("tool_id"), arguments.get("arguments", {})
    if not isinstance(tool_id, str) or tool_id not in loaded or not isinstance(inner, dict):
        return None
    tool = offer.by_id(tool_id)
    if tool is None:
        return None
    return NativeCall(
        kind="loaded", call_id=call.call_id, name=tool.name, arguments=inner, group=tool.group
    )
