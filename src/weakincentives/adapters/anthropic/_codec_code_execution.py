"""Anthropic codec for the ``code_interpreter`` hosted tool (Anthropic's code execution).

Wire format from the ``anthropic`` SDK's ``code_execution_tool_*_param.py`` and the code
execution tool guide: ``{"type": "code_execution_20250825", "name": "code_execution"}``
with no options. That version gives the model Bash and Python (with file operations);
the legacy ``code_execution_20250522`` runs Python only. The sandbox has fixed
resources and no internet access, so time limits, memory sizes and network allow-lists
are refused. Files (``file_ids``) are placed in the container through
``container_upload`` blocks in the prompt message, and an existing container
(``container_id``) is named in the request's ``container`` field; both are added by
the provider's request builder (see ``code_execution_request``).

Runs show up as ``server_tool_use`` blocks (``code_execution`` with ``input.code``, or
``bash_code_execution`` with ``input.command``) answered by result blocks:
``code_execution_tool_result`` / ``bash_code_execution_tool_result`` whose ``content``
is a result (``stdout``, ``stderr``, ``return_code``, ``content`` listing output files
by ``file_id``), an encrypted result (stdout withheld), or an error object with an
``error_code``. File edits by ``text_editor_code_execution`` are not code runs and are
not listed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from weakincentives.adapters.anthropic._blocks import container_id, message_blocks
from weakincentives.adapters.openai._codec_reader import ItemReader
from weakincentives.prompt import HostedTool, HostedToolConfig
from weakincentives.serde import JSONValue
from weakincentives.tools import (
    CODE_INTERPRETER_KIND,
    CodeExecution,
    CodeInterpreterConfig,
    CodeInterpreterResult,
    ConfigProblem,
    ContainerFile,
    raise_config_problems,
)

__all__ = ["AnthropicCodeExecutionCodec", "CodeExecutionToolType", "code_execution_request"]

type CodeExecutionToolType = Literal[
    "code_execution_20250825", "code_execution_20260120", "code_execution_20250522"
]
"""Tool versions this codec can offer."""

_LANGUAGES: dict[str, frozenset[str]] = {
    "code_execution_20250522": frozenset({"python"}),
    "code_execution_20250825": frozenset({"python", "bash"}),
    "code_execution_20260120": frozenset({"python", "bash"}),
}
_RUNS = {"code_execution": "code", "bash_code_execution": "command"}
_RESULTS = {
    "code_execution_tool_result": (
        frozenset({"code_execution_result", "encrypted_code_execution_result"}),
        "code_execution_tool_result_error",
    ),
    "bash_code_execution_tool_result": (
        frozenset({"bash_code_execution_result"}),
        "bash_code_execution_tool_result_error",
    ),
}


class AnthropicCodeExecutionCodec:
    """Serializes ``CodeInterpreterConfig`` to Anthropic's code execution tool and back."""

    def __init__(self, *, tool_type: CodeExecutionToolType = "code_execution_20250825") -> None:
        self._tool_type: str = tool_type

    kind: Final = CODE_INTERPRETER_KIND
    """Always ``"code_interpreter"``: the hosted tool kind this codec serves."""

    def serialize(self, tool: HostedTool[CodeInterpreterConfig]) -> dict[str, JSONValue]:
        """Build the ``{"type": "code_execution_...", "name": "code_execution"}`` spec."""
        _refuse_unsupported(tool.config, self._tool_type)
        return {"type": self._tool_type, "name": "code_execution"}

    def parse_output(
        self,
        response_items: Sequence[Mapping[str, JSONValue]],
        tool: HostedTool[CodeInterpreterConfig],
    ) -> CodeInterpreterResult | None:
        """Collect each code run with its output and files; None if no code ran."""
        runs: dict[str, tuple[str, str | None]] = {}
        results: dict[str, _Result] = {}
        for block in message_blocks(
            response_items, kind=CODE_INTERPRETER_KIND, output_type=CodeInterpreterResult
        ):
            reader = block.reader
            name = reader.item.get("name")
            if block.kind == "server_tool_use" and isinstance(name, str) and name in _RUNS:
                call_id = reader.string(reader.item, "id", reader.path)
                runs[call_id] = (
                    _code(reader, _RUNS[name]),
                    container_id(response_items[block.turn]),
                )
            elif block.kind in _RESULTS:
                result = _read_result(reader, block.kind)
                results[result.call_id] = result
        if not runs:
            return None
        executions: list[CodeExecution] = []
        files: dict[str, ContainerFile] = {}
        for call_id, (code, container) in runs.items():
            result = results.get(call_id, _Result(call_id=call_id, status="incomplete"))
            executions.append(
                CodeExecution(
                    call_id=call_id,
                    status=result.status,
                    code=code,
                    logs=result.stdout + result.stderr,
                    container_id=container,
                )
            )
            for file_id in result.file_ids:
                files.setdefault(
                    file_id,
                    ContainerFile(file_id=file_id, filename="", container_id=container or ""),
                )
        finished = [results[call_id] for call_id in runs if call_id in results]
        return CodeInterpreterResult(
            code="\n\n".join(run.code for run in executions if run.code),
            stdout="".join(result.stdout for result in finished),
            stderr="".join(result.stderr for result in finished),
            exit_code=finished[-1].exit_code if finished else None,
            executions=tuple(executions),
            files=tuple(files.values()),
        )


