"""A small hand-written catalogue and a factory for discovery services over it."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol

import pytest

from weakincentives.discovery import (
    AccessPolicy,
    CatalogNode,
    CatalogTool,
    ToolCatalog,
    ToolDiscovery,
    ToolExecutor,
)
from weakincentives.discovery._ranking import Ranker, RankIndex
from weakincentives.serde import JSONValue

SECRET = b"discovery-tests-secret-0123456789"

NODES = (
    CatalogNode(name="Coding", path=("Coding",), summary="Work on source code", tags=("dev",)),
    CatalogNode(
        name="Refactoring",
        path=("Coding", "Refactoring"),
        summary="Restructure code without changing behaviour",
        tags=("refactor",),
    ),
    CatalogNode(
        name="Buckets",
        path=("Storage", "Buckets"),
        summary="Create and manage object storage buckets",
        tags=("storage", "objects"),
    ),
    CatalogNode(
        name="Auth", path=("User", "Auth"), summary="Authentication and authorization workflows"
    ),
    CatalogNode(
        name="Identity",
        path=("System", "Identity"),
        summary="Service identity and credential handling",
    ),
)

RENAME_SCHEMA: dict[str, JSONValue] = {
    "type": "object",
    "properties": {
        "project_root": {"type": "string"},
        "symbol": {"type": "string"},
        "new_name": {"type": "string", "minLength": 1},
        "language": {"type": "string", "enum": ["ts", "js", "py", "go", "java"]},
        "dry_run": {"type": "boolean", "default": True},
    },
    "required": ["project_root", "symbol", "new_name"],
    "additionalProperties": False,
}


def _tool(
    tool_id: str,
    name: str,
    path: tuple[str, ...],
    summary: str,
    tags: tuple[str, ...] = (),
    *extra_paths: tuple[str, ...],
) -> CatalogTool:
    return CatalogTool(
        tool_id=tool_id,
        name=name,
        paths=(path, *extra_paths),
        summary=summary,
        tags=tags,
    )


TOOLS = (
    CatalogTool(
        tool_id="refactor.rename_symbol",
        name="rename_symbol",
        paths=(("Coding", "Refactoring"),),
        summary="Renames a symbol project-wide and updates references",
        tags=("refactor", "rename"),
        args_schema=RENAME_SCHEMA,
        result_schema={
            "type": "object",
            "properties": {"changed_files": {"type": "integer"}},
            "required": ["changed_files"],
        },
    ),
    _tool(
        "refactor.extract_function",
        "extract_function",
        ("Coding", "Refactoring"),
        "Moves a block of code into a new function",
        ("refactor",),
    ),
    _tool(
        "refactor.inline_variable",
        "inline_variable",
        ("Coding", "Refactoring"),
        "Replaces a variable with its value everywhere it is used",
        ("refactor",),
    ),
    _tool(
        "lint.run_linter",
        "run_linter",
        ("Coding", "Quality"),
        "Runs the linter over a project and reports style problems",
        ("lint",),
    ),
    _tool(
        "format.format_code",
        "format_code",
        ("Coding", "Quality"),
        "Reformats source files in place",
        ("format",),
    ),
    _tool(
        "storage.put_object",
        "put_object",
        ("Storage", "Buckets"),
        "Uploads an object to a bucket",
        ("storage", "upload"),
    ),
    _tool(
        "storage.get_object",
        "get_object",
        ("Storage", "Buckets"),
        "Downloads an object from a bucket",
        ("storage", "download"),
    ),
    _tool(
        "storage.create_bucket",
        "create_bucket",
        ("Storage", "Buckets"),
        "Creates a new storage bucket in a region",
        ("storage",),
    ),
    _tool(
        "storage.delete_bucket",
        "delete_bucket",
        ("Storage", "Buckets"),
        "Deletes an empty storage bucket",
        ("storage", "admin"),
    ),
    _tool(
        "auth.oauth_login",
        "oauth_login",
        ("User", "Auth"),
        "Starts an OAuth login flow and returns the authorization URL",
        ("auth", "oauth"),
    ),
    _tool(
        "auth.reset_password",
        "reset_password",
        ("User", "Auth"),
        "Sends a password reset email to a user",
        ("auth",),
    ),
    _tool(
        "identity.rotate_credentials",
        "rotate_credentials",
        ("System", "Identity"),
        "Rotates the service account credentials",
        ("auth", "admin"),
        ("Security",),
    ),
    _tool(
        "render.thumbnail",
        "render_thumbnail",
        ("Rendering",),
        "Renders a small preview image of a web page",
        ("image",),
    ),
)


@pytest.fixture
def catalog() -> ToolCatalog:
    """The hand-written catalogue (13 tools, one of them in two categories)."""
    return ToolCatalog(nodes=NODES, tools=TOOLS)


class ServiceFactory(Protocol):
    def __call__(
        self,
        *,
        catalog: ToolCatalog = ...,
        ranker: Ranker | None = ...,
        index: RankIndex | None = ...,
        access: AccessPolicy | None = ...,
        executor: ToolExecutor | None = ...,
        secret: bytes = ...,
    ) -> ToolDiscovery: ...


@pytest.fixture
def events() -> list[object]:
    """Events published by services made with ``make_service``."""
    return []


@pytest.fixture
def clock() -> Callable[[], datetime]:
    """A clock that advances one second per reading."""
    start = datetime(2025, 1, 1, tzinfo=UTC)
    ticks = itertools.count()
    return lambda: start + timedelta(seconds=next(ticks))


@pytest.fixture
def make_service(
    catalog: ToolCatalog, events: list[object], clock: Callable[[], datetime]
) -> ServiceFactory:
    """Build a service with deterministic ids, clock and cursor secret."""
    counter = itertools.count(1)

    def build(
        *,
        catalog: ToolCatalog = catalog,
        ranker: Ranker | None = None,
        index: RankIndex | None = None,
        access: AccessPolicy | None = None,
        executor: ToolExecutor | None = None,
        secret: bytes = SECRET,
    ) -> ToolDiscovery:
        return ToolDiscovery(
            catalog,
            ranker=ranker,
            index=index,
            access=access,
            executor=executor,
            events=events.append,
            clock=clock,
            new_id=lambda: f"step-{next(counter)}",
            cursor_secret=secret,
        )

    return build


@pytest.fixture
def service(make_service: ServiceFactory) -> ToolDiscovery:
    """A default service over the hand-written catalogue."""
    return make_service()
