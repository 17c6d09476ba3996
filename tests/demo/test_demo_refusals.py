"""`vadscene demo` refuses a bad seed before it writes anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from vadscene.core.errors import VadsceneError
from vadscene.demo import build_demo_workspace


def test_a_negative_demo_seed_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(VadsceneError, match=r"the demo seed must be an integer ≥ 0, got -1"):
        build_demo_workspace(tmp_path / "demo", seed=-1)
    assert list(tmp_path.iterdir()) == []
