"""The cassette file: recorded exchanges as one versioned, reviewable JSON document.

```json
{
  "format": "weakincentives.cassette",
  "version": 1,
  "provider": "openai",
  "exchanges": [
    {
      "round": 1,
      "fingerprint": "sha256:4f1c...",
      "request": {"input": [...], "model": "gpt-4.1-mini", ...},
      "deltas": ["Lis", "bon"],
      "reply_form": "json",
      "reply": {"id": "resp_1", "output": [...], ...}
    }
  ]
}
```

``request`` is the request as plain JSON with its keys sorted (canonical JSON),
``fingerprint`` the hash of it (see ``_fingerprint``), ``deltas`` the text pieces
streamed during the exchange (empty when it did not stream), ``reply`` the reply: the
JSON body as the provider sent it (``reply_form`` ``"json"``), or serde's typed JSON of
a reply that is not JSON, such as the offline model's ``ModelTurn`` (``"typed"``). The
file is written indented with one member per line, so a re-recording reviews as a
readable diff.

A cassette is untrusted input: everything is checked when it is read, and any problem
is a :class:`~weakincentives.errors.CassetteError` naming the file and the exchange.
Writes replace the file atomically (a temporary file in the same directory, flushed to
disk, then renamed over it), so a crash leaves the previous cassette or the new one,
never a part of either.
"""

from __future__ import annotations

import copy
import json
import os
import stat
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from weakincentives._bounded import clip, quote
from weakincentives.adapters._fingerprint import fingerprint, plain_json
from weakincentives.errors import CassetteError, ConfigValidationError, SerdeError
from weakincentives.serde import JSONValue, dump_typed, loads, parse_typed

__all__ = ["CASSETTE_FORMAT", "CASSETTE_VERSION", "Exchange", "read_cassette", "write_cassette"]

CASSETTE_FORMAT = "weakincentives.cassette"
CASSETTE_VERSION = 1
"""The format version this library writes and reads."""

type ReplyForm = Literal["json", "typed"]

_MEMBERS = ("round", "fingerprint", "request", "deltas", "reply_form", "reply")
_HEADER = ("format", "version", "provider", "exchanges")


@dataclass(frozen=True, slots=True, kw_only=True)
class Exchange:
    """One recorded request and the reply it got."""

    round: int
    fingerprint: str
    request: JSONValue
    deltas: tuple[str, ...]
    reply_form: ReplyForm
    reply: JSONValue
    """As stored: the JSON body, or the typed JSON of the reply value."""
    value: object
    """The reply as the provider returned it (for ``"json"``, the body itself)."""

    @classmethod
    def of(
        cls, *, round: int, request: JSONValue, deltas: Sequence[str], reply: object
    ) -> Exchange:
        """The exchange for a reply a provider just returned."""
        if isinstance(reply, Mapping):
            form: ReplyForm = "json"
            stored = plain_json(reply, "the reply")
        else:
            form = "typed"
            try:
                stored = dump_typed(reply)
                parse_typed(object, stored)  # what cannot be read back must fail now
            except SerdeError as exc:
                raise ConfigValidationError(
                    f"a reply of type {type(reply).__qualname__} cannot be recorded: {exc.message}",
                    value=reply,
                ) from exc
        return cls(
            round=round,
            fingerprint=fingerprint(request),
            request=_sorted(request),
            deltas=tuple(deltas),
            reply_form=form,
            reply=stored,
            value=stored if form == "json" else reply,
        )

    def replayed_value(self) -> object:
        """The reply to hand to the caller: a copy of a JSON body, which it may change."""
        return copy.deepcopy(self.value) if self.reply_form == "json" else self.value

    def to_json(self) -> dict[str, JSONValue]:
        """The exchange as the cassette stores it."""
        return {
            "round": self.round,
            "fingerprint": self.fingerprint,
            "request": self.request,
            "deltas": list(self.deltas),
            "reply_form": self.reply_form,
            "reply": self.reply,
        }


def read_cassette(path: Path) -> tuple[str | None, tuple[Exchange, ...]]:
    """The provider name and the exchanges of the cassette at ``path``, checked."""
    where = str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CassetteError(
            cassette=where,
            reason='no such file; record it first with mode="record"',
        ) from None
    except OSError as exc:
        raise CassetteError(cassette=where, reason=f"cannot be read: {exc}") from exc
    try:
        document = loads(data)
    except SerdeError as exc:
        entry, reason = _locate(data)
        raise CassetteError(cassette=where, entry=entry, reason=reason or exc.message) from exc
    provider, entries = _header(document, where)
    return provider, tuple(_exchange(entry, index, where) for index, entry in enumerate(entries))


def write_cassette(path: Path, provider: str, exchanges: Sequence[Exchange]) -> None:
    """Replace the cassette at ``path`` with ``exchanges``, atomically and durably.

    Missing parent directories are created (a first recording into ``tests/cassettes/``).
    """
    document = {
        "format": CASSETTE_FORMAT,
        "version": CASSETTE_VERSION,
        "provider": provider,
        "exchanges": [exchange.to_json() for exchange in exchanges],
    }
    text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        # A lone surrogate: JSON text could escape it, but no reader of untrusted JSON
        # (serde.loads) accepts it back, so the cassette would not replay.
        raise CassetteError(
            cassette=str(path),
            reason="cannot be written: an exchange holds text UTF-8 cannot encode "
            f"({clip(str(exc), 120)})",
        ) from exc
    if _special(path):
        raise CassetteError(
            cassette=str(path),
            reason="cannot be written: it is not a regular file (a device, a pipe or a "
            "socket), which recording would replace",
        )
    temporary: Path | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        temporary = Path(name)
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except OSError as exc:
        if temporary is not None:
            temporary.unlink(missing_ok=True)
        raise CassetteError(cassette=str(path), reason=f"cannot be written: {exc}") from exc
    _sync_directory(path.parent)


