"""Code interpreter: provider-neutral configuration, parsed output and the tool factory."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from weakincentives.prompt import HostedTool
from weakincentives.tools._status import overall_status
from weakincentives.tools._validation import (
    ConfigProblem,
    domain_tuple_problems,
    positive_int_problem,
    raise_config_problems,
)

__all__ = [
    "CODE_INTERPRETER_KIND",
    "CodeExecution",
    "CodeInterpreterConfig",
    "CodeInterpreterResult",
    "CodeInterpreterStatus",
    "ContainerFile",
    "code_interpreter_tool",
]

CODE_INTERPRETER_KIND: Final = "code_interpreter"
"""The hosted tool kind adapters map to their sandboxed code execution capability."""

type CodeInterpreterStatus = Literal["completed", "partial", "failed"]
"""Outcome of all executions in a response: every one, some, or none completed."""

_LANGUAGE = re.compile(r"^[a-z][a-z0-9_+#-]*$")


@dataclass(frozen=True, slots=True, kw_only=True)
class CodeInterpreterConfig:
    """Options for a sandboxed code interpreter run by the provider.

    ``None`` means "the provider's default". Either name an existing container
    with ``container_id`` or describe a fresh one with the other container
    options; an existing container keeps the settings it was created with.
    """

    allowed_languages: tuple[str, ...] = ("python",)
    """Languages the model may run, lowercase (``"python"``); at least one."""
    timeout_seconds: int | None = None
    """Per-execution time limit; ``None`` keeps the provider's limit."""
    memory_limit_gb: int | None = None
    """Memory for a fresh container, in GB; ``None`` keeps the provider default."""
    file_ids: tuple[str, ...] = ()
    """Previously uploaded files to place in a fresh container."""
    network_domains: tuple[str, ...] | None = None
    """Outbound network for a fresh container: ``None`` provider default, ``()`` none,
    otherwise only these domains (bare host names, as in ``DomainFilter``)."""
    container_id: str | None = None
    """Run in this existing container instead of a fresh one."""

    def __post_init__(self) -> None:
        problems = _language_problems(self.allowed_languages)
        for field_name in ("timeout_seconds", "memory_limit_gb"):
            value = getattr(self, field_name)
            problem = positive_int_problem(f"CodeInterpreterConfig.{field_name}", value)
            if problem is not None:
                problems.append(ConfigProblem(field_name, value, problem))
        problems.extend(_file_id_problems(self.file_ids))
        if self.network_domains is not None:
            problems.extend(
                domain_tuple_problems(
                    "CodeInterpreterConfig", "network_domains", self.network_domains
                )
            )
        problems.extend(self._container_problems())
        raise_config_problems(CodeInterpreterConfig, problems)

    def _container_problems(self) -> list[ConfigProblem]:
        container_id = self.container_id
        if container_id is None:
            return []
        if not isinstance(container_id, str) or not _is_token(container_id):
            return [
                ConfigProblem(
                    "container_id",
                    container_id,
                    f"CodeInterpreterConfig.container_id {container_id!r} must be a non-empty "
                    "string without whitespace",
                )
            ]
        fresh_only = [
            name
            for name, unset in (
                ("memory_limit_gb", self.memory_limit_gb is None),
                ("file_ids", self.file_ids == ()),
                ("network_domains", self.network_domains is None),
            )
            if not unset
        ]
        if not fresh_only:
            return []
        return [
            ConfigProblem(
                "container_id",
                container_id,
                f"CodeInterpreterConfig sets container_id and {', '.join(fresh_only)}: "
                "an existing container keeps its own settings; drop one or the other",
            )
        ]


