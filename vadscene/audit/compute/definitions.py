"""Definition-conditioned probes: does a model's frame ranking follow the queried definition?

A model scores every frame once per *definition* (a text naming the anomaly classes to treat
as abnormal). From those scores (docs/metrics.md, "Definition-conditioned probes"; paper
[definitions] §3, App. A):

- D@5(Γ) = AUROC(s^Γ; A_Γ, N ∪ A_¬Γ), split into D@5ᴺ(Γ) = AUROC(s^Γ; A_Γ, N) and
  D@5ˣ(Γ) = AUROC(s^Γ; A_Γ, A_¬Γ) with ω_Γ = |N| / (|N| + |A_¬Γ|), so that
  D@5 = ω·D@5ᴺ + (1 − ω)·D@5ˣ exactly (Eq. 3, 17); reported as means over the queries.
- DC-Disc = mean_c AUROC(s^c; A_c, A_¬c).
- DC-DetΔ = mean_c [AUROC(s^c; A_c, N) − mean_{k≠c} AUROC(s^k; A_c, N)].
- DC-SelΔ = mean over (p, c) of [AUROC(s^c; U_{p,c}, U_{p,¬c}) −
  mean_{k∈C_p∖c} AUROC(s^k; U_{p,c}, U_{p,¬c})] over videos p holding ≥ 2 classes (Eq. 4).

Each also with AP in place of AUROC. Frame classes: an anomalous frame's *class set* is its
video's category, or the classes of the events covering it. A frame belongs to A_Γ when its
class set lies inside Γ and to A_¬Γ otherwise ("excluded frames leave the target set").

Method. Frames are grouped into *units* (video, class set); normal frames form the unit
(video, ∅). For one definition's scores a single pair count (:mod:`.pairs`) gives
W[u, v] = Σ_{t∈u anomalous} Σ_{s∈v} τ(s_t, s_s) for every anomalous unit u and every unit v.
Every AUROC above is a ratio of block sums of W; a bootstrap replicate with video
multiplicities k weighs W[u, v] by k_u·k_v, exactly like :func:`.metrics.micro_auroc`, so
the identity holds replicate by replicate.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from vadscene.audit.compute.bootstrap import percentile_interval
from vadscene.audit.compute.definition_kernels import ap_hits, run_starts
from vadscene.audit.compute.metrics import ratio_or_nan
from vadscene.audit.compute.pairs import sorted_pair_counts
from vadscene.audit.io.definitions import (
    DefinitionScores,
    FrameClasses,
    Query,
    check_definition_inputs,
)
from vadscene.benchmark.frames import GroundTruth

PROBES: tuple[str, ...] = ("D@5", "D@5N", "D@5X", "DC-Disc", "DC-DetΔ", "DC-SelΔ")
"""The probes of the ``definition_probes`` table, in reading order."""


# --- pair counts per unit -------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Units:
    """Frames grouped by (video, class set); normal frames have class set −1."""

    unit: np.ndarray  # (F,) unit of every frame
    video: np.ndarray  # (units,) video of every unit
    class_set: np.ndarray  # (units,) class-set code, −1 for normal units
    frames: np.ndarray  # (units,) frames per unit

    @classmethod
    def of(cls, ground_truth: GroundTruth, classes: FrameClasses) -> _Units:
        stride = len(classes.class_sets) + 1
        key = ground_truth.video_index().astype(np.int64) * stride + classes.codes + 1
        # A frame's key mostly repeats its predecessor's: the unique keys of the runs (a few
        # per video) replace a sort of every frame.
        first = np.ones(key.size, dtype=bool)
        first[1:] = key[1:] != key[:-1]
        starts = np.flatnonzero(first)
        keys, run_unit = np.unique(key[starts], return_inverse=True)
        unit = np.repeat(run_unit, np.diff(np.r_[starts, key.size]))
        return cls(
            unit=unit.astype(np.intp),
            video=(keys // stride).astype(np.intp),
            class_set=(keys % stride - 1).astype(np.int64),
            frames=np.bincount(unit, minlength=keys.size).astype(np.float64),
        )


@dataclass(frozen=True, eq=False)
class _UnitRuns:
    """Runs of consecutive frames of one unit whose scores agree under every definition:
    snippet-repeated scores shrink sixteenfold once per model, not once per definition."""

    scores: np.ndarray  # (runs, D)
    unit: np.ndarray  # (runs,)
    weight: np.ndarray  # (runs,) frames per run

    @classmethod
    def of(cls, model: DefinitionScores, units: _Units) -> _UnitRuns:
        scores = model.scores
        starts = np.flatnonzero(run_starts(scores, units.unit))
        weight = np.diff(np.append(starts, scores.shape[0])).astype(np.float64)
        return cls(scores[starts], units.unit[starts], weight)


def unit_pair_counts(
    scores: np.ndarray, order: np.ndarray, runs: _UnitRuns, units: _Units
) -> np.ndarray:
    """W[i, v] = Σ_{t∈u_i} Σ_{s∈v} τ(s_t, s_s) for the anomalous units u_i (in unit order) and
    every unit v: the pair counts of the anomalous frames against every frame, from one
    :func:`.pairs.sorted_pair_counts` sweep in which anomalous runs play both roles.
    ``scores``: one definition's score per run of ``runs``; ``order`` sorts them ascending."""
    n_units = units.video.size
    anomalous_units = np.flatnonzero(units.class_set >= 0)
    rank = np.full(n_units, -1)
    rank[anomalous_units] = np.arange(anomalous_units.size)
    unit = runs.unit[order]
    return sorted_pair_counts(
        scores[order], rank[unit], unit, runs.weight[order], (anomalous_units.size, n_units)
    )


