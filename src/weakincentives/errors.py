"""The error hierarchy: one root, specific leaves that carry their context.

Every exception weakincentives raises derives from :class:`WinkError`, so
``except WinkError`` catches anything from the library. Each leaf keeps the
context it names (section path, dataclass type, placeholder, tool name, JSON
path, evaluation phase) as keyword-only attributes, and builds its message from
them so the text and the attributes never disagree.

``__all__`` lists the root, the phase errors and the ones a caller catches on their
own; the rarer leaves below are importable from here too, and caught through an
exported base (``WinkError``, ``SerdeError``, ``StoreError``, ``PromptEvaluationError``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from weakincentives._json_value import JSONValue

__all__ = [
    "CassetteError",
    "CatalogError",
    "CheckpointConflictError",
    "ConfigValidationError",
    "EvaluationFailedError",
    "ParseError",
    "PromptEvaluationError",
    "PromptRenderError",
    "PromptValidationError",
    "ProviderError",
    "ReplayMissError",
    "ResponseTruncatedError",
    "ResumeError",
    "SerdeError",
    "StoreError",
    "ToolValidationError",
    "WinkError",
]

_TYPE_NAME_SHOWN = 200
"""Characters of a type name quoted in an error (the name comes from stored data)."""

type EvaluationPhase = Literal["render", "request", "response", "tool", "parse"]
"""Where an evaluation failed: see :class:`PromptEvaluationError`."""


class WinkError(Exception):
    """Root of every error raised by weakincentives."""

    message: str

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class PromptError(WinkError):
    """Base for problems with a prompt definition or its parameters."""

    section_path: tuple[str, ...] | None
    dataclass_type: type[Any] | None
    placeholder: str | None
    tool_name: str | None

    def __init__(
        self,
        message: str,
        *,
        section_path: tuple[str, ...] | None = None,
        dataclass_type: type[Any] | None = None,
        placeholder: str | None = None,
        tool_name: str | None = None,
    ) -> None:
        super().__init__(message)
        self.section_path = section_path
        self.dataclass_type = dataclass_type
        self.placeholder = placeholder
        self.tool_name = tool_name


class PromptValidationError(PromptError):
    """A prompt, section or tool definition is invalid; raised at construction.

    Construction collects every problem it finds and raises once. ``problems``
    holds one error per problem (a single error lists only itself), each with
    its own context attributes; the top-level attributes are those of the first.
    """

    problems: tuple[PromptValidationError, ...]

    def __init__(
        self,
        message: str,
        *,
        section_path: tuple[str, ...] | None = None,
        dataclass_type: type[Any] | None = None,
        placeholder: str | None = None,
        tool_name: str | None = None,
        problems: tuple[PromptValidationError, ...] = (),
    ) -> None:
        super().__init__(
            message,
            section_path=section_path,
            dataclass_type=dataclass_type,
            placeholder=placeholder,
            tool_name=tool_name,
        )
        self.problems = problems or (self,)

    @classmethod
    def combine(
        cls, errors: Iterable[PromptValidationError], *, subject: str
    ) -> PromptValidationError:
        """Merge several problems found while validating ``subject`` into one error."""
        flat = tuple(problem for error in errors for problem in error.problems)
        if not flat:
            raise ValueError("combine() needs at least one error")
        if len(flat) == 1:
            return flat[0]
        first = flat[0]
        lines = "\n".join(f"- {problem.message}" for problem in flat)
        return cls(
            f"{len(flat)} problems in {subject}:\n{lines}",
            section_path=first.section_path,
            dataclass_type=first.dataclass_type,
            placeholder=first.placeholder,
            tool_name=first.tool_name,
            problems=flat,
        )


class UnknownSectionError(PromptError, KeyError):
    """A section path that the prompt does not have was looked up.

    Also a ``KeyError``, so mapping-style ``except KeyError`` code keeps working.
    """

    def __str__(self) -> str:
        # KeyError would quote the message; the library's errors read as plain text.
        return self.message


class PromptRenderError(PromptError):
    """The parameters given to ``render`` cannot fill the prompt."""


class ToolValidationError(WinkError):
    """A tool call's arguments were rejected; its message goes back to the model.

    Handlers raise it to refuse a call; the execution path turns it into a
    failed ``ToolResult`` rather than letting it escape the evaluation.
    """

    tool_name: str | None
    field_path: str | None

    def __init__(
        self,
        message: str,
        *,
        tool_name: str | None = None,
        field_path: str | None = None,
    ) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.field_path = field_path


class ToolResultError(WinkError, TypeError):
    """A ``ToolResult`` was built with fields of the wrong type, or its value has no text.

    Raised when the result is constructed (``message`` not a str, ``success`` not a
    bool) and by ``render()`` when the payload cannot be written for the model. It is
    also a ``TypeError``, which is what a wrongly typed argument raises in Python.
    """


class SerdeError(WinkError):
    """Base for serialization, parsing and schema problems."""


class ParseError(SerdeError):
    """Data does not fit a dataclass; ``path`` points at the offending value.

    ``path`` uses JSON-path notation rooted at ``$`` (``$.items[2].name``).
    """

    path: str
    expected: str
    dataclass_type: type[Any] | None

    def __init__(
        self,
        *,
        path: str,
        expected: str,
        got: str,
        dataclass_type: type[Any] | None = None,
    ) -> None:
        target = "" if dataclass_type is None else f" while parsing {dataclass_type.__name__}"
        super().__init__(f"expected {expected}, got {got} at {path}{target}")
        self.path = path
        self.expected = expected
        self.got = got
        self.dataclass_type = dataclass_type


class SchemaError(SerdeError):
    """A type cannot be serialized, parsed or described as JSON Schema."""

    dataclass_type: type[Any] | None
    field_name: str | None

    def __init__(
        self,
        message: str,
        *,
        dataclass_type: type[Any] | None = None,
        field_name: str | None = None,
    ) -> None:
        super().__init__(message)
        self.dataclass_type = dataclass_type
        self.field_name = field_name


class UnknownTypeError(SerdeError):
    """A stored value names a type that cannot be loaded: unknown, moved, or not loadable.

    ``type_name`` is the name as written in the data, ``path`` the JSON path of the
    value carrying it, and ``reason`` why it did not resolve (no such module, no such
    class, not a dataclass or enum). A class that moved loads again once it is
    registered under its old name (``register_type(..., aliases=(old_name,))``).
    """

    type_name: str
    path: str
    reason: str

    def __init__(self, *, type_name: str, path: str, reason: str) -> None:
        shown = type_name
        if len(shown) > _TYPE_NAME_SHOWN:
            shown = shown[: _TYPE_NAME_SHOWN - 3] + "..."
        super().__init__(f"unknown type {shown!r} at {path}: {reason}")
        self.type_name = type_name
        self.path = path
        self.reason = reason


class UnreadableDocumentError(SerdeError):
    """A stored document cannot be read as the kind asked for.

    Raised for a document of another kind, a format version newer than this library
    reads, one older than its upgrades reach, or an upgrade step that failed.
    ``kind`` is the kind asked for, ``found_kind`` and ``version`` what the document
    says, ``readable`` the (oldest, newest) versions this library reads of ``kind``.
    """

    kind: str
    found_kind: str
    version: int
    readable: tuple[int, int]

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        found_kind: str,
        version: int,
        readable: tuple[int, int],
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.found_kind = found_kind
        self.version = version
        self.readable = readable


class RecordedError(WinkError):
    """An exception as a stored document keeps it: its type's name and its message.

    Recorded values never hold the exception object itself (it may carry frames,
    sockets or anything else); a loaded ``ToolInvoked.exception`` is one of these.
    ``type_name`` is ``module:qualname`` of the original class (``builtins:ValueError``).
    """

    type_name: str

    def __init__(self, message: str, *, type_name: str) -> None:
        super().__init__(message)
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"RecordedError({self.message!r}, type_name={self.type_name!r})"


class ConfigValidationError(WinkError):
    """A configuration value (hosted tool, adapter, catalogue option) is invalid."""

    config_type: type[Any] | None
    field_name: str | None
    value: object

    def __init__(
        self,
        message: str,
        *,
        config_type: type[Any] | None = None,
        field_name: str | None = None,
        value: object = None,
    ) -> None:
        super().__init__(message)
        self.config_type = config_type
        self.field_name = field_name
        self.value = value


class PromptEvaluationError(WinkError):
    """Evaluating a prompt failed outside any single tool call.

    ``phase`` says where: ``render`` (the prompt or its tools could not be
    prepared), ``request`` (talking to the provider failed), ``response`` (the
    provider's reply could not be interpreted), ``tool`` (the tool loop could
    not continue, for example too many rounds) or ``parse`` (the final answer
    does not fit the declared output type). ``provider_payload`` keeps the raw
    material (reply body, error body, raw text) for diagnosis.
    """

    prompt_name: str
    phase: EvaluationPhase
    provider_payload: Mapping[str, JSONValue] | None
    reason: str
    """The message without the phase and prompt prefix."""

    def __init__(
        self,
        message: str,
        *,
        prompt_name: str,
        phase: EvaluationPhase,
        provider_payload: Mapping[str, JSONValue] | None = None,
    ) -> None:
        super().__init__(f"[{phase}] prompt {prompt_name!r}: {message}")
        self.reason = message
        self.prompt_name = prompt_name
        self.phase = phase
        self.provider_payload = provider_payload


class ProviderError(PromptEvaluationError):
    """The provider could not be reached, answered with an error, or broke off its reply.

    Phase ``request`` when the request failed (a connection that could not be made, an
    error status); phase ``response`` when the connection broke while the reply was
    being read. ``retryable`` says whether the same request may succeed if sent again
    (timeouts, dropped connections, 408/409/429 and 5xx answers, or the provider's own
    ``x-should-retry`` hint); ``retry_after`` is the delay the provider asked for, in
    seconds, when it named one. The shared loop retries retryable failures within the
    adapter's retry budget and the evaluation's deadline, unless text of the failed
    attempt already reached the caller.

    The message says where and how often: ``endpoint`` is the request's method and URL
    (scheme, host, port and path only: never a query string, credentials or key),
    ``attempts`` how many times the request was sent, and ``hint`` what usually causes
    this failure (nothing listening, a refused key, a path the server does not serve,
    throttling), when there is a common cause.
    """

    status_code: int | None
    retry_after: float | None
    retryable: bool
    endpoint: str | None
    attempts: int
    hint: str | None
    detail: str
    """The failure alone, without the endpoint, attempts and hint."""

    def __init__(
        self,
        message: str,
        *,
        prompt_name: str,
        status_code: int | None = None,
        retry_after: float | None = None,
        retryable: bool = False,
        provider_payload: Mapping[str, JSONValue] | None = None,
        phase: Literal["request", "response"] = "request",
        endpoint: str | None = None,
        attempts: int = 1,
        hint: str | None = None,
    ) -> None:
        where = [endpoint] if endpoint else []
        where.append(f"{attempts} attempt{'' if attempts == 1 else 's'}")
        full = f"{message} ({', '.join(where)})"
        if hint:
            full = f"{full}. {hint}"
        super().__init__(
            full, prompt_name=prompt_name, phase=phase, provider_payload=provider_payload
        )
        self.detail = message
        self.status_code = status_code
        self.retry_after = retry_after
        self.retryable = retryable
        self.endpoint = endpoint
        self.attempts = attempts
        self.hint = hint

    def after_attempts(self, attempts: int) -> ProviderError:
        """This error as it ends an exchange of ``attempts`` sends (the message says so)."""
        phase: Literal["request", "response"] = (
            "response" if self.phase == "response" else "request"
        )
        return ProviderError(
            self.detail,
            prompt_name=self.prompt_name,
            status_code=self.status_code,
            retry_after=self.retry_after,
            retryable=self.retryable,
            provider_payload=self.provider_payload,
            phase=phase,
            endpoint=self.endpoint,
            attempts=attempts,
            hint=self.hint,
        )


class ResponseTruncatedError(PromptEvaluationError):
    """The provider stopped the reply at its output-token limit (phase ``response``).

    A truncated reply is reported as such rather than as the parse error its cut-off
    text would cause; ``limit`` is the output-token cap in force, when known.
    """

    limit: int | None

    def __init__(
        self,
        message: str,
        *,
        prompt_name: str,
        limit: int | None = None,
        provider_payload: Mapping[str, JSONValue] | None = None,
    ) -> None:
        super().__init__(
            message, prompt_name=prompt_name, phase="response", provider_payload=provider_payload
        )
        self.limit = limit


class EmptyAnswerError(PromptEvaluationError):
    """The model's final answer was empty: no text (or only whitespace), no call (phase ``parse``).

    The loop sends such an answer back to the model with feedback, like an answer that
    does not fit the output type (``LoopSettings.output_retries``); this error ends the
    evaluation when the model answers with nothing again. ``structured`` says whether a
    structured answer was expected.
    """

    structured: bool

    def __init__(self, *, prompt_name: str, structured: bool) -> None:
        super().__init__(
            "the model's final answer was empty (no text and no tool call); it may have "
            "stopped at once (an end-of-sequence token), so check the prompt and the "
            "model's chat template",
            prompt_name=prompt_name,
            phase="parse",
        )
        self.structured = structured


class HistoryTranslationError(PromptEvaluationError):
    """A conversation cannot be carried on to this provider (phase ``request``).

    Raised before anything is sent, when a turn of ``continue_from`` holds items only
    the provider that produced them can replay, such as another provider's hosted-tool
    calls and results. ``source_format`` is the wire format of those items,
    ``target_format`` the one asked for, ``kinds`` the item types that have no
    translation. Start a fresh conversation, or continue on the first provider.
    """

    source_format: str
    target_format: str
    kinds: tuple[str, ...]

    def __init__(
        self, *, prompt_name: str, source_format: str, target_format: str, kinds: tuple[str, ...]
    ) -> None:
        shown = ", ".join(kinds)
        super().__init__(
            f"the conversation holds {source_format} items with no {target_format} form "
            f"({shown}); continue it on a {source_format} adapter, or start a new one",
            prompt_name=prompt_name,
            phase="request",
        )
        self.source_format = source_format
        self.target_format = target_format
        self.kinds = kinds


class CassetteError(WinkError):
    """A cassette file of recorded exchanges cannot be read or written.

    Raised when a ``Recorded`` provider opens its cassette (missing in replay mode, not
    JSON, cut short, of an unknown format version, an entry whose fields are wrong or
    whose fingerprint does not match its request) and when writing it fails.
    ``cassette`` is the file, ``entry`` the index of the exchange at fault (None when
    the problem is the file as a whole), ``reason`` what is wrong.
    """

    cassette: str
    entry: int | None
    reason: str

    def __init__(self, *, cassette: str, reason: str, entry: int | None = None) -> None:
        where = f"cassette {cassette}" + ("" if entry is None else f", exchange {entry}")
        super().__init__(f"{where}: {reason}")
        self.cassette = cassette
        self.entry = entry
        self.reason = reason


class ReplayMissError(PromptEvaluationError):
    """A replayed evaluation built a request its cassette does not hold (phase ``request``).

    The prompt, its tools or the conversation changed since the cassette was recorded.
    ``fingerprint`` is the new request's (``sha256:<hex>``), ``round`` the evaluation
    round that built it, ``cassette`` the file; ``closest`` is the index of the recorded
    exchange it was compared with (None for an empty cassette), ``closest_round`` its
    round, ``difference`` the JSON path where the two first differ and ``diff`` a
    bounded unified diff of the recorded request (``-``) against the new one (``+``).
    ``replayed`` counts the exchanges recorded for this very request when all of them
    were replayed already (the run sends it more often than the recorded one did; 0
    otherwise). Record again with ``mode="rerecord"`` to accept the change.
    """

    fingerprint: str
    round: int
    cassette: str
    closest: int | None
    closest_round: int | None
    difference: str | None
    diff: str
    replayed: int

    def __init__(
        self,
        *,
        prompt_name: str,
        fingerprint: str,
        round: int,
        cassette: str,
        closest: int | None,
        closest_round: int | None = None,
        difference: str | None = None,
        diff: str = "",
        replayed: int = 0,
    ) -> None:
        has = "has no exchange left" if replayed else "holds no exchange"
        message = f"cassette {cassette} {has} for the request of round {round} ({fingerprint})"
        if replayed:
            message += (
                f"; it recorded this request {replayed} time{'s' if replayed > 1 else ''}, "
                "all replayed already: this run sends it more often than the recorded one"
            )
        elif closest is None:
            message += "; the cassette holds no exchanges"
        else:
            message += f"; closest is exchange {closest} (round {closest_round})"
            if difference is not None:
                message += f", which first differs at {difference}"
        message += '. Record it again with mode="rerecord" if the change is intended' + (
            f":\n{diff}" if diff else ""
        )
        super().__init__(message, prompt_name=prompt_name, phase="request")
        self.fingerprint = fingerprint
        self.round = round
        self.cassette = cassette
        self.closest = closest
        self.closest_round = closest_round
        self.difference = difference
        self.diff = diff
        self.replayed = replayed


class ReplayMismatchError(PromptEvaluationError):
    """A resumed evaluation built another request than the one recorded (phase ``request``).

    Before a recorded send is replayed, the request the loop built now is checked
    against the fingerprint stored with it; a difference means the prompt, its params
    or its tools changed between the first run and the resume, and replaying the old
    reply would answer a question nobody asked. ``round`` is the request's round;
    ``changes`` lists what differs, as JSON paths into the request with the new value
    (``$.tools[1] changed: {"name": "lookup", ...}``).
    """

    round: int
    changes: tuple[str, ...]

    def __init__(self, *, prompt_name: str, round: int, changes: tuple[str, ...]) -> None:
        listed = "; ".join(changes[:_CHANGES_SHOWN])
        more = len(changes) - _CHANGES_SHOWN
        if more > 0:
            listed += f"; and {more} more"
        super().__init__(
            f"the request of round {round} is not the one recorded ({listed}); the prompt, "
            "its params or its tools changed since the evaluation started: resume it with "
            "the prompt it started with",
            prompt_name=prompt_name,
            phase="request",
        )
        self.round = round
        self.changes = changes


_CHANGES_SHOWN = 8
"""Changes listed in a ReplayMismatchError's message (all are in ``changes``)."""


