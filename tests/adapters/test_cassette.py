"""The cassette file: its documented shape, and a clear error for every way it can break."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.replay_kit import run, weather_prompt
from weakincentives.adapters import Adapter, OfflineModel, Recorded, ScriptedCall, ScriptedTurn
from weakincentives.adapters._cassette import Exchange, read_cassette, write_cassette
from weakincentives.errors import CassetteError

type Document = dict[str, Any]


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    """A cassette of two exchanges (a tool call, then an answer), recorded offline."""
    path = tmp_path / "weather.json"
    turns = [
        ScriptedTurn(calls=(ScriptedCall(name="get_weather", arguments={"city": "Lisbon"}),)),
        ScriptedTurn(text="Sunny."),
    ]
    run(Adapter(Recorded(OfflineModel(turns), path, mode="record")), weather_prompt())
    return path


def load(path: Path) -> Document:
    loaded: Document = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def rewrite(path: Path, change: Callable[[Document], object]) -> None:
    """Apply ``change`` to the cassette's JSON and write it back."""
    document = load(path)
    change(document)
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")


def refusal(path: Path) -> CassetteError:
    """The error replaying ``path`` raises."""
    with pytest.raises(CassetteError) as caught:
        Recorded(OfflineModel(call_every_tool=True), path)
    assert caught.value.cassette == str(path)
    return caught.value


class TestTheFile:
    def test_it_is_indented_json_ending_in_a_newline(self, cassette: Path) -> None:
        """One member per line, so a re-recording reviews as a diff."""
        text = cassette.read_text(encoding="utf-8")
        assert text.startswith('{\n  "format": "weakincentives.cassette",\n  "version": 1,\n')
        assert text.endswith("\n}\n")
        assert list(load(cassette)["exchanges"][0]) == [
            "round",
            "fingerprint",
            "request",
            "deltas",
            "reply_form",
            "reply",
        ]

    def test_requests_are_stored_with_sorted_keys(self, cassette: Path) -> None:
        """The canonical order: a re-recording changes lines only where the request did."""
        request = load(cassette)["exchanges"][0]["request"]
        assert list(request) == sorted(request)
        assert list(request["tools"][0]["parameters"]) == sorted(request["tools"][0]["parameters"])

    def test_written_exchanges_read_back_equal(self, tmp_path: Path) -> None:
        """Any Unicode text, numbers and nesting come back as written."""
        path = tmp_path / "odd.json"
        written = (
            Exchange.of(round=1, request={"q": "ünï 中"}, deltas=("a", "é"), reply={"x": 1.5}),
            Exchange.of(round=2, request={"q": [[{}]]}, deltas=(), reply={"x": None, "y": -0.0}),
        )
        write_cassette(path, "p", written)
        assert read_cassette(path) == ("p", written)

    def test_text_utf8_cannot_encode_is_refused_when_written(self, tmp_path: Path) -> None:
        """A lone surrogate could not be read back: the write fails, naming the file."""
        path = tmp_path / "odd.json"
        lone = Exchange.of(round=1, request={"q": "x"}, deltas=("\ud800",), reply={})
        with pytest.raises(CassetteError, match=r"cannot be written: an exchange holds text UTF-8"):
            write_cassette(path, "p", (lone,))
        assert not path.exists()

    def test_whitespace_changes_do_not_matter(self, cassette: Path) -> None:
        """The fingerprint is of the request's content, not of the file's text."""
        cassette.write_text(json.dumps(load(cassette)), encoding="utf-8")
        replayed = run(
            Adapter(Recorded(OfflineModel(call_every_tool=True), cassette)), weather_prompt()
        )
        assert replayed.response.text == "Sunny."

    def test_missing_directories_are_created(self, tmp_path: Path) -> None:
        """A first recording into a directory that does not exist yet."""
        path = tmp_path / "tests" / "cassettes" / "c.json"
        exchange = Exchange.of(round=1, request={"q": 1}, deltas=(), reply={"a": 2})
        write_cassette(path, "p", (exchange,))
        assert read_cassette(path) == ("p", (exchange,))

    def test_a_path_under_a_file_cannot_be_written(self, tmp_path: Path) -> None:
        """The parent is a file: nothing is written, the error names the cassette."""
        (tmp_path / "file").write_text("x", encoding="utf-8")
        path = tmp_path / "file" / "c.json"
        with pytest.raises(CassetteError, match=r"cannot be written: \[Errno 17\] File exists"):
            write_cassette(path, "p", ())

    def test_a_pipe_or_device_is_not_replaced_by_a_recording(self, tmp_path: Path) -> None:
        """`--record /dev/full` as root once replaced the device with a regular file."""
        pipe = tmp_path / "pipe"
        os.mkfifo(pipe)
        with pytest.raises(CassetteError, match="it is not a regular file") as caught:
            write_cassette(pipe, "p", ())
        assert caught.value.cassette == str(pipe)
        assert pipe.is_fifo()
        assert list(tmp_path.iterdir()) == [pipe]  # no temporary file left either

    @pytest.mark.parametrize("failing", ["open", "fsync"])
    def test_a_directory_that_cannot_be_synced_still_gets_the_file(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
    ) -> None:
        """Some platforms and file systems refuse to open or fsync a directory."""
        path = tmp_path / "c.json"
        real = getattr(os, failing)
        calls: list[object] = []

        def refuse_the_directory(*arguments: Any) -> Any:
            calls.append(arguments[0])
            opened_directory = failing == "open" and arguments[0] == tmp_path
            synced_directory = (
                failing == "fsync" and len(calls) == 2
            )  # the file's, then the directory's
            if opened_directory or synced_directory:
                raise OSError(22, "Invalid argument")
            return real(*arguments)

        monkeypatch.setattr(os, failing, refuse_the_directory)
        exchange = Exchange.of(round=1, request={"q": 1}, deltas=(), reply={"a": 2})
        write_cassette(path, "p", (exchange,))
        monkeypatch.undo()
        assert read_cassette(path) == ("p", (exchange,))


