"""``python -m weakincentives demo``: run the on-call agent and print a transcript.

Offline by default (a deterministic responder plays the model). With ``--adapter``
(or ``WINK_ADAPTER``) the same prompt, tools and loop run against a real model:
``openai`` (Responses API), ``openai-chat`` (Chat Completions: OpenAI or a local
server such as llama.cpp, Ollama or vLLM via ``--base-url`` / ``OPENAI_BASE_URL``) or
``anthropic`` (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``). Request options such as
the temperature come from ``--temperature`` and ``--request-options`` (or
``WINK_REQUEST_OPTIONS``), as JSON; ``--answer-schema`` (or ``WINK_ANSWER_SCHEMA``) says
when the report's schema goes in the request (``LoopSettings.answer_schema``). Tool
calls a model writes as text are read as calls on every adapter. ``--record PATH``
writes every exchange with the model to a cassette file; ``--replay PATH`` answers from
it instead of the model, with no network, so a run recorded against a real model
replays offline, identically. ``--trace PATH`` writes the run's OpenTelemetry spans to
PATH, one JSON line per span.
"""

from __future__ import annotations

import argparse
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO, cast

from weakincentives._cli._commands import CommandGroup, add_command
from weakincentives._cli._demo_agent import IncidentParams, TriageReport, build_triage_prompt
from weakincentives._cli._demo_model import demo_responder, native_demo_responder
from weakincentives._cli._demo_trace import spans_written_to
from weakincentives.adapters import (
    Adapter,
    AnswerSchemaMode,
    AssistantMessage,
    LoopSettings,
    OfflineAdapter,
    Recorded,
    RecordMode,
    Transcript,
)
from weakincentives.adapters.anthropic import AnthropicMessages
from weakincentives.adapters.openai import (
    ChatCompletions,
    OpenAIResponses,
    default_openai_codecs,
)
from weakincentives.errors import ConfigValidationError, ParseError
from weakincentives.prompt import PromptTemplate
from weakincentives.runtime import InProcessEventBus, PromptExecuted, Session, TokenUsage
from weakincentives.serde import JSONValue, dump, loads
from weakincentives.tools import WebSearchResult

__all__ = ["DemoOptions", "register", "run_demo"]

DEFAULT_MODEL = "gpt-4.1-mini"
DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-6"}
"""Per-adapter default model; the others use ``DEFAULT_MODEL``."""
ADAPTERS = ("offline", "openai", "openai-chat", "anthropic")
TOOL_SEARCH = ("client", "server", "bm25", "regex")
"""``--tool-search`` modes: ``client`` on every adapter that has native search (simulated
offline), ``server`` on openai, ``bm25`` and ``regex`` on anthropic."""
ANSWER_SCHEMA_MODES: tuple[AnswerSchemaMode, ...] = ("without_tools", "always", "never")


