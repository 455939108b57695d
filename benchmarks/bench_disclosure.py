"""Tokens a model is sent with progressive disclosure: halting vs inline vs everything FULL.

A support agent's prompt has a task section and seven reference sections (style
guide, billing policy, escalation policy, API reference, troubleshooting,
glossary, worked examples), each with a one-line summary. The ticket needs one of
them, the billing policy. Three runs on the scripted ``OfflineAdapter``:

- halt: ``open_sections="halt"`` (the default), evaluated with
  ``Disclosure(continue_conversation=...)``. The model calls
  ``open_sections``, the turn halts, the prompt is re-rendered with the section
  open, and the model answers in a fresh request.
- inline: ``open_sections="inline"``. The model calls ``open_sections``, reads the
  section's markdown in the tool result, and answers in the next round.
- full: every section rendered FULL, so no ``open_sections`` tool; the model
  answers at once.

Every request the adapter recorded is counted with the real ``o200k_base`` BPE
(``_tokens.py``): the rendered prompt, the history after it (assistant text and
tool calls, tool outputs) and the tool definitions sent with it (name,
description and JSON Schema). What the model produced is counted too. "reused"
is the prefix a request shares with the previous request of the same run, an
upper bound on what a provider's prompt cache could bill at a discount.

A second scenario has the model look an invoice up first and only then open the
section: a halt throws that round away, so the re-rendered evaluation repeats it.

Run: ``.venv/bin/python benchmarks/bench_disclosure.py`` (needs the ``bench`` extra).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from _tokens import TOKENIZER_NAME, count_tokens

from weakincentives.adapters import (
    AssistantMessage,
    Disclosure,
    OfflineAdapter,
    ScriptedCall,
    ScriptedTurn,
    ToolOutputMessage,
    TurnRequest,
)
from weakincentives.adapters._turns import ConversationItem
from weakincentives.prompt import (
    MarkdownSection,
    Prompt,
    PromptTemplate,
    SectionPath,
    SectionVisibility,
    Tool,
    ToolContext,
    ToolResult,
)
from weakincentives.prompt._open_sections import OpenSectionsMode

type Variant = Literal["halt", "inline", "full"]

OPENED = "billing-policy"
"""The one reference section the ticket needs."""

# --- the prompt ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ticket:
    """The support ticket the agent answers."""

    customer: str
    plan: str
    message: str


@dataclass(frozen=True, slots=True)
class InvoiceQuery:
    """Arguments of ``lookup_invoice``."""

    invoice_id: str


@dataclass(frozen=True, slots=True)
class Invoice:
    """What ``lookup_invoice`` returns."""

    invoice_id: str
    plan: str
    amount_usd: float
    issued: str
    status: str


def lookup_invoice(params: InvoiceQuery, *, context: ToolContext) -> ToolResult[Invoice]:
    """Return the invoice the ticket is about (fixed data: this is a benchmark)."""
    return ToolResult(
        message=f"Invoice {params.invoice_id}.",
        value=Invoice(
            invoice_id=params.invoice_id,
            plan="Team annual, 12 seats",
            amount_usd=2868.0,
            issued="2025-05-02",
            status="paid",
        ),
    )


TASK = """
You are the support assistant for Tallyworks, an invoicing and subscription-billing
service for small businesses. Answer the ticket below by email, as one reply the
customer can act on. Use the reference sections for facts; never invent prices,
deadlines or features. If a policy requires a human, say so and hand the ticket over
as the escalation policy describes.

Customer: ${customer} (plan: ${plan})

Ticket:
${message}
"""

STYLE_GUIDE = """
Write as a knowledgeable colleague, not as a legal department.

- Open with the customer's first name and one sentence that answers the question or
  states the outcome. Details come after the answer, never before it.
- Keep replies under 180 words unless the customer asked for step-by-step
  instructions. Use numbered steps for anything the customer must click through,
  one action per step, with the exact menu labels in bold (**Settings > Billing**).
- Plain words: "cancel", not "terminate"; "charge", not "debit event". Explain any
  term from the glossary the first time you use it.
- Dates as "12 June 2025"; money with the currency code when it is not USD
  (EUR 40.00), otherwise with a dollar sign and cents ($$19.00).
- Never promise a refund, credit, fix date or feature that the policy sections do
  not explicitly allow. Say what will happen next and who will do it.
- Do not blame the customer, the bank or another team. If we made a mistake, say so
  once, plainly, and say what we are doing about it.
- No emoji, no exclamation marks in apologies, no "as per", no "kindly".
- Sign off with "Best, the Tallyworks team". Do not include a ticket number; the help
  desk adds it.
