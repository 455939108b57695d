"""`wink demo --trace FILE`: the run's spans through the SDK's console exporter, one per line."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from weakincentives._cli import main


def _demo(*argv: str) -> subprocess.CompletedProcess[str]:
    # A process of its own: the OpenTelemetry API lets a process set its provider once.
    return subprocess.run(
        [sys.executable, "-m", "weakincentives", "demo", "--no-prompt", *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_trace_writes_every_span_of_the_run_to_the_file(tmp_path: Path) -> None:
    """One trace: the evaluation, 7 requests, 10 tool calls and 3 discovery operations."""
    path = tmp_path / "trace.jsonl"
    completed = _demo("--trace", str(path))
    assert completed.returncode == 0, completed.stderr
    plain = io.StringIO()
    assert main(["demo", "--no-prompt"], out=plain) == 0
    assert completed.stdout == plain.getvalue()  # the transcript is the same, traced or not
    spans: list[dict[str, Any]] = [json.loads(line) for line in path.read_text().splitlines()]
    names = [span["name"] for span in spans]
    assert names.count("chat") == 7
    assert sorted({name for name in names if name.startswith("discovery ")}) == [
        "discovery call_tool",
        "discovery expand_tool",
        "discovery search_tool_by_category",
    ]
    assert len([name for name in names if name.startswith("execute_tool ")]) == 10
    (root,) = [span for span in spans if span["parent_id"] is None]
    assert root["name"] == "invoke_agent incident_triage"
    assert root["attributes"]["weakincentives.tool_calls"] == 9
    assert root["resource"]["attributes"]["service.name"] == "wink-demo"
    assert {span["context"]["trace_id"] for span in spans} == {root["context"]["trace_id"]}
    by_id = {span["context"]["span_id"]: span["name"] for span in spans}
    assert all(span["parent_id"] in by_id for span in spans if span is not root)
    rollback = next(span for span in spans if span["name"] == "execute_tool rollback_release")
    assert by_id[rollback["parent_id"]] == "discovery call_tool"
    failed = next(span for span in spans if span["status"]["status_code"] == "ERROR")
    assert failed["name"] == "execute_tool query_metrics"
    assert failed["attributes"]["error.type"] == "ParseError"
    assert "$.window_minutes" in failed["status"]["description"]


def test_trace_without_the_sdk_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without opentelemetry-sdk, --trace is refused before the run, naming the package."""
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)
    path = tmp_path / "trace.jsonl"
    assert main(["demo", "--trace", str(path)], out=io.StringIO()) == 1
    assert capsys.readouterr().err == (
        "wink: error: --trace needs the OpenTelemetry SDK: pip install "
        "'weakincentives[otel]' opentelemetry-sdk (opentelemetry.sdk.trace is missing)\n"
    )
    assert not path.exists()


def test_a_trace_file_that_cannot_be_written_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A directory that does not exist is named, before anything runs."""
    path = tmp_path / "missing" / "trace.jsonl"
    out = io.StringIO()
    assert main(["demo", "--trace", str(path)], out=out) == 1
    assert out.getvalue() == ""
    assert capsys.readouterr().err == (
        f"wink: error: cannot write the trace to {str(path)!r}: No such file or directory\n"
    )


@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="needs /dev/full")
def test_a_trace_the_disk_cannot_hold_is_one_clear_error() -> None:
    """A full disk is reported once, naming the file (no traceback per span, none at close)."""
    done = _demo("--trace", "/dev/full")
    assert done.returncode == 1
    assert done.stderr == (
        "python -m weakincentives: error: cannot write the trace to '/dev/full': "
        "No space left on device\n"
    )