class ResumeError(WinkError):
    """An evaluation cannot be resumed as asked; ``evaluation_id`` and ``reason`` say why.

    Raised before anything runs: the store holds no such evaluation, or it was
    started with another prompt (``ns``/``key``), or the session given is another one,
    or its checkpoint document lacks a member resuming reads or holds one of the wrong
    shape (it was changed outside the library).
    """

    evaluation_id: str
    reason: str

    def __init__(self, *, evaluation_id: str, reason: str) -> None:
        super().__init__(f"cannot resume evaluation {evaluation_id!r}: {reason}")
        self.evaluation_id = evaluation_id
        self.reason = reason


class PayloadTooLargeError(PromptEvaluationError):
    """A value an evaluation sends between processes is over the size limit.

    A Temporal evaluation checks each activity's input and result, and the workflow's
    input and result, against the limit before sending them (the Temporal server refuses
    payloads past 2 MiB by default). ``payload`` names the value (``the request of round
    3``), ``size`` and ``limit`` are in bytes of its JSON text. Phase ``request`` for what
    the evaluation sends, ``response`` for what comes back.
    """

    payload: str
    size: int
    limit: int

    def __init__(
        self,
        *,
        prompt_name: str,
        payload: str,
        size: int,
        limit: int,
        phase: Literal["request", "response"] = "request",
    ) -> None:
        super().__init__(
            f"{payload} is {size:,} bytes of JSON, over the {limit:,}-byte payload limit; "
            "send less (fewer or smaller params, results or history), or raise the limit "
            "as far as the Temporal server allows",
            prompt_name=prompt_name,
            phase=phase,
        )
        self.payload = payload
        self.size = size
        self.limit = limit


