"""Start-up time of the commands people type first, against the interpreter's own start-up.

Run from the repository root::

    .venv/bin/python benchmarks/startup.py [--repeats 5]

Each command runs ``--repeats`` times in a fresh process (``python -m audiobench.cli ...``
through the installed entry point); the table shows the median wall time, and beside it the
same for ``python -c "import numpy, pydantic"`` (what any command needs at the least) and for
``python -c "import torch"`` (what a command must not pay for). Target: every command within
1.5 s on two cores.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from audiobench.machine import cpu_model

TARGET_SECONDS = 1.5
BIN = Path(sys.executable).parent

COMMANDS: list[tuple[str, list[str]]] = [
    ("audiobench --help", [str(BIN / "audiobench"), "--help"]),
    ("audiobench list tasks", [str(BIN / "audiobench"), "list", "tasks"]),
    ("audiobench list tasks --json", [str(BIN / "audiobench"), "list", "tasks", "--json"]),
    ("audiobench list models", [str(BIN / "audiobench"), "list", "models"]),
    ("audiobench list benchmarks", [str(BIN / "audiobench"), "list", "benchmarks"]),
    ("baseline: import numpy, pydantic", [sys.executable, "-c", "import numpy, pydantic"]),
    ("reference: import torch", [sys.executable, "-c", "import torch"]),
]


def wall(command: list[str]) -> float:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"CPU: {cpu_model()}, {os.cpu_count()} logical core(s)")
    baseline = None
    rows = []
    for label, command in COMMANDS:
        wall(command)  # warm the file cache
        median = statistics.median(wall(command) for _ in range(args.repeats))
        if label.startswith("baseline"):
            baseline = median
        rows.append((label, median))
    print(f"{'command':<36}{'median s':>10}{'vs baseline':>13}{'target':>9}")
    for label, median in rows:
        ratio = f"{median / baseline:.1f}x" if baseline else "-"
        verdict = ""
        if label.startswith("audiobench"):
            verdict = "ok" if median <= TARGET_SECONDS else "SLOW"
        print(f"{label:<36}{median:>10.2f}{ratio:>13}{verdict:>9}")


if __name__ == "__main__":
    main()
