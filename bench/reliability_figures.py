"""Print the reliability table of docs/reliability.md: every bad-input case, 1,000 fuzzed releases,
concurrent writers and SIGKILLed writers, run by the same code the tests run.

Usage: python bench/reliability_figures.py   (needs the dev extra: Hypothesis)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.figures import reliability_figures

FIGURE_LABELS = {
    "bad_input_cases": "bad-input cases tried (CLI and library)",
    "bad_input_passed": "… answered with a clear message, right exit code, store unchanged",
    "bad_input_failures": "… failing a promise",
    "fuzz_examples": "generated releases imported",
    "fuzz_refused": "… refused with a message, nothing written",
    "fuzz_imported": "… imported: a re-export is identical, a merge is current and idempotent",
    "fuzz_failures": "… breaking the property",
    "concurrent_decisions_written": "decisions written by two processes at once",
    "concurrent_decisions_intact": "… found in the log, in order",
    "crash_kills": "writer processes SIGKILLed mid-stream",
    "crash_decisions_acknowledged": "… decisions they had acknowledged",
    "crash_decisions_found": "… found after the kill, in order, integrity_check ok",
}


def markdown_table(figures: dict[str, int]) -> str:
    rows = [f"| {FIGURE_LABELS[key]} | {value} |" for key, value in figures.items()]
    return "\n".join(["| check | count |", "|---|---:|", *rows])


if __name__ == "__main__":
    print(markdown_table(reliability_figures()))
