"""Checking a provider's options on an official SDK: import it, refuse mistakes, make a client.

Shared by every provider on the ``openai`` or ``anthropic`` SDK so that they refuse the
same mistakes with the same messages, naming the provider class.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from weakincentives.errors import ConfigValidationError
from weakincentives.serde import JSONValue

__all__ = [
    "MergedOption",
    "SdkClients",
    "build_client",
    "check_client",
    "check_model",
    "check_request_options",
    "field_error",
    "merged_options",
    "require_sdk",
    "reserved_options",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class SdkClients:
    """Which SDK a provider runs on and how its clients are named and built."""

    module: str
    """The SDK's import name, which is also the extra that installs it."""
    sync_client: str
    async_client: str
    error: str
    """The SDK's base exception, raised when a client cannot be built."""
    vendor: str
    """Who runs the service, as named in messages (``OpenAI``, ``Anthropic``)."""
    key_variable: str
    """Where the SDK reads its key from, as told to the user when there is none."""

    @classmethod
    def generated(cls, *, module: str, vendor: str) -> SdkClients:
        """The names every SDK generated from the shared template uses.

        ``{vendor}`` and ``Async{vendor}`` clients, a ``{vendor}Error`` base exception
        and the key in ``{MODULE}_API_KEY`` (``openai.OpenAI``, ``anthropic.AnthropicError``).
        """
        return cls(
            module=module,
            sync_client=vendor,
            async_client=f"Async{vendor}",
            error=f"{vendor}Error",
            vendor=vendor,
            key_variable=f"{module.upper()}_API_KEY",
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class MergedOption:
    """A request option the provider extends rather than replaces."""

    key: str
    expected: type[object]
    why: str
    """The complaint when the option has another type, e.g. ``must be a list (...)``."""


def merged_options(
    *, lists: Mapping[str, str] | None = None, objects: Mapping[str, str] | None = None
) -> tuple[MergedOption, ...]:
    """The request options a provider extends rather than replaces.

    ``tools`` first (every SDK provider adds the prompt's tools to it), then ``lists``
    and ``objects``: the list and object options of its own, each with what it adds.
    """
    return (
        MergedOption(
            key="tools", expected=list, why="must be a list (it is added to the prompt's tools)"
        ),
        *(
            MergedOption(key=key, expected=list, why=f"must be a list ({added})")
            for key, added in (lists or {}).items()
        ),
        *(
            MergedOption(key=key, expected=dict, why=f"must be an object ({added})")
            for key, added in (objects or {}).items()
        ),
    )


def reserved_options(conversation: str, **more: str) -> Mapping[str, str]:
    """The request options every SDK provider sets itself, then ``more`` (key: why).

    ``conversation`` is the field the provider builds from the prompt (``input``,
    ``messages``).
    """
    return {
        "model": "is set by the provider (pass model=)",
        conversation: "is built from the prompt",
        "timeout": "is a client setting (pass timeout=, or evaluate(deadline=))",
        "stream": "is a provider setting (pass stream=True)",
        **more,
    }


def require_sdk(module: str, *, owner: str) -> ModuleType:
    """Import the SDK ``module``; ``ImportError`` with the install command when it is absent."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{owner} needs the official {module} SDK: pip install 'weakincentives[{module}]'"
        ) from exc


def field_error(
    owner: type[object], field_name: str, problem: str, value: object = None
) -> ConfigValidationError:
    """``<Owner> <field_name> <problem>``: an option of the class ``owner`` is refused."""
    return ConfigValidationError(
        f"{owner.__name__} {field_name} {problem}",
        config_type=owner,
        field_name=field_name,
        value=value,
    )


def check_model(model: object, *, owner: type[object]) -> None:
    """Refuse a ``model`` that is not a non-empty string."""
    if not isinstance(model, str) or not model.strip():
        raise field_error(owner, "model", f"must be a non-empty string, got {model!r}", model)


def check_request_options(
    options: Mapping[str, JSONValue],
    *,
    owner: type[object],
    reserved: Mapping[str, str],
    merged: tuple[MergedOption, ...],
) -> None:
    """Refuse options the provider sets itself and merged options of the wrong JSON type.

    All problems are reported at once, in one ``ConfigValidationError`` for
    ``request_options``.
    """
    if not isinstance(options, Mapping):
        raise field_error(
            owner, "request_options", f"must be a mapping, got {type(options).__name__}", options
        )
    problems = [f"{key!r} {why}" for key, why in reserved.items() if key in options]
    problems.extend(
        f"{option.key!r} {option.why}"
        for option in merged
        if option.key in options and not isinstance(options[option.key], option.expected)
    )
    if problems:
        raise field_error(
            owner,
            "request_options",
            "cannot be used as given: " + "; ".join(problems),
            dict(options),
        )


def check_client(
    sdk: ModuleType, clients: SdkClients, client: object, *, owner: type[object]
) -> None:
    """Refuse a ``client`` that is not one of the SDK's own client classes."""
    accepted = (getattr(sdk, clients.sync_client), getattr(sdk, clients.async_client))
    if client is not None and not isinstance(client, accepted):
        names = f"{clients.module}.{clients.sync_client} or {clients.module}.{clients.async_client}"
        raise field_error(owner, "client", f"must be an {names}, got {type(client).__name__}")


def build_client(
    sdk: ModuleType, clients: SdkClients, arguments: Mapping[str, object], *, owner: type[object]
) -> Any:
    """A sync client from ``arguments``; one the SDK refuses is a ``ConfigValidationError``."""
    _check_base_url(arguments.get("base_url"), owner)
    try:
        return getattr(sdk, clients.sync_client)(**arguments)
    except getattr(sdk, clients.error) as exc:
        raise ConfigValidationError(
            f"could not create the {clients.vendor} client: {exc}; pass api_key= or set "
            f"{clients.key_variable}",
            config_type=owner,
            field_name="api_key",
        ) from exc


def _check_base_url(url: object, owner: type[object]) -> None:
    """Refuse a ``base_url`` the HTTP client cannot use, naming it.

    The SDK would raise its transport's own ``InvalidURL``, which is no library error.
    """
    if url is None:
        return
    try:
        parts = urlsplit(str(url))
        _ = parts.port  # reading the port is what checks it (a ValueError past 65535)
    except ValueError as exc:
        problem = str(exc)
    else:
        if parts.scheme in ("http", "https") and parts.hostname:
            return
        problem = "it needs an http:// or https:// scheme and a host"
    raise ConfigValidationError(
        f"base_url {str(url)!r} is not a URL the client can use: {problem}",
        config_type=owner,
        field_name="base_url",
        value=url,
    )
