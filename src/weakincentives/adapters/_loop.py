"""The tool-call loop, written once, async, for every adapter.

render -> serialize hosted tools -> send (streaming text as it comes) -> run the turn's
tool calls concurrently -> feed results back -> repeat until the model answers. A
halting ``open_sections`` re-renders and carries on (per the disclosure policy); an
answer that does not fit the output type goes back to the model with the reason.
Provider problems raise ``PromptEvaluationError`` with a phase; tool problems never
do. Every evaluation ends with one ``PromptExecuted`` or one ``PromptFailed``.

Every effect (a send, a tool call) goes through the evaluation's step runner
(``_step_runner``): in process it just runs; a durable runner records and replays it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, cast

from weakincentives._direct import direct_constructor
from weakincentives.adapters._answer import (
    TOOLS_FIRST,
    empty_answer_feedback,
    feedback_for,
    final_answer_request,
)
from weakincentives.adapters._channels import Channels, publish
from weakincentives.adapters._disclosure import (
    chosen_sections,
    merge_overrides,
    record_reopened,
    remember,
    remembered,
    requested_sections,
    resume_items,
    storage_key,
)
from weakincentives.adapters._exchange import exchange, time_left
from weakincentives.adapters._hosted import parse_hosted_outputs, serialize_hosted_tools
from weakincentives.adapters._provider import Provider, TextSink
from weakincentives.adapters._response import Halt, PromptResponse
from weakincentives.adapters._settings import Disclosure, LoopSettings
from weakincentives.adapters._step_runner import IN_PROCESS, Progress, Sent, StepRunner
from weakincentives.adapters._structured import (
    OutputSchema,
    output_schema,
    parse_structured_output,
)
from weakincentives.adapters._telemetry import EvaluationSpans
from weakincentives.adapters._text_calls import (
    HeldText,
    holds_only_empty_markup,
    with_recovered_calls,
)
from weakincentives.adapters._tool_round import CallLedger, RoundResult, run_tool_round
from weakincentives.adapters._turns import (
    AssistantMessage,
    ConversationItem,
    FeedbackMessage,
    ModelTurn,
    PromptMessage,
    TurnRequest,
)
from weakincentives.errors import (
    EmptyAnswerError,
    ParseError,
    PromptError,
    PromptEvaluationError,
    ProviderError,
)
from weakincentives.prompt import (
    EvaluatingAdapter,
    ExecutionScope,
    Prompt,
    RenderedPrompt,
    SectionPath,
    SectionVisibility,
    VisibilityOverrides,
    dotted,
)
from weakincentives.runtime import (
    FailurePhase,
    OutputRejected,
    PromptExecuted,
    PromptFailed,
    PromptRendered,
    RequestRetried,
    TextDelta,
    TokenUsage,
    ToolCall,
    ToolExecution,
)
from weakincentives.serde import detached

__all__ = ["Evaluation"]

_sent = direct_constructor(Sent)


@dataclass(slots=True)
class _Accumulator:
    """Assistant text so far, by round; ``context.response_accumulator`` for handlers.

    Pieces are kept as they arrive and joined when read, so a reply streamed in many
    small deltas costs linear time (appending to one growing string would copy it
    every time).
    """

    rounds: list[list[str]] = field(default_factory=list)

    def start_round(self) -> None:
        self.rounds.append([])

    def add(self, text: str) -> None:
        self.rounds[-1].append(text)

    def text(self) -> str:
        return "\n".join(text for pieces in self.rounds if (text := "".join(pieces)))


@dataclass(slots=True)
class _Render:
    """One render of the prompt and what the provider needs from it."""

    rendered: RenderedPrompt[Any]
    text: str
    """What the model reads: the render, plus the answer shape when there is one."""
    hosted: tuple[Any, ...]
    schema: OutputSchema | None

    @property
    def offers_tools(self) -> bool:
        """True when the render offers function tools, which the model calls in its reply.

        Hosted tools do not count: the services that run them (OpenAI, Anthropic) let
        the model use them while a schema is set.
        """
        return bool(self.rendered.tools)


@dataclass(slots=True)
class _AnswerState:
    """How the search for a usable final answer stands."""

    final_turn: bool = False
    """The loop asked for the answer in a tools-free final turn (``answer_schema``)."""
    retries: int = 0
    """Answers sent back to the model so far (``output_retries``)."""


class Evaluation[RequestT, ReplyT, OutputT]:
    """The state of one ``evaluate`` call, from the first render to the response."""

    def __init__(
        self,
        *,
        provider: Provider[RequestT, ReplyT],
        adapter: EvaluatingAdapter,
        prompt: Prompt[OutputT],
        params: tuple[object, ...],
        channels: Channels,
        settings: LoopSettings,
        disclosure: Disclosure,
        overrides: VisibilityOverrides | None,
        deadline: datetime | None,
        earlier: tuple[ConversationItem, ...],
        executor: concurrent.futures.Executor | None,
        extras: Mapping[str, object] | None = None,
        steps: StepRunner = IN_PROCESS,
        evaluation_id: str | None = None,
        started_at: datetime | None = None,
    ) -> None:
        self._provider = provider
        self._prompt = prompt
        self._params = params
        self._bus = channels.bus
        self._session = channels.session
        self._settings = settings
        self._disclosure = disclosure
        self._overrides: dict[SectionPath, SectionVisibility] = dict(overrides or {})
        self._deadline = deadline
        self._earlier = earlier
        self._steps = steps
        # A resumed evaluation keeps its identity and start time.
        self._id = settings.new_id() if evaluation_id is None else evaluation_id
        self._started = settings.clock() if started_at is None else started_at
        self._usage = TokenUsage()
        self._rounds = 0
        self._raw_items: list[Any] = []
        self._executions: list[ToolExecution] = []
        self._accumulator = _Accumulator()
        # Checks the extras now, before any request; each turn adds its render and request.
        self._scope = ExecutionScope(
            prompt=prompt,
            session=self._session,
            event_bus=self._bus,
            adapter=adapter,
            adapter_name=provider.name,
            evaluation_id=self._id,
            response_accumulator=self._accumulator,
            extras=extras if extras is not None else {},
            clock=settings.clock,
            new_id=settings.new_id,
            executor=executor,
        )
        self._ledger = CallLedger(limit=settings.max_identical_calls)
        self._spans = EvaluationSpans(
            provider, prompt, evaluation_id=self._id, session_id=self._session.session_id
        )

    async def run(self) -> PromptResponse[OutputT]:
        """Evaluate; publish ``PromptFailed`` and re-raise when anything goes wrong."""
        with self._spans.running():
            try:
                return await self._run()
            except PromptEvaluationError as exc:
                await self._failed(exc.phase, exc)
                raise
            except asyncio.CancelledError as exc:
                await self._failed("cancelled", exc)
                raise
            except Exception as exc:
                await self._failed("internal", exc)
                raise

    async def _run(self) -> PromptResponse[OutputT]:
        if self._params:
            try:
                self._prompt = self._prompt.bind(*self._params)
            except PromptError as exc:
                raise PromptEvaluationError(
                    exc.message, prompt_name=self._prompt.name, phase="render"
                ) from exc
        key = storage_key(self._prompt.ns, self._prompt.key)
        if self._disclosure.policy == "batched":
            known = set(self._prompt.template.section_paths())
            self._overrides.update(remembered(self._session, key, known))
        render = self._render(first=True)
        history: list[ConversationItem] = [PromptMessage(text=render.text), *self._earlier]
        re_renders = 0
        answer = _AnswerState()
        while True:
            turn = await self._next_turn(render, history, final=answer.final_turn)
            if turn.tool_calls:
                outcome = await self._run_tools(render, turn)
                self._executions.extend(outcome.executions)
                history.extend(outcome.outputs)
                if outcome.pending:
                    return await self._pause(render, history, outcome.pending)
                requested = requested_sections(outcome.halt)
                if outcome.halt is None:
                    await self._round_done()
                    continue
                if requested is None or self._disclosure.policy == "manual":
                    return await self._respond(
                        render, history, turn, halt=outcome.halt, skipped=outcome.skipped
                    )
                if re_renders == self._disclosure.max_retries:
                    raise self._still_asking(requested)
                re_renders += 1
                self._open(requested, key)
                chosen = chosen_sections(requested, self._disclosure.policy)
                record_reopened(self._executions, outcome.halt, chosen, re_renders)
                earlier = resume_items(history, outcome.skipped, outcome.halt)
                render = self._render()
                kept = earlier if self._disclosure.continue_conversation else ()
                history = [PromptMessage(text=render.text), *kept]
                await self._round_done()
                continue
            try:
                output = self._answer(render, turn)
            except PromptEvaluationError as exc:
                history.append(self._not_answered(render, turn, exc, answer))
                await self._round_done()
                continue
            return await self._respond(render, history, turn, output=output)

    def _render(self, *, first: bool = False) -> _Render:
        try:
            rendered = self._prompt.render(visibility_overrides=self._overrides)
        except PromptError as exc:
            # The caller passed params to evaluate, not render: name the call they made.
            message = exc.message.replace(
                "pass an instance to render()",
                "pass an instance to evaluate() after the prompt, as in "
                "adapter.evaluate(prompt, Params(...)),",
            )
            raise PromptEvaluationError(
                message, prompt_name=self._prompt.name, phase="render"
            ) from exc
        hosted = serialize_hosted_tools(
            rendered.hosted_tools,
            self._provider.hosted_tool_codecs,
            adapter_name=self._provider.name,
            prompt_name=self._prompt.name,
        )
        structured = rendered.structured_output
        schema = None if structured is None else output_schema(structured)
        text = rendered.text
        instructions = self._settings.output_instructions
        if schema is not None and instructions is not None:
            shape = TOOLS_FIRST if self._defers_answer(schema, rendered) else instructions(schema)
            text = f"{text}\n\n{shape}"
        publish(
            self._bus,
            PromptRendered(
                evaluation_id=self._id,
                prompt_ns=self._prompt.ns,
                prompt_key=self._prompt.key,
                prompt_name=self._prompt.name,
                adapter=self._provider.name,
                session_id=self._session.session_id,
                text=text,
                tool_names=tuple(tool.name for tool in rendered.tools),
                hosted_tool_names=tuple(tool.name for tool in rendered.hosted_tools),
                visibility=rendered.visibility,
                created_at=self._started if first else self._settings.clock(),
            ),
        )
        return _Render(rendered=rendered, text=text, hosted=hosted, schema=schema)

    async def _next_turn(
        self, render: _Render, history: list[ConversationItem], *, final: bool
    ) -> ModelTurn:
        """Send the next request and read its turn; ``final``: the tools-free final turn."""
        self._start_round(history)
        request = self._turn_request(render, history, final=final)
        self._accumulator.start_round()
        recovering = self._settings.recover_text_tool_calls and not final and render.offers_tools
        deltas = 0

        def show(text: str) -> None:
            nonlocal deltas
            self._accumulator.add(text)
            publish(self._bus, self._delta(deltas, text))
            deltas += 1

        held = HeldText(show, hold=recovering)
        with self._spans.request(self._rounds, self._settings.max_output_tokens):
            wire = self._provider.build_request(request)
            sent = await self._send(wire, held.feed)
            replayed = deltas == 0 and bool(sent.deltas) and not sent.unpublished
            if sent.unpublished:  # it ran elsewhere: publish what it streamed, now
                for text in sent.deltas:
                    held.feed(text)
            turn = self._provider.read_turn(sent.reply, wire, request)
            self._spans.replied(turn, sent.reply)
        if recovering:
            offered = frozenset(tool.name for tool in render.rendered.tools)
            turn = with_recovered_calls(turn, offered, round_number=self._rounds)
        if replayed:
            # A replayed send: its deltas were published when it ran; rebuild the text.
            self._accumulator.add(turn.text)
        else:
            # The text not shown yet: all of it when the reply did not stream (the
            # one-delta case of a streamed one), or what was held back.
            held.finish(turn.text)
        self._usage = self._usage + turn.usage
        self._raw_items.extend(turn.raw_items)
        history.append(AssistantMessage(turn=turn))
        return turn

    def _start_round(self, history: list[ConversationItem]) -> None:
        """Count the round, or fail when the round budget or the deadline is spent."""
        if self._rounds >= self._settings.max_rounds:
            raise self._too_many_rounds(history)
        left = time_left(self._deadline, self._settings.clock)
        if left is not None and left <= 0:
            assert self._deadline is not None
            raise PromptEvaluationError(
                f"deadline {self._deadline.isoformat()} passed before round {self._rounds + 1}",
                prompt_name=self._prompt.name,
                phase="request",
            )
        self._rounds += 1

    def _turn_request(
        self, render: _Render, history: list[ConversationItem], *, final: bool
    ) -> TurnRequest:
        mode = self._settings.answer_schema
        constrain = mode == "always" or (
            mode == "without_tools" and (final or not render.offers_tools)
        )
        return TurnRequest(
            prompt_name=self._prompt.name,
            rendered=render.rendered,
            history=tuple(history),
            hosted_tools=render.hosted,
            output_schema=render.schema,
            round=self._rounds,
            deadline=self._deadline,
            evaluation_id=self._id,
            max_output_tokens=self._settings.max_output_tokens,
            constrain_output=constrain and render.schema is not None,
            allow_tool_calls=not final,
        )

    def _defers_answer(self, schema: OutputSchema | None, rendered: RenderedPrompt[Any]) -> bool:
        """True when the answer's shape waits for a tools-free final turn.

        With ``answer_schema="without_tools"`` and function tools offered, the prompt
        says to use the tools first, and the schema comes with the request for the final
        answer: the one request where a server may enforce it without keeping the model
        from calling tools.
        """
        return (
            schema is not None
            and bool(rendered.tools)
            and self._settings.answer_schema == "without_tools"
        )

    async def _round_done(self) -> None:
        """A round ended and another follows: the runner may checkpoint."""
        if self._steps is not IN_PROCESS:  # in process there is nothing to keep
            await self._steps.checkpoint(Progress(round=self._rounds, status="running"))

    async def _send(self, wire: RequestT, on_text: TextSink) -> Sent[ReplyT]:
        """The round's send step: the exchange, with the text it streamed."""
        if self._steps is IN_PROCESS:  # the step as it runs in process, without the wrapping
            return _sent(reply=await self._exchange(wire, on_text), deltas=())

        async def run() -> Sent[ReplyT]:
            streamed: list[str] = []

            def sink(text: str) -> None:
                if text:
                    streamed.append(text)
                on_text(text)

            return Sent(reply=await self._exchange(wire, sink), deltas=tuple(streamed))

        return await self._steps.send(f"round:{self._rounds}/send", wire, run)

    def _exchange(self, wire: RequestT, on_text: TextSink) -> Coroutine[Any, Any, ReplyT]:
        """The round's exchange with the provider, retries included, streaming to ``on_text``."""
        return exchange(
            self._provider,
            wire,
            prompt_name=self._prompt.name,
            round_number=self._rounds,
            deadline=self._deadline,
            settings=self._settings,
            on_text=on_text,
            on_retry=self._retried,
        )

    def _retried(self, attempt: int, delay: float, failure: ProviderError) -> None:
        """An attempt of this round failed and is tried again: tell the observers."""
        self._spans.retried(attempt, delay, failure)
        publish(
            self._bus,
            RequestRetried(
                evaluation_id=self._id,
                prompt_name=self._prompt.name,
                round=self._rounds,
                attempt=attempt,
                delay=delay,
                cause=failure.reason,
                status_code=failure.status_code,
                error_type=type(failure).__name__,
            ),
        )

    def _delta(self, index: int, text: str) -> TextDelta:
        return TextDelta(
            evaluation_id=self._id,
            prompt_name=self._prompt.name,
            round=self._rounds,
            index=index,
            text=text,
        )

    async def _run_tools(self, render: _Render, turn: ModelTurn) -> RoundResult:
        """Run the turn's calls; a deadline ends the round when it passes (phase ``tool``).

        A sync handler's worker thread cannot be stopped: it finishes its call
        unobserved, and nothing it produces is recorded or published.
        """
        running = run_tool_round(
            turn.tool_calls,
            self._turn_scope(render, turn),
            tools={tool.name: tool for tool in render.rendered.tools},
            max_concurrency=self._settings.max_concurrency,
            ledger=self._ledger,
            steps=None if self._steps is IN_PROCESS else self._steps,
            round_number=self._rounds,
        )
        left = time_left(self._deadline, self._settings.clock)
        if left is None:
            return await running
        limit = asyncio.timeout(max(left, 0.0))
        try:
            async with limit:
                return await running
        except TimeoutError as exc:
            if not limit.expired():
                raise  # not the deadline's doing
            assert self._deadline is not None
            raise PromptEvaluationError(
                f"deadline {self._deadline.isoformat()} passed during the tool calls of "
                f"round {self._rounds} ({len(turn.tool_calls)} called)",
                prompt_name=self._prompt.name,
                phase="tool",
            ) from exc

    def _turn_scope(self, render: _Render, turn: ModelTurn) -> ExecutionScope:
        return replace(
            self._scope, prompt=self._prompt, rendered_prompt=render.rendered, request=turn.request
        )

    def _open(self, requested: tuple[SectionPath, ...], key: str) -> None:
        policy = self._disclosure.policy
        assert policy != "manual"
        chosen = chosen_sections(requested, policy)
        self._overrides = merge_overrides(
            self._overrides, dict.fromkeys(chosen, SectionVisibility.FULL)
        )
        if policy == "batched":
            opened = {
                path: visibility
                for path, visibility in self._overrides.items()
                if visibility is SectionVisibility.FULL
            }
            remember(self._session, key, opened)

    def _answer(self, render: _Render, turn: ModelTurn) -> object:
        """The final answer: the parsed output (None for a text prompt).

        An answer with no text at all (no refusal, no hosted-tool items either) is an
        ``EmptyAnswerError``, which goes back to the model like an answer that does not fit;
        with ``recover_text_tool_calls``, so is one of empty tool-call blocks only.
        """
        wordless = not turn.text.strip() or (
            self._settings.recover_text_tool_calls and holds_only_empty_markup(turn.text)
        )
        if wordless and not (turn.refusal or turn.untranslatable):
            raise EmptyAnswerError(
                prompt_name=self._prompt.name, structured=render.schema is not None
            )
        structured = render.rendered.structured_output
        if structured is None:
            return None
        if turn.refusal:
            raise PromptEvaluationError(
                f"the model refused to answer: {turn.refusal}",
                prompt_name=self._prompt.name,
                phase="parse",
                provider_payload={"refusal": turn.refusal},
            )
        return parse_structured_output(structured, turn.text, prompt_name=self._prompt.name)

    def _not_answered(
        self, render: _Render, turn: ModelTurn, error: PromptEvaluationError, state: _AnswerState
    ) -> FeedbackMessage:
        """What to tell the model after a turn without calls that is not a usable answer.

        Raises ``error`` when no try is left. While the answer's shape waits for the
        final turn, the first such turn means the model is done with the tools: it is
        asked for the answer, in its shape, with the tools off; that costs no try.
        """
        deferred = self._defers_answer(render.schema, render.rendered)
        if deferred and not state.final_turn and not turn.refusal:
            assert render.schema is not None
            state.final_turn = True
            ask = final_answer_request(render.schema, self._settings.output_instructions)
            return FeedbackMessage(text=ask)
        if turn.refusal or state.retries >= self._settings.output_retries:
            raise error
        state.retries += 1
        return self._reject(render, turn, error, state.retries)

    def _reject(
        self, render: _Render, turn: ModelTurn, error: PromptEvaluationError, attempt: int
    ) -> FeedbackMessage:
        cause = error.__cause__
        path = cause.path if isinstance(cause, ParseError) else None
        problem = error.reason
        publish(
            self._bus,
            OutputRejected(
                evaluation_id=self._id,
                prompt_name=self._prompt.name,
                attempt=attempt,
                message=problem,
                path=path,
                text=turn.text,
            ),
        )
        remaining = self._settings.output_retries - attempt
        if isinstance(error, EmptyAnswerError):
            text = empty_answer_feedback(structured=render.schema is not None, remaining=remaining)
            return FeedbackMessage(text=text)
        return FeedbackMessage(text=feedback_for(problem, remaining=remaining))

    async def _respond(
        self,
        render: _Render,
        history: list[ConversationItem],
        turn: ModelTurn,
        *,
        output: object = None,
        halt: Halt | None = None,
        skipped: tuple[ToolCall, ...] = (),
    ) -> PromptResponse[OutputT]:
        hosted_outputs = parse_hosted_outputs(
            render.rendered.hosted_tools,
            self._provider.hosted_tool_codecs,
            tuple(self._raw_items),
            prompt_name=self._prompt.name,
        )
        text = "" if halt is not None else (turn.text or turn.refusal or "")
        self._spans.finished(
            usage=self._usage, rounds=self._rounds, tool_calls=len(self._executions)
        )
        publish(
            self._bus,
            PromptExecuted(
                evaluation_id=self._id,
                prompt_name=self._prompt.name,
                adapter=self._provider.name,
                session_id=self._session.session_id,
                text=text,
                output=detached(output),  # the caller gets ``output``; the record keeps a copy
                tool_call_count=len(self._executions),
                rounds=self._rounds,
                halted=halt is not None,
                usage=self._usage,
                started_at=self._started,
                finished_at=self._settings.clock(),
                model=self._provider.model,
            ),
        )
        response = self._response(
            render,
            history,
            text=text,
            output=cast("OutputT | None", output),
            skipped_calls=skipped,
            hosted_outputs=hosted_outputs,
            halt=halt,
        )
        await self._steps.checkpoint(Progress(round=self._rounds, status="done", response=response))
        return response

    async def _pause(
        self,
        render: _Render,
        history: list[ConversationItem],
        pending: tuple[ToolCall, ...],
    ) -> PromptResponse[OutputT]:
        """Stop until a person decides on ``pending``; the response lists them.

        Nothing ends: no ``PromptExecuted`` is published, and resuming the evaluation
        once the calls are decided carries the same round on.
        """
        response = self._response(render, history, text="", output=None, pending_approvals=pending)
        await self._steps.checkpoint(
            Progress(round=self._rounds, status="paused", response=response)
        )
        return response

    def _response(
        self, render: _Render, history: list[ConversationItem], **fields: Any
    ) -> PromptResponse[OutputT]:
        return PromptResponse(
            prompt_name=self._prompt.name,
            evaluation_id=self._id,
            prompt_ns=self._prompt.ns,
            prompt_key=self._prompt.key,
            tool_executions=tuple(self._executions),
            usage=self._usage,
            rounds=self._rounds,
            rendered=cast("RenderedPrompt[OutputT]", render.rendered),
            conversation=tuple(history),
            model=self._provider.model,
            **fields,
        )

    async def _failed(self, phase: FailurePhase, error: BaseException) -> None:
        message = error.reason if isinstance(error, PromptEvaluationError) else _text_of(error)
        failure = PromptFailed(
            evaluation_id=self._id,
            prompt_name=self._prompt.name,
            adapter=self._provider.name,
            session_id=self._session.session_id,
            phase=phase,
            message=message or type(error).__name__,
            error_type=type(error).__name__,
            usage=self._usage,
            rounds=self._rounds,
            started_at=self._started,
            failed_at=self._settings.clock(),
            model=self._provider.model,
        )
        publish(self._bus, failure)
        self._spans.failed(phase, error, usage=self._usage, rounds=self._rounds)
        await self._steps.checkpoint(Progress(round=self._rounds, status="failed", failure=failure))

    def _still_asking(self, requested: tuple[SectionPath, ...]) -> PromptEvaluationError:
        keys = ", ".join(dotted(path) for path in requested)
        limit = self._disclosure.max_retries
        return PromptEvaluationError(
            f"the model still asked to open sections ({keys}) after {limit} re-renders; "
            "raise Disclosure.max_retries or render those sections FULL",
            prompt_name=self._prompt.name,
            phase="tool",
        )

    def _too_many_rounds(self, history: list[ConversationItem]) -> PromptEvaluationError:
        last = next(
            (item.turn for item in reversed(history) if isinstance(item, AssistantMessage)),
            ModelTurn(),
        )
        names = ", ".join(call.name for call in last.tool_calls)
        limit = self._settings.max_rounds
        return PromptEvaluationError(
            f"no final answer after {limit} rounds; the model kept calling tools (last: "
            f"{names}). Raise max_rounds or check the tools' results",
            prompt_name=self._prompt.name,
            phase="tool",
        )


def _text_of(error: BaseException) -> str:
    try:
        return str(error)
    except Exception:  # an exception whose __str__ raises must not hide the failure
        return ""
