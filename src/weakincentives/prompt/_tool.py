"""Function tools: a typed params dataclass, a description, and a handler."""

from __future__ import annotations

import functools
import inspect
import logging
import typing
import warnings
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, fields, is_dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, cast, overload

from weakincentives.errors import PromptValidationError, SchemaError
from weakincentives.prompt._generic import SubscriptedConstruction, subscript_args
from weakincentives.prompt._naming import description_problem, tool_name_problem
from weakincentives.prompt._tool_result import ToolResult
from weakincentives.serde import is_strict_compatible, schema, strict_problem

if TYPE_CHECKING:
    from weakincentives.prompt._tool_context import ToolContext
    from weakincentives.serde import JSONObject

__all__ = ["Tool", "ToolHandler", "ToolSpec", "tool"]

logger = logging.getLogger("weakincentives.prompt")


type ApprovalPolicy[ParamsT] = Callable[[ParamsT], bool]
"""Decides from a call's parsed params whether a person must approve it before it runs."""


class ToolHandler[ParamsT, ResultT](Protocol):
    """The handler calling convention: params positionally, ``context`` by keyword.

    Handlers may be ``async def``; the execution path awaits them.
    """

    def __call__(
        self, params: ParamsT, /, *, context: ToolContext
    ) -> ToolResult[ResultT] | Awaitable[ToolResult[ResultT]]:
        """Run the tool for ``params`` and return its result."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """Everything derived from a tool's types, computed once per tool."""

    params_type: type[Any]
    """The dataclass the model's arguments are parsed into."""
    result_type: object
    """The payload type of successful results (``None`` when not declared)."""
    parameters_schema: JSONObject
    """JSON Schema of the params, in the strict form providers accept."""
    strict: bool
    """Whether the schema qualifies for a provider's strict function-calling mode."""
    strict_problem: str | None = None
    """Why the tool is sent non-strict (e.g. ``$.tags allows additional properties``
    for a ``dict`` field), or None when ``strict`` is true."""
    param_descriptions: Mapping[str, str]
    """Field name to description, from ``field(metadata={"description": ...})``."""


