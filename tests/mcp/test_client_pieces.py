"""Smaller pieces of the client: stdin lines, the loop hop, input rounds, sampling prompts,
and servers that offer logging or change streams and then refuse them."""

from __future__ import annotations

import asyncio
import io
import logging
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from mcp import ClientSession, types

from tests.mcp.conftest import HttpFactory
from tests.mcp.server_app import build_server
from weakincentives.adapters import OfflineAdapter, ScriptedTurn
from weakincentives.mcp import (
    HttpServer,
    MCPProtocolError,
    MCPTimeoutError,
    MCPToolbox,
    _rounds,
    _transports,
)
from weakincentives.mcp._connection import MCPConnection
from weakincentives.mcp._hooks import sampler_of
from weakincentives.mcp._hop import hop
from weakincentives.mcp._rounds import EndlessRoundsError, settle
from weakincentives.mcp._sampling import sample_with
from weakincentives.mcp._unreadable import OVERLONG
from weakincentives.runtime import InProcessEventBus, PromptRendered


def _lines(data: bytes, *, limit: int = 64) -> list[str]:
    async def read() -> list[str]:
        reader = asyncio.StreamReader(limit=limit)
        reader.feed_data(data)
        reader.feed_eof()
        return [line async for line in _transports._Lines(reader)]

    return asyncio.run(read())


