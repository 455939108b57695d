"""parse_json in one pass: the C decoder's scanner straight into a converter made for the type.

The reference route decodes with every check of :func:`loads` and then parses with
converters that locate each failure. This route is the same two steps with what the
type makes redundant left out, and it never reports anything itself: whenever the
text or the data is not what it expects, it gives up, and ``parse_json`` runs the
reference route, so every error (path, expected, got) is the reference's own.
Giving up costs one more decode and parse, on the failure path only.

What it leaves out, and why that cannot let through anything the reference refuses:

- **The float hook** that refuses numbers too large for a double (``1e999`` decodes
  to infinity). For a *closed* type, one with no ``Any``/``object`` in it parsed with
  ``extra="forbid"``, every decoded number reaches a check that refuses infinity
  (``int``, ``float``, ``Decimal``, ``JSONValue``, choices, every other leaf), and
  that refusal hands the text to the reference route, which names the overflow.
  Other types keep every check of ``loads``.
- **The depth pass**, for a type of bounded depth (no recursion, no ``JSONValue``):
  the data it accepts nests no deeper than the type, and text nested past Python's
  recursion limit makes the decoder raise, which also hands over.
- **Locating**: the converters keep no path segments.

Kept, as in ``loads``: ``NaN``/``Infinity`` (the decoder's constant hook, free),
integers past Python's digit limit (the decoder raises), trailing data, raw lone
surrogates in non-ASCII text, lone surrogate escapes.

**The decoder.** When ``jiter`` is installed (the ``openai`` and ``anthropic``
extras bring it; the ``speedups`` extra names it), a closed type of bounded depth is
read by jiter's ``from_json`` instead of the stdlib's scanner: the same values, in
about 40 % of the time. Where the two decoders differ, jiter refuses (lone surrogates, escaped or
encoded; a byte-order mark; nesting past 200; trailing space beyond JSON's four),
and a refusal hands over as any other. The one thing jiter accepts that the
stdlib refuses, an integer longer than Python's digit limit, cannot occur in text
no longer than that limit, so longer text is scanned by the stdlib's decoder.
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from collections.abc import Callable
from typing import assert_never, cast, get_origin

from weakincentives._codegen import generated_function
from weakincentives.serde._compile import Extra, compile_node, unlocated_body
from weakincentives.serde._failure import _ConversionError
from weakincentives.serde._loads import (
    _DECODER,
    MAX_JSON_DEPTH,
    _DecodeError,
    _lone_surrogate,
    _text_of,
    _too_deep,
    decode,
)
from weakincentives.serde._nodes import (
    AnyNode,
    ArrayNode,
    BoolNode,
    ChoiceNode,
    DataclassNode,
    DecimalNode,
    MapNode,
    Node,
    NoneNode,
    NumberNode,
    PathNode,
    StrNode,
    TemporalNode,
    TupleNode,
    UnionNode,
    UUIDNode,
)
from weakincentives.serde._reflect import Where, model_of, node_of

__all__ = ["MISS", "Route", "one_pass_route"]

MISS = object()
"""What a route returns when the reference route must decide."""

type Route = Callable[[object], object]

_SCAN = cast(
    Callable[[str, int], tuple[object, int]],
    vars(_DECODER)["scan_once"],  # the C scanner, without decode()'s whitespace matching
)
_UNBOUNDED = MAX_JSON_DEPTH + 1
_UNSAFE = re.compile(r"\W")
# The smallest digit limit Python allows (other than none): text this short cannot
# hold an integer Python would refuse to read.
_SHORT = 640


def _jiter_reader() -> Callable[..., object] | None:
    """The ``from_json`` of jiter, if it is installed and reads JSON as this route expects."""
    try:
        from jiter import from_json  # noqa: PLC0415 - optional: the speedups extra
    except ImportError:
        return None
    sample = b'{"a": [1, -2.5e3, "\\u00e9", true, null]}'
    try:
        read = from_json(sample, allow_inf_nan=False)
    except (TypeError, ValueError):  # a jiter too old for allow_inf_nan
        return None
    try:
        from_json(b"[NaN]", allow_inf_nan=False)
    except ValueError:
        return from_json if read == {"a": [1, -2500.0, "\u00e9", True, None]} else None
    return None  # NaN read after all


JITER = _jiter_reader()
"""jiter's reader when the one-pass route uses it; None when it is not installed."""


def one_pass_route(cls: object, extra: Extra) -> Route:
    """The one-pass route for ``cls``: text in, the parsed value or :data:`MISS` out.

    One function generated per type: the decoding steps the type needs, then, for
    a dataclass, the body of its parse function written in place (nested values
    go through the cached parsers that do not locate failures).
    """
    origin = get_origin(cls)
    namespace: dict[str, object] = {
        "_MISS": MISS,
        "_CE": _ConversionError,
        "_scan": _SCAN,
        "_text": _plain_text,
        "_too_deep": _too_deep,
        "_lone": _lone_surrogate,
        "_decode": decode,
        "_DE": _DecodeError,
        "_jiter": JITER,
        "_fits": _digits_fit,
        "_scan_whole": _scan_whole,
    }
    if dataclasses.is_dataclass(cls) or dataclasses.is_dataclass(origin):
        node: Node = DataclassNode(key=cls)
        model, constants, body = unlocated_body(cls, extra)
        namespace.update(constants)
        body = ["if data.__class__ is not dict:", "    return _MISS", *body]
        name = "parse_json_" + _UNSAFE.sub("_", model.cls.__name__)
    else:
        node = node_of(cls, Where())
        namespace["_convert"] = compile_node(node, extra, located=False)
        body = ["return _convert(data)"]
        name = "parse_json_value"
    closed, depth = _reach(node, set())
    scan = extra == "forbid" and closed
    deep = depth > MAX_JSON_DEPTH
    prologue = _reading(jiter=JITER is not None and not deep, deep=deep) if scan else _DECODING
    lines = [
        f"def {name}(text):",
        *(f"    {line}" for line in prologue),
        "    try:",
        *(f"        {line}" for line in body),
        "    except (_CE, RecursionError):",
        "        return _MISS",
    ]
    shown = f"{cls.__module__}.{cls.__qualname__}" if isinstance(cls, type) else repr(cls)
    label = f"serde parse_json/{extra} {shown}"
    return generated_function("\n".join(lines) + "\n", name, namespace, label=label)