@dataclass(frozen=True, slots=True, eq=False, repr=False, init=False)
class Tool[ParamsT, ResultT](SubscriptedConstruction):
    """A callable affordance the model can invoke, attached to a section.

    The params dataclass comes from ``params_type=``, the subscript
    (``Tool[LookupParams, LookupResult](...)``) or the handler's first parameter
    annotation. Everything is analysed once, here: the handler's signature, its types
    and the params schema (``spec``). Every problem raises ``PromptValidationError``
    now, at construction, and the tool is immutable afterwards.
    """

    name: str
    """The name the model calls; unique within a rendered prompt."""
    description: str
    """What the tool does, as the model reads it (1-200 ASCII characters)."""
    handler: ToolHandler[ParamsT, ResultT] | None
    """The function that runs the tool, or None for declaration-only tools.

    Handlers written before ``ToolContext`` existed (no ``context`` parameter) are still
    accepted and run with a ``DeprecationWarning`` emitted when the tool is built."""
    accepts_overrides: bool
    """Whether automatic override pipelines may rewrite this tool's description."""
    terminal: bool
    """Whether a successful call ends the evaluation turn (see ``PromptResponse.halt``)."""
    exclusive: bool
    """Whether the tool must run alone: never at the same time as another call of its turn.

    Calls of one model turn run concurrently by default; an exclusive call waits for the
    calls before it and holds back the calls after it."""
    run_in_thread: bool
    """Whether a sync handler runs on a worker thread (the default) under the async loop.

    A worker thread keeps a slow sync handler from blocking the event loop; pass
    ``run_in_thread=False`` for quick handlers that must run on the loop's thread. Async
    handlers always run on the loop."""
    spec: ToolSpec
    """Types and schema derived once from the params dataclass."""
    takes_context: bool
    """False for legacy handlers without a ``context`` parameter."""
    is_async: bool
    """Whether the handler is a coroutine function."""
    pure: bool
    """Whether the handler only computes from its params and context: no I/O, no clock,
    no randomness, no waiting. A pure handler runs on the event loop's thread (never a
    worker thread), and a Temporal evaluation runs it inside the workflow instead of as
    an activity (see ``specs/TEMPORAL.md``)."""
    requires_approval: bool | ApprovalPolicy[ParamsT]
    """Whether a person must approve a call before it runs: True for every call, or a
    function of the call's params that says so per call (an exception counts as True).

    A call that needs approval pauses a durable evaluation (``evaluate(store=...)``):
    the response lists it in ``pending_approvals`` until someone decides
    (``store.decide_approval``) and the evaluation is resumed; a denied call reaches the
    model as a failed result. Evaluating such a tool without a store is an error."""

    def approval_needed(self, params: ParamsT) -> bool:
        """Whether a call with ``params`` must wait for a person's approval."""
        policy = self.requires_approval
        if isinstance(policy, bool):
            return policy
        try:
            return bool(policy(params))
        except Exception:  # a policy that cannot decide must not let the call through
            logger.warning(
                "the approval policy of tool %r raised; the call waits for approval",
                self.name,
                exc_info=True,
            )
            return True

    def __init__(
        self,
        *,
        name: str,
        description: str,
        handler: ToolHandler[ParamsT, ResultT] | None = None,
        accepts_overrides: bool = True,
        terminal: bool = False,
        params_type: type[ParamsT] | None = None,
        result_type: type[ResultT] | None = None,
        exclusive: bool = False,
        run_in_thread: bool = True,
        requires_approval: bool | ApprovalPolicy[ParamsT] = False,
        pure: bool = False,
    ) -> None:
        problems = [
            PromptValidationError(f"tool {name!r}: {problem}", tool_name=str(name))
            for problem in (tool_name_problem(name), description_problem(description))
            if problem is not None
        ]
        policy: object = requires_approval  # checked: callers outside mypy pass anything
        if not isinstance(policy, bool) and not callable(policy):
            problems.append(
                PromptValidationError(
                    f"tool {name!r}: requires_approval must be True, False or a function of "
                    f"the params, got {type(policy).__name__}",
                    tool_name=str(name),
                )
            )
        analysis = _analyse_handler(name, handler)
        problems.extend(analysis.problems)
        subscript = subscript_args(type(self)) or ()
        declared_params = params_type if params_type is not None else _at(subscript, 0)
        declared_result = result_type if result_type is not None else _at(subscript, 1)
        spec: ToolSpec | None = None
        if not problems:
            candidate = declared_params if declared_params is not None else analysis.params
            result = declared_result if declared_result is not None else analysis.result
            spec, spec_problem = _build_spec(str(name), candidate, result, analysis)
            if spec_problem is not None:
                problems.append(PromptValidationError(spec_problem, tool_name=str(name)))
        if problems or spec is None:
            raise PromptValidationError.combine(problems, subject=f"tool {name!r}")
        if not analysis.takes_context:
            warnings.warn(
                f"tool {name!r} handler takes no 'context' keyword; define it as "
                "handler(params, *, context). It still runs; support will be removed.",
                DeprecationWarning,
                stacklevel=2,
            )
        values = {
            "name": name,
            "description": description,
            "handler": handler,
            "accepts_overrides": accepts_overrides,
            "terminal": terminal,
            "exclusive": exclusive,
            "run_in_thread": run_in_thread and not pure,
            "pure": bool(pure),
            "requires_approval": requires_approval,
            "spec": spec,
            "takes_context": analysis.takes_context,
            "is_async": handler is not None and inspect.iscoroutinefunction(handler),
        }
        for field_name, value in values.items():
            object.__setattr__(self, field_name, value)

    @classmethod
    def wrap(
        cls,
        function: ToolHandler[ParamsT, ResultT],
        *,
        name: str | None = None,
        description: str | None = None,
        accepts_overrides: bool = True,
        exclusive: bool = False,
        run_in_thread: bool = True,
        requires_approval: bool | ApprovalPolicy[ParamsT] = False,
        pure: bool = False,
    ) -> Tool[ParamsT, ResultT]:
        """Build a tool from a handler: name from the function, description from its docstring."""
        if name is None:
            name = getattr(function, "__name__", None)
            if not isinstance(name, str):
                raise PromptValidationError(f"cannot name a tool after {function!r}; pass name=...")
        if description is None:
            description = _first_line(function)
            if not description:
                raise PromptValidationError(
                    f"tool {name!r} has no description: give the function a docstring "
                    "or pass description=...",
                    tool_name=name,
                )
        return cls(
            name=name,
            description=description,
            handler=function,
            accepts_overrides=accepts_overrides,
            exclusive=exclusive,
            run_in_thread=run_in_thread,
            requires_approval=requires_approval,
            pure=pure,
        )

    @property
    def params_type(self) -> type[ParamsT]:
        """The params dataclass."""
        return typing.cast("type[ParamsT]", self.spec.params_type)

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r})"


