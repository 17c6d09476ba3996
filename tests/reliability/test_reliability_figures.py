"""The README's reliability figures (:func:`support.figures.reliability_figures`) count exactly
what the tests run."""

from __future__ import annotations

import inspect

from support.bad_input import CASES
from support.figures import reliability_figures


def test_reliability_figures_count_what_the_tests_run() -> None:
    # Every case already runs above: the figures are checked on two cheap ones, and the
    # README's run (bench/reliability_figures.py) takes the default, the whole table.
    assert inspect.signature(reliability_figures).parameters["cases"].default is CASES
    cheap = tuple(
        c for c in CASES if c.name in {"validate_release_not_found", "store_unknown_mark"}
    )
    figures = reliability_figures(cases=cheap, fuzz_examples=25, decisions_per_writer=25, kills=2)
    assert figures["bad_input_cases"] == figures["bad_input_passed"] == len(cheap) == 2
    assert figures["bad_input_failures"] == 0
    assert figures["fuzz_examples"] == 25
    outcomes = ("fuzz_refused", "fuzz_imported", "fuzz_failures")
    assert sum(figures[key] for key in outcomes) == 25
    assert figures["fuzz_failures"] == 0
    assert figures["concurrent_decisions_written"] == 50
    assert figures["concurrent_decisions_intact"] == 50
    assert figures["crash_kills"] == 2
    assert figures["crash_decisions_acknowledged"] >= 10 + 23  # the kills come after 10 and 23
    assert figures["crash_decisions_found"] == figures["crash_decisions_acknowledged"]
