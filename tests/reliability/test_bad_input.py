"""The bad-input table: every case of :data:`support.bad_input.CASES`, one test each.

Each case builds its bad input in ``tmp_path``, runs a CLI command in-process (stdout and
stderr captured by :func:`support.bad_input.run_case`) or a library call, and checks the
message names the file / video / value and what was expected, the exit code, and that the
annotation store is unchanged byte for byte (scan and measure record the problem by design:
only the table they record it in may change, and it must). The cases live in
``tests/support/bad_input.py`` so the README's reliability figures
(``bench/reliability_figures.py``) come from running exactly these cases.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.bad_input import CASES, run_case


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_bad_input_gets_a_clear_message_and_leaves_the_store_alone(case, tmp_path: Path) -> None:
    outcome = run_case(case, tmp_path)
    assert outcome.passed, (
        f"{case.name}: " + "; ".join(outcome.problems) + f"\n--- message ---\n{outcome.message}"
    )


def test_the_corpus_covers_cli_and_library_with_concrete_expectations() -> None:
    names = [case.name for case in CASES]
    assert len(names) == len(set(names)) >= 20
    assert all(case.expected and all(f.strip() for f in case.expected) for case in CASES)
    commands = {case.name.split("_")[0] for case in CASES}
    assert {"scan", "measure", "audit", "validate", "import", "init", "export"} <= commands
    assert any(case.exit_code is None for case in CASES)  # library calls too