def _at(values: tuple[object, ...], index: int) -> object:
    return values[index] if len(values) > index else None


def _build_spec(
    name: str, params: object, result: object, analysis: _HandlerAnalysis
) -> tuple[ToolSpec | None, str | None]:
    """The spec of a tool whose params type is ``params``, or why there is none."""
    if params is None:
        if analysis.params_error is not None:
            return None, analysis.params_error
        return None, (
            f"tool {name!r} has no params type: annotate the handler's first parameter, "
            "pass params_type=..., or subscript Tool[Params, Result]"
        )
    if not (isinstance(params, type) and is_dataclass(params)):
        return None, f"tool {name!r} params type {params!r} is not a dataclass"
    try:
        strict = is_strict_compatible(params)
        problem = None if strict else strict_problem(params)
        parameters = schema(params)
    except SchemaError as exc:
        return None, f"tool {name!r} params cannot be described: {exc.message}"
    if problem is not None:
        # Visible on demand: the provider will not enforce this tool's schema.
        logger.debug(
            "tool %r is sent non-strict (strict: false): %s in %s",
            name,
            problem,
            params.__qualname__,
        )
    spec = ToolSpec(
        params_type=params,
        result_type=result,
        parameters_schema=parameters,
        strict=strict,
        strict_problem=problem,
        param_descriptions=MappingProxyType(
            {
                item.name: str(item.metadata["description"])
                for item in fields(params)
                if "description" in item.metadata
            }
        ),
    )
    return spec, None


