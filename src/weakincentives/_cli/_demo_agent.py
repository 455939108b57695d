"""The demo agent: an on-call assistant that triages a latency incident.

Everything here is ordinary library usage, the way a user would write it: typed
params and results, tools on sections, a summarized runbook the model can open,
hosted web search, and a structured answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from weakincentives._cli._demo_catalog import build_ops_discovery
from weakincentives.discovery import ToolDiscoverySection
from weakincentives.errors import ToolValidationError
from weakincentives.prompt import (
    MarkdownSection,
    PromptTemplate,
    SectionVisibility,
    Tool,
    ToolContext,
    ToolResult,
)
from weakincentives.tools import DomainFilter, WebSearchConfig, WebSearchSection

__all__ = ["IncidentParams", "TriageReport", "build_triage_prompt"]

Metric = Literal["latency_p99_ms", "error_rate", "cpu_percent"]


@dataclass(frozen=True, slots=True)
class IncidentParams:
    """What the pager said."""

    service: str
    symptom: str


@dataclass(frozen=True, slots=True)
class TriageReport:
    """The structured answer the on-call engineer receives."""

    severity: Literal["sev1", "sev2", "sev3"] = field(
        metadata={"description": "sev1 = customer-facing outage, sev3 = minor degradation"}
    )
    suspected_cause: str = field(metadata={"description": "One sentence on the likely cause"})
    actions: list[str] = field(metadata={"description": "Ordered next steps", "min_length": 1})
    sources: list[str] = field(
        default_factory=list, metadata={"description": "URLs consulted, if any"}
    )


@dataclass(frozen=True, slots=True)
class MetricsQuery:
    """Arguments of ``query_metrics``."""

    service: str = field(metadata={"description": "Service name, e.g. checkout-api"})
    metric: Metric = field(metadata={"description": "Which metric to read"})
    window_minutes: int = field(
        metadata={"description": "How far back to look", "ge": 1, "le": 1440}
    )


@dataclass(frozen=True, slots=True)
class MetricsSummary:
    """A summary of one metric over a window."""

    metric: str
    baseline: float
    current: float
    changed_at: str | None = None

    def render(self) -> str:
        """A one-line reading, friendlier to the model than raw JSON."""
        change = f", jumped at {self.changed_at}" if self.changed_at else ""
        return f"{self.metric}: baseline {self.baseline:g}, now {self.current:g}{change}"


@dataclass(frozen=True, slots=True)
class DeploysQuery:
    """Arguments of ``recent_deploys``."""

    service: str = field(metadata={"description": "Service name"})


@dataclass(frozen=True, slots=True)
class Deploy:
    """One deployment."""

    version: str
    at: str
    author: str


@dataclass(frozen=True, slots=True)
class DeployList:
    """Recent deployments, newest first."""

    deploys: tuple[Deploy, ...]


_METRICS: dict[tuple[str, str], MetricsSummary] = {
    ("checkout-api", "latency_p99_ms"): MetricsSummary(
        metric="latency_p99_ms", baseline=180, current=2350, changed_at="14:02 UTC"
    ),
    ("checkout-api", "error_rate"): MetricsSummary(metric="error_rate", baseline=0.2, current=0.4),
    ("checkout-api", "cpu_percent"): MetricsSummary(metric="cpu_percent", baseline=35, current=38),
}

_DEPLOYS = {
    "checkout-api": (
        Deploy(version="v412", at="14:00 UTC", author="ci-bot"),
        Deploy(version="v411", at="yesterday 09:10 UTC", author="ci-bot"),
    )
}


def query_metrics(params: MetricsQuery, *, context: ToolContext) -> ToolResult[MetricsSummary]:
    """Read a metric for a service over a recent window."""
    summary = _METRICS.get((params.service, params.metric))
    if summary is None:
        known = sorted({service for service, _ in _METRICS})
        raise ToolValidationError(
            f"no metrics for service {params.service!r}; known services: {', '.join(known)}",
            tool_name="query_metrics",
            field_path="$.service",
        )
    return ToolResult(message=f"{params.metric} over {params.window_minutes} min.", value=summary)


def recent_deploys(params: DeploysQuery, *, context: ToolContext) -> ToolResult[DeployList]:
    """List the latest deployments of a service."""
    deploys = _DEPLOYS.get(params.service, ())
    return ToolResult(message=f"{len(deploys)} recent deploys.", value=DeployList(deploys=deploys))


QUERY_METRICS = Tool.wrap(query_metrics)
RECENT_DEPLOYS = Tool.wrap(recent_deploys)

_RUNBOOK_LATENCY = """
When p99 latency jumps without a matching CPU rise, suspect a code change first:
1. Compare the jump's start with the most recent deploy.
2. If they line up within 10 minutes, roll back to the previous version.
3. Keep the incident open until p99 stays under 300 ms for 15 minutes.
"""

_RUNBOOK_SEVERITY = """
- sev1: checkout unavailable or error rate above 5 %.
- sev2: checkout slow (p99 above 1 s) but working.
- sev3: degradation customers are unlikely to notice.
"""


def build_triage_prompt(*, native_tool_search: bool = False) -> PromptTemplate[TriageReport]:
    """The demo's prompt: task, tools, a summarized runbook, and web search.

    With ``native_tool_search`` the platform catalogue is offered for the providers'
    own tool search (its service then does not insist on expansion).
    """
    return PromptTemplate[TriageReport](
        ns="demo/oncall",
        key="incident-triage",
        name="incident_triage",
        sections=[
            MarkdownSection[IncidentParams](
                title="Task",
                key="task",
                template="""
                You are the on-call assistant. The pager reports: $symptom on `$service`.
                Find the likely cause with the tools, then answer with a triage report.
                """,
            ),
            MarkdownSection(
                title="Observability",
                key="observability",
                template="Read metrics and deployments before guessing.",
                tools=[QUERY_METRICS, RECENT_DEPLOYS],
            ),
            MarkdownSection(
                title="Runbook",
                key="runbook",
                template="Team procedures for incidents.",
                summary="Procedures for latency incidents and severity levels.",
                visibility=SectionVisibility.SUMMARY,
                children=[
                    MarkdownSection(title="Latency", key="latency", template=_RUNBOOK_LATENCY),
                    MarkdownSection(title="Severity", key="severity", template=_RUNBOOK_SEVERITY),
                ],
            ),
            WebSearchSection(
                WebSearchConfig(
                    domain_filter=DomainFilter(allowed=("status.payments.example.com",))
                )
            ),
            ToolDiscoverySection(
                build_ops_discovery(require_expansion=not native_tool_search),
                title="Platform Tools",
                key="platform",
            ),
        ],
    )
