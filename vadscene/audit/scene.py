"""Scene-factor audit: bias-AUC on normal footage and scene-conditioned AUC (A §4, Supp. S1;
docs/metrics.md, "Scene factors").

A factor's contrast splits the annotated videos into poles ⊕ / ⊖; ambiguous and unlabelled
videos are left out of that contrast only.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from numba import njit

from vadscene.audit.inputs import AuditInputError, GroundTruth
from vadscene.audit.metrics import ratio_or_nan
from vadscene.catalogue import Catalogue, load_catalogue
from vadscene.records import Release
from vadscene.release_tables import read_label_table, values_of_release
from vadscene.video_lists import ucf_short_name, video_id_from_entry

_MAX_LISTED = 20
LABEL_TABLE_SUFFIXES = (".csv", ".tsv", ".parquet")


@dataclass(frozen=True)
class SceneContrast:
    factor: str
    positive: str
    negative: str
    primary: bool
    role: str


@dataclass(frozen=True)
class SceneLabels:
    """Resolved factor values per video, and the contrasts to audit."""

    contrasts: tuple[SceneContrast, ...]
    values: dict[str, dict[str, str]]  # factor → video id → value ("ambiguous" included)
    source: str
    not_in_ground_truth: tuple[str, ...] = ()
    """Labelled videos the ground truth does not list (set by :func:`match_to_ground_truth`)."""

    def __post_init__(self) -> None:
        where = f"{self.source}: scene labels"
        contrasts = tuple(self.contrasts)
        for contrast in contrasts:
            if not isinstance(contrast, SceneContrast):
                raise AuditInputError(
                    f"{where}: contrasts must be SceneContrast, got {type(contrast).__name__}"
                )
            if contrast.positive == contrast.negative:
                raise AuditInputError(
                    f"{where}: contrast of factor '{contrast.factor}' sets "
                    f"'{contrast.positive}' against itself"
                )
            if contrast.factor not in self.values:
                raise AuditInputError(
                    f"{where}: contrast '{contrast.positive} vs {contrast.negative}' names "
                    f"factor '{contrast.factor}', which has no values (factors: "
                    f"{', '.join(map(str, self.values)) or 'none'})"
                )
        for factor, by_video in self.values.items():
            if not isinstance(by_video, dict):
                raise AuditInputError(
                    f"{where}: factor '{factor}': expected a mapping video id → value, got "
                    f"{type(by_video).__name__}"
                )
            wrong = next(
                (
                    (v, x)
                    for v, x in by_video.items()
                    if not (isinstance(v, str) and isinstance(x, str))
                ),
                None,
            )
            if wrong is not None:
                raise AuditInputError(
                    f"{where}: factor '{factor}': video ids and values must be strings, got "
                    f"{wrong[0]!r} → {wrong[1]!r}"
                )
        object.__setattr__(self, "contrasts", contrasts)

    def poles(self, contrast: SceneContrast, video_ids: tuple[str, ...]) -> tuple[np.ndarray, ...]:
        """Boolean masks over ``video_ids``: videos at the ⊕ pole, videos at the ⊖ pole."""
        values = self.values.get(contrast.factor, {})
        labelled = np.array([values.get(v) for v in video_ids], dtype=object)
        return labelled == contrast.positive, labelled == contrast.negative


def match_to_ground_truth(scene: SceneLabels, ground_truth: GroundTruth) -> SceneLabels:
    """The labels of the ground truth's videos, refusing ids that look like a naming mismatch.

    Label ids are normalised as ground-truth ids are (file stems, crop index ``__N`` and
    feature suffixes dropped: :func:`vadscene.video_lists.video_id_from_entry`). Labelled ids
    that match no ground-truth video are an error listing them when none of the labels match,
    or when any of them resembles a ground-truth id ("did you mean Abuse028_x264?": the
    UCF-Crime short name, or a close spelling) — both mean the labels name the videos
    differently. Otherwise (a release of the whole benchmark audited on its test split) they
    are left out, and :attr:`SceneLabels.not_in_ground_truth` lists them for the report.
    """
    known = set(ground_truth.video_ids)
    values = {
        factor: {video_id_from_entry(v): value for v, value in per_video.items()}
        for factor, per_video in scene.values.items()
    }
    labelled = sorted({v for per_video in values.values() for v in per_video})
    unknown = [v for v in labelled if v not in known]
    suggestions = _suggestions(unknown, ground_truth.video_ids)
    if unknown and (suggestions or len(unknown) == len(labelled)):
        listed = [
            f"{v} (did you mean {suggestions[v]}?)" if v in suggestions else v
            for v in unknown[:_MAX_LISTED]
        ]
        more = f", … ({len(unknown) - _MAX_LISTED} more)" if len(unknown) > _MAX_LISTED else ""
        raise AuditInputError(
            f"{scene.source}: {len(unknown)} of {len(labelled)} labelled videos match no "
            f"video of the ground truth ({ground_truth.source}): {', '.join(listed)}{more}. "
            "Video ids are file stems (folders, extensions and crop suffixes __N are "
            "ignored); rename the labels' videos to the ground truth's ids"
        )
    return SceneLabels(
        scene.contrasts,
        {f: {v: x for v, x in per_video.items() if v in known} for f, per_video in values.items()},
        scene.source,
        not_in_ground_truth=tuple(sorted({*unknown, *scene.not_in_ground_truth})),
    )


def _suggestions(unknown: list[str], candidates: tuple[str, ...]) -> dict[str, str]:
    """Unknown id → the ground-truth id it most likely means: same UCF-Crime short name
    (``Abuse028`` ↔ ``Abuse028_x264``), else the closest spelling (difflib ratio ≥ 0.85)."""
    by_short = {ucf_short_name(c): c for c in candidates}
    found = {}
    for video in unknown:
        match = by_short.get(ucf_short_name(video)) or next(
            iter(difflib.get_close_matches(video, candidates, n=1, cutoff=0.85)), None
        )
        if match is not None:
            found[video] = match
    return found


def scene_labels(
    catalogue: Catalogue, values: Mapping[str, Mapping[str, str]], *, source: str
) -> SceneLabels:
    """Scene labels of any origin — a release, a workspace, a label table — with the
    catalogue's contrasts: the one path every source of labels takes into the audit."""
    contrasts = tuple(
        SceneContrast(f.key, c.positive, c.negative, c.primary, f.role)
        for f in catalogue.factors
        for c in f.contrasts
    )
    return SceneLabels(contrasts, {k: dict(values.get(k, {})) for k in catalogue.keys}, source)


