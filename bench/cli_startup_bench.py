"""Start-up time of the command line, against the interpreter's own in the same run.

    python bench/cli_startup_bench.py [--runs 21] [--workspace DEMO]

Prints the median wall time of each command (fresh processes, run in turn so that a busy
machine slows all of them alike) and its ratio to ``python -c pass``:

- ``python -c pass``: the interpreter's start, the baseline;
- ``python -c "import click"``: the floor of any click command line;
- ``python -c "import typer"``: the floor of a typer one (vadscene's);
- ``vadscene --help``;
- ``vadscene status DEMO``, on the demo workspace (built in a temporary folder unless
  ``--workspace`` names one).

The issue's goal is ≤ 3× ``python -c pass`` for the two vadscene commands.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VADSCENE = [sys.executable, "-m", "vadscene"]


def wall_time(command: list[str]) -> float:
    began = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--workspace", type=Path, help="a workspace to run status on")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vadscene-startup-") as scratch:
        workspace = args.workspace
        if workspace is None:
            workspace = Path(scratch) / "demo"
            subprocess.run([*VADSCENE, "demo", str(workspace)], check=True, capture_output=True)
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            'python -c "import click"': [sys.executable, "-c", "import click"],
            'python -c "import typer"': [sys.executable, "-c", "import typer"],
            "vadscene --help": [*VADSCENE, "--help"],
            "vadscene status DEMO": [*VADSCENE, "status", str(workspace)],
        }
        for command in commands.values():  # warm the file cache and the bytecode
            wall_time(command)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, command in commands.items():
                times[name].append(wall_time(command))
    medians = {name: statistics.median(values) for name, values in times.items()}
    baseline = medians["python -c pass"]
    print(f"median of {args.runs} runs each; ratio to python -c pass (goal for vadscene: <= 3x)")
    for name, median in medians.items():
        print(f"  {name:28} {1000 * median:7.1f} ms  {median / baseline:5.2f}x")


if __name__ == "__main__":
    main()
