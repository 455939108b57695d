"""The event-stream parser: the same events however the bytes are chunked, in linear time."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from weakincentives.adapters._sse import EventStreamParser, ServerEvent

_LINE_ENDS = st.sampled_from(("\n", "\r", "\r\n"))
_VALUES = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=12)


@st.composite
def streams(draw: st.DrawFn) -> bytes:
    """An event stream: events with names and multi-line data, comments, mixed line ends."""
    lines: list[str] = []
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            lines.append(f": {draw(_VALUES)}")
        if draw(st.booleans()):
            lines.append(f"event: {draw(_VALUES)}")
        if draw(st.booleans()):
            lines.append(f"{draw(st.sampled_from(('id', 'retry')))}: {draw(_VALUES)}")
        lines.extend(
            f"data:{draw(st.sampled_from(('', ' ')))}{draw(_VALUES)}"
            for _ in range(draw(st.integers(1, 3)))
        )
        lines.append("")
    if draw(st.booleans()):
        lines.append(f"data: {draw(_VALUES)}")  # a last event with no blank line after it
    return "".join(line + draw(_LINE_ENDS) for line in lines).encode("utf-8")


def parse(chunks: list[bytes]) -> list[ServerEvent]:
    parser = EventStreamParser()
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    return events + parser.close()


@given(stream=streams(), cuts=st.lists(st.integers(0, 10_000), max_size=20))
def test_any_chunking_gives_the_events_of_one_shot_parsing(stream: bytes, cuts: list[int]) -> None:
    """Cuts anywhere (inside a CRLF, inside a multi-byte character) change nothing."""
    points = sorted({cut % (len(stream) + 1) for cut in cuts})
    chunks = [
        stream[start:end] for start, end in zip([0, *points], [*points, len(stream)], strict=True)
    ]
    assert parse(chunks) == parse([stream])


@given(stream=streams())
def test_byte_by_byte_gives_the_events_of_one_shot_parsing(stream: bytes) -> None:
    """The smallest chunks of all, one byte each."""
    assert parse([stream[i : i + 1] for i in range(len(stream))]) == parse([stream])


def test_a_lone_cr_at_a_chunk_end_waits_for_the_next_byte() -> None:
    """A CR may be the first half of a CRLF: the line ends once, whichever follows."""
    parser = EventStreamParser()
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\n\r\n") == [ServerEvent(event=None, data="a")]
    assert parser.feed(b"data: b\r") == []
    assert parser.feed(b"\r") == []  # the second CR may still become a CRLF
    assert parser.close() == [ServerEvent(event=None, data="b")]


def test_a_huge_event_in_small_chunks_is_parsed_in_linear_time() -> None:
    """Issue 26 U1: a 16 MB data line arriving in 2 KB chunks.

    Re-copying and re-scanning the whole buffer per chunk (the old parser) copies about
    64 GB here and takes minutes; a linear parser takes well under a second. The bound
    is generous (20 s of CPU) so only a quadratic parser can miss it.
    """
    payload = ("x" * 1023 + "é") * (16 * 1024)
    stream = f"event: delta\ndata: {payload}\n\n".encode()
    chunk = 2048
    parser = EventStreamParser()
    started = time.process_time()
    events: list[ServerEvent] = []
    for start in range(0, len(stream), chunk):
        events.extend(parser.feed(stream[start : start + chunk]))
    spent = time.process_time() - started
    assert events == [ServerEvent(event="delta", data=payload)]
    assert spent < 20.0