class EvaluationFailedError(WinkError):
    """An evaluation run elsewhere (a Temporal workflow) failed, was cancelled or timed out.

    The exception that ended it stayed in the process that ran it; this carries what
    its ``PromptFailed`` event recorded: ``phase`` (an evaluation phase, ``cancelled``,
    or ``internal``), ``reason`` (the error's message) and ``error_type`` (its class
    name, e.g. ``ProviderError``).
    """

    evaluation_id: str
    phase: str
    reason: str
    error_type: str

    def __init__(self, *, evaluation_id: str, phase: str, reason: str, error_type: str) -> None:
        super().__init__(f"evaluation {evaluation_id!r} failed [{phase}] ({error_type}): {reason}")
        self.evaluation_id = evaluation_id
        self.phase = phase
        self.reason = reason
        self.error_type = error_type


class EvaluationUnreachableError(WinkError):
    """An evaluation run elsewhere (a Temporal workflow) cannot take this request.

    There is no evaluation with ``evaluation_id``, or it has ended and ``operation``
    (``decide``, ``cancel``...) needs a running one. ``reason`` is what the server said.
    """

    evaluation_id: str
    operation: str
    reason: str

    def __init__(self, *, evaluation_id: str, operation: str, reason: str) -> None:
        super().__init__(f"cannot {operation} evaluation {evaluation_id!r}: {reason}")
        self.evaluation_id = evaluation_id
        self.operation = operation
        self.reason = reason