"""

BILLING_POLICY = """
Plans are billed per seat, monthly or annually, in advance. Annual plans cost ten
times the monthly price (two months free).

Refunds
- Monthly plans: no refunds for the current month. Cancelling stops the next charge;
  the workspace stays active until the end of the paid period.
- Annual plans: a full refund within 30 days of the first annual charge or of a
  renewal. From day 31 to day 90, a prorated refund of the unused full months minus
  the two free months' value. After day 90, no refund; the customer may cancel
  renewal and keep access until the term ends.
- Support may approve refunds up to $$2,000 without escalation. Larger refunds go to
  the billing team (see the escalation policy); tell the customer it takes up to three
  business days.
- Refunds go back to the original payment method and take 5 to 10 business days to
  appear. We cannot refund to a different card or account.

Plan changes
- Upgrades (more seats, higher tier) apply at once and are prorated to the day on the
  next invoice.
- Downgrades and seat removals take effect at the next renewal; no partial credit for
  the current period, except inside the 30-day annual refund window, where the
  difference is refunded.
- Switching from annual to monthly is a downgrade: it happens at renewal, or at once
  with a refund of the annual charge if still inside the 30-day window.

Failed payments and dunning
- A failed charge is retried after 3, 5 and 7 days. The workspace becomes read-only
  14 days after the first failure and is suspended after 30. Data is kept for 90 days
  after suspension.
- Support may extend the read-only deadline once by up to 14 days.

Credits
- Service credits for outages follow the status page's incident classification: 10%
  of the monthly fee for a major incident over 4 hours, 25% over 12 hours. Credits are
  applied to the next invoice, never paid out.
- Goodwill credits up to $$50 per customer per year may be given for our own mistakes
  (duplicate emails, wrong invoice totals) without approval.

Taxes
- VAT and sales tax are calculated from the billing address at the time of the charge.
  Tax corrections need a corrected address and a reissued invoice; refunds of tax
  alone go through the billing team.
"""

ESCALATION_POLICY = """
Hand a ticket to a human when any of these hold; otherwise resolve it yourself.

1. Security: suspected account takeover, leaked API keys, phishing that uses our
   name, or any request to change the account owner. Route to Security (priority
   high). Tell the customer to rotate API keys under **Settings > Developers** and
   that Security will reply within 4 hours.
2. Legal: subpoenas, data deletion requests under GDPR or CCPA, contract disputes,
   threats of legal action. Route to Legal. Do not comment on the substance.
3. Money beyond your limits: refunds over $$2,000, credits over the goodwill limit,
   chargebacks, or exceptions to the refund windows. Route to Billing with the
   invoice ids, the amount and the customer's reason.
4. Outages: more than one customer reporting the same failure within an hour, or an
   open incident on the status page. Link the incident, do not guess at causes or
   times, and add the ticket to the incident.
5. Bugs you can reproduce but not work around: route to Engineering with steps,
   expected and actual results, workspace id and browser or API client version.

When escalating, tell the customer who will reply and by when, in one sentence, and
do not promise the outcome. Add an internal note with what you checked, so the next
person does not ask the customer the same questions again.
"""

API_REFERENCE = """
Base URL: https://api.tallyworks.example/v3. JSON in and out, UTF-8, ISO 8601 dates.

Authentication: send `Authorization: Bearer <key>`. Keys are per workspace, created
under **Settings > Developers**, and carry scopes (`invoices:read`,
`invoices:write`, `customers:read`, `customers:write`, `webhooks:manage`). A key
without the needed scope gets 403 `insufficient_scope`.

Endpoints
- `GET /invoices` lists invoices, newest first. Filters: `status` (draft, open, paid,
  void, uncollectible), `customer_id`, `created_after`, `created_before`.
- `POST /invoices` creates a draft; `POST /invoices/{id}/finalize` assigns the number
  and sends it; finalized invoices cannot be edited, only voided
  (`POST /invoices/{id}/void`) and reissued.
- `GET /customers/{id}` and `PATCH /customers/{id}`; tax ids and billing addresses
  live on the customer, not the invoice.
- `POST /webhooks` registers an endpoint for events such as `invoice.paid`,
  `invoice.payment_failed` and `customer.updated`. Each delivery carries a
  `Tally-Signature` header: an HMAC-SHA256 of the raw body with the endpoint secret.

Pagination: cursor based. Responses include `next_cursor`; pass it as `cursor` to get
the next page. `limit` defaults to 25, maximum 100.

