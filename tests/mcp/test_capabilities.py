"""What servers may ask of the client, and report to it, reaches what the user controls.

Every test runs against the everything server (the official SDK's ``Server``) over
stdio and streamable HTTP, both when the connection negotiates 2026-07-28 (requests
to the client arrive as input rounds) and when the server knows only the 2025
handshake (they arrive as server-to-client requests).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from mcp import types

from tests.mcp.conftest import Everything, stdio_spec
from tests.mcp.everything_app import PNG
from weakincentives.adapters import OfflineAdapter, ScriptedTurn
from weakincentives.discovery import DiscoveryError
from weakincentives.errors import ConfigValidationError
from weakincentives.mcp import ImportProblem, MCPNotice, MCPToolbox
from weakincentives.runtime import InProcessEventBus, PromptRendered


def test_the_protocol_revision_is_the_newest_both_sides_speak(everything: Everything) -> None:
    """2026-07-28 when the server offers it, else the 2025-11-25 handshake."""
    toolbox = everything.open()
    connection = toolbox.connection("everything")
    assert connection is not None
    assert connection.protocol_version == everything.era


class TestElicitation:
    def test_without_a_callback_every_request_is_declined(self, everything: Everything) -> None:
        """The default answer is a decline, which the server reads as one."""
        answer = (
            everything.open()
            .discovery()
            .call_tool("everything.test_elicitation", {"message": "Who are you?"})
        )
        assert (answer.success, answer.message) == (
            True,
            "Elicitation completed: action=decline, content=null",
        )

    def test_the_callback_answers_and_defaults_fill_the_fields_it_left_out(
        self, everything: Everything
    ) -> None:
        """An accepted form gets the schema's defaults for omitted fields (SEP-1034)."""
        asked: list[tuple[str, str]] = []

        def answer(server: str, request: types.ElicitRequestParams) -> types.ElicitResult:
            asked.append((server, request.message))
            return types.ElicitResult(action="accept", content={"name": "Ada", "age": 36})

        toolbox = everything.open(elicitation=answer)
        reply = toolbox.discovery().call_tool("everything.test_elicitation_sep1034_defaults", {})
        assert asked == [("everything", "Please accept the defaults")]
        content = {
            "age": 36,
            "name": "Ada",
            "score": 95.5,
            "status": "active",
            "verified": True,
        }
        assert (
            reply.message == f"Elicitation completed: action=accept, content={json.dumps(content)}"
        )

    def test_an_async_callback_is_awaited(self, everything: Everything) -> None:
        """Callbacks may be coroutines (a person answering takes a while)."""

        async def answer(server: str, request: types.ElicitRequestParams) -> types.ElicitResult:
            return types.ElicitResult(action="cancel")

        reply = (
            everything.open(elicitation=answer)
            .discovery()
            .call_tool("everything.test_elicitation", {"message": "Sure?"})
        )
        assert reply.message == "Elicitation completed: action=cancel, content=null"

    def test_a_callback_that_raises_fails_the_call_with_its_reason(
        self, everything: Everything
    ) -> None:
        """The server hears the error; the model reads which handler failed and why."""

        def broken(server: str, request: types.ElicitRequestParams) -> types.ElicitResult:
            raise LookupError("no user at the keyboard")

        reply = (
            everything.open(elicitation=broken)
            .discovery()
            .call_tool("everything.test_elicitation", {"message": "Hello?"})
        )
        assert reply.success is False
        assert (
            "the client's elicitation handler failed: LookupError: no user at the keyboard"
            in reply.message
        )