class AdapterClosedError(WinkError):
    """An adapter was used after ``close()``/``aclose()`` (or its ``with`` block) ended."""

    adapter_name: str

    def __init__(self, *, adapter_name: str) -> None:
        super().__init__(
            f"adapter {adapter_name!r} is closed; create a new adapter (closing released its "
            "worker threads and any client it built)"
        )
        self.adapter_name = adapter_name


class SessionError(WinkError):
    """A session operation was misused, such as restoring a foreign snapshot."""


class CatalogError(WinkError):
    """A tool catalogue definition is invalid (duplicate ids, unknown parents)."""

    tool_id: str | None
    path: tuple[str, ...] | None

    def __init__(
        self,
        message: str,
        *,
        tool_id: str | None = None,
        path: tuple[str, ...] | None = None,
    ) -> None:
        super().__init__(message)
        self.tool_id = tool_id
        self.path = path


class CursorError(WinkError):
    """A pagination cursor is malformed, tampered with, or from another query."""

    cursor: str

    def __init__(self, message: str, *, cursor: str) -> None:
        super().__init__(message)
        self.cursor = cursor


class StoreError(WinkError):
    """Base for everything a durable store (``weakincentives.store``) refuses or fails to do."""


class StoreUsageError(StoreError, ValueError):
    """A store method got an invalid argument (an empty id, a negative round) or a closed store.

    Also a ``ValueError``, which is what a bad argument raises in Python.
    """


