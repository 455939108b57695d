"""Structured output: the JSON schema sent to providers and parsing the answer back."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from weakincentives.errors import ParseError, PromptEvaluationError
from weakincentives.prompt import StructuredOutput
from weakincentives.serde import JSONObject, JSONValue, is_strict_compatible, loads, parse, schema

__all__ = ["OutputSchema", "output_schema", "parse_structured_output"]

_ARRAY_KEY = "items"


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputSchema:
    """The schema a provider should constrain the final answer to."""

    name: str
    """A schema name providers accept: ``^[a-zA-Z0-9_-]{1,64}$``."""
    schema: JSONObject
    strict: bool
    wrapped: bool
    """True when a list answer is wrapped as ``{"items": [...]}``, since providers
    require an object at the top level."""

    @classmethod
    def of(cls, structured: StructuredOutput) -> OutputSchema:
        """The schema the loop sends for a declared output (``rendered.structured_output``)."""
        return output_schema(structured)


def output_schema(structured: StructuredOutput) -> OutputSchema:
    """Build the provider-facing schema for a prompt's declared output."""
    item = structured.dataclass_type
    item_schema = schema(item)
    strict = is_strict_compatible(item)
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", item.__name__)[:64]
    if structured.container == "object":
        return OutputSchema(name=name, schema=item_schema, strict=strict, wrapped=False)
    return OutputSchema(
        name=f"{name}_list"[:64], schema=_wrapped(item_schema, name), strict=strict, wrapped=True
    )


def _wrapped(item_schema: JSONObject, name: str) -> JSONObject:
    """``{"items": [item, ...]}`` around an item schema, with its references still resolving.

    References are relative to the document root, which the wrapper now is: the
    item's ``$defs`` move up to the wrapper, and a recursive item (whose schema
    refers to itself as ``"#"``) becomes a definition of its own, referred to by
    ``#/$defs/<name>`` everywhere ``"#"`` stood.
    """
    defs = item_schema.pop("$defs", None)
    definitions: dict[str, JSONValue] = dict(defs) if isinstance(defs, dict) else {}
    items: JSONValue = item_schema
    if _refers_to_root(item_schema) or _refers_to_root(definitions):
        own = name
        suffix = 2
        while own in definitions:
            own, suffix = f"{name}_{suffix}", suffix + 1
        pointer = f"#/$defs/{own}"
        definitions[own] = _retargeted(item_schema, pointer)
        definitions = {key: _retargeted(value, pointer) for key, value in definitions.items()}
        items = {"$ref": pointer}
    wrapper: JSONObject = {
        "type": "object",
        "properties": {_ARRAY_KEY: {"type": "array", "items": items}},
        "required": [_ARRAY_KEY],
        "additionalProperties": False,
    }
    if definitions:
        wrapper["$defs"] = definitions
    return wrapper


def _refers_to_root(node: JSONValue) -> bool:
    if isinstance(node, dict):
        return node.get("$ref") == "#" or any(_refers_to_root(value) for value in node.values())
    if isinstance(node, list):
        return any(_refers_to_root(value) for value in node)
    return False


def _retargeted(node: JSONValue, pointer: str) -> JSONValue:
    """A copy of ``node`` with every ``{"$ref": "#"}`` pointing at ``pointer`` instead."""
    if isinstance(node, dict):
        return {
            key: pointer if key == "$ref" and value == "#" else _retargeted(value, pointer)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_retargeted(value, pointer) for value in node]
    return node


def parse_structured_output(structured: StructuredOutput, text: str, *, prompt_name: str) -> object:
    """Parse the model's final text into the declared output; phase ``parse`` on failure."""
    name = structured.dataclass_type.__name__
    try:
        data = _answer_json(text)
    except ParseError as exc:
        raise _unfit(f"final answer is not valid JSON for {name}", exc, text, prompt_name) from exc
    try:
        if structured.container == "object":
            return parse(structured.dataclass_type, data, extra="ignore")
        return _parse_items(structured.dataclass_type, data)
    except ParseError as exc:
        raise _unfit(f"final answer does not fit {name}", exc, text, prompt_name) from exc


def _unfit(problem: str, exc: ParseError, text: str, prompt_name: str) -> PromptEvaluationError:
    """Phase ``parse``: the final answer ``text`` could not be read, as ``exc`` says."""
    return PromptEvaluationError(
        f"{problem}: {exc.message}",
        prompt_name=prompt_name,
        phase="parse",
        provider_payload={"text": text},
    )


def _parse_items(item_type: type[Any], data: object) -> list[object]:
    prefix = "$"
    items = data
    if isinstance(data, dict):
        items = data.get(_ARRAY_KEY)
        prefix = f"$.{_ARRAY_KEY}"
    if not isinstance(items, list):
        raise ParseError(path=prefix, expected="a JSON array", got=type(items).__name__)
    parsed: list[object] = []
    for index, item in enumerate(items):
        try:
            parsed.append(parse(item_type, item, extra="ignore"))
        except ParseError as exc:
            raise ParseError(
                path=f"{prefix}[{index}]{exc.path[1:]}",
                expected=exc.expected,
                got=exc.got,
                dataclass_type=item_type,
            ) from exc
    return parsed


_WHOLE_FENCE = re.compile(r"(?>```[a-zA-Z]*[ \t]*\r?\n?)(.*?)```", re.DOTALL)
"""A fenced block; its text ends with whitespace the caller strips. The opener is atomic
and no run of whitespace sits next to the lazy block, so matching is linear: each
character is tried once as the block's end, never once per way of splitting a run."""
_OPEN_FENCE = re.compile(r"```[a-zA-Z]*[ \t]*\r?\n")


def _answer_json(text: str) -> JSONValue:
    """The JSON value of an answer, accepting the ways models wrap it.

    The whole answer, or the whole answer in a Markdown code fence; failing those, the
    one fenced block of an answer that wraps it in prose. An answer that opens a fence
    and never closes it (the reply stopped midway) is read without the opening line,
    and when that is not JSON either the error says the fence was never closed rather
    than pointing at the backticks.
    """
    stripped = text.strip()
    whole = _WHOLE_FENCE.fullmatch(stripped)
    if whole is not None:
        return loads(whole.group(1).rstrip())
    opened = _OPEN_FENCE.match(stripped)
    if opened is not None and "```" not in stripped[opened.end() :]:
        try:
            return loads(stripped[opened.end() :])
        except ParseError as exc:
            raise ParseError(
                path=exc.path,
                expected=exc.expected,
                got=f"a code fence that is never closed (the reply looks cut off: {exc.got})",
            ) from exc
    try:
        return loads(stripped)
    except ParseError:
        blocks = _WHOLE_FENCE.findall(stripped)
        if len(blocks) != 1:
            raise
        return loads(blocks[0].rstrip())