class TestSampling:
    def test_an_adapter_answers_with_an_evaluation(self, everything: Everything) -> None:
        """The server's request becomes a prompt evaluated on the adapter the user named."""
        bus = InProcessEventBus()
        rendered: list[PromptRendered] = []
        bus.subscribe(PromptRendered, rendered.append)
        adapter = OfflineAdapter([ScriptedTurn(text="forty-two")])
        toolbox = everything.open(sampling=adapter, bus=bus)
        reply = toolbox.discovery().call_tool("everything.test_sampling", {"prompt": "6 x 7?"})
        assert (reply.success, reply.message) == (True, "LLM response: forty-two")
        (prompt,) = rendered
        assert (prompt.prompt_ns, prompt.prompt_key) == ("mcp", "sampling")
        assert prompt.text.endswith(
            "The MCP server everything asks for the next assistant message of this "
            "conversation.\n\nuser: 6 x 7?"
        )

    def test_a_function_may_answer_instead(self, everything: Everything) -> None:
        """Without an adapter, a plain function can produce the assistant message."""

        def answer(
            server: str, request: types.CreateMessageRequestParams
        ) -> types.CreateMessageResult:
            assert request.max_tokens == 100
            return types.CreateMessageResult(
                role="assistant",
                content=types.TextContent(type="text", text=f"{server} asked"),
                model="by-hand",
            )

        reply = (
            everything.open(sampling=answer)
            .discovery()
            .call_tool("everything.test_sampling", {"prompt": "hi"})
        )
        assert reply.message == "LLM response: everything asked"

    def test_without_an_adapter_sampling_is_not_offered(self, everything: Everything) -> None:
        """The server's request is refused, and the call fails saying so."""
        reply = everything.open().discovery().call_tool("everything.test_sampling", {"prompt": "x"})
        assert reply.success is False
        prefix = "everything.test_sampling failed: MCP server 'everything' (call_tool): "
        if everything.era == "2025-11-25":  # the server relays the client's refusal
            assert reply.message == f"{prefix}the server answered with error -32600: " + (
                "Sampling not supported"
            )
        else:  # the refusal happens here, answering the server's input round
            assert reply.message == f"{prefix}the server asked for sampling/createMessage, " + (
                "and this client refused: -32600 Sampling not supported"
            )


class TestRoots:
    def test_the_given_roots_are_listed(self, everything: Everything, tmp_path: Path) -> None:
        """Directories become file:// URIs; URIs pass as given."""
        toolbox = everything.open(roots=[str(tmp_path), "file:///srv/data"])
        reply = toolbox.discovery().call_tool("everything.test_roots", {})
        assert json.loads(reply.message) == [tmp_path.resolve().as_uri(), "file:///srv/data"]

    def test_without_roots_they_are_not_offered(self, everything: Everything) -> None:
        """A server asking anyway gets an error it can report."""
        reply = everything.open().discovery().call_tool("everything.test_roots", {})
        assert reply.success is False
        refused = {
            "2025-11-25": "the server answered with error -32600: List roots not supported",
            "2026-07-28": "the server asked for roots/list, and this client refused: -32600 "
            "List roots not supported",
        }
        assert reply.message == (
            f"everything.test_roots failed: MCP server 'everything' (call_tool): "
            f"{refused[everything.era]}"
        )


def test_a_root_that_is_not_a_uri_is_refused() -> None:
    """Roots are checked before anything connects."""
    with pytest.raises(ConfigValidationError, match=r"root 'http://\[' is not a directory"):
        MCPToolbox.open([], roots=["http://["])


class TestReports:
    def test_log_messages_become_events_on_the_bus(self, everything: Everything) -> None:
        """Each notifications/message is an MCPNotice (2026-07-28 needs the log_level opt-in)."""
        bus = InProcessEventBus()
        notices: list[MCPNotice] = []
        bus.subscribe(MCPNotice, notices.append)
        toolbox = everything.open(bus=bus, log_level="info")
        reply = toolbox.discovery().call_tool("everything.test_tool_with_logging", {})
        assert reply.message == "Logged three messages"
        assert [(n.kind, n.level, n.logger, n.message) for n in notices] == [
            ("log", "info", "everything", "Tool execution started"),
            ("log", "info", "everything", "Tool processing data"),
            ("log", "info", "everything", "Tool execution completed"),
        ]

    def test_progress_reports_become_events_on_the_bus(self, everything: Everything) -> None:
        """Each notifications/progress of a call is an MCPNotice naming the tool."""
        bus = InProcessEventBus()
        seen: list[MCPNotice] = []
        done = threading.Event()

        def note(notice: MCPNotice) -> None:
            seen.append(notice)
            if notice.progress == 100:
                done.set()

        bus.subscribe(MCPNotice, note)
        toolbox = everything.open(bus=bus)
        reply = toolbox.discovery().call_tool("everything.test_tool_with_progress", {})
        assert reply.message == "Progress reported"
        assert done.wait(timeout=30)
        assert [(n.kind, n.tool, n.progress, n.total, n.message) for n in seen] == [
            ("progress", "test_tool_with_progress", 0, 100, "0 of 100"),
            ("progress", "test_tool_with_progress", 50, 100, "50 of 100"),
            ("progress", "test_tool_with_progress", 100, 100, "100 of 100"),
        ]


