"""OpenAI Responses API codec for the ``code_interpreter`` hosted tool.

Wire format checked against the ``openai`` SDK's ``tool_param.CodeInterpreter``:
``container`` is either an existing container id or ``{"type": "auto"}`` with
optional ``file_ids``, ``memory_limit`` (``1g``/``4g``/``16g``/``64g``) and
``network_policy``. OpenAI runs only Python, has no time limit option and takes at
most 50 ``file_ids`` (OpenAI's OpenAPI spec; the SDK types do not say), so a
configuration asking for other languages, a timeout or more files is refused before
anything is sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from weakincentives.adapters.openai._codec_reader import (
    ItemReader,
    message_text_parts,
    output_items,
)
from weakincentives.prompt import HostedTool
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

__all__ = ["CODE_INTERPRETER_OUTPUTS_INCLUDE", "MAX_FILE_IDS", "OpenAICodeInterpreterCodec"]

CODE_INTERPRETER_OUTPUTS_INCLUDE = "code_interpreter_call.outputs"
"""The ``include`` entry that makes the API report logs and images of each run."""

_MEMORY_LIMITS_GB = (1, 4, 16, 64)
MAX_FILE_IDS = 50
"""Most ``file_ids`` an auto container takes: 50, per OpenAI's OpenAPI spec as read in
issue 13 (the SDK's ``TypedDict`` does not encode the limit)."""


class OpenAICodeInterpreterCodec:
    """Serializes ``CodeInterpreterConfig`` to OpenAI's ``code_interpreter`` tool and back."""

    kind: Final = CODE_INTERPRETER_KIND
    """Always ``"code_interpreter"``: the hosted tool kind this codec serves."""

    def serialize(self, tool: HostedTool[CodeInterpreterConfig]) -> dict[str, JSONValue]:
        """Build the ``{"type": "code_interpreter", "container": ...}`` spec."""
        config = tool.config
        _refuse_unsupported(config)
        container: JSONValue
        if config.container_id is not None:
            container = config.container_id
        else:
            auto: dict[str, JSONValue] = {"type": "auto"}
            if config.file_ids:
                file_ids: list[JSONValue] = list(config.file_ids)
                auto["file_ids"] = file_ids
            if config.memory_limit_gb is not None:
                auto["memory_limit"] = f"{config.memory_limit_gb}g"
            if config.network_domains is not None:
                auto["network_policy"] = _network_policy(config.network_domains)
            container = auto
        return {"type": "code_interpreter", "container": container}

    def parse_output(
        self,
        response_items: Sequence[Mapping[str, JSONValue]],
        tool: HostedTool[CodeInterpreterConfig],
    ) -> CodeInterpreterResult | None:
        """Collect each code run and the container files the answer cites; None if no run."""
        executions: list[CodeExecution] = []
        files: dict[str, ContainerFile] = {}
        for item_type, reader in output_items(
            response_items, kind=CODE_INTERPRETER_KIND, output_type=CodeInterpreterResult
        ):
            if item_type == "code_interpreter_call":
                executions.append(_read_execution(reader))
            elif item_type == "message":
                for part in message_text_parts(reader):
                    for path, annotation in part.annotations:
                        if annotation.get("type") == "container_file_citation":
                            cited = _read_file(reader, annotation, path)
                            files.setdefault(cited.file_id, cited)
        if not executions:
            return None
        return CodeInterpreterResult(
            code="\n\n".join(run.code for run in executions if run.code),
            stdout=_join_logs(run.logs for run in executions),
            stderr="",
            exit_code=None,
            executions=tuple(executions),
            files=tuple(files.values()),
        )


def _refuse_unsupported(config: CodeInterpreterConfig) -> None:
    problems: list[ConfigProblem] = []
    others = [language for language in config.allowed_languages if language != "python"]
    if others:
        problems.append(
            ConfigProblem(
                "allowed_languages",
                config.allowed_languages,
                "OpenAI's code interpreter runs only Python, but allowed_languages asks for "
                f"{', '.join(repr(language) for language in others)}; "
                "use allowed_languages=('python',)",
            )
        )
    if config.timeout_seconds is not None:
        problems.append(
            ConfigProblem(
                "timeout_seconds",
                config.timeout_seconds,
                "OpenAI's code interpreter has no time limit option; leave "
                "CodeInterpreterConfig.timeout_seconds as None",
            )
        )
    if len(config.file_ids) > MAX_FILE_IDS:
        problems.append(
            ConfigProblem(
                "file_ids",
                len(config.file_ids),
                f"OpenAI's code interpreter takes at most {MAX_FILE_IDS} file_ids per "
                f"container, got {len(config.file_ids)}; upload fewer files or merge them",
            )
        )
    memory = config.memory_limit_gb
    if memory is not None and memory not in _MEMORY_LIMITS_GB:
        problems.append(
            ConfigProblem(
                "memory_limit_gb",
                memory,
                f"OpenAI code interpreter containers offer 1, 4, 16 or 64 GB of memory, "
                f"not memory_limit_gb={memory}",
            )
        )
    raise_config_problems(CodeInterpreterConfig, problems)


def _network_policy(domains: tuple[str, ...]) -> dict[str, JSONValue]:
    if not domains:
        return {"type": "disabled"}
    allowed: list[JSONValue] = list(domains)
    return {"type": "allowlist", "allowed_domains": allowed}


def _read_execution(reader: ItemReader) -> CodeExecution:
    item, path = reader.item, reader.path
    logs: list[str] = []
    images: list[str] = []
    for output_path, raw in reader.array(item, "outputs", path):
        output = reader.object(raw, output_path)
        output_type = output.get("type")
        if output_type == "logs":
            logs.append(reader.string(output, "logs", output_path))
        elif output_type == "image":
            images.append(reader.string(output, "url", output_path))
    return CodeExecution(
        call_id=reader.string(item, "id", path),
        status=reader.string(item, "status", path),
        code=reader.optional_string(item, "code", path) or "",
        logs="".join(logs),
        image_urls=tuple(images),
        container_id=reader.optional_string(item, "container_id", path),
    )


def _read_file(reader: ItemReader, annotation: Mapping[str, JSONValue], path: str) -> ContainerFile:
    return ContainerFile(
        file_id=reader.string(annotation, "file_id", path),
        filename=reader.string(annotation, "filename", path),
        container_id=reader.string(annotation, "container_id", path),
    )


def _join_logs(logs: Iterable[str]) -> str:
    """Concatenate run logs, starting each on its own line."""
    joined = ""
    for log in logs:
        if joined and log and not joined.endswith("\n"):
            joined += "\n"
        joined += log
    return joined
