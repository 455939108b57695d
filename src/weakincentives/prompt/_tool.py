"""Function tools: a typed params dataclass, a description, and a handler."""

from __future__ import annotations

import inspect
import logging
import threading
import typing
import warnings
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, fields, is_dataclass
from typing import TYPE_CHECKING, Any, Protocol, overload

from weakincentives.errors import PromptValidationError
from weakincentives.prompt._naming import description_problem, tool_name_problem
from weakincentives.prompt._tool_result import ToolResult
from weakincentives.serde import is_strict_compatible, schema, strict_problem

if TYPE_CHECKING:
    from weakincentives.prompt._tool_context import ToolContext
    from weakincentives.serde import JSONObject

__all__ = ["Tool", "ToolHandler", "ToolSpec", "tool"]

logger = logging.getLogger("weakincentives.prompt")


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


class Tool[ParamsT, ResultT]:
    """A callable affordance the model can invoke, attached to a section.

    The params dataclass comes from ``params_type=``, the handler's first parameter
    annotation, or the subscript (``Tool[LookupParams, LookupResult](...)``). The
    handler's signature is checked here, once; its schema is derived on first use
    and cached on the tool.
    """

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
    ) -> None:
        problems = [
            PromptValidationError(f"tool {name!r}: {problem}", tool_name=str(name))
            for problem in (tool_name_problem(name), description_problem(description))
            if problem is not None
        ]
        takes_context = True
        hinted_params: object = None
        hinted_result: object = None
        if handler is not None:
            signature_problems, takes_context = _check_handler(name, handler)
            problems.extend(signature_problems)
            if not signature_problems and callable(handler):
                hinted_params, hinted_result = _handler_types(handler)
        if problems:
            raise PromptValidationError.combine(problems, subject=f"tool {name!r}")
        if not takes_context:
            warnings.warn(
                f"tool {name!r} handler takes no 'context' keyword; define it as "
                "handler(params, *, context). It still runs; support will be removed.",
                DeprecationWarning,
                stacklevel=2,
            )
        self._name = name
        self._description = description
        self._handler = handler
        self._accepts_overrides = accepts_overrides
        self._terminal = terminal
        self._exclusive = exclusive
        self._run_in_thread = run_in_thread
        self._takes_context = takes_context
        self._is_async = handler is not None and inspect.iscoroutinefunction(handler)
        self._declared_params: object = params_type if params_type is not None else hinted_params
        self._declared_result: object = result_type if result_type is not None else hinted_result
        self._spec: ToolSpec | None = None
        self._lock = threading.Lock()

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
        )

    @property
    def name(self) -> str:
        """The name the model calls; unique within a rendered prompt."""
        return self._name

    @property
    def description(self) -> str:
        """What the tool does, as the model reads it (1-200 ASCII characters)."""
        return self._description

    @property
    def handler(self) -> ToolHandler[ParamsT, ResultT] | None:
        """The function that runs the tool, or None for declaration-only tools.

        Handlers written before ``ToolContext`` existed (no ``context`` parameter) are
        still accepted at runtime and run with a ``DeprecationWarning``.
        """
        return self._handler

    @property
    def accepts_overrides(self) -> bool:
        """Whether automatic override pipelines may rewrite this tool's description."""
        return self._accepts_overrides

    @property
    def terminal(self) -> bool:
        """Whether a successful call ends the evaluation turn (see ``PromptResponse.halt``)."""
        return self._terminal

    @property
    def exclusive(self) -> bool:
        """Whether the tool must run alone: never at the same time as another call of its turn.

        Calls of one model turn run concurrently by default; an exclusive call waits for
        the calls before it and holds back the calls after it.
        """
        return self._exclusive

    @property
    def run_in_thread(self) -> bool:
        """Whether a sync handler runs on a worker thread (the default) under the async loop.

        A worker thread keeps a slow sync handler from blocking the event loop; pass
        ``run_in_thread=False`` for quick handlers that must run on the loop's thread.
        Async handlers always run on the loop.
        """
        return self._run_in_thread

    @property
    def takes_context(self) -> bool:
        """False for legacy handlers without a ``context`` parameter."""
        return self._takes_context

    @property
    def is_async(self) -> bool:
        """Whether the handler is a coroutine function."""
        return self._is_async

    @property
    def spec(self) -> ToolSpec:
        """Types and schema derived once from the params dataclass."""
        spec = self._spec
        if spec is None:
            with self._lock:
                if self._spec is None:
                    self._spec = self._build_spec()
                spec = self._spec
        return spec

    @property
    def params_type(self) -> type[ParamsT]:
        """The params dataclass."""
        return typing.cast("type[ParamsT]", self.spec.params_type)

    def spec_problem(self) -> str | None:
        """Say why no spec can be derived (untyped params, not a dataclass), or None."""
        params = self._params_candidate()
        if params is None:
            return (
                f"tool {self._name!r} has no params type: annotate the handler's first "
                "parameter, pass params_type=..., or subscript Tool[Params, Result]"
            )
        if not (isinstance(params, type) and is_dataclass(params)):
            return f"tool {self._name!r} params type {params!r} is not a dataclass"
        return None

    def _params_candidate(self) -> object:
        if self._declared_params is not None:
            return self._declared_params
        alias = getattr(self, "__orig_class__", None)
        return None if alias is None else typing.get_args(alias)[0]

    def _build_spec(self) -> ToolSpec:
        problem = self.spec_problem()
        if problem is not None:
            raise PromptValidationError(problem, tool_name=self._name)
        params_type = typing.cast("type[Any]", self._params_candidate())
        result: object = self._declared_result
        if result is None:
            alias = getattr(self, "__orig_class__", None)
            result = None if alias is None else typing.get_args(alias)[1]
        strict = is_strict_compatible(params_type)
        problem = None if strict else strict_problem(params_type)
        if problem is not None:
            # Visible on demand: the provider will not enforce this tool's schema.
            logger.debug(
                "tool %r is sent non-strict (strict: false): %s in %s",
                self._name,
                problem,
                params_type.__qualname__,
            )
        return ToolSpec(
            params_type=params_type,
            result_type=result,
            parameters_schema=schema(params_type),
            strict=strict,
            strict_problem=problem,
            param_descriptions={
                item.name: str(item.metadata["description"])
                for item in fields(params_type)
                if "description" in item.metadata
            },
        )

    def __repr__(self) -> str:
        return f"Tool(name={self._name!r})"


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
        )

    return build if function is None else build(function)


