"""``import weakincentives`` in a fresh interpreter, against the published upstream 0.13.0.

Each sample is a new interpreter that times only the import statement (interpreter
start-up excluded). The two packages alternate, so load on the machine affects both
alike; the median of the samples is reported. The upstream wheel is installed once
into a temporary directory with ``pip install --no-deps --target`` (it has no required
dependencies) and imported from there; nothing of it is kept.

Run: ``.venv/bin/python benchmarks/bench_import.py``. Without network access to the
package index only our own figure is printed.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UPSTREAM = "weakincentives==0.13.0"
SAMPLES = 21
PIP_INSTALL = (sys.executable, "-m", "pip", "install", "--quiet", "--no-deps")
PROBE = (
    "import time; start = time.perf_counter(); import weakincentives; "
    "print(time.perf_counter() - start)"
)


def sample(path: Path) -> float:
    """Seconds one fresh interpreter spends on ``import weakincentives`` from ``path``."""
    completed = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(path), "PATH": ""},
    )
    return float(completed.stdout)


def install_upstream(into: Path) -> Path | None:
    """Install the upstream wheel under ``into``; None when the index cannot be reached."""
    completed = subprocess.run(
        [*PIP_INSTALL, "--target", str(into), UPSTREAM],
        capture_output=True,
        check=False,
    )
    return into if completed.returncode == 0 else None


def main() -> None:
    ours: list[float] = []
    theirs: list[float] = []
    with tempfile.TemporaryDirectory() as scratch:
        upstream = install_upstream(Path(scratch))
        for _ in range(SAMPLES):
            ours.append(sample(ROOT / "src"))
            if upstream is not None:
                theirs.append(sample(upstream))
    print(f"{'name':<44}{'n':>6}{'median_ms':>11}{'ratio':>8}")
    reference = statistics.median(theirs) if theirs else statistics.median(ours)
    if theirs:
        print(
            f"{'import: upstream ' + UPSTREAM:<44}{SAMPLES:>6}{reference * 1000:>11.1f}{1.0:>8.2f}"
        )
    else:
        print(f"(upstream {UPSTREAM} could not be installed: our figure only)")
    median = statistics.median(ours)
    print(
        f"{'import: weakincentives (this tree)':<44}{SAMPLES:>6}{median * 1000:>11.1f}"
        f"{median / reference:>8.2f}"
    )


if __name__ == "__main__":
    main()
