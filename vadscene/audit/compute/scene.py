"""Scene-factor audit: bias-AUC on normal footage and scene-conditioned AUC (A §4, Supp. S1;
docs/metrics.md, "Scene factors").

A factor's contrast splits the annotated videos into poles ⊕ / ⊖; ambiguous and unlabelled
videos are left out of that contrast only.
"""

from __future__ import annotations

import numpy as np

from vadscene.audit.compute.metrics import ratio_or_nan
from vadscene.audit.compute.pairs import PairCounts
from vadscene.core.kernels import compiled


def bias_auroc(
    positive: np.ndarray,
    negative: np.ndarray,
    positive_counts: np.ndarray,
    negative_counts: np.ndarray,
) -> np.ndarray:
    """Video-level AUROC of ⊕ over ⊖ normal-footage means, per replicate (A §4):

        b = Σ_i Σ_j k⁺_i k⁻_j τ(x_i, y_j) / (Σk⁺ · Σk⁻),   τ(x, y) = 1[x > y] + ½·1[x = y]

    ``positive_counts`` (R, n⁺) and ``negative_counts`` (R, n⁻) are copy counts (ones for
    the estimate; within-pole resamples for the bootstrap). A ranking probability, so it does
    not depend on how many videos each pole has (S1.3). Cost O(R·(n⁺ + n⁻)) via the sorted ⊖
    values and, per replicate, their cumulative counts.
    """
    order = np.argsort(negative, kind="stable")
    sorted_negative = negative[order]
    wins, pairs = _bias_wins(
        np.ascontiguousarray(positive_counts, dtype=np.float64),
        np.ascontiguousarray(negative_counts, dtype=np.float64),
        order,
        np.searchsorted(sorted_negative, positive, "left"),
        np.searchsorted(sorted_negative, positive, "right"),
    )
    return ratio_or_nan(wins, pairs)


@compiled()
def _bias_wins(positive_counts, negative_counts, order, below, at_or_below):  # type: ignore[no-untyped-def]
    # Compiled and free of the GIL: an audit runs this for every model × contrast × population
    # with B replicates, from all the model threads at once. Counts are whole numbers, so every
    # sum is exact in any order and halving the replicate's total equals summing the halves.
    # Per replicate: the wins and the pairs Σk⁺ · Σk⁻ (the copies' totals, read in the same pass).
    wins = np.empty(negative_counts.shape[0])
    pairs = np.empty(negative_counts.shape[0])
    cumulative = np.empty(negative_counts.shape[1] + 1)
    for r in range(negative_counts.shape[0]):
        cumulative[0] = 0.0
        for j in range(order.size):
            cumulative[j + 1] = cumulative[j] + negative_counts[r, order[j]]
        total = 0.0
        positives = 0.0
        for i in range(below.size):
            total += positive_counts[r, i] * (cumulative[below[i]] + cumulative[at_or_below[i]])
            positives += positive_counts[r, i]
        wins[r] = total / 2
        pairs[r] = positives * cumulative[order.size]
    return wins, pairs


PAIR_TYPES = ("++", "--", "+-", "-+")
"""X Y: pole of the anomalous frame's video, pole of the normal frame's video."""


def scene_conditioned(
    u: PairCounts, a: np.ndarray, n: np.ndarray, plus: np.ndarray, minus: np.ndarray
) -> tuple[dict[str, tuple[float, float]], float, float]:
    """Pair-type AUROCs and weights, AUC_ref and AUC_cond on one contrast's support (A S1.2).

    AUC_XY = Σ_{u∈X, v∈Y} U[u, v] / (a_X n_Y), w_XY = a_X n_Y / (A_j N_j);
    AUC_ref = Σ w_XY AUC_XY (exactly the pooled AUROC of the support's frames);
    AUC_cond = ½ (AUC_⊕⊕ + AUC_⊖⊖); Δscene = AUC_ref − AUC_cond.
    (AUC_⊕⊕ is Borkan et al.'s subgroup AUC, AUC_⊖⊕ BPSN, AUC_⊕⊖ BNSP.)
    Returns ({pair type: (auroc, weight)}, AUC_ref, AUC_cond).
    """
    masks = {"+": plus.astype(np.float64), "-": minus.astype(np.float64)}
    poles = np.where(plus, 0, np.where(minus, 1, -1))
    sums = u.block_sums(np.ones((1, a.size)), poles, poles, (2, 2))[0]
    support = plus | minus
    total_pairs = float(a[support].sum() * n[support].sum())
    pairs: dict[str, tuple[float, float]] = {}
    reference = 0.0
    for pair_type in PAIR_TYPES:
        rows, cols = masks[pair_type[0]], masks[pair_type[1]]
        count = float((rows @ a) * (cols @ n))
        pole_sum = sums["+-".index(pair_type[0]), "+-".index(pair_type[1])]
        auroc = float(pole_sum) / count if count > 0 else float("nan")
        weight = count / total_pairs if total_pairs > 0 else float("nan")
        pairs[pair_type] = (float(auroc), weight)
        if count > 0:
            reference += weight * auroc
    if total_pairs == 0:
        reference = float("nan")
    conditioned = 0.5 * (pairs["++"][0] + pairs["--"][0])
    return pairs, reference, conditioned


def permutation_p_value(values: np.ndarray, positive: np.ndarray, permuted: np.ndarray) -> float:
    """Two-sided permutation p-value of a contrast's bias-AUC (docs/metrics.md):

        p = (1 + #{r : |b⁽ʳ⁾ − ½| ≥ |b − ½|}) / (B + 1)

    ``values`` are the support's video means, ``positive`` marks the ⊕ videos and each row of
    ``permuted`` (B, n) is one shuffle of that mask (pole sizes kept). With midranks ρ (ties
    share their rank, as τ does), b = (Σ_{⊕} ρ − n⁺(n⁺+1)/2) / (n⁺ n⁻), so comparing rank sums
    S with their null mean n⁺(n + 1)/2 is the same test; rank sums are multiples of ½, exact
    in float64, so no tolerance decides a tie. NaN without replicates or with an empty pole.
    """
    n_positive = int(positive.sum())
    if permuted.shape[0] == 0 or n_positive in (0, values.size):
        return float("nan")
    ranks = midranks(values)
    null_mean = n_positive * (values.size + 1) / 2
    observed = abs(ranks[positive].sum() - null_mean)
    replicates = np.abs(permuted.astype(np.float64) @ ranks - null_mean)
    return float((1 + np.count_nonzero(replicates >= observed)) / (permuted.shape[0] + 1))


def midranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks of ``values``, tied values sharing the mean of their ranks (multiples of
    ½, exact in float64)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    stops = np.r_[starts[1:], values.size]
    ranks = np.empty(values.size)
    ranks[order] = np.repeat((starts + 1 + stops) / 2, stops - starts)  # mean of start+1 … stop
    return ranks


def holm_adjusted(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment (Holm 1979) of the finite p-values; NaN stays NaN.

    With the m finite p-values sorted, p₍₁₎ ≤ … ≤ p₍ₘ₎:
    p̃₍ᵢ₎ = max_{j ≤ i} min(1, (m − j + 1)·p₍ⱼ₎). Rejecting p̃ ≤ α controls the family-wise
    error rate at α for any dependence between the tests.
    """
    p_values = np.asarray(p_values, dtype=np.float64)
    adjusted = np.full(p_values.shape, np.nan)
    finite = np.flatnonzero(np.isfinite(p_values))
    order = finite[np.argsort(p_values[finite], kind="stable")]
    m = order.size
    scaled = np.minimum(1.0, (m - np.arange(m)) * p_values[order])
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted
