"""Sandboxed code execution as a hosted tool: configuration, parsed result and factory."""

from __future__ import annotations

from weakincentives.tools._code_interpreter import (
    CODE_INTERPRETER_KIND,
    CodeExecution,
    CodeInterpreterConfig,
    CodeInterpreterResult,
    CodeInterpreterStatus,
    ContainerFile,
    code_interpreter_tool,
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