@dataclass(frozen=True, slots=True, kw_only=True)
class ContainerFile:
    """A file the code produced in its container and the answer refers to."""

    file_id: str
    """The provider's id for the file."""
    filename: str
    """The file's name in the container."""
    container_id: str
    """The container holding the file."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CodeExecution:
    """One code run the provider performed while answering."""

    call_id: str
    """The provider's id for the call."""
    status: str
    """The provider's status word, such as ``"completed"`` or ``"failed"``."""
    code: str
    """The code that ran (empty when the provider did not report it)."""
    logs: str = ""
    """Console output the provider reported, in order."""
    image_urls: tuple[str, ...] = ()
    """Images the code produced, as URLs."""
    container_id: str | None = None
    """The container the code ran in, when reported."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CodeInterpreterResult:
    """What a response reports about the code the provider ran for it.

    The flat fields summarise every execution in order; ``executions`` keeps
    each one. Providers differ in what they report: OpenAI returns one combined
    console log per run (stdout and stderr interleaved) and no exit code, so
    ``stdout`` holds that log, ``stderr`` is empty and ``exit_code`` is None.
    """

    code: str
    """The code of every execution, separated by blank lines."""
    stdout: str = ""
    """Console output of every execution (the combined log when streams are not separated)."""
    stderr: str = ""
    """Error output, when the provider reports it separately; otherwise empty."""
    exit_code: int | None = None
    """Exit status of the last execution, when the provider reports one."""
    executions: tuple[CodeExecution, ...] = ()
    """Each execution, in order, with its status and outputs."""
    files: tuple[ContainerFile, ...] = ()
    """Files the answer cites from the container, in order of first citation."""

    @property
    def status(self) -> CodeInterpreterStatus:
        """``completed`` if every execution completed, ``failed`` if none did, else ``partial``."""
        return overall_status([run.status for run in self.executions])


def code_interpreter_tool(
    config: CodeInterpreterConfig | None = None,
    *,
    name: str = CODE_INTERPRETER_KIND,
) -> HostedTool[CodeInterpreterConfig]:
    """Create a code interpreter hosted tool; ``config`` defaults to ``CodeInterpreterConfig()``."""
    return HostedTool(
        kind=CODE_INTERPRETER_KIND,
        name=name,
        description="Execute code in a sandboxed environment.",
        config=CodeInterpreterConfig() if config is None else config,
    )


def _is_token(value: str) -> bool:
    return bool(value) and not any(char.isspace() for char in value)


def _language_problems(languages: object) -> list[ConfigProblem]:
    where = "CodeInterpreterConfig.allowed_languages"
    if not isinstance(languages, tuple):
        hint = f"; write ({languages!r},)" if isinstance(languages, str) else ""
        message = f"{where} must be a tuple of language names, got {type(languages).__name__}"
        return [ConfigProblem("allowed_languages", languages, message + hint)]
    if not languages:
        return [
            ConfigProblem(
                "allowed_languages", languages, f"{where} must name at least one language"
            )
        ]
    problems: list[ConfigProblem] = []
    seen: set[object] = set()
    for index, language in enumerate(languages):
        problem: str | None = None
        if not isinstance(language, str) or _LANGUAGE.fullmatch(language) is None:
            problem = "must be a lowercase language name such as 'python'"
            if isinstance(language, str) and _LANGUAGE.fullmatch(language.strip().lower()):
                problem += f"; use {language.strip().lower()!r}"
        elif language in seen:
            problem = "is listed twice"
        if problem is not None:
            problems.append(
                ConfigProblem(
                    "allowed_languages", language, f"{where}[{index}] {language!r} {problem}"
                )
            )
        if isinstance(language, str):
            seen.add(language)
    return problems


def _file_id_problems(file_ids: object) -> list[ConfigProblem]:
    where = "CodeInterpreterConfig.file_ids"
    if not isinstance(file_ids, tuple):
        hint = f"; write ({file_ids!r},)" if isinstance(file_ids, str) else ""
        message = f"{where} must be a tuple of file ids, got {type(file_ids).__name__}{hint}"
        return [ConfigProblem("file_ids", file_ids, message)]
    problems: list[ConfigProblem] = []
    seen: set[str] = set()
    for index, file_id in enumerate(file_ids):
        problem: str | None = None
        if not isinstance(file_id, str) or not _is_token(file_id):
            problem = "must be a non-empty string without whitespace"
        elif file_id in seen:
            problem = "is listed twice"
        if problem is not None:
            problems.append(
                ConfigProblem("file_ids", file_id, f"{where}[{index}] {file_id!r} {problem}")
            )
        if isinstance(file_id, str):
            seen.add(file_id)
    return problems