@dataclass(frozen=True, slots=True, kw_only=True)
class DemoOptions:
    """How to run the demo."""

    adapter: str = "offline"
    """The adapter by name: ``offline``, ``openai``, ``openai-chat`` or ``anthropic``."""
    model: str = DEFAULT_MODEL
    base_url: str | None = None
    show_prompt: bool = True
    request_options: Mapping[str, JSONValue] = field(default_factory=dict)
    """Added to every request, e.g. ``{"temperature": 0}``."""
    cassette: str | None = None
    """A cassette file to record the run to, or to replay it from (see ``cassette_mode``)."""
    cassette_mode: RecordMode = "replay"
    tool_search: str | None = None
    """Load the platform catalogue through the provider's native tool search in this mode
    (see ``TOOL_SEARCH``); None keeps the discovery tools with expansion enforced."""
    answer_schema: AnswerSchemaMode = "without_tools"
    """When the report's schema goes in the request (``LoopSettings.answer_schema``)."""

    @classmethod
    def from_environment(
        cls,
        *,
        adapter: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        show_prompt: bool = True,
        request_options: str | None = None,
        temperature: float | None = None,
        record: str | None = None,
        replay: str | None = None,
        tool_search: str | None = None,
        answer_schema: str | None = None,
    ) -> DemoOptions:
        """Options from the flags, falling back to the environment.

        Variables: ``WINK_ADAPTER``, ``WINK_MODEL``, the service's base URL variable
        (``OPENAI_BASE_URL`` or ``ANTHROPIC_BASE_URL``) and ``WINK_REQUEST_OPTIONS``.
        ``request_options`` is a JSON object; ``temperature`` is added to it. ``record``
        and ``replay`` name a cassette file (at most one of them). ``answer_schema``
        falls back to ``WINK_ANSWER_SCHEMA``.
        """
        chosen = adapter or os.environ.get("WINK_ADAPTER") or "offline"
        variable = "ANTHROPIC_BASE_URL" if chosen == "anthropic" else "OPENAI_BASE_URL"
        options = _json_object(request_options or os.environ.get("WINK_REQUEST_OPTIONS"))
        if temperature is not None:
            if not math.isfinite(temperature):
                raise ConfigValidationError(
                    f"temperature must be a finite number, got {temperature}",
                    field_name="temperature",
                    value=temperature,
                )
            options["temperature"] = temperature
        return cls(
            adapter=chosen,
            model=model
            or os.environ.get("WINK_MODEL")
            or DEFAULT_MODELS.get(chosen, DEFAULT_MODEL),
            base_url=base_url or os.environ.get(variable) or None,
            show_prompt=show_prompt,
            request_options=options,
            cassette=record or replay,
            cassette_mode="record" if record else "replay",
            tool_search=tool_search,
            answer_schema=_answer_schema(
                answer_schema or os.environ.get("WINK_ANSWER_SCHEMA") or "without_tools"
            ),
        )


def _answer_schema(value: str) -> AnswerSchemaMode:
    for mode in ANSWER_SCHEMA_MODES:
        if value == mode:
            return mode
    raise ConfigValidationError(
        f"unknown answer schema mode {value!r}; use one of "
        f"{', '.join(map(repr, ANSWER_SCHEMA_MODES))}",
        field_name="answer_schema",
        value=value,
    )


def _json_object(text: str | None) -> dict[str, JSONValue]:
    if not text:
        return {}
    try:
        value = loads(text)  # refuses NaN, lone surrogates and nesting json.loads recurses on
    except ParseError as exc:
        raise ConfigValidationError(
            f"request options must be a JSON object, such as '{{\"temperature\": 0}}': "
            f"{exc.message}",
            field_name="request_options",
            value=text,
        ) from exc
    if not isinstance(value, dict):
        raise ConfigValidationError(
            f"request options must be a JSON object, got a JSON {type(value).__name__}",
            field_name="request_options",
            value=text,
        )
    return value


def build_adapter(options: DemoOptions) -> Adapter[Any]:
    """The adapter asked for by name, recording to or replaying from the cassette if any."""
    adapter = _named_adapter(options)
    if options.cassette is None:
        return adapter
    recorded = Recorded(adapter.provider, options.cassette, mode=options.cassette_mode)
    return Adapter(recorded, settings=adapter.settings)


def _named_adapter(options: DemoOptions) -> Adapter[Any]:
    """The offline responder, or the adapter asked for by name.

    Every adapter reads tool calls written as text: small local models write them
    that way on every endpoint of their server.
    """
    extra = dict(options.request_options)
    # A replay never reaches the service: the SDK client needs a key, not a real one.
    key = "unused-in-replay" if options.cassette and options.cassette_mode == "replay" else None
    native: dict[str, Any] = {}
    if options.tool_search is not None:
        native["tool_search"] = options.tool_search
    settings = LoopSettings(recover_text_tool_calls=True, answer_schema=options.answer_schema)
    if options.adapter == "offline":
        # The offline model answers web searches with Responses API items.
        return OfflineAdapter(
            responder=native_demo_responder if native else demo_responder,
            name="offline",
            hosted_tool_codecs=default_openai_codecs(),
            **native,
        )
    # What every provider takes: the model, where it is served, and how to authenticate.
    connection: dict[str, Any] = {
        "model": options.model,
        "base_url": options.base_url,
        "request_options": extra,
        "api_key": key,
    }
    tool_search = {"tool_search": "off"} | native
    if options.adapter == "openai":
        return Adapter(OpenAIResponses(**connection, **tool_search), settings=settings)
    if options.adapter == "openai-chat":
        # Local servers read max_tokens (not always max_completion_tokens).
        chat = ChatCompletions(**connection, token_cap_field="max_tokens")
        return Adapter(chat, settings=settings)
    if options.adapter == "anthropic":
        return Adapter(AnthropicMessages(**connection, **tool_search), settings=settings)
    raise ConfigValidationError(
        f"unknown adapter {options.adapter!r}; use one of {', '.join(map(repr, ADAPTERS))}",
        field_name="adapter",
        value=options.adapter,
    )


