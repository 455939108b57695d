r"""One JSON decoder for untrusted text: tool arguments from the model, replies from providers.

It is the standard library's C decoder plus a few cheap checks, so that nothing a
model or a provider sends can raise anything but :class:`ParseError`, and nothing
it returns can break later encoding (``json.dumps(..., allow_nan=False)``, UTF-8):

- nesting deeper than :data:`MAX_JSON_DEPTH` arrays/objects is refused (no
  ``RecursionError``, here or in whatever walks the value later);
- ``NaN``/``Infinity``/``-Infinity`` are refused (they are not JSON), and so are
  numbers too large for a double (``1e999``), which would decode to infinity;
- integer literals longer than Python's digit limit
  (``sys.get_int_max_str_digits()``, 4300 by default) are refused;
- invalid UTF-8 in bytes, and lone surrogates (raw or as ``\ud800`` escapes),
  are refused: UTF-8 cannot encode them, so they could not be sent on.

Each check is a C-speed pass (``bytes.translate``, a substring search, one regular
expression with a literal prefix) that only runs when the text could fail it;
``benchmarks/bench_loads.py`` measures what they cost.
"""

from __future__ import annotations

import json
import re
import sys
from typing import cast

from weakincentives._bounded import clip
from weakincentives.errors import ParseError
from weakincentives.serde._failure import describe
from weakincentives.serde._json import JSONValue

__all__ = ["MAX_JSON_DEPTH", "decode", "loads"]

MAX_JSON_DEPTH = 128
"""Deepest nesting of arrays and objects :func:`loads` accepts (``[[1]]`` is 2 deep).

The same limit as serde_json's default. Legitimate tool arguments and provider
replies stay far below it, and it keeps every recursive walk of a decoded value
(parsing, dumping, encoding, ``repr``) well inside Python's recursion limit.
"""


class _DecodeError(Exception):
    """Why a text was refused, in the terms of a ParseError (internal to serde)."""

    def __init__(self, got: str, expected: str = "valid JSON") -> None:
        super().__init__(got)
        self.got = got
        self.expected = expected

    def to_error(self, dataclass_type: type[object] | None = None) -> ParseError:
        """The public error, at path ``$``."""
        return ParseError(
            path="$", expected=self.expected, got=self.got, dataclass_type=dataclass_type
        )


class _RefusedError(ValueError):
    """Raised from the decoder's hooks; carries the token it refused."""

    def __init__(self, token: str, template: str) -> None:
        super().__init__(token)
        self.token = token
        self.template = template


def _constant(name: str) -> object:
    raise _RefusedError(name, "invalid JSON ({token} is not a JSON number{where})")


def _finite_float(text: str) -> float:
    value = float(text)
    if value - value == 0.0:  # false for infinity (and NaN, which float() never makes here)
        return value
    raise _RefusedError(text, "number {token} (too large for a double{where})")


# Floats of long text go through the C fast path, and only text that could hold an
# overflowing number is decoded again with the checking hook (see _may_overflow). Text
# up to _HOOKED characters (most tool arguments) goes straight through the hook: its
# few floats cost less than the filter's passes.
_HOOKED = 4096
_DECODER = json.JSONDecoder(parse_constant=_constant)
_CHECKING_DECODER = json.JSONDecoder(parse_constant=_constant, parse_float=_finite_float)

# Skips JSON strings so that a token is only found where the decoder would read it.
_STRING = r'"(?:[^"\\]|\\.)*"'
# Exact, for text where backslashes precede a "\u": pairs and escaped backslashes consumed.
_ESCAPES = re.compile(
    r"\\\\"
    r"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    r"|(?P<lone>\\u[dD][89a-fA-F][0-9a-fA-F]{2})"
)
# Exact when every "\u" is a real escape: a high half not followed by a low one, or a
# low half not preceded by a high one. Its literal prefix makes the search fast.
_LONE = re.compile(
    r"\\u[dD](?:[89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD])[c-fC-F][0-9a-fA-F]{2})"
)
_BRACKETS_ONLY = bytes(byte for byte in range(256) if byte not in b'[]{}"')
_SAME_BRACKETS = bytes.maketrans(b"{}", b"[]")
_STRINGS = re.compile(rb'"[^"]*"')
# Digits become 0, exponent marks e, plus stays, everything else a space.
_NUMBER_SHAPES = bytes.maketrans(
    bytes(range(256)),
    bytes(
        ord("0") if byte in b"0123456789" else byte if byte in b"e+" else
        ord("e") if byte == ord("E") else ord(" ")
        for byte in range(256)
    ),
)  # fmt: skip
# A double overflows only past 1.8e308: an exponent of 3+ digits, or (with at most two
# exponent digits) an integer part of more than 308 - 99 digits.
_LONG_MANTISSA = b"0" * 200
_BIG_EXPONENT = re.compile(rb"e\+?000")  # its literal prefix "e" makes the search fast


