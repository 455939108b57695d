"""Stored documents: a typed value inside an envelope that names its kind and format version.

A document is JSON text ``{"kind": ..., "version": ..., "body": ...}``; the body is
the value as :func:`~weakincentives.serde.dump_typed` writes it. Each
:class:`DocumentKind` says which format version this library writes and how an
older body is upgraded, one version at a time, so an old document either loads or
is refused with a :class:`~weakincentives.errors.UnreadableDocumentError` naming both
versions; it is never read as if it had the current shape.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import cast

from weakincentives._bounded import clip, exception_text, quote
from weakincentives.errors import ConfigValidationError, ParseError, UnreadableDocumentError
from weakincentives.serde._failure import describe
from weakincentives.serde._json import JSONValue
from weakincentives.serde._typed import decode_value, encode_value

__all__ = ["DocumentKind", "dump_document", "load_document"]

type Upgrade = Callable[[JSONValue], JSONValue]
"""Turns the body of a version ``n`` document into the body of version ``n + 1``."""

_ENVELOPE = ("kind", "version", "body")


@dataclass(frozen=True, slots=True, kw_only=True)
class DocumentKind[T]:
    """A kind of stored document: what it holds and which format versions can be read.

    Bump ``version`` whenever the stored shape of ``value_type`` changes (a field
    renamed, removed or given another type), and add ``upgrades[old]`` turning an
    ``old`` body into an ``old + 1`` one. Adding a field with a default needs no new
    version: older bodies load with the default.
    """

    name: str
    """Identifies the kind in the document, e.g. ``"weakincentives.session_snapshot"``."""
    value_type: type[T]
    """The declared type of the body (``object`` for any typed value)."""
    version: int = 1
    """The format version this library writes; documents newer than it are refused."""
    upgrades: Mapping[int, Upgrade] = field(default_factory=lambda: MappingProxyType({}))
    """``upgrades[n]`` upgrades a version ``n`` body to version ``n + 1`` (plain JSON in, out)."""

    def __post_init__(self) -> None:
        problems: list[str] = []
        if not isinstance(self.name, str) or not self.name:
            problems.append(f"name must be a non-empty string, got {self.name!r}")
        if type(self.version) is not int or self.version < 1:
            problems.append(f"version must be an integer >= 1, got {self.version!r}")
        else:
            stray = [
                key for key in self.upgrades if type(key) is not int or not 1 <= key < self.version
            ]
            if stray:
                problems.append(
                    "upgrades must be keyed by the version they upgrade from "
                    f"(1 to {self.version - 1}), got {', '.join(map(repr, stray))}"
                )
        uncallable = [key for key, step in self.upgrades.items() if not callable(step)]
        if uncallable:
            problems.append(f"upgrades {', '.join(map(repr, uncallable))} are not callable")
        if problems:
            raise ConfigValidationError(
                f"DocumentKind {self.name!r}: " + "; ".join(problems), config_type=DocumentKind
            )

    @property
    def oldest_readable(self) -> int:
        """The oldest version whose upgrades reach ``version`` without a gap."""
        oldest = self.version
        while oldest - 1 in self.upgrades:
            oldest -= 1
        return oldest


def dump_document[T](kind: DocumentKind[T], value: T) -> str:
    """``value`` as JSON text in a ``kind`` envelope at the current format version.

    The text is always UTF-8 encodable (lone surrogates are escaped). Raises
    SchemaError, with the path under ``$.body``, for a value that cannot be stored.
    """
    body = encode_value(value, kind.value_type, (".body",))
    envelope = {"kind": kind.name, "version": kind.version, "body": body}
    text = json.dumps(envelope, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: keep it, escaped
            text = json.dumps(envelope, allow_nan=False, separators=(",", ":"))
    return text


def load_document[T](kind: DocumentKind[T], document: str | bytes | Mapping[str, object]) -> T:
    """The value a ``kind`` document holds, upgraded from an older format version if needed.

    ``document`` is the text :func:`dump_document` wrote (``str`` or UTF-8 ``bytes``), or
    that envelope already decoded (as a JSON database column returns it). Raises
    ParseError for text that is not a document (with its JSON path),
    UnreadableDocumentError for another kind or a version this library cannot read, and
    UnknownTypeError for a type name that does not resolve.
    """
    envelope = document if isinstance(document, Mapping) else _decoded(document)
    found_kind, version, body = _opened(envelope)
    readable = (kind.oldest_readable, kind.version)

    def refused(message: str) -> UnreadableDocumentError:
        return UnreadableDocumentError(
            message, kind=kind.name, found_kind=found_kind, version=version, readable=readable
        )

    if found_kind != kind.name:
        raise refused(f"expected a {kind.name!r} document, got a {quote(found_kind, 200)} document")
    if version > kind.version:
        raise refused(
            f"{kind.name!r} document version {version} is newer than this library reads "
            f"(versions {_span(readable)}); load it with the version of weakincentives "
            "that wrote it, or a newer one"
        )
    if version < readable[0]:
        raise refused(
            f"{kind.name!r} document version {version} is too old: this library reads "
            f"versions {_span(readable)} and has no upgrade from version {version}"
        )
    for step in range(version, kind.version):
        try:
            body = kind.upgrades[step](body)
        except Exception as error:  # any failure of an upgrade is this document's problem
            raise refused(
                f"upgrading a {kind.name!r} document from version {step} to {step + 1} "
                f"failed: {exception_text(error)}"
            ) from error
    return cast(T, decode_value(body, kind.value_type, (".body",)))


def _decoded(text: str | bytes) -> object:
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        problem = "JSON nested too deeply"
    except (ValueError, TypeError) as error:  # JSONDecodeError and UnicodeDecodeError are too
        problem = f"invalid JSON ({clip(str(error), 120)})"
    raise ParseError(path="$", expected="a JSON document", got=problem)


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def _opened(envelope: object) -> tuple[str, int, JSONValue]:
    if not isinstance(envelope, Mapping):
        raise ParseError(
            path="$", expected="a document object (kind, version, body)", got=describe(envelope)
        )
    for key in envelope:
        if key not in _ENVELOPE:
            raise ParseError(
                path="$",
                expected="only the members kind, version, body",
                got=f"unknown member {quote(str(key))}",
            )
    for key in _ENVELOPE:
        if key not in envelope:
            raise ParseError(path=f"$.{key}", expected="a value (required member)", got="nothing")
    found_kind, version = envelope["kind"], envelope["version"]
    if type(found_kind) is not str:
        raise ParseError(
            path="$.kind", expected="a document kind (string)", got=describe(found_kind)
        )
    if type(version) is not int or version < 1:
        raise ParseError(
            path="$.version", expected="a format version (integer >= 1)", got=describe(version)
        )
    return found_kind, version, cast(JSONValue, envelope["body"])


def _span(readable: tuple[int, int]) -> str:
    oldest, newest = readable
    return str(newest) if oldest == newest else f"{oldest} to {newest}"
