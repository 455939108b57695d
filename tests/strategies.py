"""Hypothesis strategies shared by the whole suite.

- ``json_values()``: any JSON document (no NaN/infinity), kept small.
- ``trapped_json_texts()``: JSON texts holding what a decoder must refuse:
  nesting far beyond any limit, integers beyond Python's digit limit, NaN and
  Infinity, numbers that overflow a double, lone surrogates.
- ``hostile_json_texts()``: those, plus broken syntax and arbitrary text.
- ``hostile_json_values()``: JSON-shaped Python data with the same traps (deep
  nesting, huge integers, non-finite floats, non-string keys).
- ``values_of(tp)``: values of a type hint, honouring serde field metadata
  (``ge``/``gt``/``le``/``lt``, ``min_length``/``max_length``, ``pattern``), so
  generated dataclass instances are valid inputs for ``dump``.
- ``field_types()`` and ``dataclass_types()``: random type hints and dataclass
  types built with ``make_dataclass`` from them.
- ``typed_values()``: values ``dump_typed`` stores with their types: scalars, dates,
  times, UUIDs, Decimals, enums, paths, lists, tuples, sets, frozensets, dicts with
  str or other keys, read-only mappings, and (through ``wrap``) dataclass instances;
  ``stored_values()`` wraps them in a generic and an open dataclass.
- ``tool_results()``, ``tool_invocations()`` and ``recorded_events()``: what an
  evaluation records: every library event kind, hosted outputs and a user's event.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta, timezone
from decimal import Decimal
from enum import Enum, IntEnum, StrEnum
from pathlib import PurePath, PurePosixPath
from types import GenericAlias, MappingProxyType
from typing import Annotated, Any, Literal, get_args, get_origin, get_type_hints
from uuid import UUID

from hypothesis import strategies as st

from weakincentives.discovery import (
    DiscoveryCalled,
    DiscoveryExpanded,
    DiscoveryFailed,
    DiscoverySearched,
)
from weakincentives.prompt import (
    OpenedSections,
    OpenSectionsResult,
    SectionVisibility,
    ToolResult,
)
from weakincentives.runtime import (
    OutputRejected,
    PromptExecuted,
    PromptFailed,
    PromptRendered,
    RequestRetried,
    TextDelta,
    TokenUsage,
    ToolInvoked,
)
from weakincentives.serde import JSONValue
from weakincentives.tools import CodeInterpreterResult, WebSearchResult

__all__ = [
    "Color",
    "Envelope",
    "LookupQuery",
    "Parcel",
    "ParcelShipped",
    "Priority",
    "dataclass_types",
    "field_types",
    "hostile_json_texts",
    "hostile_json_values",
    "json_values",
    "recorded_events",
    "stored_documents",
    "stored_values",
    "token_usage",
    "tool_invocations",
    "tool_results",
    "trapped_json_texts",
    "typed_values",
    "values_of",
]

type Strategy = st.SearchStrategy[Any]


class Color(StrEnum):
    """A str-valued enum for generated field types."""

    RED = "red"
    GREEN = "green"


class Priority(IntEnum):
    """An int-valued enum for generated field types."""

    LOW = 1
    HIGH = 2


def json_values() -> Strategy:
    """Small JSON documents: scalars, arrays and objects, floats always finite."""
    scalars = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=8)
    )
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
        ),
        max_leaves=8,
    )


def stored_documents() -> Strategy:
    """JSON documents as a store receives them: any text, wide ints, extreme floats, nesting.

    Text is any Unicode but lone surrogates (which UTF-8 cannot carry), NUL and control
    characters included; integers reach far past 64 bits; floats include -0.0, subnormals
    and the largest doubles.
    """
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(min_value=-(10**40), max_value=10**40)
        | st.integers(min_value=-(2**63), max_value=2**64)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text()
    )
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
        max_leaves=24,
    )


_HUGE_DIGITS = 5000  # beyond Python's default limit of 4300 digits
# Tokens that sit where a JSON value goes but that JSON cannot carry back out.
_VALUE_TRAPS = [
    "NaN",
    "Infinity",
    "-Infinity",
    "1e999",
    "-2e308",
    "1" * _HUGE_DIGITS,
    "-" + "9" * _HUGE_DIGITS,
    "0." + "1" * _HUGE_DIGITS,
    '"\\ud800"',
    '"x\\udc00"',
    '"\\ud83d\\ude00"',
    '"\\\\ud800"',
    '"\ud800"',
    '"[[[{{{"',
]
# Fragments that break the syntax.
_SYNTAX_TRAPS = ['"\\x"', "tru", "01", "[", "]", "{", "}", ",", ":", '"', "\\"]


def _deep(depth: int, opener: str, closer: str, core: str) -> str:
    return opener * depth + core + closer * depth


def trapped_json_texts() -> Strategy:
    """Syntactically plain JSON texts holding value traps, some nested thousands deep."""
    token = st.sampled_from(_VALUE_TRAPS) | json_values().map(json.dumps)
    composed = st.recursive(
        token,
        lambda inner: (
            st.lists(inner, max_size=3).map(lambda items: "[" + ",".join(items) + "]")
            | st.lists(st.tuples(st.text(max_size=4), inner), max_size=3).map(
                lambda pairs: "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in pairs) + "}"
            )
        ),
        max_leaves=6,
    )
    deep = st.builds(
        _deep,
        st.integers(min_value=100, max_value=20_000),
        st.sampled_from(["[", '{"a":', '[{"k":[']),
        st.sampled_from(["]", "}", "]}]"]),
        composed,
    )
    return composed | deep


def hostile_json_texts() -> Strategy:
    """Text that is JSON, nearly JSON or a trap for a JSON decoder (see module docstring)."""
    broken = trapped_json_texts() | st.sampled_from(_SYNTAX_TRAPS)
    soup = st.lists(broken, min_size=1, max_size=4).map("".join)
    return trapped_json_texts() | soup | st.text(max_size=20)


def _nested(depth: int, core: object) -> object:
    for level in range(depth):
        core = [core] if level % 2 else {"k": core}
    return core


def hostile_json_values() -> Strategy:
    """JSON-shaped Python data with values JSON cannot carry (see module docstring)."""
    traps = st.sampled_from(
        [float("nan"), float("inf"), -float("inf"), 10**400, 1e308, "\ud800", "x" * 10_000]
    )
    # Built, not listed: Hypothesis reprs listed values, and repr() of these raises.
    huge = st.integers(min_value=_HUGE_DIGITS, max_value=_HUGE_DIGITS + 50).map(
        lambda digits: 7 * 10**digits
    )
    traps |= huge | huge.map(lambda value: -value)
    leaf = traps | json_values()
    shaped = st.recursive(
        leaf,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(st.text(max_size=4) | st.integers(), inner, max_size=3)
        ),
        max_leaves=6,
    )
    deep = st.builds(_nested, st.integers(min_value=100, max_value=1500), shaped)
    return shaped | deep


def values_of(hint: object) -> Strategy:
    """Values of ``hint`` that serde can dump; dataclass metadata is honoured."""
    return _strategy(hint, {}, {})


def _number_bounds(meta: Mapping[str, Any]) -> dict[str, Any]:
    bounds: dict[str, Any] = {}
    if "ge" in meta:
        bounds["min_value"] = meta["ge"]
    if "gt" in meta:
        bounds["min_value"] = meta["gt"]
        bounds["exclude_min"] = True
    if "le" in meta:
        bounds["max_value"] = meta["le"]
    if "lt" in meta:
        bounds["max_value"] = meta["lt"]
        bounds["exclude_max"] = True
    return bounds


def _sizes(meta: Mapping[str, Any]) -> tuple[int, int]:
    low: int = meta.get("min_length", meta.get("min_items", 0))
    high: int = meta.get("max_length", meta.get("max_items", 3))
    return low, max(low, high)


def _strategy(hint: object, meta: Mapping[str, Any], seen: dict[object, Strategy]) -> Strategy:
    origin, args = get_origin(hint), get_args(hint)
    if origin is Annotated:
        extras = getattr(hint, "__metadata__", ())
        extra = {k: v for m in extras if isinstance(m, Mapping) for k, v in m.items()}
        return _strategy(args[0], {**meta, **extra}, seen)
    if hint is Any or hint is object or hint is JSONValue:
        return json_values()
    if hint is None or hint is type(None):
        return st.none()
    if origin is typing.Union or origin is types.UnionType:
        return st.one_of(*(_strategy(arg, meta, seen) for arg in args))
    if origin is Literal:
        return st.sampled_from(args)
    if origin is not None:
        return _generic(origin, args, meta, seen)
    if not isinstance(hint, type):
        raise TypeError(f"no strategy for {hint!r}")
    if dataclasses.is_dataclass(hint):
        return _dataclass(hint, seen)
    return _scalar(hint, meta)


def _scalar(hint: type, meta: Mapping[str, Any]) -> Strategy:
    if issubclass(hint, Enum):
        return st.sampled_from(list(hint))
    if hint is bool:
        return st.booleans()
    if hint is int:
        low: int | None = meta.get("ge", None if "gt" not in meta else meta["gt"] + 1)
        high: int | None = meta.get("le", None if "lt" not in meta else meta["lt"] - 1)
        return st.integers(min_value=low, max_value=high)
    if hint is float:
        return st.floats(allow_nan=False, allow_infinity=False, **_number_bounds(meta))
    if hint is str:
        if "pattern" in meta:
            return st.from_regex(meta["pattern"])
        low, high = _sizes(meta)
        return st.text(min_size=low, max_size=max(high, 8))
    if hint is Decimal:
        return st.decimals(allow_nan=False, allow_infinity=False, places=3)
    if hint is datetime:
        return st.datetimes(timezones=st.none() | st.just(UTC))
    if hint is date:
        return st.dates()
    if hint is time:
        return st.times()
    if hint is UUID:
        return st.uuids()
    if issubclass(hint, PurePath):
        return st.builds(hint, st.text(alphabet="ab/.", max_size=6))
    raise TypeError(f"no strategy for {hint!r}")


def _generic(
    origin: object, args: tuple[Any, ...], meta: Mapping[str, Any], seen: dict[object, Strategy]
) -> Strategy:
    low, high = _sizes(meta)
    if origin is list:
        return st.lists(_strategy(args[0], {}, seen), min_size=low, max_size=high)
    if origin is tuple or origin is Sequence:
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return st.tuples(*(_strategy(arg, {}, seen) for arg in args))
        return st.lists(_strategy(args[0], {}, seen), min_size=low, max_size=high).map(tuple)
    if origin is set or origin is frozenset:
        items = st.frozensets(_strategy(args[0], {}, seen), min_size=low, max_size=high)
        return items if origin is frozenset else items.map(set)
    if origin is dict or origin is Mapping:
        values = _strategy(args[1], {}, seen)
        return st.dictionaries(st.text(max_size=5), values, min_size=low, max_size=high)
    raise TypeError(f"no strategy for {origin!r}")


def _dataclass(cls: type, seen: dict[object, Strategy]) -> Strategy:
    if cls in seen:
        return seen[cls]
    hints = get_type_hints(cls, include_extras=True)

    def build() -> Strategy:
        fields = {
            field.name: _strategy(hints[field.name], field.metadata, seen)
            for field in dataclasses.fields(cls)
            if field.init
        }
        return st.builds(cls, **fields)

    seen[cls] = st.deferred(build)
    return seen[cls]


_LEAVES: tuple[object, ...] = (
    bool,
    int,
    float,
    str,
    Decimal,
    UUID,
    date,
    datetime,
    time,
    PurePosixPath,
    Color,
    Priority,
    Literal["a", "b"],
    Any,
)
_HASHABLE_LEAVES: tuple[object, ...] = (bool, int, str, date, UUID, Color, Literal["a", "b"])


def field_types() -> Strategy:
    """Type hints serde supports, nested a little, with unambiguous unions only."""
    leaves = st.sampled_from(_LEAVES)

    def extend(inner: Strategy) -> Strategy:
        return st.one_of(
            inner.map(lambda hint: hint | None),
            inner.map(lambda hint: GenericAlias(list, (hint,))),
            inner.map(lambda hint: GenericAlias(tuple, (hint, ...))),
            inner.map(lambda hint: GenericAlias(dict, (str, hint))),
            st.tuples(inner, inner).map(lambda pair: GenericAlias(tuple, pair)),
            st.sampled_from(_HASHABLE_LEAVES).map(lambda hint: GenericAlias(frozenset, (hint,))),
        )

    return st.recursive(leaves, extend, max_leaves=3)


_names = itertools.count()


@st.composite
def dataclass_types(draw: st.DrawFn) -> type:
    """A fresh dataclass type (via make_dataclass) with 0-4 random fields."""
    hints = draw(st.lists(field_types(), max_size=4))
    frozen = draw(st.booleans())
    specs: list[tuple[str, object]] = [(f"f{index}", hint) for index, hint in enumerate(hints)]
    return dataclasses.make_dataclass(f"Generated{next(_names)}", specs, frozen=frozen)


def _zones() -> Strategy:
    offsets = st.integers(min_value=-23 * 60, max_value=23 * 60).map(
        lambda minutes: timezone(timedelta(minutes=minutes))
    )
    return st.none() | st.just(UTC) | offsets


def _typed_leaves() -> Strategy:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=6),
        st.datetimes(timezones=_zones()),
        st.dates(),
        st.times(),
        st.uuids(),
        st.decimals(allow_nan=False, allow_infinity=False),
        st.sampled_from(list(Color) + list(Priority)),
        st.builds(PurePosixPath, st.text(alphabet="ab/.", max_size=6)),
    )


def _hashables() -> Strategy:
    scalars = st.integers() | st.text(max_size=4) | st.sampled_from(list(Color)) | st.dates()
    return scalars | st.tuples(scalars, scalars)


def typed_values(wrap: Callable[[Strategy], Strategy] | None = None) -> Strategy:
    """Values of every kind typed values keep apart; ``wrap`` adds dataclasses around them."""

    def extend(inner: Strategy) -> Strategy:
        options = [
            st.lists(inner, max_size=3),
            st.lists(inner, max_size=3).map(tuple),
            st.frozensets(_hashables(), max_size=3),
            st.sets(_hashables(), max_size=3),
            st.dictionaries(st.text(max_size=4), inner, max_size=3),
            st.dictionaries(_hashables(), inner, max_size=3),
            st.dictionaries(st.text(max_size=4), inner, max_size=3).map(MappingProxyType),
        ]
        if wrap is not None:
            options.append(wrap(inner))
        return st.one_of(*options)

    return st.recursive(_typed_leaves(), extend, max_leaves=8)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Envelope[T]:
    """A generic dataclass around generated values."""

    item: T
    note: str = ""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Parcel:
    """A dataclass with an open field."""

    label: str
    contents: object = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LookupQuery:
    """A tool's params dataclass."""

    query: str
    limit: int = 10


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ParcelShipped:
    """A user's own event, with an open payload."""

    parcel_id: str
    carrier: str | None = None
    details: object = None


