"""Paired video bootstrap and the clustered (Obuchowski) variance of pooled AUROC.

A replicate draws V videos with replacement (:class:`VideoDraws`); its multiplicities k
(Σk = V) are all the metrics need (:mod:`vadscene.audit.compute.metrics`), so the same draw
serves every model — the pairing that makes model differences testable (A §3.3).
Intervals are percentile intervals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vadscene.audit.compute.pairs import PairCounts

CONFIDENCE = 0.95


@dataclass(frozen=True)
class VideoDraws:
    """The paired bootstrap's draws: replicate r copies video v ``block(…)[r, v]`` times.

    Replicate r is drawn from its own seed, child r of ``stream`` (under the key ``purpose``),
    so any block of replicates can be drawn alone — on any worker, in any order, of any size —
    and gives the same counts: memory is bounded by the block, not by B. ``strata`` None:
    V videos drawn uniformly with replacement; else the n_s videos of every stratum s (codes
    of sorted names, e.g. the categories) drawn with replacement within s, strata in order.
    """

    n_videos: int
    replicates: int
    stream: np.random.SeedSequence
    purpose: int
    strata: np.ndarray | None = None

    def block(self, start: int, stop: int) -> np.ndarray:
        """(stop − start, V) float64 copy counts of replicates start … stop − 1.

        A replicate's V draws are one call: position i of the videos ordered by stratum draws
        uniformly among the n_s videos of its own stratum (one stratum without ``strata``).
        """
        counts = np.zeros((stop - start, self.n_videos))
        if self.n_videos == 0:
            return counts
        strata = np.zeros(self.n_videos, dtype=np.intp) if self.strata is None else self.strata
        order = np.argsort(strata, kind="stable")
        sizes = np.bincount(strata)
        first = np.r_[0, np.cumsum(sizes)[:-1]]
        position_size, position_first = sizes[strata[order]], first[strata[order]]
        for row, replicate in enumerate(range(start, stop)):
            rng = np.random.default_rng(
                np.random.SeedSequence(
                    self.stream.entropy,
                    spawn_key=(*self.stream.spawn_key, self.purpose, replicate),
                )
            )
            drawn = order[position_first + rng.integers(0, position_size)]
            counts[row] = np.bincount(drawn, minlength=self.n_videos)
        return counts

    def matrix(self) -> np.ndarray:
        """Every replicate at once, (B, V): for the optional probes that read them whole."""
        return self.block(0, self.replicates)


def uniform_copy_counts(rng: np.random.Generator, size: int, replicates: int) -> np.ndarray:
    """(replicates, size) float64 copy counts: each row resamples ``size`` items uniformly
    with replacement (a multinomial(size, 1/size) row, Σ = size).

    Drawn as the rows' item indices and one ``bincount`` over all of them: the distribution of
    ``Generator.multinomial``, without its row-by-row draws (docs/benchmarks.md).
    """
    if size == 0 or replicates == 0:
        return np.zeros((replicates, size))
    drawn = rng.integers(0, size, size=(replicates, size))
    drawn += np.arange(replicates)[:, None] * size  # row r counts into bins r·size …
    return (
        np.bincount(drawn.ravel(), minlength=replicates * size)
        .reshape(replicates, size)
        .astype(np.float64)
    )


def replicate_spans(replicates: int, n_videos: int, memory: int) -> list[tuple[int, int]]:
    """Blocks [start, stop) of replicates whose working arrays stay within ``memory`` bytes:
    about :data:`BLOCK_ARRAYS` float64 arrays of (block × V) each."""
    rows = max(1, int(memory // (8 * BLOCK_ARRAYS * max(n_videos, 1))))
    return [(start, min(start + rows, replicates)) for start in range(0, replicates, rows)]


BLOCK_ARRAYS = 8
"""(block × V) float64 arrays alive at once while a block is evaluated: the shared and the
per-category draws, both again stacked for the one pass that counts them, their video-major
copies (bytes where the counts fit), a product per column group and the video-level controls'
draws."""


def percentile_interval(replicates: np.ndarray) -> tuple[float, float]:
    """The central 95 % percentile interval of the defined replicates (NaN if none): their
    2.5 % and 97.5 % quantiles, linearly interpolated (Hyndman & Fan's type 7, numpy's default).
    """
    defined = replicates[~np.isnan(replicates)]
    if defined.size == 0:
        return float("nan"), float("nan")
    tail = (1.0 - CONFIDENCE) / 2
    return _linear_quantile(defined, tail), _linear_quantile(defined, 1.0 - tail)


def _linear_quantile(values: np.ndarray, quantile: float) -> float:
    # np.quantile's "linear" method computed as it does — position (n − 1)·q, the two order
    # statistics around it, and its interpolation (from the upper one when the fraction is
    # ½ or more) — without its general machinery, whose overhead is most of the time of a
    # call on a thousand replicates, and an audit makes thousands of calls
    position = (values.size - 1) * quantile
    below = min(math.floor(position), values.size - 1)
    above = min(below + 1, values.size - 1)
    ordered = np.partition(values, [below, above]) if above > below else np.partition(values, below)
    low, high = float(ordered[below]), float(ordered[above])
    fraction = position - below
    difference = high - low
    return high - difference * (1 - fraction) if fraction >= 0.5 else low + difference * fraction


def obuchowski_covariance(
    u_first: PairCounts, u_second: PairCounts, a: np.ndarray, n: np.ndarray
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
    u: PairCounts, a: np.ndarray, n: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(r10, r01) of one model's pair counts: r10_i = (U1)_i / N − a_i θ and
    r01_i = (1ᵀU)_i / A − n_i θ, θ = 1ᵀU1/(A·N) (docs/metrics.md, "Clustered standard
    error"); NaN without anomalous or normal frames."""
    big_a, big_n = float(a.sum()), float(n.sum())
    if big_a == 0 or big_n == 0:
        return np.full(len(a), np.nan), np.full(len(a), np.nan)
    _, row_sums, column_sums = u.video_sums()
    theta = row_sums.sum() / (big_a * big_n)
    return row_sums / big_n - a * theta, column_sums / big_a - n * theta


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
