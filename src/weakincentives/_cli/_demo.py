"""``python -m weakincentives demo``: run the on-call agent and print a transcript.

Offline by default (a deterministic responder plays the model). With
``--provider openai`` (or ``WINK_PROVIDER=openai``) the same prompt, tools and loop
run against the OpenAI Responses API, or any compatible server via ``--base-url``
(or ``OPENAI_BASE_URL``); the key comes from ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass
from typing import TextIO

from weakincentives._cli._commands import CommandGroup, add_command
from weakincentives._cli._demo_agent import IncidentParams, TriageReport, build_triage_prompt
from weakincentives._cli._demo_model import demo_responder
from weakincentives._cli._transcript import Transcript
from weakincentives.adapters import OfflineAdapter, ProviderAdapter
from weakincentives.adapters.openai import OpenAIAdapter
from weakincentives.errors import ConfigValidationError
from weakincentives.runtime import InProcessEventBus, PromptExecuted, Session, TokenUsage
from weakincentives.serde import dump
from weakincentives.tools import WebSearchResult

__all__ = ["DemoOptions", "register", "run_demo"]

DEFAULT_MODEL = "gpt-4.1-mini"


@dataclass(frozen=True, slots=True, kw_only=True)
class DemoOptions:
    """How to run the demo."""

    provider: str = "offline"
    model: str = DEFAULT_MODEL
    base_url: str | None = None
    show_prompt: bool = True

    @classmethod
    def from_environment(
        cls,
        *,
        provider: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        show_prompt: bool = True,
    ) -> DemoOptions:
        """Flags win; otherwise ``WINK_PROVIDER``, ``WINK_MODEL``, ``OPENAI_BASE_URL``."""
        return cls(
            provider=provider or os.environ.get("WINK_PROVIDER") or "offline",
            model=model or os.environ.get("WINK_MODEL") or DEFAULT_MODEL,
            base_url=base_url or os.environ.get("OPENAI_BASE_URL") or None,
            show_prompt=show_prompt,
        )


def build_adapter(options: DemoOptions) -> ProviderAdapter:
    """The offline responder, or the OpenAI adapter when asked for."""
    if options.provider == "offline":
        return OfflineAdapter(responder=demo_responder, name="offline")
    if options.provider == "openai":
        return OpenAIAdapter(model=options.model, base_url=options.base_url)
    raise ConfigValidationError(
        f"unknown provider {options.provider!r}; use 'offline' or 'openai'",
        field_name="provider",
        value=options.provider,
    )


def run_demo(options: DemoOptions, out: TextIO) -> int:
    """Run the agent once and print the transcript; returns a process exit code."""
    adapter = build_adapter(options)
    bus = InProcessEventBus()
    session = Session(bus=bus)
    transcript = Transcript(out, show_prompt=options.show_prompt)
    transcript.attach(bus)
    transcript.line(f"weakincentives demo: on-call triage on the {adapter.name} adapter")
    response = adapter.evaluate(
        build_triage_prompt(),
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
    usage = sum((event.usage for event in session.select(PromptExecuted)), TokenUsage())
    transcript.heading("Totals")
    transcript.line(
        f"  tokens in {usage.input_tokens}, out {usage.output_tokens} "
        f"({'estimated, 4 characters per token' if adapter.name == 'offline' else 'reported'})"
    )
    return 0


def _run(arguments: argparse.Namespace, out: TextIO) -> int:
    options = DemoOptions.from_environment(
        provider=arguments.provider,
        model=arguments.model,
        base_url=arguments.base_url,
        show_prompt=not arguments.no_prompt,
    )
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
            "plays the model. --provider openai (or WINK_PROVIDER=openai) uses the OpenAI "
            "Responses API with OPENAI_API_KEY; --base-url (or OPENAI_BASE_URL) points it at "
            "any Responses-compatible server."
        ),
        examples=(
            "",
            "--no-prompt",
            "--provider openai --model gpt-4.1-mini",
        ),
        run=_run,
    )
    demo.add_argument(
        "--provider", choices=("offline", "openai"), default=None, help="default: offline"
    )
    demo.add_argument(
        "--model", default=None, help=f"model for --provider openai (default: {DEFAULT_MODEL})"
    )
    demo.add_argument("--base-url", default=None, help="Responses API base URL")
    demo.add_argument("--no-prompt", action="store_true", help="do not print the rendered prompts")