def scene_labels_from_release(release: Release, *, source: str) -> SceneLabels:
    """The values a release resolved (see :func:`vadscene.release.resolve_assignment`)."""
    return scene_labels(release.catalogue, values_of_release(release), source=source)


def load_scene_labels(path: Path | str, *, catalogue: Catalogue | None = None) -> SceneLabels:
    """Scene labels from a release JSON file, a workspace folder (its consensus release) or a
    label table (``.csv``/``.tsv``/``.parquet``: long or wide, or the export CSV; see
    :func:`vadscene.release_tables.read_label_table`), the table validated against
    ``catalogue`` (default: the UCF-Crime catalogue)."""
    from vadscene.release import build_release, read_release
    from vadscene.workspace import CONFIG_NAME, Workspace

    path = Path(path)
    if path.is_dir():
        if not (path / CONFIG_NAME).is_file():
            raise AuditInputError(f"{path}: not a vadscene workspace (no {CONFIG_NAME})")
        with Workspace.open(path) as workspace:
            return scene_labels_from_release(
                build_release(workspace), source=f"workspace {path} (consensus)"
            )
    if path.suffix.lower() in LABEL_TABLE_SUFFIXES:
        catalogue = catalogue if catalogue is not None else load_catalogue()
        return scene_labels(
            catalogue,
            read_label_table(path, catalogue),
            source=f"label table {path} (catalogue '{catalogue.name}')",
        )
    return scene_labels_from_release(read_release(path), source=f"release {path}")


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
    wins = _bias_wins(
        np.ascontiguousarray(positive_counts, dtype=np.float64),
        np.ascontiguousarray(negative_counts, dtype=np.float64),
        order,
        np.searchsorted(sorted_negative, positive, "left"),
        np.searchsorted(sorted_negative, positive, "right"),
    )
    return ratio_or_nan(wins, positive_counts.sum(1) * negative_counts.sum(1))


@njit(cache=True, nogil=True)
def _bias_wins(positive_counts, negative_counts, order, below, at_or_below):  # type: ignore[no-untyped-def]
    # Compiled and free of the GIL: an audit runs this for every model × contrast × population
    # with B replicates, and as numpy calls on (B, n) arrays it held the GIL for most of the
    # model threads' time. Counts are whole numbers, so every sum is exact in any order and
    # halving the replicate's total equals summing the halves.
    wins = np.empty(negative_counts.shape[0])
    cumulative = np.empty(negative_counts.shape[1] + 1)
    for r in range(negative_counts.shape[0]):
        cumulative[0] = 0.0
        for j in range(order.size):
            cumulative[j + 1] = cumulative[j] + negative_counts[r, order[j]]
        total = 0.0
        for i in range(below.size):
            total += positive_counts[r, i] * (cumulative[below[i]] + cumulative[at_or_below[i]])
        wins[r] = total / 2
    return wins


PAIR_TYPES = ("++", "--", "+-", "-+")
"""X Y: pole of the anomalous frame's video, pole of the normal frame's video."""


def scene_conditioned(
    u: np.ndarray, a: np.ndarray, n: np.ndarray, plus: np.ndarray, minus: np.ndarray
) -> tuple[dict[str, tuple[float, float]], float, float]:
    """Pair-type AUROCs and weights, AUC_ref and AUC_cond on one contrast's support (A S1.2).

    AUC_XY = Σ_{u∈X, v∈Y} U[u, v] / (a_X n_Y), w_XY = a_X n_Y / (A_j N_j);
    AUC_ref = Σ w_XY AUC_XY (exactly the pooled AUROC of the support's frames);
    AUC_cond = ½ (AUC_⊕⊕ + AUC_⊖⊖); Δscene = AUC_ref − AUC_cond.
    (AUC_⊕⊕ is Borkan et al.'s subgroup AUC, AUC_⊖⊕ BPSN, AUC_⊕⊖ BNSP.)
    Returns ({pair type: (auroc, weight)}, AUC_ref, AUC_cond).
    """
    masks = {"+": plus.astype(np.float64), "-": minus.astype(np.float64)}
    support = plus | minus
    total_pairs = float(a[support].sum() * n[support].sum())
    pairs: dict[str, tuple[float, float]] = {}
    reference = 0.0
    for pair_type in PAIR_TYPES:
        rows, cols = masks[pair_type[0]], masks[pair_type[1]]
        count = float((rows @ a) * (cols @ n))
        auroc = float(rows @ u @ cols) / count if count > 0 else float("nan")
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
    ranks = pd.Series(values).rank(method="average").to_numpy()
    null_mean = n_positive * (values.size + 1) / 2
    observed = abs(ranks[positive].sum() - null_mean)
    replicates = np.abs(permuted.astype(np.float64) @ ranks - null_mean)
    return float((1 + np.count_nonzero(replicates >= observed)) / (permuted.shape[0] + 1))


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
