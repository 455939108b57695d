"""Reading Responses API output items as plain JSON, with exact paths on failure.

Codecs walk the ``output`` array of a Responses API reply. Fields they rely on
are checked here; a wrong shape raises :class:`HostedOutputParseError` naming
the JSON path, what was expected and what was found. Fields and item types the
codecs do not use are ignored, so new provider additions do not break parsing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from weakincentives.adapters._hosted import HostedOutputParseError
from weakincentives.serde import JSONValue

__all__ = ["ItemReader", "TextPart", "describe", "message_text_parts", "output_items"]


class _Missing:
    """Stands for an absent key, so the error says "missing" rather than "null"."""


def describe(value: object) -> str:
    """Name a JSON value's type for an error message (``string 'x'``, ``null``, ...)."""
    if isinstance(value, _Missing):
        return "nothing (the key is missing)"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"string {shown!r}"
    if isinstance(value, int | float):
        return f"number {value}"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, Sequence):
        return "array"
    return type(value).__name__


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemReader:
    """Typed access to the fields of one top-level output item."""

    kind: str
    """The hosted tool kind being parsed, for the error."""
    output_type: type[object]
    """The output dataclass being built, for the error."""
    item: Mapping[str, JSONValue]
    """The top-level output item, kept on the error as the provider payload."""
    path: str
    """JSON path of ``item``, such as ``$.output[2]``."""

    def fail(self, path: str, expected: str, value: object) -> HostedOutputParseError:
        """Build the error for ``value`` at ``path`` not being ``expected``."""
        return HostedOutputParseError(
            kind=self.kind,
            path=path,
            expected=expected,
            got=describe(value),
            output_type=self.output_type,
            item=self.item,
        )

    def string(self, obj: Mapping[str, JSONValue], key: str, path: str) -> str:
        """A required string field."""
        value = obj.get(key)
        if not isinstance(value, str):
            raise self.fail(f"{path}.{key}", "a string", value if key in obj else _Missing())
        return value

    def optional_string(self, obj: Mapping[str, JSONValue], key: str, path: str) -> str | None:
        """A string field that may be absent or null."""
        value = obj.get(key)
        if value is None or isinstance(value, str):
            return value
        raise self.fail(f"{path}.{key}", "a string or null", value)

    def index(self, obj: Mapping[str, JSONValue], key: str, path: str) -> int:
        """A required non-negative integer field (booleans are not integers here)."""
        value = obj.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            got = value if key in obj else _Missing()
            raise self.fail(f"{path}.{key}", "a non-negative integer", got)
        return value

    def array(
        self, obj: Mapping[str, JSONValue], key: str, path: str
    ) -> Iterator[tuple[str, JSONValue]]:
        """An array field that may be absent or null (read as empty), with element paths."""
        value = obj.get(key)
        if value is None:
            return iter(())
        if not isinstance(value, list | tuple):
            raise self.fail(f"{path}.{key}", "an array or null", value)
        return ((f"{path}.{key}[{i}]", element) for i, element in enumerate(value))

    def object(self, value: JSONValue, path: str) -> Mapping[str, JSONValue]:
        """A value that must be a JSON object."""
        if not isinstance(value, Mapping):
            raise self.fail(path, "an object", value)
        return value

    def optional_object(
        self, obj: Mapping[str, JSONValue], key: str, path: str
    ) -> Mapping[str, JSONValue] | None:
        """An object field that may be absent or null."""
        value = obj.get(key)
        return None if value is None else self.object(value, f"{path}.{key}")


def output_items(
    items: Sequence[Mapping[str, JSONValue]], *, kind: str, output_type: type[object]
) -> Iterator[tuple[str, ItemReader]]:
    """Yield ``(item type, reader)`` for each item that declares a string ``type``."""
    for index, item in enumerate(items):
        item_type = item.get("type")
        if isinstance(item_type, str):
            yield (
                item_type,
                ItemReader(
                    kind=kind, output_type=output_type, item=item, path=f"$.output[{index}]"
                ),
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class TextPart:
    """One ``output_text`` part of an assistant message and its annotations."""

    text: str
    """The part's text; annotation indexes point into it."""
    annotations: tuple[tuple[str, Mapping[str, JSONValue]], ...]
    """``(path, annotation object)`` pairs, in order."""


def message_text_parts(reader: ItemReader) -> Iterator[TextPart]:
    """Yield the ``output_text`` parts of a ``message`` item; refusals and others are skipped."""
    for part_path, raw_part in reader.array(reader.item, "content", reader.path):
        part = reader.object(raw_part, part_path)
        if part.get("type") != "output_text":
            continue
        text = reader.string(part, "text", part_path)
        annotations = tuple(
            (path, reader.object(raw, path))
            for path, raw in reader.array(part, "annotations", part_path)
        )
        yield TextPart(text=text, annotations=annotations)