def _reading(*, jiter: bool, deep: bool) -> list[str]:
    """Lines that read ``text`` into ``data`` for a closed type (module docstring).

    ASCII str, the common case, is checked inline; other text by ``_plain_text``.
    jiter reads text of bounded depth (``_JITER_LINES``), the stdlib's scanner the rest.
    """
    lines = [
        "if text.__class__ is str and text.isascii():",
        "    source = text",
        "else:",
        "    source = _text(text)",
        "    if source is None:",
        "        return _MISS",
        *(_JITER_LINES if jiter else _SCAN_LINES),
    ]
    if deep:
        lines += [
            f"if len(source) > {2 * MAX_JSON_DEPTH} and (",
            f"    source.count('[') + source.count('{{') > {MAX_JSON_DEPTH}",
            ") and _too_deep(source.encode('utf-8')):",
            "    return _MISS",
        ]
    # jiter refuses lone surrogate escapes itself; the stdlib's scanner does not. The
    # one-character search first: it runs at memchr speed, "\\u"'s does not.
    backslash, high, upper_high = "\\", "\\ud", "\\uD"
    lines += [
        f"if {backslash!r} in source and ({high!r} in source or {upper_high!r} in source):",
        "    if _lone(source) is not None:",
        "        return _MISS",
    ]
    return lines


_SCAN_LINES = [
    "try:",
    "    data, end = _scan(source, 0)",
    "except Exception:  # whatever the decoder refuses, the reference route names",
    "    return _MISS",
    "if end != len(source) and not source[end:].isspace():",
    "    return _MISS",
]
_JITER_LINES = [
    "try:",
    f"    if len(source) <= {_SHORT} or _fits(len(source)):",
    "        data = _jiter(source.encode(), allow_inf_nan=False)",
    "    else:",
    "        data = _scan_whole(source)",
    "except Exception:  # whatever the decoders refuse, the reference route names",
    "    return _MISS",
]


def _digits_fit(length: int) -> bool:
    """Whether text of ``length`` characters is within Python's integer digit limit."""
    limit = sys.get_int_max_str_digits()
    return limit == 0 or length <= limit


def _scan_whole(source: str) -> object:
    """The stdlib's scanner over the whole of ``source``: trailing data raises."""
    data, end = _SCAN(source, 0)
    if end != len(source) and not source[end:].isspace():
        raise ValueError("trailing data")
    return data


_DECODING = [
    "try:",
    "    data = _decode(text)",
    "except _DE:",
    "    return _MISS",
]


def _plain_text(text: object) -> str | None:
    """Text the scanner can read as it is, or None when the reference route must look."""
    if isinstance(text, str):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a raw lone surrogate
            return None
        return text
    try:
        return _text_of(text)[0]
    except _DecodeError:
        return None


def _reach(node: Node, open_classes: set[object]) -> tuple[bool, int]:
    """Whether ``node`` is closed (see the module docstring), and how deep data it takes nests.

    The depth counts arrays and objects; anything unbounded is past ``MAX_JSON_DEPTH``.
    """
    match node:
        case AnyNode(json_only=json_only):
            return json_only, _UNBOUNDED
        case ChoiceNode(choices=choices):
            return all(_finite(wire) for wire, _ in choices), 0
        case (
            NoneNode()
            | BoolNode()
            | NumberNode()
            | DecimalNode()
            | StrNode()
            | TemporalNode()
            | UUIDNode()
            | PathNode()
        ):
            return True, 0
        case ArrayNode(item=item) | MapNode(value=item):
            closed, depth = _reach(item, open_classes)
            return closed, depth + 1
        case TupleNode(items=members):
            closed, depth = _widest(members, open_classes)
            return closed, depth + 1
        case UnionNode(members=members):
            return _widest(members, open_classes)
        case DataclassNode(key=key):
            if key in open_classes:
                return True, _UNBOUNDED  # recursive: the rest of the walk decides closedness
            open_classes.add(key)
            closed, depth = _widest(tuple(f.node for f in model_of(key).fields), open_classes)
            open_classes.discard(key)
            return closed, depth + 1
        case _:
            assert_never(node)


def _widest(nodes: tuple[Node, ...], open_classes: set[object]) -> tuple[bool, int]:
    reaches = [_reach(node, open_classes) for node in nodes]
    return all(closed for closed, _ in reaches), max((d for _, d in reaches), default=0)


def _finite(wire: object) -> bool:
    return not isinstance(wire, float) or math.isfinite(wire)