def code_execution_request(
    tools: Sequence[HostedTool[HostedToolConfig]],
) -> tuple[str | None, tuple[str, ...]]:
    """The container to reuse and the files to upload, from the prompt's code tool."""
    for tool in tools:
        config = tool.config
        if tool.kind == CODE_INTERPRETER_KIND and isinstance(config, CodeInterpreterConfig):
            return config.container_id, config.file_ids
    return None, ()


def _refuse_unsupported(config: CodeInterpreterConfig, tool_type: str) -> None:
    problems: list[ConfigProblem] = []
    runs = _LANGUAGES[tool_type]
    asked = frozenset(config.allowed_languages)
    if asked != runs:
        wanted = tuple(sorted(runs, key=lambda language: language != "python"))
        problems.append(
            ConfigProblem(
                "allowed_languages",
                config.allowed_languages,
                f"Anthropic's {tool_type} tool runs {' and '.join(sorted(runs))} and cannot "
                f"be limited or extended; set allowed_languages={wanted!r}"
                + (
                    ", or use AnthropicCodeExecutionCodec(tool_type='code_execution_20250522') "
                    "for Python only, on models that still offer it"
                    if "bash" in runs and asked == frozenset({"python"})
                    else ""
                ),
            )
        )
    for field_name, value, what in (
        ("timeout_seconds", config.timeout_seconds, "has no time limit option"),
        ("memory_limit_gb", config.memory_limit_gb, "has a fixed memory size"),
    ):
        if value is not None:
            problems.append(
                ConfigProblem(
                    field_name,
                    value,
                    f"Anthropic's code execution {what}; leave "
                    f"CodeInterpreterConfig.{field_name} as None",
                )
            )
    if config.network_domains:
        problems.append(
            ConfigProblem(
                "network_domains",
                config.network_domains,
                "Anthropic's code execution sandbox has no internet access; leave "
                "CodeInterpreterConfig.network_domains as None or ()",
            )
        )
    raise_config_problems(CodeInterpreterConfig, problems)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Result:
    call_id: str
    status: str
    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = None
    file_ids: tuple[str, ...] = ()


def _code(reader: ItemReader, field: str) -> str:
    tool_input = reader.optional_object(reader.item, "input", reader.path)
    if tool_input is None:
        return ""
    return reader.optional_string(tool_input, field, f"{reader.path}.input") or ""


def _read_result(reader: ItemReader, block_type: str) -> _Result:
    block, path = reader.item, reader.path
    call_id = reader.string(block, "tool_use_id", path)
    content = reader.object(block.get("content"), f"{path}.content")
    content_path = f"{path}.content"
    results, error = _RESULTS[block_type]
    kind = content.get("type")
    if kind == error:
        return _Result(call_id=call_id, status=reader.string(content, "error_code", content_path))
    if kind not in results:
        expected = " or ".join(sorted({*results, error}))
        raise reader.fail(f"{content_path}.type", expected, kind)
    encrypted = kind == "encrypted_code_execution_result"
    file_ids = tuple(
        reader.string(reader.object(raw, file_path), "file_id", file_path)
        for file_path, raw in reader.array(content, "content", content_path)
    )
    return _Result(
        call_id=call_id,
        status="completed",
        stdout="" if encrypted else reader.string(content, "stdout", content_path),
        stderr=reader.string(content, "stderr", content_path),
        exit_code=_return_code(reader, content, content_path),
        file_ids=file_ids,
    )


def _return_code(reader: ItemReader, content: Mapping[str, JSONValue], path: str) -> int:
    value = content.get("return_code")
    if isinstance(value, bool) or not isinstance(value, int):
        raise reader.fail(f"{path}.return_code", "an integer", value)
    return value
