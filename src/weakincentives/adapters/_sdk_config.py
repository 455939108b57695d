"""Building an adapter on an official SDK: import it, check the arguments, make a client.

Shared by every adapter on the ``openai`` or ``anthropic`` SDK so that their
constructors refuse the same mistakes with the same messages, naming the adapter.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from weakincentives.errors import ConfigValidationError
from weakincentives.serde import JSONValue

__all__ = [
    "ClientSettings",
    "MergedOption",
    "build_client",
    "check_client",
    "check_model",
    "check_request_options",
    "require_sdk",
]


def require_sdk(module: str, *, adapter: str, extra: str) -> ModuleType:
    """Import the SDK ``module``; ``ImportError`` with the install command when it is absent."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{adapter} needs the official {module} SDK: pip install 'weakincentives[{extra}]'"
        ) from exc


def check_model(model: object, *, adapter_type: type[object]) -> str:
    """``model`` when it is a non-empty string; ``ConfigValidationError`` otherwise."""
    if not isinstance(model, str) or not model.strip():
        raise ConfigValidationError(
            f"{adapter_type.__name__} model must be a non-empty string, got {model!r}",
            config_type=adapter_type,
            field_name="model",
            value=model,
        )
    return model


@dataclass(frozen=True, slots=True, kw_only=True)
class MergedOption:
    """A request option the adapter extends rather than replaces."""

    key: str
    expected: type[object]
    why: str
    """The complaint when the option has another type, e.g. ``must be a list (...)``."""


def check_request_options(
    options: Mapping[str, JSONValue],
    *,
    adapter_type: type[object],
    reserved: Mapping[str, str],
    merged: tuple[MergedOption, ...],
) -> None:
    """Refuse options the adapter sets itself and merged options of the wrong JSON type.

    All problems are reported at once, in one ``ConfigValidationError`` for
    ``request_options``.
    """
    problems = [f"{key!r} {why}" for key, why in reserved.items() if key in options]
    problems.extend(
        f"{option.key!r} {option.why}"
        for option in merged
        if option.key in options and not isinstance(options[option.key], option.expected)
    )
    if problems:
        raise ConfigValidationError(
            f"{adapter_type.__name__} request_options cannot be used as given: "
            + "; ".join(problems),
            config_type=adapter_type,
            field_name="request_options",
            value=dict(options),
        )


def check_client(
    client: object, *, accepted: tuple[type[object], ...], names: str, adapter_type: type[object]
) -> None:
    """Refuse a ``client`` that is not one of the SDK's own client classes."""
    if client is not None and not isinstance(client, accepted):
        raise ConfigValidationError(
            f"{adapter_type.__name__} client must be an {names}, got {type(client).__name__}",
            config_type=adapter_type,
            field_name="client",
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientSettings:
    """The client arguments an adapter accepts; ``None`` leaves the SDK's default."""

    api_key: str | None = None
    base_url: str | None = None
    timeout: float | None = None
    max_retries: int | None = None


def build_client(
    factory: type[Any],
    base_error: type[Exception],
    settings: ClientSettings,
    *,
    adapter_type: type[object],
    provider: str,
    key_variable: str,
) -> Any:
    """``factory(**settings)``; a client the SDK refuses to build is a ``ConfigValidationError``."""
    arguments = {
        key: value
        for key, value in (
            ("api_key", settings.api_key),
            ("base_url", settings.base_url),
            ("timeout", settings.timeout),
            ("max_retries", settings.max_retries),
        )
        if value is not None
    }
    try:
        return factory(**arguments)
    except base_error as exc:
        raise ConfigValidationError(
            f"could not create the {provider} client: {exc}; pass api_key= or set {key_variable}",
            config_type=adapter_type,
            field_name="api_key",
        ) from exc