class TestResourcesAndPrompts:
    def test_they_are_catalogue_entries(self, everything: Everything) -> None:
        """Each resource, template and prompt has an entry under resources/ or prompts/."""
        catalog = everything.open().catalog
        reads = [tool.tool_id for tool in catalog.tools if {"resource", "prompt"} & set(tool.tags)]
        assert reads == [
            "everything.resource:test://static-text",
            "everything.resource:test://static-binary",
            "everything.template:test://template/{id}/data",
            "everything.prompt:test_simple_prompt",
            "everything.prompt:test_prompt_with_arguments",
            "everything.prompt:test_prompt_with_embedded_resource",
            "everything.prompt:test_prompt_with_image",
        ]
        template = catalog.tool("everything.template:test://template/{id}/data")
        assert template is not None
        assert template.paths == (("everything", "resources"),)
        assert template.tags == ("resource", "read-only")
        assert template.args_schema == {
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "required": ["id"],
            "additionalProperties": False,
        }

    def test_calling_a_resource_reads_it(self, everything: Everything) -> None:
        """Text becomes the message; binary contents are described, not pasted."""
        discovery = everything.open().discovery()
        text = discovery.call_tool("everything.resource:test://static-text", {})
        assert text.message == "This is the content of the static text resource."
        binary = discovery.call_tool("everything.resource:test://static-binary", {})
        assert binary.value == [
            {
                "type": "resource",
                "uri": "test://static-binary",
                "mimeType": "image/png",
                "bytes": len(PNG) * 3 // 4 - PNG[-2:].count("="),
            }
        ]

    def test_a_template_is_read_at_the_uri_its_arguments_make(self, everything: Everything) -> None:
        """The arguments fill the URI template; the server reads that URI."""
        discovery = everything.open().discovery()
        read = discovery.call_tool("everything.template:test://template/{id}/data", {"id": "7"})
        assert json.loads(read.message) == {
            "id": "7",
            "templateTest": True,
            "data": "Data for ID: 7",
        }

    def test_calling_a_prompt_gets_its_messages(self, everything: Everything) -> None:
        """Prompt arguments are the entry's arguments; messages come back as lines."""
        discovery = everything.open().discovery()
        prompt = discovery.call_tool(
            "everything.prompt:test_prompt_with_arguments", {"arg1": "a", "arg2": "b"}
        )
        assert prompt.message == "user: Prompt with arguments: arg1='a', arg2='b'"
        with pytest.raises(DiscoveryError, match="missing required property 'arg2'") as caught:
            discovery.call_tool("everything.prompt:test_prompt_with_arguments", {"arg1": "a"})
        assert caught.value.code == "INVALID_ARGUMENTS"


class TestTasks:
    def test_a_task_required_tool_runs_through_the_task_flow(self, everything: Everything) -> None:
        """2025-11-25 with task support: tools/call with a task, tasks/get, tasks/result.

        On 2026-07-28, tasks are not in the protocol and the tool carries no
        taskSupport, so it is called directly.
        """
        toolbox = everything.open()
        reply = toolbox.discovery().call_tool("everything.test_task", {"text": "hi"})
        expected = {"2025-11-25": "task task-1 echoed hi", "2026-07-28": "ran hi without a task"}
        assert (reply.success, reply.message) == (True, expected[everything.era])
        assert toolbox.problems == ()

    def test_a_task_that_fails_is_a_failed_call_with_its_status(
        self, everything: Everything
    ) -> None:
        """A failed task's status message is what the model reads."""
        reply = everything.open().discovery().call_tool("everything.test_task", {"text": "fail"})
        if everything.era == "2025-11-25":
            assert (reply.success, reply.message) == (False, "the task failed: out of disk")
        else:
            assert reply.message == "ran fail without a task"

    def test_a_server_may_answer_a_task_request_at_once(self, everything: Everything) -> None:
        """A plain result instead of a task is taken as the answer."""
        reply = everything.open().discovery().call_tool("everything.test_task", {"text": "now"})
        expected = {"2025-11-25": "done at once", "2026-07-28": "ran now without a task"}
        assert reply.message == expected[everything.era]


def test_a_task_required_tool_the_server_cannot_run_is_left_out_with_the_reason() -> None:
    """Without task support (2025-11-25), calling it could only fail: it is not imported."""
    with MCPToolbox.open([stdio_spec("--legacy", "--task-tool", name="plain")]) as toolbox:
        assert toolbox.catalog.tool("plain.slow_batch") is None
        assert toolbox.catalog.tool("plain.echo") is not None
        assert toolbox.problems == (
            ImportProblem(
                server="plain",
                tool_name="slow_batch",
                reason="the tool must be called as a task (execution.taskSupport: required), "
                "and the server does not offer task-augmented tools/call "
                "(capabilities.tasks.requests.tools.call)",
            ),
        )