def _special(path: Path) -> bool:
    """Whether ``path`` is a device, pipe or socket, which the atomic rename would replace.

    A regular file (or a link to one) is the cassette being recorded again; a missing
    path is a first recording; a directory fails the rename with its own error.
    """
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _sync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX: fsync the directory)."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:  # a platform without directory descriptors: the rename is all we have
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass  # some file systems refuse fsync on a directory; the rename still happened
    finally:
        os.close(descriptor)


def _header(document: JSONValue, where: str) -> tuple[str | None, list[JSONValue]]:
    def refused(reason: str) -> CassetteError:
        return CassetteError(cassette=where, reason=reason)

    if not isinstance(document, dict):
        raise refused(f"not a cassette: a JSON {_kind(document)}, not an object")
    if document.get("format") != CASSETTE_FORMAT:
        found = document.get("format")
        raise refused(
            f"not a cassette: format {quote(str(found)) if found is not None else 'missing'}, "
            f"expected {CASSETTE_FORMAT!r}"
        )
    version = document.get("version")
    if type(version) is not int or version < 1:
        raise refused(f"the format version must be an integer >= 1, got {_shown(version)}")
    if version > CASSETTE_VERSION:
        raise refused(
            f"format version {version} is newer than this library reads (version "
            f"{CASSETTE_VERSION}); replay it with the version of weakincentives that "
            'recorded it, or record it again with mode="record"'
        )
    unknown = sorted(set(document) - set(_HEADER))
    if unknown:
        raise refused(f"unknown member {quote(unknown[0])} in the cassette")
    provider = document.get("provider")
    if provider is not None and not isinstance(provider, str):
        raise refused(f"provider must be a string, got {_shown(provider)}")
    exchanges = document.get("exchanges")
    if not isinstance(exchanges, list):
        raise refused(f"exchanges must be an array, got {_shown(exchanges)}")
    return provider, exchanges


def _exchange(data: JSONValue, index: int, where: str) -> Exchange:
    def refused(reason: str) -> CassetteError:
        return CassetteError(cassette=where, entry=index, reason=reason)

    if not isinstance(data, dict):
        raise refused(f"a JSON {_kind(data)}, not an object")
    for name in _MEMBERS:
        if name not in data:
            raise refused(f"the member {name!r} is missing")
    unknown = sorted(set(data) - set(_MEMBERS))
    if unknown:
        raise refused(f"unknown member {quote(unknown[0])}")
    round_number, stored, deltas = data["round"], data["fingerprint"], data["deltas"]
    if type(round_number) is not int or round_number < 1:
        raise refused(f"round must be an integer >= 1, got {_shown(round_number)}")
    if not isinstance(deltas, list) or not all(isinstance(delta, str) for delta in deltas):
        raise refused(f"deltas must be an array of strings, got {_shown(deltas)}")
    request = data["request"]
    computed = fingerprint(request)
    if stored != computed:
        raise refused(
            f"its fingerprint {_shown(stored)} is not that of its request ({computed}); "
            "the entry was changed by hand: record it again"
        )
    form: ReplyForm
    reply = data["reply"]
    if data["reply_form"] == "json":
        form = "json"
        if not isinstance(reply, dict):
            raise refused(f"a JSON reply must be an object, got {_shown(reply)}")
        value: object = reply
    elif data["reply_form"] == "typed":
        form = "typed"
        try:
            value = parse_typed(object, reply)
        except SerdeError as exc:
            raise refused(f"the reply cannot be loaded: {exc.message}") from exc
    else:
        raise refused(f'reply_form must be "json" or "typed", got {_shown(data["reply_form"])}')
    return Exchange(
        round=round_number,
        fingerprint=computed,
        request=request,
        deltas=tuple(cast(list[str], deltas)),
        reply_form=form,
        reply=reply,
        value=value,
    )


def _locate(data: bytes) -> tuple[int | None, str | None]:
    """The exchange a cassette that is not JSON breaks in, and why, when it can be found.

    Only run on a file that failed to decode: each element of the ``exchanges`` array
    is decoded in turn, so a cut-short or damaged file names the first exchange that
    does not decode (or the end of the array, when all of them do).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, None
    start = text.find('"exchanges"')
    opening = text.find("[", start)
    if start < 0 or opening < 0:
        return None, None
    decoder = json.JSONDecoder()
    position, index = opening + 1, 0
    while True:
        position = _skip(text, position)
        if position < len(text) and text[position] == "]":
            return None, None
        try:
            _, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            if exc.pos >= len(text.rstrip()):
                return index, "the file ends inside this exchange (it was cut short)"
            return index, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        except (ValueError, RecursionError) as exc:
            return index, f"invalid JSON: {clip(str(exc), 120)}"
        position = _skip(text, position)
        if position >= len(text):
            return None, f"the file ends after exchange {index} (it was cut short)"
        if text[position] == ",":
            position += 1
        index += 1


def _sorted(value: JSONValue) -> JSONValue:
    """``value`` with the keys of every object in sorted order (the canonical order)."""
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def _skip(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


_JSON_KINDS: dict[type, str] = {
    dict: "object",
    list: "array",
    bool: "boolean",
    str: "string",
    type(None): "null",
    int: "number",
    float: "number",
}
"""JSON's name for each type ``json.loads`` returns."""


def _kind(value: JSONValue) -> str:
    return _JSON_KINDS[type(value)]


def _shown(value: JSONValue) -> str:
    return clip(json.dumps(value), 60) if value is not None else "null"
