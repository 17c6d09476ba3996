"""Paired video bootstrap and the clustered (Obuchowski) variance of pooled AUROC.

A replicate draws V videos with replacement; its multiplicities k (Σk = V) are all the metrics
need (:mod:`vadscene.audit.compute.metrics`), so the same draw serves every model — the pairing that
makes model differences testable (A §3.3). Intervals are percentile intervals.
"""

from __future__ import annotations

import numpy as np

CONFIDENCE = 0.95


def video_multiplicities(n_videos: int, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """(replicates, n_videos) copy counts of V videos drawn uniformly with replacement.

    A multinomial(V; 1/V, …, 1/V) draw is exactly the count vector of V uniform draws.
    """
    if replicates == 0 or n_videos == 0:
        return np.zeros((replicates, n_videos))
    return rng.multinomial(n_videos, np.full(n_videos, 1.0 / n_videos), size=replicates).astype(
        np.float64
    )


def percentile_interval(replicates: np.ndarray) -> tuple[float, float]:
    """The central 95 % percentile interval of the defined replicates (NaN if none)."""
    defined = replicates[~np.isnan(replicates)]
    if defined.size == 0:
        return float("nan"), float("nan")
    tail = (1.0 - CONFIDENCE) / 2
    low, high = np.quantile(defined, [tail, 1.0 - tail])
    return float(low), float(high)


def obuchowski_covariance(
    u_first: np.ndarray, u_second: np.ndarray, a: np.ndarray, n: np.ndarray
) -> float:
    """Clustered covariance of two models' pooled AUROCs (Obuchowski 1997, Biometrics 53),
    with videos as clusters; ``u_first is u_second`` gives the variance.

    With θ = 1ᵀU1/(A·N), per video i the structural sums V10_i = (U1)_i / N and
    V01_i = (1ᵀU)_i / A, and residuals r10_i = V10_i − a_i θ, r01_i = V01_i − n_i θ
    (:func:`obuchowski_residuals`), combined by :func:`clustered_micro_covariance`. With one
    frame per cluster it is DeLong's variance; unlike DeLong it does not treat a video's
    frames as independent. An analytic companion to the bootstrap, never a replacement.
    """
    return clustered_micro_covariance(
        obuchowski_residuals(u_first, a, n), obuchowski_residuals(u_second, a, n), a, n
    )


def obuchowski_residuals(
    u: np.ndarray, a: np.ndarray, n: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(r10, r01) of one model's pair counts: r10_i = (U1)_i / N − a_i θ and
    r01_i = (1ᵀU)_i / A − n_i θ, θ = 1ᵀU1/(A·N) (docs/metrics.md, "Clustered standard
    error"); NaN without anomalous or normal frames."""
    big_a, big_n = float(a.sum()), float(n.sum())
    if big_a == 0 or big_n == 0:
        return np.full(len(a), np.nan), np.full(len(a), np.nan)
    theta = u.sum() / (big_a * big_n)
    return u.sum(1) / big_n - a * theta, u.sum(0) / big_a - n * theta


def clustered_micro_covariance(
    first: tuple[np.ndarray, np.ndarray],
    second: tuple[np.ndarray, np.ndarray],
    a: np.ndarray,
    n: np.ndarray,
) -> float:
    """Obuchowski's covariance from two models' residuals (r10, r01) and (s10, s01):
    S10 = I10 / ((I10 − 1) A) Σ r10 s10,  S01 = I01 / ((I01 − 1) N) Σ r01 s01,
    S11 = I / (I − 1) Σ (r10 s01 + s10 r01),  cov = S10/A + S01/N + S11 / (A N),
    I10 / I01 = videos with anomalous / normal frames, I = all videos; NaN when I10 or I01
    is below 2."""
    big_a, big_n = float(a.sum()), float(n.sum())
    clusters, with_anomalous, with_normal = len(a), int((a > 0).sum()), int((n > 0).sum())
    if min(with_anomalous, with_normal) < 2 or big_a == 0 or big_n == 0:
        return float("nan")
    (r10, r01), (s10, s01) = first, second
    term10 = with_anomalous / ((with_anomalous - 1) * big_a) * float(r10 @ s10)
    term01 = with_normal / ((with_normal - 1) * big_n) * float(r01 @ s01)
    term11 = clusters / (clusters - 1) * (float(r10 @ s01) + float(s10 @ r01))
    return term10 / big_a + term01 / big_n + term11 / (big_a * big_n)