@overload
def tool[P, R](function: ToolHandler[P, R], /) -> Tool[P, R]: ...
@overload
def tool[P, R](
    *,
    name: str | None = None,
    description: str | None = None,
    accepts_overrides: bool = True,
    exclusive: bool = False,
    run_in_thread: bool = True,
    requires_approval: bool | ApprovalPolicy[Any] = False,
    pure: bool = False,
) -> Callable[[ToolHandler[P, R]], Tool[P, R]]: ...
def tool[P, R](
    function: ToolHandler[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    accepts_overrides: bool = True,
    exclusive: bool = False,
    run_in_thread: bool = True,
    requires_approval: bool | ApprovalPolicy[Any] = False,
    pure: bool = False,
) -> Tool[P, R] | Callable[[ToolHandler[P, R]], Tool[P, R]]:
    """Decorate a typed handler to make a :class:`Tool` (``@tool`` or ``@tool(name=...)``)."""

    def build(handler: ToolHandler[P, R]) -> Tool[P, R]:
        return Tool.wrap(
            handler,
            name=name,
            description=description,
            accepts_overrides=accepts_overrides,
            exclusive=exclusive,
            run_in_thread=run_in_thread,
            requires_approval=requires_approval,
            pure=pure,
        )

    return build if function is None else build(function)


def _first_line(function: object) -> str:
    doc = inspect.getdoc(function) or ""
    return doc.strip().split("\n\n", 1)[0].replace("\n", " ").strip()


@dataclass(frozen=True, slots=True)
class _HandlerAnalysis:
    """What a handler's signature and annotations say, read once."""

    problems: tuple[PromptValidationError, ...] = ()
    takes_context: bool = True
    params: object = None
    result: object = None
    params_error: str | None = None
    """Why the first parameter's annotation could not be used, in words with the fix."""


def _analyse_handler(name: object, handler: object) -> _HandlerAnalysis:
    if handler is None:
        return _HandlerAnalysis()
    label = f"tool {name!r} handler"
    tool_name = str(name)
    if not callable(handler):
        problem = PromptValidationError(f"{label} is not callable", tool_name=tool_name)
        return _HandlerAnalysis(problems=(problem,))
    facts = _facts(handler)
    if facts is None:
        # Builtins without introspectable signatures: trust the caller.
        return _HandlerAnalysis()
    problems: list[PromptValidationError] = []
    if facts.context_misplaced:
        problems.append(
            PromptValidationError(
                f"{label}: 'context' must be keyword-only (def handler(params, *, context))",
                tool_name=tool_name,
            )
        )
    if facts.first is None:
        problems.append(
            PromptValidationError(
                f"{label} must take the params as its first positional parameter",
                tool_name=tool_name,
            )
        )
    if facts.extra_required:
        problems.append(
            PromptValidationError(
                f"{label} has required parameters the runtime cannot supply: "
                + ", ".join(facts.extra_required),
                tool_name=tool_name,
            )
        )
    if problems:
        return _HandlerAnalysis(problems=tuple(problems), takes_context=facts.takes_context)
    params_error = None
    if facts.params_error is not None:
        params_error = f"tool {tool_name!r}: {facts.params_error}"
    return _HandlerAnalysis(
        takes_context=facts.takes_context,
        params=facts.params,
        result=facts.result,
        params_error=params_error,
    )


@dataclass(frozen=True, slots=True)
class _Facts:
    """What a handler's signature and annotations say, whatever tool it serves."""

    takes_context: bool
    context_misplaced: bool
    first: str | None
    extra_required: tuple[str, ...]
    params: object
    result: object
    params_error: str | None


def _facts(handler: object) -> _Facts | None:
    """``_read_facts`` for ``handler``, cached when the handler can be a cache key.

    Building many tools from one handler (generated trees, catalogues) then reads its
    signature and resolves its annotations once.
    """
    try:
        return _cached_facts(handler)
    except TypeError:  # an unhashable callable object
        return _read_facts(handler)


def _read_facts(handler: object) -> _Facts | None:
    try:
        signature = inspect.signature(cast("Callable[..., object]", handler))
    except (TypeError, ValueError):
        return None
    parameters = list(signature.parameters.values())
    positional = [
        parameter
        for parameter in parameters
        if parameter.kind
        in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    context = signature.parameters.get("context")
    misplaced = context is not None and context.kind is not inspect.Parameter.KEYWORD_ONLY
    if misplaced:
        positional = [parameter for parameter in positional if parameter.name != "context"]
    first = positional[0] if positional else None
    extra_required = tuple(
        parameter.name
        for parameter in parameters
        if parameter.default is inspect.Parameter.empty
        and parameter.name != "context"
        and parameter.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        and parameter is not first
    )
    accepts_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    params: object = None
    params_error: str | None = None
    result: object = None
    function = cast("Callable[..., object]", handler)
    if first is not None and not misplaced and not extra_required:
        params, params_error = _annotation(function, first.name)
        returned, _ = _annotation(function, "return")
        if typing.get_origin(returned) is ToolResult:
            (result,) = typing.get_args(returned)
    return _Facts(
        takes_context=context is not None or accepts_kwargs,
        context_misplaced=misplaced,
        first=None if first is None else first.name,
        extra_required=extra_required,
        params=params,
        result=result,
        params_error=params_error,
    )


_cached_facts = functools.lru_cache(maxsize=1024)(_read_facts)


def _annotation(handler: Callable[..., object], name: str) -> tuple[object, str | None]:
    """The annotation of parameter ``name``, resolved, or why it could not be.

    Annotations are resolved one by one, so a return type naming a local class does not
    hide a params type that resolves fine.
    """
    try:
        raw = inspect.get_annotations(handler).get(name)
    except TypeError:
        return None, None
    if not isinstance(raw, str):
        return raw, None
    try:
        return eval(raw, dict(getattr(handler, "__globals__", {}))), None
    except Exception as exc:  # any failure to resolve is reported with the fix below
        return None, (
            f"the handler's parameter {name!r} is annotated {raw!r}, which "
            f"cannot be resolved from the handler's module ({type(exc).__name__}: {exc}); "
            "define that class at module level, or pass params_type=... to Tool"
        )
