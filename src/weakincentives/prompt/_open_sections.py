"""The built-in ``open_sections`` tool: progressive disclosure of summarized sections.

A prompt injects it (after every user tool) whenever at least one rendered section is
summarized. Two variants exist, chosen per template with ``open_sections=``:

- ``"halt"`` (default): the tool is terminal. It validates the request and returns an
  :class:`OpenSectionsResult`; the turn ends, and the adapter re-renders with the
  requested sections open and carries on (``LoopSettings.disclosure``, or
  ``evaluate(disclosure=...)``), or hands the halt to the caller under the ``manual``
  policy.
- ``"inline"``: the tool returns the sections' full markdown as its result, in the
  same turn; nothing is re-rendered and the evaluation goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from weakincentives._bounded import LIST_LIMIT, TEXT_LIMIT, listing, quote
from weakincentives.errors import ToolValidationError
from weakincentives.prompt._rendered import RenderedPrompt
from weakincentives.prompt._tool import Tool
from weakincentives.prompt._tool_result import ToolResult
from weakincentives.prompt._visibility import (
    SectionPath,
    SectionVisibility,
    dotted,
    parse_dotted,
)
from weakincentives.serde import JSONValue

if TYPE_CHECKING:
    from weakincentives.prompt._tool_context import ToolContext

__all__ = [
    "OPEN_SECTIONS",
    "OPEN_SECTIONS_INLINE",
    "OpenSectionsMode",
    "OpenSectionsParams",
    "OpenSectionsResult",
    "OpenedSections",
    "open_sections_tool",
]

type OpenSectionsMode = Literal["halt", "inline"]
"""How ``open_sections`` delivers content: end the turn for a re-render, or inline."""

_MAX_REASON = 256
_OPENABLE_LISTED = 20


@dataclass(slots=True, frozen=True)
class OpenSectionsParams:
    """Parameters for the open_sections tool."""

    section_keys: tuple[str, ...] = field(
        metadata={
            "description": (
                "Section keys to open. Each key identifies a summarized section. "
                "Use the keys shown in section summaries. Nested sections use "
                "dot notation (e.g., 'parent.child')."
            ),
            "min_length": 1,
        },
    )
    reason: str = field(
        metadata={
            "description": (
                "Brief explanation of why these sections need to be expanded. "
                "Helps the caller understand the model's information needs. "
                f"At most {_MAX_REASON} characters."
            ),
        },
    )


@dataclass(slots=True, frozen=True)
class OpenSectionsResult:
    """What the model asked to open: the overrides the caller should apply on retry."""

    requested_overrides: Mapping[SectionPath, SectionVisibility]
    """Each requested section path mapped to FULL."""
    reason: str = ""
    """The model's stated reason."""
    visibility_state: Mapping[SectionPath, SectionVisibility] = field(
        default_factory=lambda: MappingProxyType({})
    )
    """Visibility of every rendered section when the tool was called."""

    def render(self) -> str:
        """Confirm the request: the sections open when the prompt is rendered again.

        The adapter renders again at once unless its disclosure policy is ``manual``
        (then the caller does); after it did, the recorded execution says so.
        """
        keys = ", ".join(dotted(path) for path in self.requested_overrides)
        return (
            f"Sections requested for expansion: {keys}. They open when the prompt is "
            "rendered again."
        )

    def telemetry(self) -> Mapping[str, JSONValue]:
        """Facts added to the ``ToolInvoked`` event."""
        return _telemetry(tuple(self.requested_overrides), self.reason, self.visibility_state)


@dataclass(slots=True, frozen=True)
class OpenedSections:
    """The inline variant's result: the full markdown of each requested section."""

    contents: Mapping[SectionPath, str]
    reason: str = ""
    visibility_state: Mapping[SectionPath, SectionVisibility] = field(
        default_factory=lambda: MappingProxyType({})
    )

    def render(self) -> str:
        """The opened sections' markdown, in request order."""
        return "\n\n".join(self.contents.values())

    def telemetry(self) -> Mapping[str, JSONValue]:
        """Facts added to the ``ToolInvoked`` event."""
        return _telemetry(tuple(self.contents), self.reason, self.visibility_state)


def _telemetry(
    paths: tuple[SectionPath, ...],
    reason: str,
    state: Mapping[SectionPath, SectionVisibility],
) -> Mapping[str, JSONValue]:
    return {
        "requested_sections": [dotted(path) for path in paths],
        "reason": reason,
        "current_visibility_state": {dotted(path): str(value) for path, value in state.items()},
    }


