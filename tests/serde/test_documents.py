"""Stored documents: an envelope with kind and format version, upgraded or refused."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.serde.typed_models import Inner, Record, assert_identical
from weakincentives.errors import (
    ConfigValidationError,
    ParseError,
    SchemaError,
    UnknownTypeError,
    UnreadableDocumentError,
)
from weakincentives.serde import DocumentKind, JSONValue, dump_document, load_document

RECORDS = DocumentKind(name="tests.record", value_type=Record)


def _rename_title_to_name(body: JSONValue) -> JSONValue:
    """Version 1 called the field ``title``."""
    assert isinstance(body, dict)
    return {"name" if key == "title" else key: value for key, value in body.items()}


def _add_nothing(body: JSONValue) -> JSONValue:
    return body


RECORDS_V3 = DocumentKind(
    name="tests.record",
    value_type=Record,
    version=3,
    upgrades={1: _rename_title_to_name, 2: _add_nothing},
)


class TestRoundTrip:
    """A value in, the same value out."""

    def test_envelope_text(self) -> None:
        """Compact JSON: kind, version, then the body as dump_typed writes it."""
        text = dump_document(RECORDS, Record(name="r", payload=(1,)))
        assert json.loads(text) == {
            "kind": "tests.record",
            "version": 1,
            "body": {
                "name": "r",
                "payload": {"$type": "tuple", "value": [1]},
                "extra": None,
                "visibility": [],
                "labels": [],
                "error": None,
            },
        }
        assert text.startswith('{"kind":"tests.record","version":1,"body":{"name":"r",')

    @pytest.mark.parametrize("form", ["str", "bytes", "mapping"])
    def test_loads_from_text_bytes_or_a_decoded_envelope(self, form: str) -> None:
        """Text, UTF-8 bytes and an already-decoded envelope all load."""
        value = Record(name="r", payload={"k": frozenset({1})})
        text = dump_document(RECORDS, value)
        document: Any = {"str": text, "bytes": text.encode(), "mapping": json.loads(text)}[form]
        assert_identical(load_document(RECORDS, document), value)

    def test_non_ascii_text_stays_readable(self) -> None:
        """Non-ASCII characters are written as themselves, not escaped."""
        text = dump_document(RECORDS, Record(name="café"))
        assert '"name":"café"' in text

    def test_lone_surrogates_are_escaped(self) -> None:
        """A string UTF-8 cannot encode is written escaped, and loads back the same."""
        value = Record(name="a\ud800b")
        text = dump_document(RECORDS, value)
        assert text.isascii()
        assert "\\ud800" in text
        assert load_document(RECORDS, text) == value

    def test_open_kind(self) -> None:
        """A kind of ``object`` stores any typed value."""
        kind = DocumentKind(name="tests.any", value_type=object)
        assert load_document(kind, dump_document(kind, {(1, 2): Inner(a=1)})) == {
            (1, 2): Inner(a=1)
        }

    def test_unstorable_value_names_the_body_path(self) -> None:
        """A SchemaError's path starts at the body."""
        with pytest.raises(
            SchemaError, match=r"cannot dump a non-finite number nan .* at \$\.body\.payload"
        ):
            dump_document(RECORDS, Record(name="r", payload=float("nan")))


class TestVersions:
    """Older documents are upgraded step by step; what cannot be read is refused."""

    def test_older_version_is_upgraded(self) -> None:
        """A version 1 body goes through upgrades 1 and 2 and loads as the current shape."""
        old = json.dumps({"kind": "tests.record", "version": 1, "body": {"title": "t"}})
        assert load_document(RECORDS_V3, old) == Record(name="t")

    def test_current_version_is_not_upgraded(self) -> None:
        """A version 3 document is read as it is (a title field would be unknown)."""
        current = json.dumps({"kind": "tests.record", "version": 3, "body": {"title": "t"}})
        with pytest.raises(ParseError, match=r"got unknown field 'title' at \$\.body\.title"):
            load_document(RECORDS_V3, current)

    def test_newer_version_is_refused(self) -> None:
        """A document from a newer library is never misread."""
        newer = json.dumps({"kind": "tests.record", "version": 4, "body": {}})
        with pytest.raises(UnreadableDocumentError) as caught:
            load_document(RECORDS_V3, newer)
        error = caught.value
        assert str(error) == (
            "'tests.record' document version 4 is newer than this library reads "
            "(versions 1 to 3); load it with the version of weakincentives that wrote it, "
            "or a newer one"
        )
        assert (error.kind, error.found_kind, error.version, error.readable) == (
            "tests.record",
            "tests.record",
            4,
            (1, 3),
        )

    def test_version_older_than_the_upgrades_reach(self) -> None:
        """Without an upgrade from version 1, a version 1 document is refused."""
        kind = DocumentKind(
            name="tests.record", value_type=Record, version=3, upgrades={2: _add_nothing}
        )
        old = json.dumps({"kind": "tests.record", "version": 1, "body": {}})
        with pytest.raises(
            UnreadableDocumentError,
            match=(
                r"^'tests.record' document version 1 is too old: this library reads "
                r"versions 2 to 3 and has no upgrade from version 1$"
            ),
        ) as caught:
            load_document(kind, old)
        assert caught.value.readable == (2, 3)

    def test_single_version_span(self) -> None:
        """A kind with no upgrades reads exactly its version."""
        newer = json.dumps({"kind": "tests.record", "version": 2, "body": {}})
        with pytest.raises(UnreadableDocumentError, match=r"\(versions 1\);"):
            load_document(RECORDS, newer)

    def test_failing_upgrade(self) -> None:
        """An upgrade that raises is an UnreadableDocumentError naming the step and chained."""
        old = json.dumps({"kind": "tests.record", "version": 1, "body": [1]})
        with pytest.raises(
            UnreadableDocumentError,
            match=r"upgrading a 'tests.record' document from version 1 to 2 failed: AssertionError",
        ) as caught:
            load_document(RECORDS_V3, old)
        assert isinstance(caught.value.__cause__, AssertionError)

    def test_other_kind(self) -> None:
        """A document of another kind is refused by name."""
        other = json.dumps({"kind": "tests.other", "version": 1, "body": {}})
        with pytest.raises(
            UnreadableDocumentError,
            match=r"^expected a 'tests.record' document, got a 'tests.other' document$",
        ) as caught:
            load_document(RECORDS, other)
        assert caught.value.found_kind == "tests.other"