class TestDamage:
    def test_a_file_cut_inside_an_exchange_names_it(self, cassette: Path) -> None:
        """The exchange that was being written when the file ended."""
        text = cassette.read_text(encoding="utf-8")
        second = text.index('"round": 2')
        cassette.write_text(text[: second + 200], encoding="utf-8")
        error = refusal(cassette)
        assert error.entry == 1
        assert error.reason == "the file ends inside this exchange (it was cut short)"
        assert str(error) == f"cassette {cassette}, exchange 1: {error.reason}"

    def test_a_file_cut_after_an_exchange_says_so(self, cassette: Path) -> None:
        """Every exchange is whole, but the document never ends."""
        text = cassette.read_text(encoding="utf-8")
        cassette.write_text(text[: text.rindex("]")], encoding="utf-8")
        error = refusal(cassette)
        assert (error.entry, error.reason) == (
            None,
            "the file ends after exchange 1 (it was cut short)",
        )

    def test_broken_json_inside_an_exchange_names_it_and_the_line(self, cassette: Path) -> None:
        """A damaged byte in exchange 0 is reported there, with its line."""
        text = cassette.read_text(encoding="utf-8")
        at = text.index('"round": 1') + len('"round": ')
        cassette.write_text(text[:at] + "1x" + text[at + 1 :], encoding="utf-8")
        error = refusal(cassette)
        assert error.entry == 0
        assert error.reason == "invalid JSON at line 7 column 17: Expecting ',' delimiter"

    def test_text_that_is_not_json_at_all(self, tmp_path: Path) -> None:
        """Not even the start of a cassette: the decoder's complaint."""
        path = tmp_path / "c.json"
        path.write_bytes(b"\xff\xfe not json")
        error = refusal(path)
        assert (error.entry, error.reason) == (
            None,
            "expected valid JSON, got undecodable bytes (truncated data at byte 10) at $",
        )

    def test_an_unreadable_path(self, tmp_path: Path) -> None:
        """A directory where the file should be."""
        error = refusal(tmp_path)
        assert error.reason.startswith("cannot be read: [Errno 21] Is a directory")

    @pytest.mark.parametrize(
        ("change", "reason"),
        [
            (
                lambda d: d.update(version=2),
                "format version 2 is newer than this library reads (version 1); replay it "
                "with the version of weakincentives that recorded it, or record it again "
                'with mode="record"',
            ),
            (lambda d: d.update(version=0), "the format version must be an integer >= 1, got 0"),
            (
                lambda d: d.update(version="1"),
                'the format version must be an integer >= 1, got "1"',
            ),
            (
                lambda d: d.update(format="vcr"),
                "not a cassette: format 'vcr', expected 'weakincentives.cassette'",
            ),
            (
                lambda d: d.pop("format"),
                "not a cassette: format missing, expected 'weakincentives.cassette'",
            ),
            (lambda d: d.update(extra=1), "unknown member 'extra' in the cassette"),
            (lambda d: d.update(provider=3), "provider must be a string, got 3"),
            (lambda d: d.update(exchanges={}), "exchanges must be an array, got {}"),
        ],
    )
    def test_a_bad_header(
        self, cassette: Path, change: Callable[[Document], object], reason: str
    ) -> None:
        """The file as a whole is wrong: no exchange is named."""
        rewrite(cassette, change)
        error = refusal(cassette)
        assert (error.entry, error.reason) == (None, reason)

    @pytest.mark.parametrize(
        ("text", "kind"),
        [
            ("[1, 2]", "array"),
            ("true", "boolean"),
            ('"x"', "string"),
            ("null", "null"),
            ("3", "number"),
        ],
    )
    def test_a_json_value_that_is_not_an_object(self, tmp_path: Path, text: str, kind: str) -> None:
        """A cassette is a JSON object."""
        path = tmp_path / "c.json"
        path.write_text(text, encoding="utf-8")
        assert refusal(path).reason == f"not a cassette: a JSON {kind}, not an object"

    @pytest.mark.parametrize(
        ("text", "reason"),
        [
            ('{"format": "weakincentives.cas', "expected valid JSON, got invalid JSON"),
            ('{"exchanges": [], "format": ', "expected valid JSON, got invalid JSON"),
            ('{"exchanges": [{"round": 1} {"round": 2}]}', "expected valid JSON, got invalid JSON"),
        ],
    )
    def test_a_broken_file_with_no_broken_exchange_gets_the_decoders_reason(
        self, tmp_path: Path, text: str, reason: str
    ) -> None:
        """Cut before the exchanges, after an empty list, or a comma missing between two."""
        path = tmp_path / "c.json"
        path.write_text(text, encoding="utf-8")
        error = refusal(path)
        assert error.entry is None
        assert error.reason.startswith(reason)

    def test_a_number_too_long_to_read_names_its_exchange(self, cassette: Path) -> None:
        """Integer literals past Python's digit limit are refused where they are."""
        text = cassette.read_text(encoding="utf-8")
        at = text.index('"round": 2') + len('"round": ')
        cassette.write_text(text[:at] + "9" * 5000 + text[at + 1 :], encoding="utf-8")
        error = refusal(cassette)
        assert error.entry == 1
        assert error.reason.startswith("invalid JSON: Exceeds the limit (4300 digits)")

    @pytest.mark.parametrize(
        ("change", "reason"),
        [
            (lambda e: e.pop("reply"), "the member 'reply' is missing"),
            (lambda e: e.update(note="x"), "unknown member 'note'"),
            (lambda e: e.update(round=0), "round must be an integer >= 1, got 0"),
            (lambda e: e.update(round=True), "round must be an integer >= 1, got true"),
            (lambda e: e.update(deltas=[1]), "deltas must be an array of strings, got [1]"),
            (
                lambda e: e.update(reply_form="pickle"),
                'reply_form must be "json" or "typed", got "pickle"',
            ),
            (
                lambda e: e.update(reply_form="json", reply=[1]),
                "a JSON reply must be an object, got [1]",
            ),
        ],
    )
    def test_a_bad_exchange_is_named(
        self, cassette: Path, change: Callable[[Document], object], reason: str
    ) -> None:
        """The exchange at fault and what is wrong with it."""
        rewrite(cassette, lambda d: change(d["exchanges"][1]))
        error = refusal(cassette)
        assert (error.entry, error.reason) == (1, reason)

    def test_an_exchange_that_is_not_an_object(self, cassette: Path) -> None:
        """Each exchange is a JSON object."""
        rewrite(cassette, lambda d: d["exchanges"].insert(0, "x"))
        assert (refusal(cassette).entry, refusal(cassette).reason) == (
            0,
            "a JSON string, not an object",
        )

    def test_a_request_edited_by_hand_no_longer_matches_its_fingerprint(
        self, cassette: Path
    ) -> None:
        """The fingerprint is checked against the request it is stored with."""
        rewrite(cassette, lambda d: d["exchanges"][0]["request"].update(round=7))
        error = refusal(cassette)
        assert error.entry == 0
        assert error.reason.startswith('its fingerprint "sha256:')
        assert error.reason.endswith("; the entry was changed by hand: record it again")

    def test_a_typed_reply_of_an_unknown_type(self, cassette: Path) -> None:
        """A reply naming a class that does not exist here cannot be replayed."""
        rewrite(
            cassette, lambda d: d["exchanges"][1]["reply"].update({"$type": "gone.module:Turn"})
        )
        error = refusal(cassette)
        assert error.entry == 1
        assert error.reason.startswith("the reply cannot be loaded: ")
        assert "gone.module:Turn" in error.reason
