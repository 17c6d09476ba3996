"""Thresholds must be finite numbers: the explicit rule and the store refuse NaN and
infinities."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from support.examples import registry_workspace

from vadscene.core.errors import StoreError
from vadscene.measure.thresholds import rule_thresholds
from vadscene.store.workspace import Workspace


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_explicit_threshold_is_refused(bad: float) -> None:
    with pytest.raises(StoreError, match=r"thresholds must be finite numbers"):
        rule_thresholds(np.array([1.0, 2.0, 3.0]), "explicit", (bad,))
    with pytest.raises(StoreError, match=r"thresholds must be finite numbers"):
        rule_thresholds(np.array([1.0, 2.0, 3.0]), "explicit", (1.0, bad))


def test_the_store_refuses_a_non_finite_threshold(tmp_path: Path) -> None:
    root = registry_workspace(tmp_path)
    with Workspace.open(root) as workspace:
        with pytest.raises(StoreError, match=r"factor 'resolution': thresholds must be finite"):
            workspace.store.set_threshold("resolution", "sharpness", "explicit", [math.nan])
        assert workspace.store.thresholds() == []