def _first_line(function: object) -> str:
    doc = inspect.getdoc(function) or ""
    return doc.strip().split("\n\n", 1)[0].replace("\n", " ").strip()


def _check_handler(name: object, handler: object) -> tuple[list[PromptValidationError], bool]:
    label = f"tool {name!r} handler"
    tool_name = str(name)
    if not callable(handler):
        return [PromptValidationError(f"{label} is not callable", tool_name=tool_name)], True
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError):
        # Builtins without introspectable signatures: trust the caller.
        return [], True
    positional = [
        parameter
        for parameter in signature.parameters.values()
        if parameter.kind
        in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    problems: list[PromptValidationError] = []
    context = signature.parameters.get("context")
    if context is not None and context.kind is not inspect.Parameter.KEYWORD_ONLY:
        problems.append(
            PromptValidationError(
                f"{label}: 'context' must be keyword-only (def handler(params, *, context))",
                tool_name=tool_name,
            )
        )
        positional = [parameter for parameter in positional if parameter.name != "context"]
    if not positional:
        problems.append(
            PromptValidationError(
                f"{label} must take the params as its first positional parameter",
                tool_name=tool_name,
            )
        )
    extra_required = [
        parameter.name
        for parameter in signature.parameters.values()
        if parameter.default is inspect.Parameter.empty
        and parameter.name != "context"
        and parameter.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        and (not positional or parameter is not positional[0])
    ]
    if extra_required:
        problems.append(
            PromptValidationError(
                f"{label} has required parameters the runtime cannot supply: "
                + ", ".join(extra_required),
                tool_name=tool_name,
            )
        )
    accepts_kwargs = any(
        parameter.kind is inspect.Parameter.VAR_KEYWORD
        for parameter in signature.parameters.values()
    )
    return problems, context is not None or accepts_kwargs


def _handler_types(handler: Callable[..., object]) -> tuple[object, object]:
    """Read the params and result types from the handler's annotations, each on its own.

    Annotations are resolved one by one, so a return type naming a local class does not
    hide a params type that resolves fine.
    """
    try:
        first = next(iter(inspect.signature(handler).parameters))
    except (TypeError, ValueError, StopIteration):
        return None, None
    params = _annotation(handler, first)
    returned = _annotation(handler, "return")
    result: object = None
    if typing.get_origin(returned) is ToolResult:
        (result,) = typing.get_args(returned)
    return params, result


def _annotation(handler: Callable[..., object], name: str) -> object:
    try:
        raw = inspect.get_annotations(handler).get(name)
    except TypeError:
        return None
    if not isinstance(raw, str):
        return raw
    try:
        return eval(raw, dict(getattr(handler, "__globals__", {})))
    except Exception:  # an unresolvable name: the subscript or params_type= must say
        return None