def _requested_paths(
    params: OpenSectionsParams, context: ToolContext, rendered: RenderedPrompt[Any]
) -> list[SectionPath]:
    """Validate the keys against the current render; all problems are reported at once.

    A key may name a summarized section, or a section hidden inside one (as listed in
    a summary's subsections): then every enclosing section down to it opens too.
    """
    if len(params.reason) > _MAX_REASON:
        # Checked here rather than as a schema maxLength, which OpenAI's strict mode rejects.
        raise ToolValidationError(
            f"reason must be at most {_MAX_REASON} characters, got {len(params.reason)}",
            tool_name="open_sections",
            field_path="$.reason",
        )
    known = set(context.prompt.template.section_paths())
    summarized = rendered.summarized_paths
    opened: dict[SectionPath, None] = {}
    # Keyed by the key, so a key repeated ten thousand times is one problem.
    problems: dict[str, str] = {}
    for key in params.section_keys:
        path = parse_dotted(key)
        visibility = rendered.visibility.get(path)
        enclosing = next(
            (depth for depth in range(1, len(path)) if path[:depth] in summarized), None
        )
        if path not in known:
            problems[key] = f"{quote(key)} is not a section of this prompt"
        elif visibility is SectionVisibility.FULL:
            problems[key] = f"{quote(key)} is already shown in full"
        elif visibility is None and enclosing is None:
            problems[key] = f"{quote(key)} is not shown in this render (it is disabled)"
        else:
            start = len(path) if enclosing is None else enclosing
            opened.update(dict.fromkeys(path[:depth] for depth in range(start, len(path) + 1)))
    if problems:
        raise ToolValidationError(
            _refusal(list(problems.values()), [dotted(path) for path in summarized]),
            tool_name="open_sections",
            field_path="$.section_keys",
        )
    return list(opened)


def _refusal(problems: list[str], summarized: list[str]) -> str:
    """The refusal the model reads, bounded whatever it sent (see PROGRESSIVE_DISCLOSURE.md).

    The first LIST_LIMIT problems are named and the rest counted; each key is quoted
    and cut to ECHO_LIMIT characters. The summarized keys come from the prompt, not
    from the model, and are listed up to _OPENABLE_LISTED.
    """
    shown = "; ".join(problems[:LIST_LIMIT])
    rest = len(problems) - LIST_LIMIT
    more = f"; and {rest:,} more refused key{'' if rest == 1 else 's'}" if rest > 0 else ""
    valid = listing(summarized, limit=_OPENABLE_LISTED, width=TEXT_LIMIT) or "none"
    return f"cannot open: {shown}{more}. Summarized sections you can open: {valid}."


def _rendered(context: ToolContext) -> RenderedPrompt[Any]:
    rendered = context.rendered_prompt
    if rendered is None:
        raise ToolValidationError(
            "open_sections needs the rendered prompt, and this call has none",
            tool_name="open_sections",
        )
    return rendered


def _message(paths: list[SectionPath], suffix: str) -> str:
    keys = ", ".join(dotted(path) for path in paths)
    if len(paths) == 1:
        return f"Opening 1 section: {keys}. {suffix.format(them='it', their='Its')}"
    return f"Opening {len(paths)} sections: {keys}. {suffix.format(them='them', their='Their')}"


def _open_halting(
    params: OpenSectionsParams, *, context: ToolContext
) -> ToolResult[OpenSectionsResult]:
    rendered = _rendered(context)
    paths = _requested_paths(params, context, rendered)
    result = OpenSectionsResult(
        requested_overrides=MappingProxyType(dict.fromkeys(paths, SectionVisibility.FULL)),
        reason=params.reason,
        visibility_state=rendered.visibility,
    )
    return ToolResult(
        message=_message(paths, "The prompt will be re-rendered with {them} open."),
        value=result,
    )


def _open_inline(params: OpenSectionsParams, *, context: ToolContext) -> ToolResult[OpenedSections]:
    rendered = _rendered(context)
    paths = _requested_paths(params, context, rendered)
    outermost = [
        path for path in paths if not any(path[:depth] in paths for depth in range(1, len(path)))
    ]
    overrides = {**rendered.visibility_overrides, **dict.fromkeys(paths, SectionVisibility.FULL)}
    contents = context.prompt.render_sections(outermost, visibility_overrides=overrides)
    return ToolResult(
        message=_message(outermost, "{their} full content follows."),
        value=OpenedSections(
            contents=contents, reason=params.reason, visibility_state=rendered.visibility
        ),
    )


_DESCRIPTION = "Open summarized sections of this prompt to see their full content."

OPEN_SECTIONS: Tool[OpenSectionsParams, OpenSectionsResult] = Tool(
    name="open_sections",
    description=_DESCRIPTION,
    handler=_open_halting,
    accepts_overrides=False,
    terminal=True,
    pure=True,
)
"""The halting variant: a successful call ends the turn with an ``OpenSectionsResult``."""

OPEN_SECTIONS_INLINE: Tool[OpenSectionsParams, OpenedSections] = Tool(
    name="open_sections",
    description=_DESCRIPTION,
    handler=_open_inline,
    accepts_overrides=False,
    pure=True,
)
"""The inline variant: the sections' markdown comes back as the tool result."""


def open_sections_tool(
    mode: OpenSectionsMode,
) -> Tool[OpenSectionsParams, OpenSectionsResult] | Tool[OpenSectionsParams, OpenedSections]:
    """The built-in tool for ``mode``."""
    return OPEN_SECTIONS if mode == "halt" else OPEN_SECTIONS_INLINE