def native_summary(request: Mapping[str, JSONValue] | None) -> str:
    """What the model was shown natively in its last request, in one line.

    The offline model's simulated view names the loaded tools; a provider's request body
    shows how many catalogue tools it declared deferred.
    """
    if request is None:
        return "no request was recorded"
    loaded = request.get("loaded")
    if isinstance(loaded, list):
        return (
            f"the model was shown {request.get('deferred_tools')} catalogue tools deferred "
            f"in {len(cast('list[JSONValue]', request.get('deferred_groups') or []))} groups "
            f"instead of the discovery tools; its searches loaded: "
            f"{', '.join(map(str, loaded)) or 'nothing'}"
        )
    text = json.dumps(request.get("tools", []))
    return f"the request declared {text.count('defer_loading')} catalogue tools deferred"


def _runnable(
    template: PromptTemplate[TriageReport], adapter: Adapter[Any]
) -> tuple[PromptTemplate[TriageReport], tuple[str, ...]]:
    """The prompt without sections whose hosted tools the adapter cannot run, and their keys.

    Chat Completions runs no hosted tools; rather than fail, the demo leaves web search
    out on that adapter and says so.
    """
    codecs = adapter.provider.hosted_tool_codecs
    dropped = tuple(
        section.key
        for section in template.sections
        if any(tool.kind not in codecs for tool in section.hosted_tools())
    )
    if not dropped:
        return template, ()
    kept = [section for section in template.sections if section.key not in dropped]
    runnable = PromptTemplate[TriageReport](
        ns=template.ns, key=template.key, name=template.name, sections=kept
    )
    return runnable, dropped


def run_demo(options: DemoOptions, out: TextIO) -> int:
    """Run the agent once and print the transcript; returns a process exit code."""
    adapter = build_adapter(options)
    bus = InProcessEventBus()
    session = Session(bus=bus)
    transcript = Transcript(out, show_prompt=options.show_prompt)
    transcript.attach(bus)
    transcript.line(f"weakincentives demo: on-call triage on the {adapter.name} adapter")
    native = options.tool_search is not None
    prompt, dropped = _runnable(build_triage_prompt(native_tool_search=native), adapter)
    for key in dropped:
        transcript.line(
            f"(section {key!r} left out: the {adapter.name} adapter cannot run its hosted tools)"
        )
    response = adapter.evaluate(
        prompt,
        IncidentParams(service="checkout-api", symptom="p99 latency alerts"),
        bus=bus,
        session=session,
    )
    transcript.heading("Structured answer (TriageReport)")
    report = response.output
    if isinstance(report, TriageReport):
        for line in json.dumps(dump(report), indent=2).splitlines():
            transcript.line(f"  {line}")
    search = response.hosted_outputs.get("web_search")
    if isinstance(search, WebSearchResult) and search.citations:
        transcript.heading("Web search citations")
        for citation in search.citations:
            transcript.line(f"  - {citation.title} <{citation.url}>")
    if native:
        transcript.heading("Native tool search")
        turns = [item.turn for item in response.conversation if isinstance(item, AssistantMessage)]
        transcript.line(f"  {native_summary(turns[-1].request if turns else None)}")
    usage = sum((event.usage for event in session.select(PromptExecuted)), TokenUsage())
    transcript.heading("Totals")
    transcript.line(
        f"  tokens in {usage.input_tokens}, out {usage.output_tokens} "
        f"({'estimated, 4 characters per token' if adapter.name == 'offline' else 'reported'})"
    )
    return 0


