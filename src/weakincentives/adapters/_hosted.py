"""The codec seam between provider-neutral hosted tools and a provider's wire format.

Each adapter holds a plain ``dict`` from hosted tool kind to codec. Before a
request is sent, :func:`serialize_hosted_tools` turns the rendered prompt's
hosted tools into wire specs, refusing unknown kinds and options the provider
cannot honour. After the reply, :func:`parse_hosted_outputs` asks each codec
what its tool did. Codecs only ever see plain JSON (the adapter decodes the
provider's raw reply), so codecs stay testable with fixture files and never
depend on an SDK's classes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Protocol

from weakincentives.errors import ConfigValidationError, ParseError, PromptEvaluationError
from weakincentives.prompt import HostedTool, HostedToolConfig, HostedToolOutput
from weakincentives.serde import JSONValue

__all__ = [
    "HostedOutputParseError",
    "HostedToolCodec",
    "parse_hosted_outputs",
    "serialize_hosted_tools",
]


class HostedToolCodec[ConfigT: HostedToolConfig, OutputT: HostedToolOutput](Protocol):
    """Translates one hosted tool kind to and from one provider's wire format.

    ``serialize`` raises :class:`~weakincentives.errors.ConfigValidationError`
    for an option the provider cannot honour (never drops it silently).
    ``parse_output`` returns None when the tool was not used in the response and
    raises :class:`HostedOutputParseError` when the provider's items are malformed.
    """

    @property
    def kind(self) -> str:
        """The provider-neutral kind this codec handles, such as ``"web_search"``."""
        ...

    def serialize(self, tool: HostedTool[ConfigT]) -> dict[str, JSONValue]:
        """Build the provider's tool spec for ``tool``."""
        ...

    def parse_output(
        self, response_items: Sequence[Mapping[str, JSONValue]], tool: HostedTool[ConfigT]
    ) -> OutputT | None:
        """Read what ``tool`` did from the response's output items, or None if unused."""
        ...


class HostedOutputParseError(ParseError):
    """A provider reported hosted tool activity in a shape the codec cannot read.

    ``path`` is rooted at the response (``$.output[2].content[0].annotations``);
    ``item`` is the offending top-level output item, kept for diagnosis.
    """

    kind: str
    item: Mapping[str, JSONValue] | None

    def __init__(
        self,
        *,
        kind: str,
        path: str,
        expected: str,
        got: str,
        output_type: type[Any] | None = None,
        item: Mapping[str, JSONValue] | None = None,
    ) -> None:
        super().__init__(path=path, expected=expected, got=got, dataclass_type=output_type)
        self.kind = kind
        self.item = item


def serialize_hosted_tools(
    tools: Sequence[HostedTool[HostedToolConfig]],
    codecs: Mapping[str, HostedToolCodec[Any, Any]],
    *,
    adapter_name: str,
    prompt_name: str,
) -> tuple[dict[str, JSONValue], ...]:
    """Build the wire spec of every hosted tool, in order, before any request is sent.

    Raises :class:`~weakincentives.errors.PromptEvaluationError` with phase
    ``render`` for a kind without a codec, two tools of one kind (their calls
    could not be told apart), or an option the provider cannot honour.
    """
    specs: list[dict[str, JSONValue]] = []
    seen: dict[str, str] = {}
    for tool in tools:
        codec = _codec_for(tool, codecs, adapter_name=adapter_name, prompt_name=prompt_name)
        if tool.kind in seen:
            raise PromptEvaluationError(
                f"hosted tools {seen[tool.kind]!r} and {tool.name!r} both have kind "
                f"{tool.kind!r}; the {adapter_name} adapter cannot tell their calls apart, "
                "so offer each kind once per prompt",
                prompt_name=prompt_name,
                phase="render",
            )
        seen[tool.kind] = tool.name
        try:
            specs.append(codec.serialize(tool))
        except ConfigValidationError as exc:
            raise PromptEvaluationError(
                f"hosted tool {tool.name!r} (kind {tool.kind!r}) cannot be sent with the "
                f"{adapter_name} adapter: {exc.message}",
                prompt_name=prompt_name,
                phase="render",
            ) from exc
    return tuple(specs)


def parse_hosted_outputs(
    tools: Sequence[HostedTool[HostedToolConfig]],
    codecs: Mapping[str, HostedToolCodec[Any, Any]],
    items: Sequence[Mapping[str, JSONValue]],
    *,
    prompt_name: str,
) -> Mapping[str, HostedToolOutput]:
    """Parse each hosted tool's output from the response items, keyed by tool name.

    A tool the model did not use gets no entry. Malformed items raise
    :class:`~weakincentives.errors.PromptEvaluationError` with phase ``parse``
    and the offending item as ``provider_payload``.
    """
    outputs: dict[str, HostedToolOutput] = {}
    for tool in tools:
        codec = codecs.get(tool.kind)
        if codec is None:
            raise PromptEvaluationError(
                f"no codec for hosted tool {tool.name!r} of kind {tool.kind!r}, so its output "
                "cannot be read; use the codecs the request was serialized with",
                prompt_name=prompt_name,
                phase="parse",
            )
        try:
            output = codec.parse_output(items, tool)
        except HostedOutputParseError as exc:
            payload: Mapping[str, Any] = (
                exc.item if exc.item is not None else {"output": list(items)}
            )
            raise PromptEvaluationError(
                f"output of hosted tool {tool.name!r} (kind {tool.kind!r}) is malformed: "
                f"{exc.message}",
                prompt_name=prompt_name,
                phase="parse",
                provider_payload=payload,
            ) from exc
        if output is not None:
            outputs[tool.name] = output
    return MappingProxyType(outputs)


def _codec_for(
    tool: HostedTool[HostedToolConfig],
    codecs: Mapping[str, HostedToolCodec[Any, Any]],
    *,
    adapter_name: str,
    prompt_name: str,
) -> HostedToolCodec[Any, Any]:
    codec = codecs.get(tool.kind)
    if codec is None:
        supported = ", ".join(sorted(codecs)) or "none"
        raise PromptEvaluationError(
            f"hosted tool {tool.name!r} has kind {tool.kind!r}, which the {adapter_name} "
            f"adapter does not support (supported kinds: {supported}); register a codec "
            f"for {tool.kind!r} in the adapter's hosted tool codecs",
            prompt_name=prompt_name,
            phase="render",
        )
    if codec.kind != tool.kind:
        raise PromptEvaluationError(
            f"the {adapter_name} adapter's codec registered for kind {tool.kind!r} handles "
            f"kind {codec.kind!r}; register each codec under its own kind",
            prompt_name=prompt_name,
            phase="render",
        )
    return codec
