"""Validation of the code interpreter configuration and the result summary."""

from __future__ import annotations

import pytest

from weakincentives.errors import ConfigValidationError
from weakincentives.tools import CodeExecution, CodeInterpreterConfig, CodeInterpreterResult


@pytest.mark.parametrize(
    ("kwargs", "field_name", "message"),
    [
        (
            {"allowed_languages": ()},
            "allowed_languages",
            "CodeInterpreterConfig.allowed_languages must name at least one language",
        ),
        (
            {"allowed_languages": "python"},
            "allowed_languages",
            "CodeInterpreterConfig.allowed_languages must be a tuple of language names, got str; "
            "write ('python',)",
        ),
        (
            {"allowed_languages": ["python"]},
            "allowed_languages",
            "CodeInterpreterConfig.allowed_languages must be a tuple of language names, got list",
        ),
        (
            {"allowed_languages": ("Python",)},
            "allowed_languages",
            "CodeInterpreterConfig.allowed_languages[0] 'Python' must be a lowercase language "
            "name such as 'python'; use 'python'",
        ),
        (
            {"allowed_languages": ("python 3",)},
            "allowed_languages",
            "CodeInterpreterConfig.allowed_languages[0] 'python 3' must be a lowercase language "
            "name such as 'python'",
        ),
        (
            {"allowed_languages": (3,)},
            "allowed_languages",
            "CodeInterpreterConfig.allowed_languages[0] 3 must be a lowercase language "
            "name such as 'python'",
        ),
        (
            {"allowed_languages": ("python", "python")},
            "allowed_languages",
            "CodeInterpreterConfig.allowed_languages[1] 'python' is listed twice",
        ),
        (
            {"timeout_seconds": 0},
            "timeout_seconds",
            "CodeInterpreterConfig.timeout_seconds must be at least 1, got 0",
        ),
        (
            {"timeout_seconds": 1.5},
            "timeout_seconds",
            "CodeInterpreterConfig.timeout_seconds must be an int, got float",
        ),
        (
            {"memory_limit_gb": -4},
            "memory_limit_gb",
            "CodeInterpreterConfig.memory_limit_gb must be at least 1, got -4",
        ),
        (
            {"file_ids": "file-1"},
            "file_ids",
            "CodeInterpreterConfig.file_ids must be a tuple of file ids, got str; "
            "write ('file-1',)",
        ),
        (
            {"file_ids": ["file-1"]},
            "file_ids",
            "CodeInterpreterConfig.file_ids must be a tuple of file ids, got list",
        ),
        (
            {"file_ids": ("file 1",)},
            "file_ids",
            "CodeInterpreterConfig.file_ids[0] 'file 1' must be a non-empty string without "
            "whitespace",
        ),
        (
            {"file_ids": (3,)},
            "file_ids",
            "CodeInterpreterConfig.file_ids[0] 3 must be a non-empty string without whitespace",
        ),
        (
            {"file_ids": ("",)},
            "file_ids",
            "CodeInterpreterConfig.file_ids[0] '' must be a non-empty string without whitespace",
        ),
        (
            {"file_ids": ("file-1", "file-1")},
            "file_ids",
            "CodeInterpreterConfig.file_ids[1] 'file-1' is listed twice",
        ),
        (
            {"network_domains": ("PyPI.org",)},
            "network_domains",
            "CodeInterpreterConfig.network_domains[0] 'PyPI.org' must be lowercase; use 'pypi.org'",
        ),
        (
            {"container_id": ""},
            "container_id",
            "CodeInterpreterConfig.container_id '' must be a non-empty string without whitespace",
        ),
        (
            {"container_id": 12},
            "container_id",
            "CodeInterpreterConfig.container_id 12 must be a non-empty string without whitespace",
        ),
        (
            {"container_id": "cntr_1", "memory_limit_gb": 4, "file_ids": ("file-1",)},
            "container_id",
            "CodeInterpreterConfig sets container_id and memory_limit_gb, file_ids: an existing "
            "container keeps its own settings; drop one or the other",
        ),
        (
            {"container_id": "cntr_1", "network_domains": ()},
            "container_id",
            "CodeInterpreterConfig sets container_id and network_domains: an existing "
            "container keeps its own settings; drop one or the other",
        ),
    ],
)
def test_bad_code_interpreter_option_is_rejected(
    kwargs: dict[str, object], field_name: str, message: str
) -> None:
    """Each CodeInterpreterConfig rule produces its own message."""
    with pytest.raises(ConfigValidationError) as caught:
        CodeInterpreterConfig(**kwargs)  # type: ignore[arg-type]  # deliberately ill-typed inputs
    assert caught.value.message == message
    assert (caught.value.config_type, caught.value.field_name) == (
        CodeInterpreterConfig,
        field_name,
    )


def test_all_code_interpreter_problems_are_reported_together() -> None:
    """Several bad options produce one error that lists them all."""
    with pytest.raises(ConfigValidationError) as caught:
        CodeInterpreterConfig(timeout_seconds=0, memory_limit_gb=0)
    assert caught.value.message == (
        "2 problems in CodeInterpreterConfig:\n"
        "- CodeInterpreterConfig.timeout_seconds must be at least 1, got 0\n"
        "- CodeInterpreterConfig.memory_limit_gb must be at least 1, got 0"
    )


def test_defaults_describe_a_fresh_python_container() -> None:
    """The default configuration asks for Python and leaves everything else to the provider."""
    config = CodeInterpreterConfig()
    assert config == CodeInterpreterConfig(
        allowed_languages=("python",),
        timeout_seconds=None,
        memory_limit_gb=None,
        file_ids=(),
        network_domains=None,
        container_id=None,
    )


def test_valid_fresh_container_options_are_accepted() -> None:
    """Memory, files and a network allowlist can be combined for a fresh container."""
    config = CodeInterpreterConfig(
        memory_limit_gb=4, file_ids=("file-1", "file-2"), network_domains=("pypi.org",)
    )
    assert (config.memory_limit_gb, config.file_ids, config.network_domains) == (
        4,
        ("file-1", "file-2"),
        ("pypi.org",),
    )


def test_existing_container_alone_is_accepted() -> None:
    """Naming an existing container without fresh-container options is valid."""
    assert CodeInterpreterConfig(container_id="cntr_abc").container_id == "cntr_abc"


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ((), "completed"),
        (("completed",), "completed"),
        (("completed", "failed"), "partial"),
        (("failed", "incomplete"), "failed"),
    ],
)
def test_code_interpreter_status_summarises_executions(
    statuses: tuple[str, ...], expected: str
) -> None:
    """The result's status says whether all, some or none of the executions completed."""
    runs = tuple(
        CodeExecution(call_id=f"ci_{i}", status=s, code="") for i, s in enumerate(statuses)
    )
    assert CodeInterpreterResult(code="", executions=runs).status == expected