class TestStdinLines:
    def test_lines_come_whole_and_a_last_line_may_lack_its_newline(self) -> None:
        """Each JSON-RPC line as written; the end of input ends the iteration."""
        assert _lines(b'{"a":1}\n{"b":2}') == ['{"a":1}\n', '{"b":2}']

    def test_a_line_longer_than_the_limit_is_dropped_and_reading_goes_on(self) -> None:
        """An over-long line becomes OVERLONG (the client is told); the next line reads."""
        lines = _lines(b"x" * 200 + b"\n" + b'{"ok":1}\n', limit=16)
        assert lines == [OVERLONG, '{"ok":1}\n']
        assert lines[0] is OVERLONG

    def test_an_over_long_last_line_ends_the_input(self) -> None:
        """Without a newline before the end, the long tail is dropped."""
        assert _lines(b"y" * 200, limit=16) == [OVERLONG]

    def test_stdin_without_a_descriptor_uses_the_sdks_reader(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A stand-in stream (no file descriptor) is left to the SDK's reader."""
        monkeypatch.setattr(sys, "stdin", io.StringIO("{}\n"))

        async def enter() -> object:
            async with _transports._stdin_lines() as lines:
                return lines

        assert asyncio.run(enter()) is None

    def test_stdin_from_a_regular_file_is_read_line_by_line(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The loop cannot watch a file: its lines are read on a worker thread, an
        over-long one is reported as OVERLONG and skipped, and reading goes on."""
        monkeypatch.setattr(_transports, "MAX_LINE_BYTES", 16)
        path = tmp_path / "input"
        path.write_bytes(b'{"a":1}\n' + b"z" * 40 + b"\n" + b'{"b":2}\n' + b"tail")
        with path.open() as handle:
            monkeypatch.setattr(sys, "stdin", handle)

            async def read() -> list[str]:
                async with _transports._stdin_lines() as lines:
                    assert lines is not None
                    return [line async for line in lines]

            lines = asyncio.run(read())
        assert lines == ['{"a":1}\n', OVERLONG, '{"b":2}\n', "tail"]
        assert lines[1] is OVERLONG


@pytest.fixture
def other_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop running in a thread of its own."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join()
    loop.close()


def test_a_hop_that_is_not_settled_in_time_is_a_timeout(
    other_loop: asyncio.AbstractEventLoop,
) -> None:
    """The guard bounds the wait for another loop, naming the server and the time."""

    async def never() -> None:
        await asyncio.Event().wait()

    with pytest.raises(MCPTimeoutError, match=r"no answer within 0\.05 s") as caught:
        asyncio.run(hop(other_loop, never(), guard=0.05, server="far"))
    assert (caught.value.server, caught.value.timeout) == ("far", 0.05)


class TestInputRounds:
    def test_a_server_that_keeps_asking_is_stopped(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """After MAX_INPUT_ROUNDS retries the request fails instead of looping."""
        monkeypatch.setattr(_rounds, "_STATE_ONLY_WAIT", 0)
        again = types.InputRequiredResult(request_state="more")
        retries: list[str | None] = []

        async def retry(
            responses: types.InputResponses | None, state: str | None
        ) -> types.InputRequiredResult:
            retries.append(state)
            return again

        with pytest.raises(EndlessRoundsError, match="more than 10 times"):
            asyncio.run(settle(cast(ClientSession, None), again, retry))
        assert retries == ["more"] * 10

    def test_a_state_only_round_is_retried_without_answers(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A round without requests is sent again with the state and no responses."""
        monkeypatch.setattr(_rounds, "_STATE_ONLY_WAIT", 0)
        seen: list[tuple[Any, str | None]] = []

        async def retry(responses: Any, state: str | None) -> str:
            seen.append((responses, state))
            return "final"

        first = types.InputRequiredResult(request_state="s1")
        assert asyncio.run(settle(cast(ClientSession, None), first, retry)) == "final"
        assert seen == [(None, "s1")]


def _request(
    *messages: types.SamplingMessage, system: str | None = None
) -> types.CreateMessageRequestParams:
    return types.CreateMessageRequestParams(
        messages=list(messages), max_tokens=10, system_prompt=system
    )


class TestSamplingPrompt:
    def test_the_system_prompt_and_media_are_rendered(self) -> None:
        """Instructions first, then one line per message, media as placeholders."""
        bus = InProcessEventBus()
        rendered: list[PromptRendered] = []
        bus.subscribe(PromptRendered, rendered.append)
        adapter = OfflineAdapter([ScriptedTurn(text="ok")])
        image = types.ImageContent(type="image", data="AA==", mime_type="image/png")
        params = _request(
            types.SamplingMessage(role="user", content=image),
            types.SamplingMessage(
                role="assistant", content=types.TextContent(type="text", text="$5")
            ),
            system="Answer in $ only.",
        )
        answer = asyncio.run(sample_with(adapter, "srv", params, bus=bus))
        assert isinstance(answer, types.CreateMessageResult)
        assert (answer.model, answer.stop_reason) == (adapter.name, "endTurn")
        (prompt,) = rendered
        assert "Answer in $ only." in prompt.text
        assert prompt.text.endswith("user: [image image/png]\n\nassistant: $5")

    def test_an_evaluation_that_fails_is_an_error_answer(self) -> None:
        """The server hears which adapter failed and why; nothing raises."""
        adapter = OfflineAdapter(responder=lambda request: cast(ScriptedTurn, "not a turn"))
        params = _request(
            types.SamplingMessage(role="user", content=types.TextContent(type="text", text="hi"))
        )
        answer = asyncio.run(sample_with(adapter, "srv", params, bus=None))
        assert isinstance(answer, types.ErrorData)
        assert answer.code == types.INTERNAL_ERROR
        assert answer.message == (
            "sampling on offline failed: [response] prompt 'sampling': the offline responder "
            "returned str, not a ScriptedTurn"
        )

    def test_a_sampling_function_that_raises_is_an_error_answer(self) -> None:
        """The user's function failed: the server hears the exception."""

        def broken(server: str, params: types.CreateMessageRequestParams) -> Any:
            raise RuntimeError("model offline")

        sampler = sampler_of(broken, None)
        assert sampler is not None

        async def ask() -> types.CreateMessageResult | types.ErrorData:
            assert sampler is not None
            return await sampler("srv", _request())

        answer = asyncio.run(ask())
        assert answer == types.ErrorData(
            code=types.INTERNAL_ERROR,
            message="the client's sampling handler failed: RuntimeError: model offline",
        )


def test_a_server_refusing_what_it_offers_still_serves_its_tools(
    http_server: HttpFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """A refused logging/setLevel or listen stream is a warning, not a failed connection."""
    url = http_server(build_server(name="moody", faulty=True))
    with (
        caplog.at_level(logging.WARNING, logger="weakincentives.mcp"),
        MCPToolbox.open([HttpServer(url=url)], log_level="info") as toolbox,
    ):
        assert toolbox.discovery().call_tool("moody.echo", {"text": "hi"}).message == "hi"

        async def subscribe(connection: MCPConnection) -> None:
            await connection.subscribe("test://anything")

        connection = toolbox.connection("moody")
        assert connection is not None
        with pytest.raises(MCPProtocolError, match=r"\(request\): the server answered with "):
            asyncio.run(subscribe(connection))
    assert "the server refused subscriptions/listen: not today" in caplog.text