def _where(source: str, index: int) -> str:
    line = source.count("\n", 0, index) + 1
    column = index - source.rfind("\n", 0, index)
    return f"line {line} column {column}"


def _locate(source: str, token: str) -> str:
    """`` at line L column C`` of ``token``'s first use as a value outside strings."""
    pattern = re.compile(f"{_STRING}|(?<![0-9.eE+-])({re.escape(token)})(?![0-9.eE+-])")
    for match in pattern.finditer(source):
        if match.group(1) is not None:
            return f" at {_where(source, match.start(1))}"
    return ""


def _long_integer(source: str) -> str:
    """The first integer literal beyond Python's digit limit, described (error path)."""
    limit = sys.get_int_max_str_digits()
    pattern = re.compile(f"{_STRING}|-?([0-9]{{{limit + 1},}})(?![0-9.eE])")
    for match in pattern.finditer(source):
        if match.group(1) is not None:
            digits = len(match.group(1))
            return (
                f"an integer of {digits:,} digits (Python reads at most {limit:,}; "
                f"{_where(source, match.start())})"
            )
    return f"an integer of more than {limit:,} digits"


def _may_overflow(encoded: bytes) -> bool:
    """Whether the text could hold a number too large for a double (false alarms are fine)."""
    shapes = encoded.translate(_NUMBER_SHAPES)
    # bytes.find, not "in": on CPython 3.13 "in" costs several times more on short bytes.
    return _BIG_EXPONENT.search(shapes) is not None or shapes.find(_LONG_MANTISSA) >= 0


def _too_deep(encoded: bytes) -> bool:
    """Whether valid JSON text nests arrays/objects deeper than MAX_JSON_DEPTH.

    Escapes and the contents of strings are dropped, the brackets that remain are
    normalised to ``[]``, and each ``replace("[]", "")`` pass removes one level of
    leaves: text still left after MAX_JSON_DEPTH passes is nested deeper.
    """
    if encoded.find(b"\\") >= 0:
        encoded = encoded.replace(b"\\\\", b"").replace(b'\\"', b"")
    # Adjacent quotes pair up correctly even across two strings: no bracket sits between.
    brackets = encoded.translate(_SAME_BRACKETS, _BRACKETS_ONLY).replace(b'""', b"")
    if brackets.find(b'"') >= 0:
        brackets = _STRINGS.sub(b"", brackets)
    for _ in range(MAX_JSON_DEPTH):
        if not brackets:
            return False
        brackets = brackets.replace(b"[]", b"")
    return bool(brackets)


def _lone_surrogate(source: str) -> str | None:
    """Describe the first lone surrogate escape in the text, if it has one."""
    if "\\\\u" in source:  # some "\u" may follow an escaped backslash: scan exactly
        found = next((m for m in _ESCAPES.finditer(source) if m.group("lone")), None)
        start = None if found is None else found.start("lone")
    else:
        found = _LONE.search(source)
        start = None if found is None else found.start()
    if start is None:
        return None
    escape = source[start : start + 6]
    return f"a lone surrogate escape {escape} (UTF-8 cannot encode it; {_where(source, start)})"