def _run(arguments: argparse.Namespace, out: TextIO) -> int:
    options = DemoOptions.from_environment(
        adapter=arguments.adapter,
        model=arguments.model,
        base_url=arguments.base_url,
        show_prompt=not arguments.no_prompt,
        request_options=arguments.request_options,
        temperature=arguments.temperature,
        record=arguments.record,
        replay=arguments.replay,
        tool_search=arguments.tool_search,
        answer_schema=arguments.answer_schema,
    )
    with spans_written_to(arguments.trace):
        return run_demo(options, out)


def register(group: CommandGroup) -> None:
    """Add ``demo`` to the command line."""
    demo = add_command(
        group,
        "demo",
        summary="run the on-call triage agent and print a transcript",
        description=(
            "Run the demo agent and print what the model sees, every tool call and result, "
            "and the structured answer. Offline by default, where a deterministic stand-in "
            "plays the model. --adapter (or WINK_ADAPTER) picks a real model: openai "
            "(Responses API, OPENAI_API_KEY), openai-chat (Chat Completions: OpenAI or a "
            "local server such as llama.cpp, Ollama or vLLM via --base-url or "
            "OPENAI_BASE_URL) or anthropic (ANTHROPIC_API_KEY). --model (or WINK_MODEL) "
            "names the model; --temperature and --request-options (or "
            "WINK_REQUEST_OPTIONS) are added to every request. --answer-schema (or "
            "WINK_ANSWER_SCHEMA) says when the report's JSON Schema goes in the request: "
            "without_tools (the default: only in requests that offer no tool, so a server "
            "that enforces it as a grammar, such as llama.cpp, never keeps the model from "
            "calling tools), always, or never. --record PATH writes every "
            "exchange with the model to a cassette file; --replay PATH answers from it, "
            "with no network. --tool-search MODE loads the platform catalogue through "
            "the provider's native tool search (client: our ranker answers its searches; "
            "server on openai, bm25 or regex on anthropic: the provider's own search; "
            "offline simulates client) instead of the discovery tools. --trace PATH "
            "writes the run's OpenTelemetry spans to PATH, one JSON object per line "
            "(needs opentelemetry-sdk)."
        ),
        examples=(
            "",
            "--no-prompt",
            "--adapter openai --model gpt-4.1-mini",
            "--adapter openai-chat --base-url http://127.0.0.1:8080/v1 --temperature 0",
            "--adapter openai --answer-schema always",
            "--adapter anthropic --model claude-sonnet-4-6",
            "--adapter openai --record triage.json",
            "--adapter openai --replay triage.json",
            "--tool-search client",
            "--adapter anthropic --tool-search bm25",
            "--no-prompt --trace trace.jsonl",
        ),
        run=_run,
    )
    demo.add_argument("--adapter", choices=ADAPTERS, default=None, help="default: offline")
    demo.add_argument("--model", default=None, help="the model's name")
    demo.add_argument("--base-url", default=None, help="the API base URL")
    demo.add_argument("--temperature", type=float, default=None, help="sampling temperature")
    demo.add_argument(
        "--request-options",
        default=None,
        metavar="JSON",
        help="a JSON object added to every request, e.g. '{\"top_p\": 0.9}'",
    )
    demo.add_argument(
        "--answer-schema",
        choices=ANSWER_SCHEMA_MODES,
        default=None,
        help="when the report's schema goes in the request (default: without_tools)",
    )
    demo.add_argument("--no-prompt", action="store_true", help="do not print the rendered prompts")
    demo.add_argument(
        "--tool-search",
        choices=TOOL_SEARCH,
        default=None,
        help="load the catalogue through the provider's native tool search (default: the "
        "discovery tools)",
    )
    demo.add_argument(
        "--trace",
        default=None,
        metavar="PATH",
        help="write the run's OpenTelemetry spans to PATH (JSON lines; the SDK's console exporter)",
    )
    cassette = demo.add_mutually_exclusive_group()
    cassette.add_argument(
        "--record", default=None, metavar="PATH", help="record every model exchange to PATH"
    )
    cassette.add_argument(
        "--replay",
        default=None,
        metavar="PATH",
        help="answer from the exchanges recorded in PATH, with no network",
    )
