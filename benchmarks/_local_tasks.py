"""The tasks of ``bench_local_model.py``: the same work for weakincentives and its peers.

Each task has an environment (the tools' data and a log of their calls, fresh for
every run), the prompt weakincentives evaluates, the plain functions and instructions
the peers get, and a check that the answer is grounded in the tools' results: it holds
values only a successful tool call could have given, and that call happened.

Capabilities weakincentives offers natively (a summarized section the model opens, a
150-tool catalogue behind discovery) are given to the peers as the equivalent plain
tools (``open_section``, ``search_tools`` / ``call_tool`` over the same catalogue and
ranking), so every framework can solve every task with the same information.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from weakincentives._cli._demo_agent import _DEPLOYS, _METRICS, TriageReport, build_triage_prompt
from weakincentives._cli._demo_agent import IncidentParams as DemoParams
from weakincentives.discovery import (
    CallableExecutor,
    CallOutcome,
    CatalogNode,
    CatalogTool,
    ToolCatalog,
    ToolDiscovery,
    ToolDiscoverySection,
)
from weakincentives.prompt import (
    MarkdownSection,
    Prompt,
    PromptTemplate,
    SectionVisibility,
    Tool,
    ToolContext,
    ToolResult,
)
from weakincentives.serde import JSONValue

__all__ = ["TASKS", "Env", "Task"]


@dataclass(slots=True)
class Env:
    """One run's world: what the tools did, in order."""

    calls: list[tuple[str, bool]] = field(default_factory=list)
    """(tool name, success) for every call, whichever framework made it."""
    failures_left: dict[str, int] = field(default_factory=dict)

    def log(self, name: str, success: bool) -> None:
        self.calls.append((name, success))

    def succeeded(self, name: str) -> bool:
        return (name, True) in self.calls


@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    """One benchmark task."""

    name: str
    instructions: str
    """The task as the peers get it (their system prompt); ours renders the same text."""
    output_type: type[Any] | None
    prompt: Callable[[Env], Prompt[Any]]
    peer_tools: Callable[[Env], list[Callable[..., Any]]]
    grounded: Callable[[object, str, Env], tuple[bool, str]]
    """(answer, final text, env) -> (grounded?, why not)."""
    stream: bool = False


class ToolFailedError(Exception):
    """A peer tool's failure: the peers turn exceptions into a retry message for the model."""


# --- shared tool logic -------------------------------------------------------------------


def _metrics(env: Env, service: str, metric: str, window_minutes: int) -> dict[str, JSONValue]:
    summary = _METRICS.get((service, metric))
    if summary is None or not 1 <= window_minutes <= 1440:
        env.log("query_metrics", False)
        raise ToolFailedError(
            f"no metrics for {service!r}/{metric!r} over {window_minutes} min; known service: "
            "checkout-api; metrics: latency_p99_ms, error_rate, cpu_percent; window 1-1440"
        )
    env.log("query_metrics", True)
    return {"summary": summary.render()}


def _deploys(env: Env, service: str) -> dict[str, JSONValue]:
    env.log("recent_deploys", True)
    return {"deploys": [asdict(deploy) for deploy in _DEPLOYS.get(service, ())]}


_RUNBOOK = (
    "Latency: when p99 latency jumps without a matching CPU rise, suspect a code change "
    "first: compare the jump's start with the most recent deploy; if they line up within "
    "10 minutes, roll back to the previous version. Severity: sev1 checkout unavailable or "
    "error rate above 5 %; sev2 checkout slow (p99 above 1 s) but working; sev3 degradation "
    "customers are unlikely to notice."
)


# --- 1. the demo -------------------------------------------------------------------------

DEMO_TEXT = (
    "You are the on-call assistant. The pager reports: p99 latency alerts on `checkout-api`. "
    "Find the likely cause with the tools, then answer with a triage report."
)


def _demo_prompt(env: Env) -> Prompt[Any]:
    """The demo's prompt as ``wink demo`` runs it, without web search (no hosted tools here)."""
    template = build_triage_prompt()
    kept = [section for section in template.sections if section.key != "web_search"]
    runnable = PromptTemplate[TriageReport](
        ns=template.ns, key=template.key, name=template.name, sections=kept
    )
    return Prompt(runnable).bind(DemoParams(service="checkout-api", symptom="p99 latency alerts"))