def _utf8(text: str) -> bytes:
    """``text`` as UTF-8; a raw lone surrogate (which UTF-8 cannot hold) is refused."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as error:
        code = ord(text[error.start])
        raise _DecodeError(
            f"a lone surrogate U+{code:04X} (UTF-8 cannot encode it; {_where(text, error.start)})"
        ) from None


def _text_of(text: object) -> tuple[str, bytes | None]:
    """The text as str, and as UTF-8 bytes when that is at hand or had to be checked."""
    if isinstance(text, str):
        return text, None if text.isascii() else _utf8(text)
    if not isinstance(text, bytes | bytearray):
        raise _DecodeError(describe(text), expected="JSON text (str or bytes)")
    raw = bytes(text)
    encoding = json.detect_encoding(raw)
    try:
        source = raw.decode(encoding)  # strict: no invalid bytes, no encoded surrogates
    except UnicodeDecodeError as error:
        reason = clip(error.reason)
        raise _DecodeError(f"undecodable bytes ({reason} at byte {error.start})") from None
    return source, raw if encoding.startswith("utf-8") else None


def _decoded(decoder: json.JSONDecoder, source: str) -> JSONValue:
    # Fast path: the decoder's own scanner, without decode()'s two whitespace regex
    # matches. Anything unusual (leading space, trailing data, any error) goes the
    # standard way below, which gives the same value or says exactly what is wrong.
    try:
        scanned, end = vars(decoder)["scan_once"](source, 0)
    except Exception:  # re-decoded below, which names the problem in a ParseError
        pass
    else:
        if end == len(source) or source[end:].isspace():
            return cast(JSONValue, scanned)
    try:
        value: JSONValue = decoder.decode(source)
    except json.JSONDecodeError as error:
        raise _DecodeError(
            f"invalid JSON ({error.msg} at line {error.lineno} column {error.colno})"
        ) from None
    except _RefusedError as error:
        where = _locate(source, error.token)
        raise _DecodeError(error.template.format(token=clip(error.token), where=where)) from None
    except RecursionError:
        raise _DecodeError(f"JSON nested more than {MAX_JSON_DEPTH} levels deep") from None
    except ValueError:  # the only other ValueError: an integer beyond the digit limit
        raise _DecodeError(_long_integer(source)) from None
    return value


def decode(text: object) -> JSONValue:
    """Decode untrusted JSON text; raises :class:`_DecodeError` saying why not."""
    if text.__class__ is str:  # the common case, without a call
        source = text
        encoded = None if source.isascii() else _utf8(source)
    else:
        source, encoded = _text_of(text)
    if len(source) <= _HOOKED:
        value = _decoded(_CHECKING_DECODER, source)
    else:
        value = _decoded(_DECODER, source)
        encoded = source.encode("utf-8") if encoded is None else encoded  # cannot fail now
        if _may_overflow(encoded):
            _decoded(_CHECKING_DECODER, source)
    # Nesting deeper than the limit needs more than 2 * MAX_JSON_DEPTH brackets.
    if len(source) > 2 * MAX_JSON_DEPTH and source.count("[") + source.count("{") > MAX_JSON_DEPTH:
        encoded = source.encode("utf-8") if encoded is None else encoded
        if _too_deep(encoded):
            raise _DecodeError(f"JSON nested more than {MAX_JSON_DEPTH} levels deep")
    # A one-character search runs at memchr speed, several times faster than "\\u"'s;
    # most text has no backslash at all.
    if "\\" in source and ("\\ud" in source or "\\uD" in source):
        problem = _lone_surrogate(source)
        if problem is not None:
            raise _DecodeError(problem)
    return value


def loads(text: str | bytes | bytearray) -> JSONValue:
    """Decode JSON text from an untrusted source; only ever raises ParseError.

    ``text`` is a str or UTF-8/16/32 bytes (as :func:`json.loads` reads them).
    Besides malformed JSON, refuses nesting deeper than :data:`MAX_JSON_DEPTH`,
    ``NaN``/``Infinity``, numbers that overflow a double, integer literals beyond
    Python's digit limit, invalid UTF-8 and lone surrogates. The ParseError has
    path ``$``, ``expected="valid JSON"`` and says what was wrong and where
    (line and column, or byte offset).
    """
    try:
        return decode(text)
    except _DecodeError as error:
        raise error.to_error() from None