# --- the probes -----------------------------------------------------------------------------


@dataclass(frozen=True)
class DefinitionAudit:
    """The three tables of the definition-conditioned probes (columns in :mod:`.result`)."""

    probes: pd.DataFrame
    queries: pd.DataFrame
    classes: pd.DataFrame


def audit_definitions(
    ground_truth: GroundTruth,
    models: Sequence[DefinitionScores],
    classes: FrameClasses,
    queries: Sequence[Query] = (),
    *,
    resamples: np.ndarray | None = None,
    selection_seed: int = 0,
) -> DefinitionAudit:
    """Every definition-conditioned probe of every model, with 95 % bootstrap intervals.

    ``resamples`` (R, V) are the engine's paired video multiplicities (D@5, DC-Disc,
    DC-DetΔ); DC-SelΔ's interval resamples clusters of multi-event videos sharing one class
    set (the class pair of a two-event splice) with the same number R of replicates, from
    ``selection_seed``. Without ``queries`` the singleton queries Γ = {c} of every class are
    used. AP values are point estimates (no interval).
    """
    queries = list(queries) or [
        Query(c, frozenset([c]), "the default singleton queries") for c in classes.classes
    ]
    check_definition_inputs(classes, models, queries)
    units = _Units.of(ground_truth, classes)
    weights = np.vstack([np.ones((1, ground_truth.n_videos)), _or_empty(resamples, ground_truth)])
    rows: dict[str, list[dict]] = {"probes": [], "queries": [], "classes": []}
    # Per definition, the class sets whose frames meet anomalous ones as positives: its own
    # class (DC-Disc) and the targets of its queries (D@5ˣ).
    against_anomalies: dict[str, set[int]] = {}
    for c in classes.classes:
        against_anomalies.setdefault(c, set()).update(_own_sets(classes, c))
    for query in queries:
        against_anomalies.setdefault(query.definition, set()).update(
            _target_sets(classes, query.classes)
        )
    # Many small products: a threaded BLAS only contends for the cores, so one BLAS thread,
    # and two definitions at a time instead.
    # Models go one after the other, so only one model's per-definition sums are held.
    with (
        threadpool_limits(limits=1, user_api="blas"),
        ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool,
    ):
        for model in models:
            sums = _ModelSums(model, units, weights)
            list(pool.map(sums.prepare, against_anomalies, against_anomalies.values()))
            _audit_model(model, classes, queries, sums, weights, selection_seed, rows)
    return DefinitionAudit(
        probes=pd.DataFrame(rows["probes"], columns=PROBE_COLUMNS),
        queries=pd.DataFrame(rows["queries"], columns=QUERY_COLUMNS),
        classes=pd.DataFrame(rows["classes"], columns=CLASS_COLUMNS),
    )