_short = st.text(max_size=8)


def _wrapped(inner: Strategy) -> Strategy:
    return st.builds(Envelope, item=inner, note=_short) | st.builds(
        Parcel, label=_short, contents=inner
    )


def stored_values() -> Strategy:
    """``typed_values()`` with generic and open dataclasses around them, nested."""
    return typed_values(_wrapped)


def token_usage() -> Strategy:
    """Token counts of an evaluation."""
    counts = st.integers(min_value=0, max_value=10**9)
    return st.builds(
        TokenUsage,
        input_tokens=counts,
        output_tokens=counts,
        cached_input_tokens=counts,
        reasoning_tokens=counts,
        cache_write_tokens=counts,
    )


_times = st.datetimes(timezones=st.none() | st.just(UTC))
_sessions = st.none() | st.uuids()
_paths = st.lists(_short, max_size=3).map(tuple)
_counts = st.integers(min_value=0, max_value=10**9)


def _json_mappings() -> Strategy:
    return st.dictionaries(_short, json_values(), max_size=2).map(MappingProxyType)


def _visibility() -> Strategy:
    return st.dictionaries(_paths, st.sampled_from(SectionVisibility), max_size=3).map(
        MappingProxyType
    )


def _disclosures() -> Strategy:
    """What ``open_sections`` returns: results keyed by section paths."""
    return st.builds(
        OpenSectionsResult,
        requested_overrides=_visibility(),
        reason=_short,
        visibility_state=_visibility(),
    ) | st.builds(
        OpenedSections,
        contents=st.dictionaries(_paths, _short, max_size=2).map(MappingProxyType),
        reason=_short,
        visibility_state=_visibility(),
    )


