"""Hostile upstream servers over real stdio: deep categories, slow opens, notification bursts."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from tests.mcp.conftest import stdio_spec
from weakincentives.mcp import MCPTimeoutError, MCPToolbox
from weakincentives.mcp import _toolbox as toolbox_module
from weakincentives.mcp._assemble import build_catalog
from weakincentives.mcp._import import ImportProblem


def test_a_tool_filed_too_deep_is_left_out_and_the_rest_imports() -> None:
    """A 100,000-segment ``_meta.category`` is one problem, not a failed toolbox."""
    with MCPToolbox.open([stdio_spec("--deep-category", "100000")]) as toolbox:
        assert toolbox.problems == (
            ImportProblem(
                server="testsrv",
                tool_name="deep",
                reason="tool 'testsrv.deep' has a path of 100,001 segments (at most 32)",
            ),
        )
        assert toolbox.catalog.tool("testsrv.deep") is None
        assert toolbox.catalog.tool("testsrv.echo") is not None
        assert toolbox.discovery().call_tool("testsrv.echo", {"text": "hi"}).message == "hi"


def test_connect_timeout_bounds_the_listing() -> None:
    """A server that answers the handshake but never its tools/list fails the open in time."""
    spec = stdio_spec("--hang-list", name="stuck")
    with pytest.raises(MCPTimeoutError) as caught:
        MCPToolbox.open([spec], connect_timeout=4.0)
    error = caught.value
    assert (error.server, error.operation, error.timeout) == ("stuck", "connect", 4.0)
    assert error.reason == (
        "no answer within 4 s while listing "
        "(connect_timeout bounds the whole open: connecting, listing, building)"
    )


@pytest.fixture
def endless_build(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Building the catalogue blocks until the test releases it (a build that takes too long)."""
    release = threading.Event()
    built = build_catalog

    def slow(*args: object) -> object:
        release.wait()
        return built(*args)  # type: ignore[arg-type]  # the arguments build_catalog got

    monkeypatch.setattr(toolbox_module, "build_catalog", slow)
    yield release
    release.set()


def test_connect_timeout_bounds_building_the_catalogue(endless_build: threading.Event) -> None:
    spec = stdio_spec(name="big")
    with pytest.raises(MCPTimeoutError) as caught:
        MCPToolbox.open([spec], connect_timeout=4.0)
    assert caught.value.reason == (
        "the catalogue was not built within 4 s "
        "(connect_timeout bounds the whole open: connecting, listing, building)"
    )
    assert (caught.value.server, caught.value.operation) == ("big", "connect")


def test_a_burst_of_list_changes_is_read_twice_at_most() -> None:
    """1,500 notifications: one re-read in flight, one more after it, none for the rest.

    The server holds every ``tools/list`` until its burst is sent, so on the 2025-11-25
    wire (notifications on the same ordered stream as the replies) every notification
    after the first arrives while the first re-read is in flight. (On 2026-07-28 they
    come on a listen stream, which the SDK's server buffers apart from the replies, so
    how many arrive during each re-read varies; the coalescing is the same code.)
    """
    versions: list[int] = []
    settled = threading.Event()

    def changed(toolbox: MCPToolbox) -> None:
        versions.append(toolbox.version)
        if toolbox.version == 3:
            settled.set()

    spec = stdio_spec("--burst", "--legacy", name="noisy")
    with MCPToolbox.open([spec], on_change=changed) as toolbox:
        discovery = toolbox.discovery()
        assert discovery.call_tool("noisy.burst", {"count": 1500}).message == "sent 1500"
        assert settled.wait(timeout=30)
        # The open listed once; the burst cost two more reads of tools/list.
        assert discovery.call_tool("noisy.list_count", {}).message == "3"
        assert versions == [1, 2, 3]


def test_resources_and_prompts_the_catalogue_refuses_are_left_out_alone() -> None:
    """A 10,000-character resource URI and a prompt without a name are two problems.

    The server's tools, its other resource and its other prompt still import.
    """
    with MCPToolbox.open([stdio_spec("--hostile-reads", name="reads")]) as toolbox:
        long_uri = "file:///" + "a" * 10_000
        problems = {problem.tool_name: problem for problem in toolbox.problems}
        assert set(problems) == {long_uri, ""}
        assert problems[long_uri].server == "reads"
        assert "tool_id has 10,023 characters (at most 512)" in problems[long_uri].reason
        assert problems[""].reason == "tool 'reads.prompt:' has an empty name"
        assert toolbox.catalog.tool("reads.echo") is not None
        assert toolbox.catalog.tool("reads.prompt:greet") is not None
        discovery = toolbox.discovery()
        read = discovery.call_tool("reads.resource:file:///fine", {})
        assert read.message == "read file:///fine"


def test_an_entry_whose_id_is_taken_is_left_out_and_the_rest_imports() -> None:
    """Ids that repeat across entries are problems of the later entry, not a failed open.

    Server ``a`` lists a tool ``b.echo`` and server ``a.b`` a tool ``echo``: both are
    ``a.b.echo``. Server ``reads`` lists a tool named ``resource:file:///fine`` and a
    resource ``file:///fine``: both are ``reads.resource:file:///fine``.
    """
    specs = [
        stdio_spec("--extra-tool", "b.echo", name="a"),
        stdio_spec(name="a.b"),
        stdio_spec("--hostile-reads", "--extra-tool", "resource:file:///fine", name="reads"),
    ]
    with MCPToolbox.open(specs) as toolbox:
        taken = [problem for problem in toolbox.problems if "already" in problem.reason]
        assert taken == [
            ImportProblem(
                server="a.b",
                tool_name="echo",
                reason="its catalogue id 'a.b.echo' is already taken by another entry",
            ),
            ImportProblem(
                server="reads",
                tool_name="file:///fine",
                reason="its catalogue id 'reads.resource:file:///fine' is already taken "
                "by another entry",
            ),
        ]
        discovery = toolbox.discovery()
        assert discovery.call_tool("a.b.echo", {}).message == "ran b.echo"
        assert discovery.call_tool("a.b.add", {"a": 1, "b": 2}).message == "3"
        assert (
            discovery.call_tool("reads.resource:file:///fine", {}).message
            == "ran resource:file:///fine"
        )
