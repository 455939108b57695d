"""The demo's operations catalogue: a few hundred platform tools behind discovery.

Written for the demo (nothing is copied from elsewhere): categories of an internal
platform, each with tools built from a small vocabulary of actions. One of them,
``deploys.rollback_release``, is a real weakincentives ``Tool``; the rest answer
with a short canned message, which is all the demo needs from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from weakincentives.discovery import (
    CallableExecutor,
    CallOutcome,
    CatalogNode,
    CatalogTool,
    ToolCatalog,
    ToolDiscovery,
)
from weakincentives.prompt import Tool, ToolContext, ToolResult
from weakincentives.serde import JSONValue

__all__ = ["ROLLBACK_TOOL_ID", "build_ops_discovery"]

ROLLBACK_TOOL_ID = "rollback_release"

_SERVICES = (
    "checkout-api",
    "payments",
    "search",
    "inventory",
    "notifications",
    "accounts",
    "shipping",
    "recommendations",
    "auth-gateway",
    "reporting",
)

# category -> (summary, [(action, object, summary template)])
_CATEGORIES: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    "Deploys": (
        "Ship, inspect and undo releases",
        [
            ("list", "releases", "List recent releases of {service}"),
            ("promote", "release", "Promote a staged release of {service} to production"),
            ("pause", "rollout", "Pause an in-progress rollout of {service}"),
            ("diff", "releases", "Show the code changes between two releases of {service}"),
        ],
    ),
    "Metrics": (
        "Read service metrics and dashboards",
        [
            ("read", "latency", "Read request latency percentiles for {service}"),
            ("read", "errors", "Read the error rate of {service}"),
            ("read", "saturation", "Read CPU and memory saturation for {service}"),
            ("compare", "windows", "Compare a metric of {service} across two time windows"),
        ],
    ),
    "Logs": (
        "Search and tail application logs",
        [
            ("search", "logs", "Search the logs of {service} for a pattern"),
            ("tail", "logs", "Stream the newest log lines of {service}"),
            ("count", "errors", "Count error log lines of {service} per minute"),
        ],
    ),
    "Incidents": (
        "Open, update and close incidents",
        [
            ("open", "incident", "Open an incident for {service} and page the owner"),
            ("update", "status", "Post a status update about {service} to the incident channel"),
            ("close", "incident", "Close the incident of {service} with a summary"),
        ],
    ),
    "Flags": (
        "Feature flags and kill switches",
        [
            ("toggle", "flag", "Turn a feature flag of {service} on or off"),
            ("list", "flags", "List feature flags of {service} with their state"),
        ],
    ),
    "Capacity": (
        "Scaling and quotas",
        [
            ("scale", "replicas", "Change the replica count of {service}"),
            ("read", "quota", "Read the resource quota of {service}"),
            ("forecast", "load", "Forecast next week's traffic for {service}"),
        ],
    ),
    "Databases": (
        "Database health, queries and backups",
        [
            ("read", "slow-queries", "List the slowest queries of {service}'s database"),
            ("start", "backup", "Start a backup of {service}'s database"),
            ("read", "replication-lag", "Read replication lag of {service}'s database"),
        ],
    ),
    "Queues": (
        "Message queues and consumers",
        [
            ("read", "depth", "Read the queue depth of {service}"),
            ("purge", "dead-letters", "Purge the dead-letter queue of {service}"),
        ],
    ),
    "Access": (
        "Permissions and on-call rotations",
        [
            ("grant", "access", "Grant temporary production access to {service}"),
            ("read", "on-call", "Show who is on call for {service}"),
        ],
    ),
    "Network": (
        "DNS, certificates and traffic routing",
        [
            ("read", "certificate", "Show the TLS certificate expiry of {service}"),
            ("shift", "traffic", "Shift traffic of {service} between regions"),
            ("read", "dns", "Show DNS records of {service}"),
        ],
    ),
}


@dataclass(frozen=True, slots=True)
class RollbackParams:
    """Arguments of the rollback tool."""

    service: str = field(metadata={"description": "The service to roll back"})
    to_version: str = field(metadata={"description": "The release to return to, e.g. v411"})


@dataclass(frozen=True, slots=True)
class Rollback:
    """What the rollback did."""

    service: str
    from_version: str
    to_version: str
    status: str


def rollback_release(params: RollbackParams, *, context: ToolContext) -> ToolResult[Rollback]:
    """Roll a service back to an earlier release."""
    return ToolResult(
        message=f"Rollback of {params.service} to {params.to_version} started.",
        value=Rollback(
            service=params.service,
            from_version="v412",
            to_version=params.to_version,
            status="in_progress",
        ),
    )


_SERVICE_SCHEMA: Mapping[str, JSONValue] = {
    "type": "object",
    "properties": {"service": {"type": "string", "description": "Service name"}},
    "required": ["service"],
    "additionalProperties": False,
}


def _catalogue_entries() -> list[CatalogTool]:
    entries: list[CatalogTool] = []
    for category, (_, actions) in _CATEGORIES.items():
        for service in _SERVICES:
            for action, subject, summary in actions:
                slug = f"{category.lower()}.{action}_{subject.replace('-', '_')}.{service}"
                entries.append(
                    CatalogTool(
                        tool_id=slug,
                        name=f"{action} {subject} ({service})",
                        paths=((category, service),),
                        summary=summary.format(service=service),
                        tags=(category.lower(), action),
                        args_schema=_SERVICE_SCHEMA,
                    )
                )
    return entries


def _canned(arguments: Mapping[str, JSONValue]) -> CallOutcome:
    return CallOutcome(success=True, message=f"done for {arguments.get('service')}")


def build_ops_discovery(*, require_expansion: bool = True) -> ToolDiscovery:
    """The discovery service over the demo catalogue (expand before call is enforced).

    Without ``require_expansion`` the catalogue is also offered for native tool search,
    which loads schemas with the search and has no expansion step.
    """
    rollback = ToolCatalog.from_tools(
        [(("Deploys",), Tool.wrap(rollback_release, name=ROLLBACK_TOOL_ID))]
    ).tools
    records = _catalogue_entries()
    nodes = [
        CatalogNode(name=category, path=(category,), summary=summary)
        for category, (summary, _) in _CATEGORIES.items()
    ]
    catalog = ToolCatalog(tools=[*rollback, *records], nodes=nodes)
    executor = CallableExecutor(functions={entry.tool_id: _canned for entry in records})
    # A fixed cursor secret keeps the demo's transcript identical from run to run.
    return ToolDiscovery(
        catalog,
        executor=executor,
        require_expansion=require_expansion,
        cursor_secret=b"weakincentives-demo-cursor-secret",
    )
