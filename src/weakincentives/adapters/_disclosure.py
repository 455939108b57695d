"""Progressive disclosure inside an evaluation: open, re-render, carry on.

When the model calls the halting ``open_sections`` tool, the loop (unless the
disclosure policy is ``manual``) merges the requested sections over the caller's
overrides (tool requests win), renders again and continues the conversation, so the
work done before the halt is not repeated. :func:`evaluate_with_disclosure` is the
same behaviour with the policy chosen per call (in ``_adapter``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import replace

from weakincentives.adapters._response import Halt
from weakincentives.adapters._settings import DisclosurePolicy
from weakincentives.adapters._turns import ConversationItem, PromptMessage, ToolOutputMessage
from weakincentives.prompt import (
    OpenSectionsResult,
    SectionPath,
    SectionVisibility,
    SessionProtocol,
    VisibilityOverrides,
    dotted,
    parse_dotted,
)
from weakincentives.runtime import ToolCall, ToolExecution

__all__ = [
    "merge_overrides",
    "opened_message",
    "requested_sections",
    "resume_items",
]

_STORAGE_PREFIX = "disclosure_"

_SKIPPED = (
    "Not run: the turn ended before this call (sections were opened or a terminal tool "
    "finished). Call it again if you still need it."
)


def merge_overrides(
    caller: VisibilityOverrides | None, requested: Mapping[SectionPath, SectionVisibility]
) -> dict[SectionPath, SectionVisibility]:
    """Caller overrides, then tool-requested ones on top (tool requests win)."""
    merged = dict(caller or {})
    merged.update(requested)
    return merged


def requested_sections(halt: Halt | None) -> tuple[SectionPath, ...] | None:
    """The sections an ``open_sections`` halt asks for; None for any other halt."""
    if halt is None or not isinstance(halt.value, OpenSectionsResult):
        return None
    return tuple(halt.value.requested_overrides)


def chosen_sections(
    requested: Sequence[SectionPath], policy: DisclosurePolicy
) -> tuple[SectionPath, ...]:
    """The requested sections a re-render opens under ``policy``."""
    return tuple(requested[:1]) if policy == "conservative" else tuple(requested)


def opened_message(paths: Sequence[SectionPath]) -> str:
    """What the model reads as the ``open_sections`` result once the sections are open."""
    names = ", ".join(dotted(path) for path in paths) or "none"
    return (
        f"Opened sections: {names}. The prompt above now shows them in full; continue "
        "with the task."
    )


def record_reopened(
    executions: list[ToolExecution], halt: Halt, opened: Sequence[SectionPath], renders: int
) -> None:
    """After an automatic re-render, the halting call's record says what happened.

    The call's ``ToolInvoked`` was published before the loop chose to render again, so
    the execution kept in the response is replaced by one whose result (message and
    rendered output) names the sections opened and the re-render.
    """
    names = ", ".join(dotted(path) for path in opened) or "none"
    text = (
        f"Opened sections: {names}; the prompt was rendered again with them in full "
        f"(re-render {renders})."
    )
    for index, execution in enumerate(executions):
        if execution.call.call_id == halt.call_id and execution.result is halt.result:
            result = replace(execution.result, message=text)
            event = replace(execution.event, result=result, rendered_output=text)
            executions[index] = replace(execution, result=result, event=event)
            return


def resume_items(
    conversation: Sequence[ConversationItem], skipped: Sequence[ToolCall], halt: Halt | None
) -> tuple[ConversationItem, ...]:
    """An earlier exchange, minus its prompt, ready to follow a new render.

    Calls skipped by a halt get an explicit "not run" output (providers expect every
    call of a replayed turn to have one), and the ``open_sections`` output says, in the
    model's terms, which sections are now open.
    """
    opened = requested_sections(halt)
    items: list[ConversationItem] = []
    for item in conversation:
        if isinstance(item, PromptMessage):
            continue
        if (
            opened is not None
            and halt is not None
            and isinstance(item, ToolOutputMessage)
            and item.call_id == halt.call_id
        ):
            items.append(replace(item, content=opened_message(opened)))
        else:
            items.append(item)
    items.extend(
        ToolOutputMessage(call_id=call.call_id, name=call.name, content=_SKIPPED, success=False)
        for call in skipped
    )
    return tuple(items)


def storage_key(ns: str, key: str) -> str:
    """A storage key per prompt: readable, with a digest so distinct prompts never collide."""
    readable = "".join(char if char.isascii() and char.isalnum() else "_" for char in key.lower())
    digest = hashlib.sha256(f"{ns}\0{key}".encode()).hexdigest()[:10]
    return f"{_STORAGE_PREFIX}{readable}_{digest}"


def remembered(
    session: SessionProtocol, key: str, known: set[SectionPath]
) -> dict[SectionPath, SectionVisibility]:
    """Sections opened before under the batched policy; paths the prompt lost are dropped."""
    stored = session.storage.get(key, tuple) or ()
    paths = (parse_dotted(str(item)) for item in stored)
    return {path: SectionVisibility.FULL for path in paths if path in known}


def remember(session: SessionProtocol, key: str, opened: Mapping[SectionPath, object]) -> None:
    """Keep the sections opened so far for later evaluations of the same prompt."""
    session.storage.set(key, tuple(dotted(path) for path in opened))