def _demo_tools(env: Env) -> list[Callable[..., Any]]:
    def query_metrics(service: str, metric: str, window_minutes: int) -> dict[str, JSONValue]:
        """Read a metric (latency_p99_ms, error_rate or cpu_percent) for a service over a window."""
        return _metrics(env, service, metric, window_minutes)

    def recent_deploys(service: str) -> dict[str, JSONValue]:
        """List the latest deployments of a service."""
        return _deploys(env, service)

    def open_section(key: str) -> str:
        """Open a summarized section of the instructions by key ('runbook')."""
        env.log("open_sections", key == "runbook")
        if key != "runbook":
            raise ToolFailedError("unknown section; the only summarized section is 'runbook'")
        return _RUNBOOK

    return [query_metrics, recent_deploys, open_section]


def _demo_grounded(answer: object, text: str, env: Env) -> tuple[bool, str]:
    if not isinstance(answer, TriageReport):
        return False, "no TriageReport"
    if not (env.succeeded("query_metrics") or env.succeeded("recent_deploys")):
        return False, "no metrics or deploys read"
    said = f"{answer.suspected_cause} {' '.join(answer.actions)}"
    if not any(fact in said for fact in ("v412", "v411", "14:00", "14:02", "2350")):
        return False, "the report names no fact from the tools"
    return True, ""


# --- 2. a typed tool and a typed answer (and 6., streamed) ---------------------------------


@dataclass(frozen=True, slots=True)
class ForecastQuery:
    """Arguments of get_forecast."""

    city: str = field(metadata={"description": "City name, e.g. Porto"})


@dataclass(frozen=True, slots=True)
class Forecast:
    """Tomorrow's forecast."""

    city: str
    temperature_c: int
    conditions: str
    rain_probability_percent: int


@dataclass(frozen=True, slots=True)
class TripAdvice:
    """Packing advice for tomorrow."""

    city: str
    temperature_c: int
    bring_umbrella: bool


FORECAST_TEXT = (
    "The user flies to Porto tomorrow. Read tomorrow's forecast for Porto with the "
    "get_forecast tool, then say whether to bring an umbrella."
)


def _forecast(env: Env, city: str) -> Forecast:
    if city.strip().lower() != "porto":
        env.log("get_forecast", False)
        raise ToolFailedError(f"no forecast for {city!r}; this service covers Porto only")
    env.log("get_forecast", True)
    return Forecast(
        city="Porto", temperature_c=17, conditions="light rain", rain_probability_percent=80
    )


def _forecast_prompt(env: Env) -> Prompt[Any]:
    def get_forecast(params: ForecastQuery, *, context: ToolContext) -> ToolResult[Forecast]:
        """Tomorrow's weather forecast for a city."""
        try:
            return ToolResult(message="Forecast for tomorrow.", value=_forecast(env, params.city))
        except ToolFailedError as exc:
            return ToolResult(message=str(exc), value=None, success=False)

    return Prompt[TripAdvice](
        ns="bench/local",
        key="forecast",
        sections=[
            MarkdownSection(
                title="Task", key="task", template=FORECAST_TEXT, tools=[Tool.wrap(get_forecast)]
            )
        ],
    )


def _forecast_tools(env: Env) -> list[Callable[..., Any]]:
    def get_forecast(city: str) -> dict[str, JSONValue]:
        """Tomorrow's weather forecast for a city."""
        return asdict(_forecast(env, city))

    return [get_forecast]


def _forecast_grounded(answer: object, text: str, env: Env) -> tuple[bool, str]:
    if not isinstance(answer, TripAdvice):
        return False, "no TripAdvice"
    if not env.succeeded("get_forecast"):
        return False, "get_forecast never succeeded"
    if answer.temperature_c != 17 or answer.bring_umbrella is not True:
        return False, f"not the forecast: {answer}"
    return True, ""


# --- 3. a failing tool the model must recover from ------------------------------------------