Rate limits: 100 requests per 10 seconds per key, 20 for `POST /invoices/*/finalize`.
Over the limit you get 429 with `Retry-After` in seconds. Webhook deliveries are
retried with backoff for 72 hours.

Errors are `{"error": {"code": ..., "message": ..., "param": ...}}`. Common codes:
`invalid_request` (400, see `param`), `authentication_failed` (401),
`insufficient_scope` (403), `not_found` (404), `invoice_finalized` (409, the invoice
can no longer change), `rate_limited` (429), `internal` (500, safe to retry with the
same `Idempotency-Key`).
"""

TROUBLESHOOTING = """
Bank sync stopped updating. Usually an expired bank consent (every 90 days in the EU
and UK). Fix: **Settings > Bank connections > Reconnect**. If the bank shows "degraded"
there, the aggregator is down; there is nothing to fix on the customer's side.

Invoice PDF shows boxes instead of characters. The selected font lacks the script
(common with Greek, Thai, Vietnamese). Fix: **Settings > Branding > Font > Noto
Sans**, then regenerate the PDF; existing PDFs do not change by themselves.

Customers do not receive invoice emails. Check **Activity > Email log** for the
delivery status. "Bounced": wrong address. "Deferred": the recipient's server is
throttling us and we retry for 24 hours. "Delivered" but not seen: ask them to
check spam and to allow invoices@tallyworks.example. Custom sending domains need
SPF and DKIM records; the domain page shows which are missing.

Totals are off by one cent. Line-level tax rounding differs from invoice-level
rounding. Switch **Settings > Taxes > Rounding** to "per invoice" for new invoices;
finalized invoices keep their totals.

SSO login loops back to the sign-in page. The identity provider's clock is skewed by
more than 5 minutes, or the SAML certificate was rotated without updating Tallyworks.
Ask the workspace admin to upload the new certificate under **Settings > Security >
SSO**; an owner can always sign in with a password at /login?sso=off.

Webhook signatures fail to verify. The body was parsed and re-serialized before
hashing; the signature must be computed over the raw bytes as received.
"""

GLOSSARY = """
- Workspace: one company's account. Billing, users and data belong to a workspace.
- Seat: one user who can sign in. Viewers on the Team plan are free and are not seats.
- Ledger: the record of every charge, refund and credit on a workspace, under
  **Billing > Ledger**.
- Dunning: the automatic retries and reminders after a failed payment.
- Credit note: a document that reduces what a customer owes on an invoice, issued for
  corrections; refunds of paid invoices also produce one.
- Proration: charging or crediting for part of a billing period, to the day.
- Renewal: the start of a new billing term, when the plan is charged again.
- Finalize: lock an invoice, give it a number and send it. Finalized invoices cannot
  be edited.
- Goodwill credit: a small credit support may give for our own mistakes.
"""

EXAMPLES = """
Refund granted (annual plan, day 12):
"Hi Dana, I've refunded your annual charge of $$1,188.00 in full; you are well inside
the 30-day window. It goes back to the card ending 4242 and usually shows up within
5 to 10 business days. Your workspace switches to the monthly plan today, and the
first monthly charge of $$99.00 happens on 14 June 2025. Best, the Tallyworks team"

Refund declined, with an alternative (monthly plan):
"Hi Sam, monthly plans are not refunded for the month in progress, so I can't refund
May's charge. I have cancelled the renewal: you keep full access until 31 May 2025
and won't be charged again. If you come back later, your data stays available for
90 days. Best, the Tallyworks team"

Escalation handoff (refund over the support limit):
"Hi Priya, a refund of this size needs our billing team's approval, so I've passed
your request to them with the invoice details; they will reply within three business
days. Nothing else is needed from you in the meantime. Best, the Tallyworks team"