def tool_results() -> Strategy:
    """Tool results with any storable payload (open_sections' included), successful or not."""
    return st.builds(
        ToolResult,
        message=_short,
        value=stored_values() | _disclosures(),
        success=st.booleans(),
        exclude_value_from_context=st.booleans(),
    )


def tool_invocations() -> Strategy:
    """``ToolInvoked`` events with params, results, telemetry and, sometimes, an exception."""
    return st.builds(
        ToolInvoked,
        evaluation_id=_short,
        prompt_name=_short,
        adapter=_short,
        session_id=_sessions,
        name=_short,
        call_id=_short,
        arguments=json_values(),
        params=st.none() | st.builds(LookupQuery, query=_short, limit=st.integers()),
        result=tool_results(),
        rendered_output=_short,
        started_at=_times,
        finished_at=_times,
        telemetry=_json_mappings(),
        exception=st.none() | st.builds(ValueError, _short) | st.builds(KeyError, _short),
    )


def recorded_events() -> Strategy:
    """Every event kind the library publishes, hosted-tool outputs, and a user's event."""
    return st.one_of(
        st.builds(
            PromptRendered,
            evaluation_id=_short,
            prompt_ns=_short,
            prompt_key=_short,
            prompt_name=_short,
            adapter=_short,
            session_id=_sessions,
            text=st.text(),
            tool_names=st.lists(_short, max_size=3).map(tuple),
            hosted_tool_names=st.lists(_short, max_size=2).map(tuple),
            visibility=st.dictionaries(_paths, st.sampled_from(SectionVisibility), max_size=3).map(
                MappingProxyType
            ),
            created_at=_times,
        ),
        tool_invocations(),
        st.builds(
            PromptExecuted,
            evaluation_id=_short,
            prompt_name=_short,
            adapter=_short,
            session_id=_sessions,
            text=_short,
            output=stored_values(),
            tool_call_count=_counts,
            rounds=_counts,
            halted=st.booleans(),
            usage=token_usage(),
            started_at=_times,
            finished_at=_times,
            model=st.none() | _short,
        ),
        st.builds(
            PromptFailed,
            usage=token_usage(),
            session_id=_sessions,
            started_at=_times,
            failed_at=_times,
        ),
        st.builds(TextDelta, text=st.text()),
        st.builds(OutputRejected),
        st.builds(
            RequestRetried,
            delay=st.floats(min_value=0, max_value=60, allow_nan=False),
            status_code=st.none() | st.integers(400, 599),
        ),
        st.builds(
            DiscoverySearched, path=_paths, node_paths=st.lists(_paths, max_size=2).map(tuple)
        ),
        st.builds(DiscoveryExpanded),
        st.builds(DiscoveryCalled, arguments=_json_mappings()),
        st.builds(DiscoveryFailed, path=st.none() | _paths),
        st.builds(
            ParcelShipped, parcel_id=_short, carrier=st.none() | _short, details=stored_values()
        ),
        st.builds(WebSearchResult),
        st.builds(CodeInterpreterResult),
    )