class StoreDatabaseError(StoreError):
    """The database failed an operation: locked past the busy timeout, unreachable, disk full.

    The driver's exception is the ``__cause__``; ``operation`` names what the store was
    doing and ``location`` which database (a file path, or a host and database name).
    """

    operation: str
    location: str
    reason: str

    def __init__(self, *, operation: str, location: str, reason: str) -> None:
        super().__init__(f"{operation} failed on {location}: {reason}")
        self.operation = operation
        self.location = location
        self.reason = reason


class SchemaVersionError(StoreError):
    """The database's schema is newer than this library knows; it is refused, never written.

    A newer weakincentives migrated it. Upgrade the library in this process.
    """

    location: str
    found: int
    supported: int

    def __init__(self, *, location: str, found: int, supported: int) -> None:
        super().__init__(
            f"the store at {location} has schema version {found}, but this version of "
            f"weakincentives knows versions up to {supported}: upgrade weakincentives"
        )
        self.location = location
        self.found = found
        self.supported = supported


class FormatVersionError(StoreError):
    """A stored row was written in a newer document format than this store reads.

    ``record`` names the row (``event 3 of session 's1'``); the row is refused rather
    than misread.
    """

    record: str
    found: int
    supported: int

    def __init__(self, *, record: str, found: int, supported: int) -> None:
        super().__init__(
            f"{record} is in document format {found}, but this store reads formats up to "
            f"{supported}: it was written by a newer weakincentives"
        )
        self.record = record
        self.found = found
        self.supported = supported


