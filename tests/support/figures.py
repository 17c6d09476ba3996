"""The reliability figures of docs/reliability.md: every reliability check run small, counted.

The checks are the ones the test suite runs, so the figures come from running the
same code (never typed in): the bad-input table (:mod:`support.bad_input`), release fuzzing
(:mod:`support.release_fuzz`), concurrent and SIGKILLed writers
(:mod:`support.writer_processes`). ``bench/reliability_figures.py`` prints the table. Test
machinery, not part of the package; needs the ``dev`` extra (Hypothesis).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from support.bad_input import CASES, BadInputCase, run_case
from support.release_fuzz import fuzz_release_imports
from support.writer_processes import concurrent_writers_check, crash_check


def reliability_figures(
    *,
    cases: tuple[BadInputCase, ...] = CASES,
    fuzz_examples: int = 1000,
    decisions_per_writer: int = 500,
    kills: int = 5,
) -> dict[str, int]:
    """Run every check at a small scale and count what each did."""
    with tempfile.TemporaryDirectory() as scratch:
        outcomes = [run_case(case, Path(scratch) / case.name) for case in cases]
    tally = fuzz_release_imports(fuzz_examples)
    acknowledged, found = crash_check(kills)
    return {
        "bad_input_cases": len(outcomes),
        "bad_input_passed": sum(o.passed for o in outcomes),
        "bad_input_failures": sum(not o.passed for o in outcomes),
        "fuzz_examples": tally.examples,
        "fuzz_refused": tally.outcomes.get("refused", 0),
        "fuzz_imported": tally.outcomes.get("imported", 0),
        "fuzz_failures": tally.outcomes.get("failed", 0),
        "concurrent_decisions_written": 2 * decisions_per_writer,
        "concurrent_decisions_intact": concurrent_writers_check(decisions_per_writer),
        "crash_kills": kills,
        "crash_decisions_acknowledged": acknowledged,
        "crash_decisions_found": found,
    }
