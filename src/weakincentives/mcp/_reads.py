"""Upstream resources and prompts as catalogue entries: found like tools, read by calling them.

A server's resources, resource templates and prompts join its category as
entries a model lists, searches and expands like tools; calling one reads it:

- a resource: ``<server>.resource:<uri>`` under ``(server, "resources")``, no
  arguments, read with ``resources/read``;
- a resource template: ``<server>.template:<uriTemplate>`` under the same path,
  its variables as arguments, the filled URI read;
- a prompt: ``<server>.prompt:<name>`` under ``(server, "prompts")``, its
  arguments as string arguments, got with ``prompts/get``.

The outcome's message is the text read (contents, or the prompt's messages as
``role: text`` lines), bounded like a tool result; binary contents are described
in the value. The entry's handle keeps the server's own listing item, so a served
catalogue lists the resource or prompt again exactly as the server did.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from mcp import types
from mcp.shared.uri_template import InvalidUriTemplate, UriTemplate

from weakincentives.discovery import CallOutcome, CatalogTool
from weakincentives.mcp._import import ImportProblem, catalogue_problem, first_paragraph
from weakincentives.mcp._results import bounded_text, compact, describe_block, plain
from weakincentives.serde import JSONValue

__all__ = ["ReadHandle", "prompt_outcome", "read_entries", "read_outcome"]

type ReadKind = Literal["resource", "template", "prompt"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadHandle:
    """How the executor reads a resource, a resource template or a prompt (an entry's handle)."""

    server: str
    """The server's category name (the toolbox's key for its connection)."""
    kind: ReadKind
    target: str
    """The resource URI, the URI template, or the prompt name."""
    listing: str
    """The server's listing item, as compact JSON."""

    def uri(self, arguments: dict[str, JSONValue]) -> str:
        """The URI to read: the resource's own, or the template filled with ``arguments``."""
        if self.kind != "template":
            return self.target
        values = {name: str(value) for name, value in arguments.items() if value is not None}
        return UriTemplate.parse(self.target).expand(values)


def read_entries(
    server: str,
    resources: Iterable[types.Resource],
    templates: Iterable[types.ResourceTemplate],
    prompts: Iterable[types.Prompt],
) -> tuple[list[CatalogTool], list[ImportProblem]]:
    """Catalogue entries for a server's resources, templates and prompts, and the ones left out.

    An item is left out when it repeats an earlier one, its URI template does not
    parse, or its entry alone breaks a catalogue rule (an id or name too long, empty).
    """
    entries: list[CatalogTool] = []
    problems: list[ImportProblem] = []
    seen: set[str] = set()
    items: list[tuple[ReadKind, str, types.Resource | types.ResourceTemplate | types.Prompt]] = [
        *(("resource", str(item.uri), item) for item in resources),
        *(("template", item.uri_template, item) for item in templates),
        *(("prompt", item.name, item) for item in prompts),
    ]
    for kind, target, item in items:
        tool_id = f"{server}.{kind}:{target}"
        if tool_id in seen:
            problems.append(_problem(server, target, f"the server lists this {kind} twice"))
            continue
        seen.add(tool_id)
        try:
            schema = _arguments(kind, item)
        except InvalidUriTemplate as error:
            problems.append(_problem(server, target, f"invalid URI template: {error}"))
            continue
        entry = _entry(server, tool_id, kind=kind, target=target, item=item, schema=schema)
        reason = catalogue_problem(entry)  # one hostile item never fails the catalogue
        if reason is None:
            entries.append(entry)
        else:
            problems.append(_problem(server, target, reason))
    return entries, problems


def _entry(
    server: str,
    tool_id: str,
    *,
    kind: ReadKind,
    target: str,
    item: types.Resource | types.ResourceTemplate | types.Prompt,
    schema: dict[str, JSONValue],
) -> CatalogTool:
    listing = item.model_dump(mode="json", by_alias=True, exclude_none=True)
    what = "prompt" if kind == "prompt" else "resource"
    title = getattr(item, "title", None) or ""
    described = first_paragraph(item.description or "")
    summary = f"{title}: {described}" if title and described else (title or described)
    return CatalogTool(
        tool_id=tool_id,
        name=item.name,
        paths=((server, "prompts" if kind == "prompt" else "resources"),),
        summary=summary or f"Read {what} {target} of MCP server {server}",
        tags=(what, "read-only"),
        args_schema=schema,
        handle=ReadHandle(server=server, kind=kind, target=target, listing=compact(listing)),
    )


def _arguments(
    kind: ReadKind, item: types.Resource | types.ResourceTemplate | types.Prompt
) -> dict[str, JSONValue]:
    properties: dict[str, JSONValue] = {}
    required: list[JSONValue] = []
    if isinstance(item, types.ResourceTemplate):
        template = UriTemplate.parse(item.uri_template)
        for name in template.variable_names:
            properties[name] = {"type": "string"}
            if name not in template.query_variable_names:
                required.append(name)
    elif isinstance(item, types.Prompt):
        for argument in item.arguments or ():
            described: dict[str, JSONValue] = {"type": "string"}
            if argument.description:
                described["description"] = argument.description
            properties[argument.name] = described
            if argument.required:
                required.append(argument.name)
    schema: dict[str, JSONValue] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if kind != "prompt":
        schema["additionalProperties"] = False
    return schema


def read_outcome(result: types.ReadResourceResult, *, tool_id: str) -> CallOutcome:
    """The outcome of reading a resource: its text, and descriptions of binary contents."""
    texts: list[str] = []
    binaries: list[JSONValue] = []
    for contents in result.contents:
        if isinstance(contents, types.TextResourceContents):
            texts.append(contents.text)
        else:
            blob = types.EmbeddedResource(type="resource", resource=contents)
            binaries.append(describe_block(blob))
    message = bounded_text("\n".join(texts)) or f"{tool_id} has no text"
    return CallOutcome(success=True, message=message, value=binaries or None)


def prompt_outcome(result: types.GetPromptResult, *, tool_id: str) -> CallOutcome:
    """The outcome of getting a prompt: its messages as ``role: text`` lines."""
    lines = [f"{message.role}: {_text(message.content)}" for message in result.messages]
    if result.description:
        lines.insert(0, result.description)
    message = bounded_text("\n".join(lines)) or f"{tool_id} has no messages"
    return CallOutcome(success=True, message=message)


def _text(block: types.ContentBlock) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.EmbeddedResource) and isinstance(
        block.resource, types.TextResourceContents
    ):
        return f"{block.resource.uri}:\n{block.resource.text}"
    return compact(plain(describe_block(block)))


def _problem(server: str, target: str, reason: str) -> ImportProblem:
    return ImportProblem(server=server, tool_name=target, reason=reason)
