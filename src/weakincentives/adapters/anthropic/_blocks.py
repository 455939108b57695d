"""Walking the content blocks of Anthropic messages for the hosted tool codecs.

The Anthropic provider keeps one raw item per model turn: the ``message`` object with
every content block of the turn (a turn continued after ``pause_turn`` is merged into
one). Codecs read the blocks of every turn in order. Field checks reuse the
``ItemReader`` of the OpenAI codecs, so errors name the JSON path the same way
(``$.content[3].content[0].url``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from weakincentives.adapters.openai._codec_reader import ItemReader
from weakincentives.serde import JSONValue

__all__ = ["Block", "container_id", "message_blocks"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Block:
    """One content block of one turn, with a reader for its fields."""

    turn: int
    """Which raw item (model turn) the block belongs to, from 0."""
    kind: str
    """The block's ``type``."""
    reader: ItemReader
    """Typed access to the block's fields; ``reader.item`` is the block."""


def message_blocks(
    items: Sequence[Mapping[str, JSONValue]], *, kind: str, output_type: type[object]
) -> Iterator[Block]:
    """Every content block that declares a string ``type``, turn by turn, in order."""
    for turn, item in enumerate(items):
        if item.get("type") != "message":
            continue
        turn_reader = ItemReader(kind=kind, output_type=output_type, item=item, path="$")
        for path, raw in turn_reader.array(item, "content", "$"):
            block = turn_reader.object(raw, path)
            block_type = block.get("type")
            if isinstance(block_type, str):
                reader = ItemReader(kind=kind, output_type=output_type, item=block, path=path)
                yield Block(turn=turn, kind=block_type, reader=reader)


def container_id(item: Mapping[str, JSONValue]) -> str | None:
    """The id of the code execution container a message used, when it reports one."""
    container = item.get("container")
    if isinstance(container, dict):
        found = container.get("id")
        return found if isinstance(found, str) else None
    return None
