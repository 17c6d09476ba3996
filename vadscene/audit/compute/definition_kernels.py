"""The compiled loops (numba) of the definition-conditioned probes.

:mod:`vadscene.audit.compute.definitions` computes the probes with numpy; the two passes that
walk the frames one by one and would otherwise build large temporaries are here. Compiled
code is cached on disk (``cache=True``) and releases the GIL (``nogil=True``), so definitions
prepared on several threads run in parallel.
"""

import numpy as np

from vadscene.core.kernels import compiled


@compiled()
def run_starts(scores: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """(F,) bool, True where a run of identical frames starts: at a new unit, or where a
    score differs from the previous frame's under some definition. ``scores`` (F × D),
    ``unit`` (F,). The loop stops comparing a frame at its first difference and builds no
    (F × D) temporary."""
    first = np.empty(unit.size, np.bool_)
    if unit.size:
        first[0] = True
    for i in range(1, unit.size):
        first[i] = unit[i] != unit[i - 1]
        for j in range(scores.shape[1]):
            if first[i]:
                break
            first[i] = scores[i, j] != scores[i - 1, j]
    return first


@compiled()
def ap_hits(
    unit: np.ndarray,
    weight: np.ndarray,
    last_of_tie: np.ndarray,
    positive_class: np.ndarray,
    negative_units: np.ndarray,
    n_sets: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The thresholds where some positive set's recall moves, in descending score order:
    (set, frames gained, true positives, predicted positives) at each, one row per set that
    gains. One pass over the sorted entries serves every set, and AP's sum reads only these
    rows (docs/metrics.md "Definition-conditioned probes": AP as sklearn computes it)."""
    size = unit.size
    which = np.empty(size, np.int64)
    gained = np.empty(size)
    true_positives = np.empty(size)
    predicted = np.empty(size)
    positive = np.zeros(n_sets)
    counted = np.zeros(n_sets)  # true positives at the previous threshold
    moved = np.empty(n_sets, np.int64)
    n_moved = 0
    negative = 0.0
    hits = 0
    for i in range(size):
        member = positive_class[unit[i]]
        if member >= 0:
            if positive[member] == counted[member]:
                moved[n_moved] = member
                n_moved += 1
            positive[member] += weight[i]
        elif negative_units[unit[i]]:
            negative += weight[i]
        if last_of_tie[i]:
            for j in range(n_moved):
                member = moved[j]
                which[hits] = member
                gained[hits] = positive[member] - counted[member]
                true_positives[hits] = positive[member]
                predicted[hits] = positive[member] + negative
                counted[member] = positive[member]
                hits += 1
            n_moved = 0
    return which[:hits], gained[:hits], true_positives[:hits], predicted[:hits]
