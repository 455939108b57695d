"""Place one MCP server's tools in a catalogue: categories, summaries, tags and schemas.

Every server gets a top-level category named after it. Below it, finer categories
come from what the server provides, in this order:

1. ``_meta.category`` on the tool: a ``"a/b"`` string or a list of segments;
2. an explicit namespace in the name: ``repo.list`` and ``repo/list`` sit in ``repo``;
3. for servers with at least :data:`MIN_TOOLS_TO_GROUP` tools, the object named in
   ``verb_object`` style names (``create_issue``, ``list_issues`` sit in ``issue``)
   or a shared first word (``issue_create``); a word shared by every tool (the
   server's own prefix) is skipped, and a group needs two tools.

Annotations become tags (``read-only``, ``destructive``, ``idempotent``,
``open-world``, ``closed-world``) so ``list(tags=[...])`` can filter on them, and the
title and the description's first paragraph make the summary.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mcp import types

from weakincentives.discovery import CatalogNode, CatalogTool, ToolCatalog, TreePath
from weakincentives.errors import CatalogError
from weakincentives.serde import JSONValue

__all__ = [
    "MAX_SUMMARY_CHARS",
    "MIN_TOOLS_TO_GROUP",
    "ImportProblem",
    "MCPToolHandle",
    "catalogue_problem",
    "first_paragraph",
    "requires_task",
    "server_entries",
]

MIN_TOOLS_TO_GROUP = 6
"""Servers with fewer tools keep them all directly in the server's category."""
MAX_SUMMARY_CHARS = 300
"""Summaries are cut here: every listing and search result repeats them."""