class DocumentError(StoreError):
    """A document given to a store is not JSON it can keep (NaN, a set, a lone surrogate).

    ``record`` names where it was going (``event 2 of the batch for session 's1'``).
    """

    record: str
    reason: str

    def __init__(self, *, record: str, reason: str) -> None:
        super().__init__(f"{record} is not storable JSON: {reason}")
        self.record = record
        self.reason = reason


class StoredRowError(StoreError):
    """A stored row does not read back as the store writes it; it is refused, not misread.

    The row was changed outside the store (a hand edit, another program): its document
    does not decode, or a column holds what the store never writes. ``record`` names the
    row (``event 3 of session 's1'``), ``reason`` what is wrong with it.
    """

    record: str
    reason: str

    def __init__(self, *, record: str, reason: str) -> None:
        super().__init__(f"{record} cannot be read: {reason} (was it changed outside the store?)")
        self.record = record
        self.reason = reason


class CheckpointConflictError(StoreError):
    """A checkpoint older than the stored one was saved: a stale writer lost the race.

    Rounds only move forward, so a process resumed elsewhere is never overwritten by
    one that was presumed dead.
    """

    evaluation_id: str
    round: int
    stored_round: int

    def __init__(self, *, evaluation_id: str, round: int, stored_round: int) -> None:
        super().__init__(
            f"evaluation {evaluation_id!r}: cannot save round {round}, the store already "
            f"holds round {stored_round} (checkpoints only move forward)"
        )
        self.evaluation_id = evaluation_id
        self.round = round
        self.stored_round = stored_round


