"""The caller's side of progressive disclosure: merge, re-render, retry.

With the halting ``open_sections`` tool, an evaluation ends as soon as the model asks
to open summarized sections. :func:`evaluate_with_disclosure` does what seed 000 asks
of callers: merge the requested overrides over the caller's own (tool requests win),
evaluate again with the merged overrides, and stop after a retry limit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime
from typing import Literal

from weakincentives.adapters._protocol import ProviderAdapter
from weakincentives.adapters._response import PromptResponse
from weakincentives.errors import ConfigValidationError, PromptEvaluationError
from weakincentives.prompt import (
    OpenSectionsResult,
    Prompt,
    PromptTemplate,
    SectionPath,
    SectionVisibility,
    VisibilityOverrides,
    dotted,
    parse_dotted,
)
from weakincentives.runtime import EventBus, InProcessEventBus, Session, SessionProtocol

__all__ = ["DisclosurePolicy", "evaluate_with_disclosure", "merge_overrides"]

type DisclosurePolicy = Literal["eager", "conservative", "batched"]
"""How many requested sections to open per retry.

- ``eager``: every section the model asked for, at once (fewest round trips).
- ``conservative``: only the first one per retry (smallest prompts; more round trips).
- ``batched``: like eager, and the sections opened so far are kept in the session, so
  later evaluations of the same prompt start with them open (requests accumulate
  across turns instead of being asked for again).
"""

_STORAGE_PREFIX = "disclosure_"


def merge_overrides(
    caller: VisibilityOverrides | None, requested: Mapping[SectionPath, SectionVisibility]
) -> dict[SectionPath, SectionVisibility]:
    """Caller overrides, then tool-requested ones on top (tool requests win)."""
    merged = dict(caller or {})
    merged.update(requested)
    return merged


def evaluate_with_disclosure[OutputT](
    adapter: ProviderAdapter,
    prompt: Prompt[OutputT] | PromptTemplate[OutputT],
    *params: object,
    bus: EventBus | None = None,
    session: SessionProtocol | None = None,
    visibility_overrides: VisibilityOverrides | None = None,
    policy: DisclosurePolicy = "eager",
    max_retries: int = 3,
    deadline: datetime | None = None,
    continue_conversation: bool = True,
) -> PromptResponse[OutputT]:
    """Evaluate, reopening requested sections until the model answers.

    Each retry continues the conversation (``continue_from``): the model sees the new
    render, then what it already did, so work done before the halt is not repeated.
    ``continue_conversation=False`` starts each retry afresh instead. Raises
    ``PromptEvaluationError(phase="tool")`` when the model still asks to open sections
    after ``max_retries`` re-renders. Other halts (user terminal tools) are returned as
    they are.
    """
    if policy not in ("eager", "conservative", "batched"):
        raise ConfigValidationError(
            f"policy must be 'eager', 'conservative' or 'batched', got {policy!r}",
            field_name="policy",
            value=policy,
        )
    if session is None:
        bus = bus if bus is not None else InProcessEventBus()
        session = Session(bus=bus)
    storage_key = _storage_key(prompt.ns, prompt.key)
    known = set(_template(prompt).section_paths())
    opened = _remembered(session, storage_key, known) if policy == "batched" else {}
    previous: PromptResponse[OutputT] | None = None
    for attempt in range(max_retries + 1):
        overrides = merge_overrides(visibility_overrides, opened)
        response = adapter.evaluate(
            prompt,
            *params,
            bus=bus,
            session=session,
            visibility_overrides=overrides,
            deadline=deadline,
            continue_from=previous if continue_conversation else None,
        )
        previous = response
        halt = response.halt
        if halt is None or not isinstance(halt.value, OpenSectionsResult):
            return response
        requested = list(halt.value.requested_overrides)
        if attempt == max_retries:
            keys = ", ".join(dotted(path) for path in requested)
            raise PromptEvaluationError(
                f"the model still asked to open sections ({keys}) after {max_retries} "
                "re-renders; raise max_retries or render those sections FULL",
                prompt_name=response.prompt_name,
                phase="tool",
            )
        chosen = requested[:1] if policy == "conservative" else requested
        opened.update(dict.fromkeys(chosen, SectionVisibility.FULL))
        if policy == "batched":
            session.storage.set(storage_key, tuple(dotted(path) for path in opened))
    raise AssertionError("the retry loop always returns or raises")


def _template[OutputT](
    prompt: Prompt[OutputT] | PromptTemplate[OutputT],
) -> PromptTemplate[OutputT]:
    return prompt.template if isinstance(prompt, Prompt) else prompt


def _storage_key(ns: str, key: str) -> str:
    """A storage key per prompt: readable, with a digest so distinct prompts never collide."""
    readable = "".join(char if char.isascii() and char.isalnum() else "_" for char in key.lower())
    digest = hashlib.sha256(f"{ns}\0{key}".encode()).hexdigest()[:10]
    return f"{_STORAGE_PREFIX}{readable}_{digest}"


def _remembered(
    session: SessionProtocol, key: str, known: set[SectionPath]
) -> dict[SectionPath, SectionVisibility]:
    """Sections opened before; paths the prompt no longer has are dropped."""
    stored = session.storage.get(key, tuple) or ()
    paths = (parse_dotted(str(item)) for item in stored)
    return {path: SectionVisibility.FULL for path in paths if path in known}