# Words that start verb-first tool names; the object after them names the group.
_VERB_WORDS = (
    "add append apply approve archive assign build call cancel check clear close comment copy "
    "count create delete deny deploy describe disable download edit enable execute export "
    "fetch find get grant has import insert invite invoke is list load lock lookup make "
    "merge move new open patch post publish put query read reject remove rename replace "
    "reset resolve restart restore retrieve revoke run save scan search send set show "
    "start stop submit sync tag trigger unlock update upload upsert validate view watch write"
)
_VERBS = frozenset(_VERB_WORDS.split())
_NAMESPACE = re.compile(r"[./]")
_WORDS = re.compile(r"[_\-\s]+|(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True, slots=True, kw_only=True)
class MCPToolHandle:
    """What an executor needs to run a catalogue entry on its server (the entry's ``handle``)."""

    server: str
    """The server's category name (the toolbox's key for its connection)."""
    tool_name: str
    """The tool's name on that server."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportProblem:
    """A server tool left out of the catalogue, and why."""

    server: str
    tool_name: str
    reason: str


def server_entries(
    server: str, summary: str, tools: Sequence[types.Tool], *, no_tasks: str | None = None
) -> tuple[CatalogNode, list[CatalogTool], list[ImportProblem]]:
    """The server's category node, its catalogue entries, and the tools left out.

    A tool is left out when its name repeats an earlier tool's, its schemas are not
    ones discovery can validate against, or it must be called as a task and
    ``no_tasks`` says why this connection cannot; the rest of the server imports.
    """
    node = CatalogNode(name=server, path=(server,), summary=first_paragraph(summary))
    groups = _groups([tool.name for tool in tools])
    entries: list[CatalogTool] = []
    problems: list[ImportProblem] = []
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            problems.append(
                ImportProblem(
                    server=server, tool_name=tool.name, reason="the server lists this name twice"
                )
            )
            continue
        seen.add(tool.name)
        if no_tasks is not None and requires_task(tool):
            problems.append(ImportProblem(server=server, tool_name=tool.name, reason=no_tasks))
            continue
        entry = CatalogTool(
            tool_id=f"{server}.{tool.name}",
            name=tool.name,
            paths=((server, *_category(tool, groups)),),
            summary=_summary(tool),
            tags=_tags(tool.annotations),
            args_schema=_json_object(tool.input_schema),
            result_schema=_json_object(tool.output_schema) if tool.output_schema else None,
            handle=MCPToolHandle(server=server, tool_name=tool.name),
        )
        reason = catalogue_problem(entry)
        if reason is None:
            entries.append(entry)
        else:
            problems.append(ImportProblem(server=server, tool_name=tool.name, reason=reason))
    return node, entries, problems


def requires_task(tool: types.Tool) -> bool:
    """Whether ``tool`` may only be called as a task (``execution.taskSupport: required``)."""
    return tool.execution is not None and tool.execution.task_support == "required"


def catalogue_problem(entry: CatalogTool) -> str | None:
    """Why ``entry`` alone breaks a catalogue rule (the first problem), or None."""
    try:
        ToolCatalog(tools=[entry])
    except CatalogError as error:
        return error.message.split("\n- ", 1)[-1]
    return None


def _category(tool: types.Tool, groups: Mapping[str, str]) -> TreePath:
    meta = tool.meta or {}
    declared = meta.get("category")
    if isinstance(declared, str) and declared.strip():
        return tuple(part.strip() for part in declared.split("/") if part.strip())
    if isinstance(declared, list) and declared and all(isinstance(p, str) for p in declared):
        return tuple(part.strip() for part in declared if part.strip())
    namespace = _NAMESPACE.split(tool.name, maxsplit=1)
    if len(namespace) == 2 and namespace[0] and namespace[1]:
        return (namespace[0],)
    group = groups.get(tool.name)
    return (group,) if group is not None else ()


def _groups(names: Sequence[str]) -> dict[str, str]:
    """Tool name -> group word, for servers large enough to need groups."""
    if len(names) < MIN_TOOLS_TO_GROUP:
        return {}
    words = {name: [w.lower() for w in _WORDS.split(name) if w] for name in names}
    shared = _shared_prefix(list(words.values()))
    keys: dict[str, str] = {}
    for name, parts in words.items():
        rest = parts[shared:]
        if not rest:
            continue
        subject = rest[1] if rest[0] in _VERBS and len(rest) > 1 else rest[0]
        if subject not in _VERBS:
            keys[name] = _singular(subject)
    counts = Counter(keys.values())
    return {name: key for name, key in keys.items() if counts[key] >= 2}


def _shared_prefix(word_lists: list[list[str]]) -> int:
    if not word_lists:
        return 0
    size = 0
    for column in zip(*word_lists, strict=False):
        if len(set(column)) != 1:
            break
        size += 1
    return min(size, min(len(words) for words in word_lists) - 1)


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and len(word) > 3 and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _summary(tool: types.Tool) -> str:
    title = tool.title or (tool.annotations.title if tool.annotations else None) or ""
    description = first_paragraph(tool.description or "")
    if title and title.casefold() not in description.casefold():
        description = f"{title}: {description}" if description else title
    return description


def first_paragraph(text: str) -> str:
    """The first paragraph of ``text``, whitespace collapsed, cut at ``MAX_SUMMARY_CHARS``."""
    paragraph = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    flat = " ".join(paragraph.split())
    if len(flat) <= MAX_SUMMARY_CHARS:
        return flat
    return flat[: MAX_SUMMARY_CHARS - 3].rstrip() + "..."


def _tags(annotations: types.ToolAnnotations | None) -> tuple[str, ...]:
    if annotations is None:
        return ()
    tags: list[str] = []
    if annotations.read_only_hint:
        tags.append("read-only")
    if annotations.destructive_hint:
        tags.append("destructive")
    if annotations.idempotent_hint:
        tags.append("idempotent")
    if annotations.open_world_hint is True:
        tags.append("open-world")
    elif annotations.open_world_hint is False:
        tags.append("closed-world")
    return tuple(tags)


def _json_object(schema: Mapping[str, object]) -> Mapping[str, JSONValue]:
    # The SDK has already checked the shape (a JSON object); the values are JSON.
    return {str(key): _json(value) for key, value in schema.items()}


def _json(value: object) -> JSONValue:
    if isinstance(value, Mapping):
        return {str(key): _json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json(item) for item in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
