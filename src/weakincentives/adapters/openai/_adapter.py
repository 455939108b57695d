"""The OpenAI Responses API adapter, on the official ``openai`` SDK.

The SDK is imported when an adapter is created, not when this module is, so the
package (and the offline adapter, which reuses the OpenAI codecs) works without the
``openai`` extra.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from datetime import datetime
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from weakincentives.adapters._base import LoopAdapter
from weakincentives.adapters._hosted import HostedToolCodec
from weakincentives.adapters._turns import ModelTurn, TurnRequest
from weakincentives.adapters.openai._codecs import default_openai_codecs
from weakincentives.adapters.openai._errors import RawReply, call_with_error_mapping
from weakincentives.adapters.openai._wire import build_request_body, parse_response_body
from weakincentives.errors import ConfigValidationError
from weakincentives.serde import JSONValue

if TYPE_CHECKING:
    import openai

__all__ = ["OpenAIAdapter"]


def _require_openai() -> ModuleType:
    try:
        return importlib.import_module("openai")
    except ImportError as exc:
        raise ImportError(
            "OpenAIAdapter needs the official openai SDK: pip install 'weakincentives[openai]'"
        ) from exc


# Request options the adapter sets itself, and why a caller cannot.
_RESERVED_OPTIONS: dict[str, str] = {
    "model": "is set by the adapter (pass model=)",
    "input": "is built from the prompt",
    "timeout": "is a client setting (pass timeout=, or evaluate(deadline=))",
    "stream": "is not supported (the adapter reads whole responses)",
}
# Request options the adapter extends, and the JSON type they must have.
_MERGED_OPTIONS: tuple[tuple[str, type[object], str], ...] = (
    ("tools", list, "must be a list (it is added to the prompt's tools)"),
    ("include", list, "must be a list (it is added to the hosted tools' includes)"),
    ("text", dict, "must be an object (the output format is added to it)"),
)


def _check_request_options(options: Mapping[str, JSONValue]) -> None:
    problems = [f"{key!r} {why}" for key, why in _RESERVED_OPTIONS.items() if key in options]
    problems.extend(
        f"{key!r} {why}"
        for key, expected, why in _MERGED_OPTIONS
        if key in options and not isinstance(options[key], expected)
    )
    if problems:
        raise ConfigValidationError(
            "OpenAIAdapter request_options cannot be used as given: " + "; ".join(problems),
            config_type=OpenAIAdapter,
            field_name="request_options",
            value=dict(options),
        )


class OpenAIAdapter(LoopAdapter):
    """Evaluate prompts with OpenAI's Responses API (``client.responses.create``).

    Any Responses-compatible server works through ``base_url``. Pass a ready
    ``client`` to control everything yourself; otherwise one is built from
    ``api_key`` (default: ``OPENAI_API_KEY``), ``base_url``, ``timeout`` and
    ``max_retries``. ``request_options`` are added to every request (for example
    ``{"temperature": 0}``); their ``tools``, ``include`` and ``text`` are merged
    with what the prompt needs, and the keys the adapter owns (``model``,
    ``input``, ``timeout``, ``stream``) are refused at construction.
    """

    def __init__(
        self,
        *,
        model: str,
        client: openai.OpenAI | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        request_options: Mapping[str, JSONValue] | None = None,
        hosted_tool_codecs: Mapping[str, HostedToolCodec[Any, Any]] | None = None,
        max_rounds: int = 16,
        clock: Callable[[], datetime] | None = None,
        id_factory: Callable[[], str] | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ConfigValidationError(
                f"OpenAIAdapter model must be a non-empty string, got {model!r}",
                config_type=OpenAIAdapter,
                field_name="model",
                value=model,
            )
        options = dict(request_options or {})
        _check_request_options(options)
        self._sdk = _require_openai()
        self._model = model
        self._client = (
            client
            if client is not None
            else self._build_client(
                api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
            )
        )
        self._options = options
        self._codecs = dict(
            default_openai_codecs() if hosted_tool_codecs is None else hosted_tool_codecs
        )
        super().__init__(max_rounds=max_rounds, clock=clock, id_factory=id_factory)

    @property
    def name(self) -> str:
        """Adapter name used in events and errors."""
        return "openai"

    @property
    def model(self) -> str:
        """The model every request asks for."""
        return self._model

    @property
    def client(self) -> openai.OpenAI:
        """The SDK client (for retries, tracing or nested use by tools)."""
        return self._client

    @property
    def hosted_tool_codecs(self) -> Mapping[str, HostedToolCodec[Any, Any]]:
        """Codecs by hosted-tool kind; extend by passing ``hosted_tool_codecs=``."""
        return self._codecs

    def send(self, request: TurnRequest) -> ModelTurn:
        """Translate one turn to a Responses API call and its reply back."""
        body = build_request_body(request, model=self._model, options=self._options)
        timeout = None
        if request.deadline is not None:
            remaining = max((request.deadline - self._settings.clock()).total_seconds(), 0.001)
            timeout = self._bounded_timeout(remaining)
        # The body is assembled dynamically, so it cannot match the SDK's overloads statically.
        # The raw variant keeps the SDK's retries and error mapping but skips its models.
        create = cast("Callable[..., RawReply]", self._client.responses.with_raw_response.create)
        payload = call_with_error_mapping(
            self._sdk,
            lambda: create(**body, **({} if timeout is None else {"timeout": timeout})),
            prompt_name=request.prompt_name,
        )
        return parse_response_body(payload, request=body, prompt_name=request.prompt_name)

    def _bounded_timeout(self, remaining: float) -> object:
        """The client's timeout, shortened (never lengthened) to the time left before a deadline.

        A per-request timeout replaces the client's, so it must be the sooner of the two.
        """
        configured: object = self._client.timeout
        if isinstance(configured, int | float):
            return min(float(configured), remaining)
        if isinstance(configured, self._sdk.Timeout):
            # connect/read/write/pool may each be None (no limit); bound every one of them.
            limits: dict[str, float] = {}
            for phase in ("connect", "read", "write", "pool"):
                limit = getattr(configured, phase)
                limits[phase] = remaining if limit is None else min(limit, remaining)
            return self._sdk.Timeout(**limits)
        return remaining

    def _build_client(
        self,
        *,
        api_key: str | None,
        base_url: str | None,
        timeout: float | None,
        max_retries: int | None,
    ) -> openai.OpenAI:
        settings: dict[str, object] = {}
        for key, value in (
            ("api_key", api_key),
            ("base_url", base_url),
            ("timeout", timeout),
            ("max_retries", max_retries),
        ):
            if value is not None:
                settings[key] = value
        try:
            client: openai.OpenAI = self._sdk.OpenAI(**settings)
        except self._sdk.OpenAIError as exc:
            raise ConfigValidationError(
                f"could not create the OpenAI client: {exc}; pass api_key= or set OPENAI_API_KEY",
                config_type=OpenAIAdapter,
                field_name="api_key",
            ) from exc
        return client
