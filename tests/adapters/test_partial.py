"""PartialFields: the top-level fields of a JSON answer that are complete so far."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from hypothesis import given
from hypothesis import strategies as st

from weakincentives.adapters._partial import PartialFields


@dataclass(frozen=True)
class Item:
    label: str


@dataclass(frozen=True)
class Report:
    title: str
    score: float
    tags: list[str] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    note: str | None = None


def fed(*chunks: str) -> list[dict[str, object]]:
    """The fields after every chunk that completed at least one."""
    partial = PartialFields(Report)
    return [dict(partial.fields) for chunk in chunks if partial.feed(chunk)]


def test_a_field_is_reported_once_its_value_closes() -> None:
    """Strings, lists and nested objects count when closed; commas inside do not end them."""
    assert fed(
        '{"title": "a, {b}', ' \\" c", "tags": ["x", "y"', '], "items": [{"label": "z"}]}'
    ) == [
        {"title": 'a, {b} " c'},
        {"title": 'a, {b} " c', "tags": ["x", "y"], "items": [Item(label="z")]},
    ]


def test_a_number_waits_for_what_follows_it() -> None:
    """ "score": 4 may become 45: it counts only at the comma or the closing brace."""
    assert fed('{"score": 4', "5", "}") == [{"score": 45.0}]


def test_a_code_fence_before_the_object_is_skipped() -> None:
    """```json on its own line, even split across chunks, is not the answer."""
    assert fed("``", "`json\n", '{"title": "t"}') == [{"title": "t"}]


def test_text_that_is_no_object_yields_nothing() -> None:
    """Prose (or a list) never produces partial fields."""
    assert fed("Sure! ", '{"title": "t"}') == []
    assert fed('[{"title": "t"}]') == []


def test_unknown_or_ill_typed_members_are_left_out() -> None:
    """A member naming no field, or whose value does not fit, is skipped."""
    assert fed('{"extra": 1, "score": "high", "title": "t"}') == [{"title": "t"}]


def test_nothing_after_the_object_closes() -> None:
    """Text after the closing brace changes nothing."""
    partial = PartialFields(Report)
    assert partial.feed('{"title": "t"} and more, "score": 1}') is True
    assert partial.feed(', "score": 2}') is False
    assert dict(partial.fields) == {"title": "t"}


@given(st.data())
def test_any_chunking_ends_with_every_field(data: st.DataObject) -> None:
    """However the text is cut, the last fields are the whole object's."""
    report = {"title": "t,}", "score": 2.5, "tags": ["a", "b"], "items": [{"label": "l"}]}
    text = json.dumps(report)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    chunks = [text[start:end] for start, end in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    partial = PartialFields(Report)
    for chunk in chunks:
        partial.feed(chunk)
    assert dict(partial.fields) == {
        "title": "t,}",
        "score": 2.5,
        "tags": ["a", "b"],
        "items": [Item(label="l")],
    }