class TestMalformedDocuments:
    """Text that is not a document is a ParseError at its path."""

    @pytest.mark.parametrize(
        ("text", "path", "message"),
        [
            ("{", "$", r"expected a JSON document, got invalid JSON \(Expecting property name"),
            ('{"kind": NaN}', "$", r"got invalid JSON \(NaN is not a JSON number\)"),
            (b"\xff", "$", r"got invalid JSON \("),
            ("[" * 100_000 + "]" * 100_000, "$", r"got JSON nested too deeply"),
            (
                "[]",
                "$",
                r"expected a document object \(kind, version, body\), got array of 0 items",
            ),
            (
                '{"kind": "tests.record", "version": 1}',
                "$.body",
                r"expected a value \(required member\), got nothing",
            ),
            (
                '{"kind": "tests.record", "version": 1, "body": {}, "x": 1}',
                "$",
                r"expected only the members kind, version, body, got unknown member 'x'",
            ),
            (
                '{"kind": 1, "version": 1, "body": {}}',
                "$.kind",
                r"expected a document kind \(string\), got integer 1",
            ),
            (
                '{"kind": "tests.record", "version": true, "body": {}}',
                "$.version",
                r"expected a format version \(integer >= 1\), got boolean true",
            ),
            ('{"kind": "tests.record", "version": 0, "body": {}}', "$.version", r"got integer 0"),
            (
                '{"kind": "tests.record", "version": 1, "body": {"name": 5}}',
                "$.body.name",
                r"expected a string, got integer 5 at \$\.body\.name while parsing Record",
            ),
        ],
    )
    def test_refused(self, text: str | bytes, path: str, message: str) -> None:
        """Each problem is located."""
        with pytest.raises(ParseError, match=message) as caught:
            load_document(RECORDS, text)
        assert caught.value.path == path

    def test_unknown_type_in_the_body(self) -> None:
        """An unknown type name reports the path inside the document."""
        text = json.dumps(
            {
                "kind": "tests.record",
                "version": 1,
                "body": {"name": "n", "payload": {"$type": "gone.module:X"}},
            }
        )
        with pytest.raises(
            UnknownTypeError, match=r"unknown type 'gone.module:X' at \$\.body\.payload"
        ):
            load_document(RECORDS, text)


class TestDocumentKind:
    """A kind is checked when it is defined."""

    @pytest.mark.parametrize(
        ("arguments", "message"),
        [
            ({"name": ""}, r"name must be a non-empty string, got ''"),
            ({"version": 0}, r"version must be an integer >= 1, got 0"),
            ({"version": True}, r"version must be an integer >= 1, got True"),
            (
                {"version": 2, "upgrades": {2: _add_nothing, 0: _add_nothing}},
                r"upgrades must be keyed by the version they upgrade from \(1 to 1\), got 2, 0",
            ),
            ({"version": 2, "upgrades": {1: "nope"}}, r"upgrades 1 are not callable"),
        ],
    )
    def test_invalid_kinds(self, arguments: dict[str, Any], message: str) -> None:
        """Every problem is named."""
        with pytest.raises(ConfigValidationError, match=message) as caught:
            DocumentKind(**{"name": "k", "value_type": object, **arguments})
        assert caught.value.config_type is DocumentKind

    def test_oldest_readable_follows_the_chain(self) -> None:
        """The chain stops at the first missing step."""
        kind = DocumentKind(
            name="k",
            value_type=object,
            version=5,
            upgrades={1: _add_nothing, 3: _add_nothing, 4: _add_nothing},
        )
        assert kind.oldest_readable == 3