@dataclass(frozen=True, slots=True)
class RateQuery:
    """Arguments of get_exchange_rate."""

    base: str = field(metadata={"description": "Currency to convert from, e.g. EUR"})
    quote: str = field(metadata={"description": "Currency to convert to, e.g. USD"})


@dataclass(frozen=True, slots=True)
class Conversion:
    """An amount converted at the current rate."""

    rate: float
    amount_usd: float


RATE_TEXT = (
    "Convert 250 EUR to USD. Read the current rate with the get_exchange_rate tool; if it "
    "fails, read what it says and try again."
)


def _rate(env: Env, base: str, quote: str) -> dict[str, JSONValue]:
    left = env.failures_left.get("rate", 1)
    if left > 0:
        env.failures_left["rate"] = left - 1
        env.log("get_exchange_rate", False)
        raise ToolFailedError(
            "the rates service is warming up and answered nothing; call get_exchange_rate "
            "again with the same arguments"
        )
    if (base.upper(), quote.upper()) != ("EUR", "USD"):
        env.log("get_exchange_rate", False)
        raise ToolFailedError(f"no rate for {base}->{quote}; only EUR->USD is quoted")
    env.log("get_exchange_rate", True)
    return {"base": "EUR", "quote": "USD", "rate": 1.0842}


def _rate_prompt(env: Env) -> Prompt[Any]:
    def get_exchange_rate(params: RateQuery, *, context: ToolContext) -> ToolResult[Any]:
        """The current exchange rate between two currencies."""
        try:
            return ToolResult(message="Current rate.", value=_rate(env, params.base, params.quote))
        except ToolFailedError as exc:
            return ToolResult(message=str(exc), value=None, success=False)

    return Prompt[Conversion](
        ns="bench/local",
        key="rate",
        sections=[
            MarkdownSection(
                title="Task", key="task", template=RATE_TEXT, tools=[Tool.wrap(get_exchange_rate)]
            )
        ],
    )


def _rate_tools(env: Env) -> list[Callable[..., Any]]:
    def get_exchange_rate(base: str, quote: str) -> dict[str, JSONValue]:
        """The current exchange rate between two currencies."""
        return _rate(env, base, quote)

    return [get_exchange_rate]


def _rate_grounded(answer: object, text: str, env: Env) -> tuple[bool, str]:
    if not isinstance(answer, Conversion):
        return False, "no Conversion"
    if not env.succeeded("get_exchange_rate"):
        return False, "never recovered from the failure"
    if abs(answer.rate - 1.0842) > 1e-4:
        return False, f"rate {answer.rate} is not the tool's"
    return True, ""


# --- 4. a summarized section to open ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RefundAnswer:
    """How long a customer has to return an item."""

    days: int


POLICY_TEXT = (
    "A customer asks how many days they have to return a jacket they bought. Answer with "
    "the refund window from the store policies."
)
_POLICIES = (
    "Refunds are accepted within 45 days of delivery, with the receipt. Shipping is free "
    "above 60 EUR. Warranty: 2 years on electronics."
)


def _policy_prompt(env: Env) -> Prompt[Any]:
    return Prompt[RefundAnswer](
        ns="bench/local",
        key="policy",
        sections=[
            MarkdownSection(title="Task", key="task", template=POLICY_TEXT),
            MarkdownSection(
                title="Store policies",
                key="policies",
                template=_POLICIES,
                summary="Refunds, shipping and warranty rules of the store.",
                visibility=SectionVisibility.SUMMARY,
            ),
        ],
    )


def _policy_tools(env: Env) -> list[Callable[..., Any]]:
    def open_section(key: str) -> str:
        """Open a summarized section of the instructions by key ('policies')."""
        env.log("open_sections", key == "policies")
        if key != "policies":
            raise ToolFailedError("unknown section; the summarized section is 'policies'")
        return _POLICIES

    return [open_section]


def _policy_grounded(answer: object, text: str, env: Env) -> tuple[bool, str]:
    if not isinstance(answer, RefundAnswer):
        return False, "no RefundAnswer"
    if not env.succeeded("open_sections"):
        return False, "the policies were never opened"
    if answer.days != 45:
        return False, f"{answer.days} days is not the policy"
    return True, ""