class ApprovalConflictError(StoreError):
    """A tool call's approval was already decided differently; the first decision stands."""

    evaluation_id: str
    call_id: str
    decision: str
    stored_decision: str

    def __init__(
        self, *, evaluation_id: str, call_id: str, decision: str, stored_decision: str
    ) -> None:
        if decision == stored_decision:
            clash = f"already {stored_decision} with another message"
        else:
            clash = f"already {stored_decision}, it cannot now be {decision}"
        super().__init__(
            f"evaluation {evaluation_id!r}: call {call_id!r} was {clash} (a decision is final)"
        )
        self.evaluation_id = evaluation_id
        self.call_id = call_id
        self.decision = decision
        self.stored_decision = stored_decision


class UnknownApprovalError(StoreError, KeyError):
    """A decision named a call for which no approval was requested.

    Also a ``KeyError``, as a missing mapping key would be.
    """

    evaluation_id: str
    call_id: str

    def __init__(self, *, evaluation_id: str, call_id: str) -> None:
        super().__init__(
            f"evaluation {evaluation_id!r} has no approval request for call {call_id!r}"
        )
        self.evaluation_id = evaluation_id
        self.call_id = call_id

    def __str__(self) -> str:
        # KeyError would quote the message; the library's errors read as plain text.
        return self.message
