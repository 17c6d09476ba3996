"""The names of the ground-truth formats, apart from their readers
(:mod:`vadscene.benchmark.ground_truth`, which need numpy and pandas): a workspace's
configuration and the command line's help name one without loading those."""

from __future__ import annotations

from typing import Literal, get_args

GroundTruthFormat = Literal["ucf-crime", "npy-folder", "json", "table"]
GROUND_TRUTH_FORMATS: tuple[GroundTruthFormat, ...] = get_args(GroundTruthFormat)