# --- 5. 150 tools behind discovery --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AirportCode:
    """An airport's IATA code."""

    city: str
    iata_code: str


AIRPORT_TEXT = (
    "What is the IATA code of the airport of Lisbon? The platform tools below hold a "
    "catalogue of 150 tools: search it for the right one and call it."
)
_AIRPORT_TOOL = "travel.airport_code"
_DOMAINS = {
    "travel": ["airport_code", "flight_status", "hotel_search", "visa_rules", "seat_map"],
    "finance": ["fx_history", "invoice_total", "vat_rate", "loan_payment", "stock_quote"],
    "weather": ["uv_index", "pollen_count", "tide_table", "sunrise_time", "storm_alerts"],
    "text": ["translate", "spell_check", "summarize", "word_count", "detect_language"],
    "time": ["time_zone", "holiday_list", "business_days", "countdown", "week_number"],
    "geo": ["distance", "elevation", "country_of_city", "postcode", "population"],
}
_SUBJECTS = ["europe", "americas", "asia", "africa", "oceania"]
_CITY_SCHEMA: Mapping[str, JSONValue] = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "City name"}},
    "required": ["city"],
    "additionalProperties": False,
}


def _airport_discovery(env: Env) -> ToolDiscovery:
    entries: list[CatalogTool] = []
    functions: dict[str, Callable[[Mapping[str, JSONValue]], CallOutcome]] = {}
    for domain, actions in _DOMAINS.items():
        for action in actions:
            for region in _SUBJECTS:
                real = domain == "travel" and action == "airport_code" and region == "europe"
                tool_id = _AIRPORT_TOOL if real else f"{domain}.{action}.{region}"
                words = action.replace("_", " ")
                summary = (
                    "The IATA airport code of a European city (e.g. Paris -> CDG)"
                    if real
                    else f"{words.capitalize()} for places in {region.capitalize()}"
                )
                entries.append(
                    CatalogTool(
                        tool_id=tool_id,
                        name=words if real else f"{words} ({region})",
                        paths=((domain.capitalize(),),),
                        summary=summary,
                        tags=(domain, action),
                        args_schema=_CITY_SCHEMA,
                    )
                )
                functions[tool_id] = _airport_code(env) if real else _canned(env, tool_id)
    nodes = [CatalogNode(name=d.capitalize(), path=(d.capitalize(),), summary=d) for d in _DOMAINS]
    catalog = ToolCatalog(tools=entries, nodes=nodes)
    return ToolDiscovery(
        catalog,
        executor=CallableExecutor(functions=functions),
        cursor_secret=b"bench-local-model-cursors",
    )


def _airport_code(env: Env) -> Callable[[Mapping[str, JSONValue]], CallOutcome]:
    codes = {"lisbon": "LIS", "porto": "OPO", "paris": "CDG", "madrid": "MAD"}

    def run(arguments: Mapping[str, JSONValue]) -> CallOutcome:
        city = str(arguments.get("city", "")).strip().lower()
        code = codes.get(city)
        env.log(_AIRPORT_TOOL, code is not None)
        if code is None:
            return CallOutcome(success=False, message=f"no airport known for {city!r}")
        return CallOutcome(success=True, message=f"{city.title()}: {code}", value={"iata": code})

    return run


def _canned(env: Env, tool_id: str) -> Callable[[Mapping[str, JSONValue]], CallOutcome]:
    def run(arguments: Mapping[str, JSONValue]) -> CallOutcome:
        env.log(tool_id, True)
        return CallOutcome(success=True, message=f"{tool_id}: nothing notable")

    return run


def _airport_prompt(env: Env) -> Prompt[Any]:
    return Prompt[AirportCode](
        ns="bench/local",
        key="airport",
        sections=[
            MarkdownSection(title="Task", key="task", template=AIRPORT_TEXT),
            ToolDiscoverySection(_airport_discovery(env), title="Platform Tools", key="platform"),
        ],
    )