PROBE_COLUMNS = ["model", "family", "probe", "metric", "value", "ci_low", "ci_high", "terms"]
QUERY_COLUMNS = [
    "model",
    "definition",
    "classes",
    "omega",
    "d5_auroc",
    "d5_normal_auroc",
    "d5_excluded_auroc",
    "identity_gap",
    "d5_ap",
    "d5_normal_ap",
    "d5_excluded_ap",
]
CLASS_COLUMNS = [
    "model",
    "class",
    "disc_auroc",
    "det_matching_auroc",
    "det_other_auroc",
    "det_delta_auroc",
    "disc_ap",
    "det_delta_ap",
]


def _or_empty(resamples: np.ndarray | None, ground_truth: GroundTruth) -> np.ndarray:
    return np.zeros((0, ground_truth.n_videos)) if resamples is None else resamples


class _ModelSums:
    """One model's pair counts, block sums and AP order per definition (:meth:`prepare`).

    H[L, g, r] = Σ_{u: class set L} Σ_{v ∈ group g} k_u(r)·W[u, v]·k_v(r) for replicate r
    (row 0: the point estimate), groups g = 0 for normal units and 1 + L' for class set L'.
    Every AUROC of the probes is a sum of H entries over its positive class sets and negative
    groups, divided by the matching frame counts.
    """

    def __init__(self, model: DefinitionScores, units: _Units, weights: np.ndarray) -> None:
        self.model = model
        self.units = units
        self.k_units = weights[:, units.video]  # (R + 1, units)
        self.anomalous_units = np.flatnonzero(units.class_set >= 0)
        n_sets = int(units.class_set.max()) + 1 if self.anomalous_units.size else 0
        self.group = units.class_set + 1
        self.group_frames = (self.k_units * units.frames) @ np.eye(n_sets + 1)[self.group]
        self.row_sets = np.eye(n_sets)[units.class_set[self.anomalous_units]]  # (A units, L)
        # Units sorted by group once, so each group's columns are a slice (no copies).
        self._by_group = np.argsort(self.group, kind="stable")
        self._k_sorted = np.ascontiguousarray(self.k_units[:, self._by_group].T)
        self._bounds = np.searchsorted(
            self.group[self._by_group], np.arange(self.group_frames.shape[1] + 1)
        )
        self.runs = _UnitRuns.of(model, units)
        self._pairs: dict[str, np.ndarray] = {}
        self._sums: dict[str, np.ndarray] = {}
        self._ranked: dict[str, _SortedScores] = {}

    def prepare(self, definition: str, against_anomalies: Iterable[int]) -> None:
        """Everything the probes read of one definition's scores, from one sort: W, its block
        sums H (against anomalous groups only for the class sets ``against_anomalies``) and
        the descending order AP walks. Definitions are independent, so several may be
        prepared at once on different threads (the sort, the pair count and the products
        release the GIL)."""
        column = np.ascontiguousarray(self.runs.scores[:, self.model.definitions.index(definition)])
        order = np.argsort(column)
        w = unit_pair_counts(column, order, self.runs, self.units)
        self._pairs[definition] = w
        self._sums[definition] = self._block_sums(w, sorted(against_anomalies))
        self._ranked[definition] = _SortedScores(
            column, order[::-1], self.runs.unit, self.runs.weight
        )

    def pairs(self, definition: str) -> np.ndarray:
        """W of the definition's scores (anomalous units × units)."""
        return self._pairs[definition]

    def sums(self, definition: str) -> np.ndarray:
        """H of the definition's scores (class sets × groups × replicates)."""
        return self._sums[definition]

    def ranked(self, definition: str) -> _SortedScores:
        return self._ranked[definition]

    def _block_sums(self, w: np.ndarray, sets: list[int]) -> np.ndarray:
        """H[:, 0] for every class set, H[sets, 1:] for the given ones, NaN elsewhere: every
        class's frames meet the normal frames under every definition (DC-DetΔ), but only a
        definition's own classes meet the other anomalies — the rest would be 2/3 of the
        products, never read."""
        w = w[:, self._by_group]
        k_rows = self.k_units[:, self.anomalous_units].T  # (A units, R + 1)
        n_groups = self.group_frames.shape[1]
        blocks = np.full((self.row_sets.shape[1], n_groups, self.k_units.shape[0]), np.nan)
        normal = slice(self._bounds[0], self._bounds[1])
        per_row = w[:, normal] @ self._k_sorted[normal]  # (A units, R + 1)
        blocks[:, 0, :] = self.row_sets.T @ (k_rows * per_row)
        rows = np.flatnonzero(self.row_sets[:, sets].any(1))
        row_sets = self.row_sets[np.ix_(rows, np.asarray(sets, dtype=np.intp))]
        for g in range(1, n_groups):
            start, stop = self._bounds[g], self._bounds[g + 1]
            per_row = w[rows, start:stop] @ self._k_sorted[start:stop]
            blocks[sets, g, :] = row_sets.T @ (k_rows[rows] * per_row)
        return blocks

    def auroc_parts(
        self, definition: str, positive: list[int], negative_groups: list[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(pairs, positive frames, negative frames) per replicate."""
        blocks = self.sums(definition)
        pairs = blocks[np.ix_(positive, negative_groups)].sum((0, 1))
        positive_frames = self.group_frames[:, [1 + s for s in positive]].sum(1)
        return pairs, positive_frames, self.group_frames[:, negative_groups].sum(1)

    def auroc(self, definition: str, positive: list[int], negative_groups: list[int]) -> np.ndarray:
        pairs, n_positive, n_negative = self.auroc_parts(definition, positive, negative_groups)
        return ratio_or_nan(pairs, n_positive * n_negative)

    def ap(self, definition: str, positive: list[int], negative_groups: list[int]) -> float:
        positive_units = np.isin(self.group, [1 + s for s in positive])
        return self.ranked(definition).ap(positive_units, np.isin(self.group, negative_groups))


def _audit_model(
    model: DefinitionScores,
    classes: FrameClasses,
    queries: list[Query],
    sums: _ModelSums,
    weights: np.ndarray,
    selection_seed: int,
    rows: dict[str, list[dict]],
) -> None:
    set_of = [set(s) for s in classes.class_sets]
    label = {"model": model.name}
    # D@5 per query: N and X parts from the same pair sums, so the identity is exact.
    d5: dict[str, list[np.ndarray]] = {"D@5": [], "D@5N": [], "D@5X": []}
    d5_ap: dict[str, list[float]] = {"D@5": [], "D@5N": [], "D@5X": []}
    for query in queries:
        target = _target_sets(classes, query.classes)
        excluded = [1 + i for i, s in enumerate(set_of) if not s <= query.classes]
        pairs_n, n_target, n_normal = sums.auroc_parts(query.definition, target, [0])
        pairs_x, _, n_excluded = sums.auroc_parts(query.definition, target, excluded)
        normal_part = ratio_or_nan(pairs_n, n_target * n_normal)
        excluded_part = ratio_or_nan(pairs_x, n_target * n_excluded)
        whole = ratio_or_nan(pairs_n + pairs_x, n_target * (n_normal + n_excluded))
        omega = ratio_or_nan(n_normal, n_normal + n_excluded)
        for key, value in zip(d5, (whole, normal_part, excluded_part), strict=True):
            d5[key].append(value)
        aps = (
            sums.ap(query.definition, target, [0, *excluded]),
            sums.ap(query.definition, target, [0]),
            sums.ap(query.definition, target, excluded),
        )
        for key, ap in zip(d5_ap, aps, strict=True):
            d5_ap[key].append(ap)
        # The identity D@5 = ω·D@5ᴺ + (1 − ω)·D@5ˣ, checked on the point estimates.
        mixture = omega[0] * normal_part[0] + (1 - omega[0]) * excluded_part[0]
        rows["queries"].append(
            {
                **label,
                "definition": query.definition,
                "classes": ", ".join(sorted(query.classes)),
                "omega": float(omega[0]),
                "d5_auroc": float(whole[0]),
                "d5_normal_auroc": float(normal_part[0]),
                "d5_excluded_auroc": float(excluded_part[0]),
                "identity_gap": float(whole[0] - mixture) if np.isfinite(mixture) else np.nan,
                "d5_ap": aps[0],
                "d5_normal_ap": aps[1],
                "d5_excluded_ap": aps[2],
            }
        )
    for probe in d5:
        _probe_row(rows, model, probe, "auroc", _mean_defined(np.vstack(d5[probe])), len(queries))
        _probe_row(rows, model, probe, "ap", np.array([_nanmean(d5_ap[probe])]), len(queries))

    # DC-Disc and DC-DetΔ over the classes, one singleton definition per class.
    own_sets = [_own_sets(classes, c) for c in classes.classes]
    own_class = np.full(sums.group.size, -1)
    for index, own in enumerate(own_sets):
        own_class[np.isin(sums.group, [1 + i for i in own])] = index
    normal_units = sums.group == 0
    # AP of every class's frames against the normal frames under every definition:
    # detection_ap[k, c] (one pass per definition for all classes).
    detection_ap = np.vstack(
        [sums.ranked(k).ap_many(own_class, len(own_sets), normal_units) for k in classes.classes]
    )
    disc, det_delta, disc_ap, det_delta_ap = [], [], [], []
    for index, c in enumerate(classes.classes):
        own = own_sets[index]
        rest = [1 + i for i, s in enumerate(set_of) if s != {c}]
        others = [k for k in classes.classes if k != c]
        disc.append(sums.auroc(c, own, rest))
        matching = sums.auroc(c, own, [0])
        other = (
            _mean_defined(np.vstack([sums.auroc(k, own, [0]) for k in others]))
            if others
            else np.full_like(matching, np.nan)
        )
        det_delta.append(matching - other)
        disc_ap.append(sums.ap(c, own, rest))
        other_ap = _nanmean([detection_ap[k, index] for k in range(len(own_sets)) if k != index])
        det_delta_ap.append(float(detection_ap[index, index]) - other_ap)
        rows["classes"].append(
            {
                **label,
                "class": c,
                "disc_auroc": float(disc[-1][0]),
                "det_matching_auroc": float(matching[0]),
                "det_other_auroc": float(other[0]),
                "det_delta_auroc": float(det_delta[-1][0]),
                "disc_ap": disc_ap[-1],
                "det_delta_ap": det_delta_ap[-1],
            }
        )
    n_classes = len(classes.classes)
    _probe_row(rows, model, "DC-Disc", "auroc", _mean_defined(np.vstack(disc)), n_classes)
    _probe_row(rows, model, "DC-Disc", "ap", np.array([_nanmean(disc_ap)]), n_classes)
    _probe_row(rows, model, "DC-DetΔ", "auroc", _mean_defined(np.vstack(det_delta)), n_classes)
    _probe_row(rows, model, "DC-DetΔ", "ap", np.array([_nanmean(det_delta_ap)]), n_classes)

    # DC-SelΔ over the videos holding ≥ 2 classes.
    terms_auroc, terms_ap, clusters = _selection_terms(sums, set_of)
    replicates = weights.shape[0] - 1
    for metric, terms in (("auroc", terms_auroc), ("ap", terms_ap)):
        values = np.array([np.mean(terms)]) if terms else np.array([np.nan])
        if terms and metric == "auroc" and replicates:
            resampled = _cluster_bootstrap(np.array(terms), clusters, replicates, selection_seed)
            values = np.r_[values, resampled]
        _probe_row(rows, model, "DC-SelΔ", metric, values, len(terms))


def _target_sets(classes: FrameClasses, wanted: frozenset[str]) -> list[int]:
    """The class sets inside a query's Γ: its targets A_Γ."""
    return [i for i, s in enumerate(classes.class_sets) if s <= wanted]


def _own_sets(classes: FrameClasses, c: str) -> list[int]:
    """The class sets of A_c: exactly {c}."""
    return [i for i, s in enumerate(classes.class_sets) if s == {c}]


def _selection_terms(
    sums: _ModelSums, set_of: list[set[str]]
) -> tuple[list[float], list[float], list[str]]:
    """DC-SelΔ terms (p, c) in AUROC and AP, and each term's cluster (the sorted class set of
    its video p). Point estimates, from the unit pair counts W within each video."""
    units = sums.units
    terms_auroc: list[float] = []
    terms_ap: list[float] = []
    clusters: list[str] = []
    anomalous_units = sums.anomalous_units
    for p in np.unique(units.video[anomalous_units]):
        rows = np.flatnonzero(units.video[anomalous_units] == p)  # rows of W
        mine = anomalous_units[rows]  # the video's anomalous units
        present = sorted(set().union(*(set_of[s] for s in units.class_set[mine])))
        if len(present) < 2:
            continue
        for c in present:
            own = np.array([set_of[s] == {c} for s in units.class_set[mine]])
            if not own.any() or own.all():
                continue
            denominator = units.frames[mine[own]].sum() * units.frames[mine[~own]].sum()
            by_definition = {
                k: float(sums.pairs(k)[np.ix_(rows[own], mine[~own])].sum() / denominator)
                for k in present
            }
            positive_units = np.zeros(units.video.size, bool)
            positive_units[mine[own]] = True
            negative_units = np.zeros(units.video.size, bool)
            negative_units[mine[~own]] = True
            ap_by_definition = {
                k: sums.ranked(k).ap(positive_units, negative_units) for k in present
            }
            others = [k for k in present if k != c]
            terms_auroc.append(
                by_definition[c] - float(np.mean([by_definition[k] for k in others]))
            )
            terms_ap.append(
                ap_by_definition[c] - float(np.mean([ap_by_definition[k] for k in others]))
            )
            clusters.append(" + ".join(present))
    return terms_auroc, terms_ap, clusters


def _cluster_bootstrap(
    terms: np.ndarray, clusters: list[str], replicates: int, seed: int
) -> np.ndarray:
    """Mean of the terms under resampling whole clusters with replacement."""
    names, member = np.unique(clusters, return_inverse=True)
    sums = np.bincount(member, weights=terms, minlength=names.size)
    sizes = np.bincount(member, minlength=names.size).astype(np.float64)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(names.size, np.full(names.size, 1 / names.size), size=replicates)
    return ratio_or_nan(draws @ sums, draws @ sizes)


def _probe_row(
    rows: dict[str, list[dict]],
    model: DefinitionScores,
    probe: str,
    metric: str,
    values: np.ndarray,
    terms: int,
) -> None:
    low, high = percentile_interval(values[1:]) if values.size > 1 else (np.nan, np.nan)
    rows["probes"].append(
        {
            "model": model.name,
            "family": model.family,
            "probe": probe,
            "metric": metric,
            "value": float(values[0]),
            "ci_low": low,
            "ci_high": high,
            "terms": terms,
        }
    )


def _mean_defined(stacked: np.ndarray) -> np.ndarray:
    """Column mean over the rows defined in that column (NaN where none is)."""
    defined = ~np.isnan(stacked)
    with np.errstate(invalid="ignore"):
        return np.where(
            defined.any(0), np.nansum(stacked, 0) / np.maximum(defined.sum(0), 1), np.nan
        )


def _nanmean(values: list[float]) -> float:
    finite = [v for v in values if np.isfinite(v)]
    return float(np.mean(finite)) if finite else float("nan")


class _SortedScores:
    """Weighted entries (runs of identical frames, each in one unit) sorted once, highest
    score first, so that AP for any positive/negative unit sets costs one pass:
    AP = Σ_k (R_k − R_{k−1})·P_k over the distinct thresholds, as
    ``sklearn.metrics.average_precision_score`` on the selected frames. ``order`` sorts
    ``scores`` descending; the order within ties is free, since AP reads the cumulative
    (integer, exact) weights only at the last entry of each tie."""

    def __init__(
        self, scores: np.ndarray, order: np.ndarray, unit: np.ndarray, weight: np.ndarray
    ) -> None:
        ranked = scores[order]
        self.unit = unit[order]
        self.weight = weight[order]
        self.last_of_tie = np.r_[ranked[1:] != ranked[:-1], True]

    def ap(self, positive_units: np.ndarray, negative_units: np.ndarray) -> float:
        """AP of the frames of ``positive_units`` against those of ``negative_units`` (disjoint
        boolean masks over the units)."""
        _, gained, true_positives, predicted = ap_hits(
            self.unit, self.weight, self.last_of_tie, np.where(positive_units, 0, -1),
            negative_units, 1,
        )  # fmt: skip
        if gained.size == 0:
            return float("nan")
        total = true_positives[-1]
        return float(np.sum(gained / total * true_positives / predicted))

    def ap_many(
        self, positive_class: np.ndarray, n_sets: int, negative_units: np.ndarray
    ) -> np.ndarray:
        """:meth:`ap` for ``n_sets`` disjoint positive sets at once: ``positive_class``
        (units,) gives each unit's set (−1: none); one AP per set, NaN for an empty one."""
        which, gained, true_positives, predicted = ap_hits(
            self.unit, self.weight, self.last_of_tie, positive_class, negative_units, n_sets
        )
        sums = np.zeros(n_sets)
        np.add.at(sums, which, gained * true_positives / predicted)  # in threshold order
        total = np.bincount(which, gained, minlength=n_sets)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, sums / total, np.nan)
