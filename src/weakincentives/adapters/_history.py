"""Carrying a conversation from one provider to another.

Every provider builds its request from the same neutral history (``_turns``). For each
model turn it either replays the turn's raw items, when they are in its own wire
format, or rebuilds the turn from the neutral fields. :func:`replays_raw_items` makes
that choice in one place, refusing turns whose raw items would be lost in translation;
:func:`check_conversation` refuses a continued conversation whose tool outputs answer
no call, before anything is sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from weakincentives.adapters._turns import (
    AssistantMessage,
    ConversationItem,
    FeedbackMessage,
    ModelTurn,
    PromptMessage,
    ToolOutputMessage,
)
from weakincentives.errors import ConfigValidationError, HistoryTranslationError
from weakincentives.serde import JSONValue

__all__ = [
    "call_arguments",
    "call_input",
    "check_conversation",
    "replays_raw_items",
    "spoken_text",
]

_ITEM_TYPES = (PromptMessage, AssistantMessage, ToolOutputMessage, FeedbackMessage)


def replays_raw_items(turn: ModelTurn, wire_format: str, *, prompt_name: str) -> bool:
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


def spoken_text(turn: ModelTurn) -> str:
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


def check_conversation(items: Sequence[ConversationItem], *, prompt_name: str) -> None:
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
        if isinstance(item, AssistantMessage):
            calls = {call.call_id for call in item.turn.tool_calls}
        elif isinstance(item, ToolOutputMessage) and item.call_id not in calls:
            raise ConfigValidationError(
                f"continue_from conversation[{index}] is the output of call "
                f"{item.call_id!r}, which the model turn before it did not make "
                f"(prompt {prompt_name!r})",
                field_name="continue_from",
                value=item.call_id,
            )