def _airport_tools(env: Env) -> list[Callable[..., Any]]:
    discovery = _airport_discovery(env)

    def search_tools(query: str) -> list[dict[str, JSONValue]]:
        """Search the catalogue of 150 platform tools; returns the best matches with their ids."""
        found = discovery.search_tool_by_category(query, limit=5)
        return [
            {"tool_id": hit.tool_id, "summary": hit.summary, "arguments": {"city": "string"}}
            for hit in found.results
        ]

    def call_tool(tool_id: str, arguments: dict[str, str]) -> str:
        """Call a catalogue tool by its id with its arguments (an object)."""
        outcome = discovery.call_tool(tool_id, arguments)
        if not outcome.success:
            raise ToolFailedError(outcome.message)
        return outcome.message

    return [search_tools, call_tool]


def _airport_grounded(answer: object, text: str, env: Env) -> tuple[bool, str]:
    if not isinstance(answer, AirportCode):
        return False, "no AirportCode"
    if not env.succeeded(_AIRPORT_TOOL):
        return False, "the airport tool never ran"
    if answer.iata_code.strip().upper() != "LIS":
        return False, f"{answer.iata_code!r} is not the tool's answer"
    return True, ""


# --- 7. two tools in a chain -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EmailQuery:
    """Arguments of find_customer."""

    email: str


@dataclass(frozen=True, slots=True)
class CustomerQuery:
    """Arguments of get_balance."""

    customer_id: str = field(metadata={"description": "An id from find_customer, e.g. cus_1"})


@dataclass(frozen=True, slots=True)
class Balance:
    """A customer's balance."""

    customer_id: str
    balance_eur: float


CHAIN_TEXT = (
    "What is the account balance of the customer ana@example.com? Find the customer's id "
    "with find_customer, then read the balance with get_balance."
)


def _find(env: Env, email: str) -> dict[str, JSONValue]:
    if email.strip().lower() != "ana@example.com":
        env.log("find_customer", False)
        raise ToolFailedError(f"no customer with email {email!r}")
    env.log("find_customer", True)
    return {"customer_id": "cus_8812", "name": "Ana Lima"}


def _balance(env: Env, customer_id: str) -> dict[str, JSONValue]:
    if customer_id.strip() != "cus_8812":
        env.log("get_balance", False)
        raise ToolFailedError(f"unknown customer id {customer_id!r}; ids come from find_customer")
    env.log("get_balance", True)
    return {"customer_id": "cus_8812", "balance_eur": 312.4}


def _chain_prompt(env: Env) -> Prompt[Any]:
    def find_customer(params: EmailQuery, *, context: ToolContext) -> ToolResult[Any]:
        """Find a customer by email; returns the customer's id."""
        try:
            return ToolResult(message="Customer found.", value=_find(env, params.email))
        except ToolFailedError as exc:
            return ToolResult(message=str(exc), value=None, success=False)

    def get_balance(params: CustomerQuery, *, context: ToolContext) -> ToolResult[Any]:
        """The account balance of a customer, by customer id."""
        try:
            return ToolResult(message="Balance.", value=_balance(env, params.customer_id))
        except ToolFailedError as exc:
            return ToolResult(message=str(exc), value=None, success=False)

    tools: list[Tool[Any, Any]] = [Tool.wrap(find_customer), Tool.wrap(get_balance)]
    return Prompt[Balance](
        ns="bench/local",
        key="chain",
        sections=[MarkdownSection(title="Task", key="task", template=CHAIN_TEXT, tools=tools)],
    )


def _chain_tools(env: Env) -> list[Callable[..., Any]]:
    def find_customer(email: str) -> dict[str, JSONValue]:
        """Find a customer by email; returns the customer's id."""
        return _find(env, email)

    def get_balance(customer_id: str) -> dict[str, JSONValue]:
        """The account balance of a customer, by customer id."""
        return _balance(env, customer_id)

    return [find_customer, get_balance]


def _chain_grounded(answer: object, text: str, env: Env) -> tuple[bool, str]:
    if not isinstance(answer, Balance):
        return False, "no Balance"
    if not env.succeeded("get_balance"):
        return False, "get_balance never succeeded"
    if answer.customer_id != "cus_8812" or abs(answer.balance_eur - 312.4) > 0.005:
        return False, f"not the tools' values: {answer}"
    return True, ""


