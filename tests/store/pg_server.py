"""A throwaway PostgreSQL server for the store's tests and benchmark.

``running_server()`` runs ``initdb`` into a fresh temporary directory and starts
``postgres`` on 127.0.0.1 at a free port, its unix socket in that directory; leaving the
block stops the server and removes the directory. ``initdb`` refuses to run as root, so
under root (these machines and CI) the server binaries run as the ``postgres`` system
user (or ``nobody``), which then owns the directory.

Shared by ``tests/store/backends.py`` and ``benchmarks/bench_store.py``; not library code.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FAST_SETTINGS", "PostgresServer", "find_binaries", "running_server"]

_BINARIES = ("initdb", "pg_ctl", "postgres")

FAST_SETTINGS: Mapping[str, str] = {
    # A test server's data is thrown away, so it never needs to reach the disk.
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class PostgresServer:
    """A running server: where it listens and the superuser to connect as."""

    host: str
    port: int
    user: str
    directory: Path

    def conninfo(self, *, dbname: str = "postgres", search_path: str | None = None) -> str:
        """A libpq connection string; ``search_path`` picks the schema a store lives in."""
        parts = [f"host={self.host}", f"port={self.port}", f"user={self.user}", f"dbname={dbname}"]
        if search_path is not None:
            parts.append(f"options='-c search_path={search_path}'")
        return " ".join(parts)


def find_binaries() -> Path | None:
    """The directory holding ``initdb``, ``pg_ctl`` and ``postgres``, or None when absent.

    PATH first, then Debian/Ubuntu's ``/usr/lib/postgresql/<version>/bin`` (newest first),
    where the packages put them without linking them onto PATH.
    """
    found = shutil.which("initdb")
    candidates = [] if found is None else [Path(found).resolve().parent, Path(found).parent]
    candidates += [
        Path(path)
        for path in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version, reverse=True)
    ]
    for directory in candidates:
        if all(os.access(directory / name, os.X_OK) for name in _BINARIES):
            return directory
    return None


def _version(path: str) -> tuple[int, ...]:
    name = Path(path).parent.name
    return tuple(int(part) for part in name.split(".") if part.isdigit())


def _account() -> tuple[int, int] | None:
    """The (uid, gid) to run the server as: None unless we are root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            entry = pwd.getpwnam(name)
            return entry.pw_uid, entry.pw_gid
    raise RuntimeError("running as root, and neither a postgres nor a nobody user exists")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _environment() -> dict[str, str]:
    # The host's PG* variables (PGDATA, PGPORT, ...) must not steer the throwaway server.
    env = {key: value for key, value in os.environ.items() if not key.startswith("PG")}
    env["LC_ALL"] = "C"
    return env


def _run(command: list[str], account: tuple[int, int] | None) -> None:
    identity: dict[str, object] = {}
    if account is not None:
        identity = {"user": account[0], "group": account[1], "extra_groups": []}
    completed = subprocess.run(  # noqa: PLW1510 - the outcome is checked below, with the output
        command,
        env=_environment(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        **identity,  # type: ignore[call-overload]
    )
    if completed.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} exited {completed.returncode}:\n"
            f"{completed.stdout}{completed.stderr}"
        )


@contextlib.contextmanager
def running_server(
    settings: Mapping[str, str] = FAST_SETTINGS, *, user: str = "wink"
) -> Iterator[PostgresServer]:
    """Start a throwaway server; stop it and remove its files on exit."""
    binaries = find_binaries()
    if binaries is None:
        raise RuntimeError("no PostgreSQL server binaries (initdb, pg_ctl, postgres) found")
    account = _account()
    directory = Path(tempfile.mkdtemp(prefix="wink-pg-"))
    try:
        if account is not None:
            os.chown(directory, *account)
        data = directory / "data"
        _run(
            [
                str(binaries / "initdb"),
                f"--pgdata={data}",
                f"--username={user}",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
                "--no-instructions",
            ],
            account,
        )
        server = _start(binaries, data, directory, settings, account, user)
        try:
            yield server
        finally:
            _run([str(binaries / "pg_ctl"), "stop", f"--pgdata={data}", "-m", "immediate"], account)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _start(
    binaries: Path,
    data: Path,
    directory: Path,
    settings: Mapping[str, str],
    account: tuple[int, int] | None,
    user: str,
) -> PostgresServer:
    failure: RuntimeError | None = None
    for _ in range(3):  # another process may take the free port before the server binds it
        port = _free_port()
        options = [f"-h 127.0.0.1 -p {port} -k {directory}"]
        options += [f"-c {name}={value}" for name, value in settings.items()]
        try:
            _run(
                [
                    str(binaries / "pg_ctl"),
                    "start",
                    f"--pgdata={data}",
                    f"--log={directory / 'server.log'}",
                    "--wait",
                    "--timeout=120",
                    f"--options={' '.join(options)}",
                ],
                account,
            )
        except RuntimeError as exc:
            failure = exc
            continue
        return PostgresServer(host="127.0.0.1", port=port, user=user, directory=directory)
    assert failure is not None
    log = directory / "server.log"
    raise RuntimeError(f"{failure}\n{log.read_text() if log.exists() else ''}")