Why these work: each opens with the outcome, names amounts and dates exactly, says
what happens next, and promises nothing the policy does not allow.
"""

# (key, title, summary, body), in prompt order after the task.
REFERENCE = (
    (
        "style-guide",
        "Style guide",
        "Voice, length, formatting, and what a reply may never promise.",
        STYLE_GUIDE,
    ),
    (
        "billing-policy",
        "Billing policy",
        "Refund windows and limits, plan changes, failed payments, credits and taxes.",
        BILLING_POLICY,
    ),
    (
        "escalation-policy",
        "Escalation policy",
        "When to hand a ticket to Security, Legal, Billing or Engineering, and how.",
        ESCALATION_POLICY,
    ),
    (
        "api-reference",
        "API reference",
        "REST API v3: auth and scopes, endpoints, pagination, rate limits, error codes.",
        API_REFERENCE,
    ),
    (
        "troubleshooting",
        "Troubleshooting",
        "Fixes for bank sync, PDF fonts, email delivery, rounding, SSO and webhooks.",
        TROUBLESHOOTING,
    ),
    (
        "glossary",
        "Glossary",
        "Tallyworks terms: workspace, seat, ledger, dunning, credit note, proration.",
        GLOSSARY,
    ),
    (
        "examples",
        "Example replies",
        "Three model replies: refund granted, refund declined, escalation handoff.",
        EXAMPLES,
    ),
)

TICKET = Ticket(
    customer="Morgan Lee",
    plan="Team annual, 12 seats",
    message=(
        "Hi, we renewed our annual plan three weeks ago (invoice INV-20931, $2,868) but we are "
        "moving half the team to another tool next month. Can we switch to monthly and "
        "get the annual payment back? If not, what can we do?"
    ),
)

ANSWER = (
    "Hi Morgan, yes: your renewal on 2 May 2025 is still inside the 30-day refund "
    "window, so I can switch you to the monthly plan today and refund the annual "
    "charge of $2,868.00 in full. Because that is over the amount support can approve "
    "on its own, our billing team will confirm the refund within three business days; "
    "it then goes back to the card you paid with and takes 5 to 10 business days to "
    "appear. From today you will be billed monthly for the seats you keep, and you can "
    "remove seats at any time under Settings > Billing; removals apply at the next "
    "monthly renewal. Best, the Tallyworks team"
)
REASON = "The customer asks for a refund of an annual renewal; I need the refund windows."


def build(open_sections: OpenSectionsMode) -> PromptTemplate:
    """The support prompt with every reference section summarized by default."""
    task = MarkdownSection[Ticket](
        title="Task",
        key="task",
        template=TASK,
        tools=[
            Tool(
                name="lookup_invoice",
                description="Look up one invoice by id: plan, amount, issue date, status.",
                handler=lookup_invoice,
            )
        ],
    )
    references = [
        MarkdownSection(
            title=title,
            key=key,
            template=body,
            summary=summary,
            visibility=SectionVisibility.SUMMARY,
        )
        for key, title, summary, body in REFERENCE
    ]
    return PromptTemplate(
        ns="bench", key="support", sections=[task, *references], open_sections=open_sections
    )


ALL_FULL: dict[SectionPath, SectionVisibility] = {
    (key,): SectionVisibility.FULL for key, *_ in REFERENCE
}

# --- counting --------------------------------------------------------------------------------


def tool_text(request: TurnRequest) -> list[str]:
    """The tool definitions sent with a request, as JSON text."""
    return [
        json.dumps(
            {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.spec.parameters_schema,
            }
        )
        for tool in request.rendered.tools
    ]


def item_text(item: ConversationItem) -> str:
    """What one history item puts in front of the model."""
    if isinstance(item, ToolOutputMessage):
        return item.content
    if isinstance(item, AssistantMessage):
        calls = [
            call.name
            + (call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments))
            for call in item.turn.tool_calls
        ]
        return item.turn.text + "".join(calls)
    return item.text


def produced_text(turn: ScriptedTurn) -> str:
    """What the model wrote in one turn: text, tool names and JSON arguments."""
    calls = [
        call.name
        + (call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments))
        for call in turn.calls
    ]
    return turn.text + "".join(calls)


def shared_prefix(first: str, second: str) -> int:
    """Length of the longest common prefix of two strings."""
    length = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        length += 1
    return length


@dataclass(frozen=True, slots=True, kw_only=True)
class Tally:
    """Tokens of one run, summed over its requests."""

    requests: int
    prompt: int
    history: int
    tools: int
    produced: int
    reused: int

    @property
    def sent(self) -> int:
        return self.prompt + self.history + self.tools

    @property
    def total(self) -> int:
        return self.sent + self.produced


def tally(requests: Sequence[TurnRequest], script: Sequence[ScriptedTurn]) -> Tally:
    prompt = history = tools = reused = 0
    previous = ""
    for request in requests:
        schemas = tool_text(request)
        items = [item_text(item) for item in request.history[1:]]
        prompt += count_tokens(request.rendered.text)
        history += sum(count_tokens(text) for text in items)
        tools += sum(count_tokens(text) for text in schemas)
        # Providers put tool definitions first, then the messages in order.
        serialized = "\n".join([*schemas, request.rendered.text, *items])
        reused += count_tokens(serialized[: shared_prefix(previous, serialized)])
        previous = serialized
    return Tally(
        requests=len(requests),
        prompt=prompt,
        history=history,
        tools=tools,
        produced=sum(count_tokens(produced_text(turn)) for turn in script),
        reused=reused,
    )


# --- the runs --------------------------------------------------------------------------------

OPEN = ScriptedTurn(
    calls=(
        ScriptedCall(name="open_sections", arguments={"section_keys": [OPENED], "reason": REASON}),
    )
)
LOOKUP = ScriptedTurn(
    calls=(ScriptedCall(name="lookup_invoice", arguments={"invoice_id": "INV-20931"}),)
)
REPLY = ScriptedTurn(text=ANSWER)


def run(variant: Variant, script: Sequence[ScriptedTurn], *, fresh: bool = False) -> Tally:
    """Evaluate the ticket under ``variant`` with the model playing ``script``.

    ``fresh`` makes the halting variant restart the conversation on retry instead of
    continuing it, so the model has to redo what it did before the halt.
    """
    adapter = OfflineAdapter(script)
    if variant == "halt":
        response = adapter.evaluate(
            build("halt"), TICKET, disclosure=Disclosure(continue_conversation=not fresh)
        )
    elif variant == "inline":
        response = adapter.evaluate(build("inline"), TICKET)
    else:
        response = adapter.evaluate(build("halt"), TICKET, visibility_overrides=ALL_FULL)
    assert response.text == ANSWER, response.text
    assert adapter.provider.remaining_turns == 0
    return tally(adapter.provider.requests, script)


def section_sizes() -> list[tuple[str, int, int]]:
    """Per reference section: tokens when FULL, and tokens its summary costs."""
    template = build("halt")
    closed = count_tokens(template.render(TICKET).text)
    prompt: Prompt[None] = Prompt(template).bind(TICKET)
    sizes = []
    for key, *_ in REFERENCE:
        full = count_tokens(prompt.render_sections([(key,)])[(key,)])
        opened = count_tokens(
            template.render(TICKET, visibility_overrides={(key,): SectionVisibility.FULL}).text
        )
        sizes.append((key, full, full - (opened - closed)))
    return sizes


def print_tallies(title: str, rows: Sequence[tuple[str, Tally]], baseline: Tally) -> None:
    print(title)
    print(
        f"{'run':<62}{'reqs':>5}{'prompt':>8}{'history':>8}{'tools':>7}{'sent':>7}"
        f"{'output':>8}{'total':>7}{'ratio':>7}{'reused':>8}"
    )
    for name, row in rows:
        print(
            f"{name:<62}{row.requests:>5}{row.prompt:>8}{row.history:>8}{row.tools:>7}"
            f"{row.sent:>7}{row.produced:>8}{row.total:>7}{row.total / baseline.total:>7.2f}"
            f"{row.reused:>8}"
        )


def main() -> None:
    template = build("halt")
    full = count_tokens(template.render(TICKET, visibility_overrides=ALL_FULL).text)
    summary = count_tokens(template.render(TICKET).text)
    print(f"== one render ({TOKENIZER_NAME} tokens)")
    print(f"{'render':<40}{'tokens':>8}{'ratio':>7}")
    print(f"{'all FULL':<40}{full:>8}{1.0:>7.2f}")
    print(f"{'all SUMMARY':<40}{summary:>8}{summary / full:>7.2f}")
    print()
    print(f"{'section':<40}{'full':>8}{'summary':>8}")
    for key, section_full, section_summary in section_sizes():
        print(f"{key:<40}{section_full:>8}{section_summary:>8}")
    print()

    baseline = run("full", [REPLY])
    print_tallies(
        f"== the ticket needs {OPENED!r}: open it, then answer",
        [
            ("full: answer at once", baseline),
            ("halt: open -> re-render -> answer", run("halt", [OPEN, REPLY])),
            ("inline: open -> answer", run("inline", [OPEN, REPLY])),
        ],
        baseline,
    )
    print()
    lookup_baseline = run("full", [LOOKUP, REPLY])
    print_tallies(
        "== look the invoice up first, then open the section",
        [
            ("full: lookup -> answer", lookup_baseline),
            (
                "halt: lookup, open -> re-render (continued) -> answer",
                run("halt", [LOOKUP, OPEN, REPLY]),
            ),
            (
                "halt: lookup, open -> re-render (fresh) -> lookup -> answer",
                run("halt", [LOOKUP, OPEN, LOOKUP, REPLY], fresh=True),
            ),
            ("inline: lookup -> open -> answer", run("inline", [LOOKUP, OPEN, REPLY])),
        ],
        lookup_baseline,
    )


if __name__ == "__main__":
    main()