# --- 8. a text answer ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StatusQuery:
    """Arguments of check_status."""

    service: str


STATUS_TEXT = (
    "Is the service payments-db healthy right now? Check it with the check_status tool and "
    "answer in one or two sentences, quoting what the tool reported."
)


def _status(env: Env, service: str) -> str:
    if service.strip() != "payments-db":
        env.log("check_status", False)
        raise ToolFailedError(f"unknown service {service!r}")
    env.log("check_status", True)
    return "payments-db: degraded, replica lag 45 s since 09:12 UTC"


def _status_prompt(env: Env) -> Prompt[Any]:
    def check_status(params: StatusQuery, *, context: ToolContext) -> ToolResult[str]:
        """The current health of a service."""
        try:
            return ToolResult(message=_status(env, params.service), value=None)
        except ToolFailedError as exc:
            return ToolResult(message=str(exc), value=None, success=False)

    return Prompt(
        ns="bench/local",
        key="status",
        sections=[
            MarkdownSection(
                title="Task", key="task", template=STATUS_TEXT, tools=[Tool.wrap(check_status)]
            )
        ],
    )


def _status_tools(env: Env) -> list[Callable[..., Any]]:
    def check_status(service: str) -> str:
        """The current health of a service."""
        return _status(env, service)

    return [check_status]


def _status_grounded(answer: object, text: str, env: Env) -> tuple[bool, str]:
    if not env.succeeded("check_status"):
        return False, "check_status never succeeded"
    lowered = text.lower()
    if "45" not in text or not ("degraded" in lowered or "lag" in lowered):
        return False, f"the answer does not report the status: {text[:80]!r}"
    return True, ""


TASKS: tuple[Task, ...] = (
    Task(
        name="demo",
        instructions=DEMO_TEXT
        + " Read metrics and deployments before guessing. Team procedures are in the "
        "'runbook' section (open it with open_section).",
        output_type=TriageReport,
        prompt=_demo_prompt,
        peer_tools=_demo_tools,
        grounded=_demo_grounded,
    ),
    Task(
        name="typed_tool",
        instructions=FORECAST_TEXT,
        output_type=TripAdvice,
        prompt=_forecast_prompt,
        peer_tools=_forecast_tools,
        grounded=_forecast_grounded,
    ),
    Task(
        name="failing_tool",
        instructions=RATE_TEXT,
        output_type=Conversion,
        prompt=_rate_prompt,
        peer_tools=_rate_tools,
        grounded=_rate_grounded,
    ),
    Task(
        name="open_section",
        instructions=POLICY_TEXT
        + " The store policies are in a summarized section 'policies': open it with open_section.",
        output_type=RefundAnswer,
        prompt=_policy_prompt,
        peer_tools=_policy_tools,
        grounded=_policy_grounded,
    ),
    Task(
        name="discovery_150",
        instructions=AIRPORT_TEXT.replace(
            "The platform tools below hold", "search_tools reaches"
        ).replace(
            "search it for the right one and call it",
            "find the right tool and run it with call_tool",
        ),
        output_type=AirportCode,
        prompt=_airport_prompt,
        peer_tools=_airport_tools,
        grounded=_airport_grounded,
    ),
    Task(
        name="streaming",
        instructions=FORECAST_TEXT,
        output_type=TripAdvice,
        prompt=_forecast_prompt,
        peer_tools=_forecast_tools,
        grounded=_forecast_grounded,
        stream=True,
    ),
    Task(
        name="two_tools",
        instructions=CHAIN_TEXT,
        output_type=Balance,
        prompt=_chain_prompt,
        peer_tools=_chain_tools,
        grounded=_chain_grounded,
    ),
    Task(
        name="text_answer",
        instructions=STATUS_TEXT,
        output_type=None,
        prompt=_status_prompt,
        peer_tools=_status_tools,
        grounded=_status_grounded,
    ),
)


def shown(value: object) -> str:
    """A short printable form of an answer, for the results file."""
    try:
        return json.dumps(asdict(value) if hasattr(value, "__dataclass_fields__") else value)[:300]  # type: ignore[call-overload]
    except TypeError:
        return repr(value)[:300]
